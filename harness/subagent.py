"""Sub-agents for the ``isolate`` strategy: a fresh context on the same task environment.

A sub-agent runs the one agent loop (harness/agent_loop.py) as the main agent does: system
prompt, the delegated task, the task's tools (plus its strategy's tools) and, as its final
tool, ``report(conclusion)``. Its strategy (``isolate`` passes a fresh copy of its ``base``;
without one the sub-agent is unmanaged: ``harness.contracts.FullHistory``, the whole history as
``none`` sends it) projects its history under its own budget (``isolate``'s ``subagent_budget``;
by default the trial's budget) and chooses its tools, the projection is validated, the task's
per-turn limit holds, and the strategy's server options travel with its calls. A sub-agent
cannot delegate again.

Its model calls go through the trial's ``CallRecorder`` as ``kind=subagent`` steps (with
``subagent``, ``substep``, ``over_budget`` and ``budget_ratio``), its tool calls join the
trial's tool log and transcript, and its refused and failed calls (its ``CallCounts``) count in
the trial's ``rate_limited_calls``, ``unoffered_calls`` and ``tool_exceptions``. Only the conclusion
returns to the main agent; a sub-agent that ends without one returns why, in brackets.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.accounting import BudgetTracker
from harness.agent_loop import AgentLoop, Prepared, Session
from harness.contracts import FullHistory, ToolError
from harness.models.base import ModelError, subagent_session
from harness.tool_runner import CallResult
from harness.trial_context import TrialContext

SUBAGENT_SYSTEM = (
    "You are a sub-agent. You have a fresh context and the tools of the task environment. Do the sub-task below "
    "and finish by calling report(conclusion) with a short, self-contained conclusion: only the conclusion goes "
    "back to the agent that delegated to you."
)

REPORT_TOOL = {
    "type": "function",
    "function": {
        "name": "report",
        "description": "Return your conclusion to the delegating agent. This ends the sub-task.",
        "parameters": {"type": "object", "properties": {"conclusion": {"type": "string"}}, "required": ["conclusion"]},
    },
}
NO_CONCLUSION = "[sub-agent reported no conclusion]"


class Subagent(AgentLoop):
    """One sub-agent run through the agent loop; ``run()`` returns its conclusion (or why it has none)."""

    call_kind = "subagent"
    no_tool_call = "Use the tools; finish with report(conclusion)."
    withheld_tools = frozenset({"delegate"})  # a sub-agent cannot delegate

    def __init__(
        self,
        *,
        runner: SubagentRunner,
        run_id: int,
        task: str,
        session: Session,
        strategy: Any,
        ctx: TrialContext,
        max_steps: int,
    ) -> None:
        trial = runner.trial
        super().__init__(
            instance=trial.instance,
            strategy=strategy,
            session=session,
            counter=trial.counter,
            recorder=trial.recorder,
            ctx=ctx,
            budget=runner.budget(),
            final_tool=REPORT_TOOL,
            max_steps=max_steps,
            history=[
                {"role": "system", "content": f"{trial.instance.system_prompt}\n\n{SUBAGENT_SYSTEM}"},
                {"role": "user", "content": task},
            ],
        )
        self.runner, self.run_id = runner, run_id
        self.parent_step = trial.ctx.step
        self.conclusion = ""
        self.seen: set[str] = set()

    def run(self) -> str:
        """Step until ``report`` or a limit; the conclusion."""
        self.offer_tools()
        self.run_steps()
        return self.final_text()

    def final_text(self) -> str:
        """The conclusion it reported, or why it has none."""
        if self.outcome == "submitted":
            return self.conclusion
        if self.outcome is None:
            return f"[sub-agent stopped after {self.max_steps} steps without a conclusion]"
        if self.outcome == "strategy_error":
            return f"[sub-agent stopped: its strategy failed: {self.error}]"
        return f"[sub-agent failed: {self.error}]"

    # ------------------------------------------------------------ records

    def record_step(self) -> int:
        """The trial's step that delegated (its strategy events are numbered with it too)."""
        return self.parent_step

    def step_fields(self, prepared: Prepared, calls: list[tuple[str, str, Any]]) -> dict:
        """The sub-agent's number, its own step and the budget fields."""
        return {"subagent": self.run_id, "substep": self.steps, **prepared.budget_fields}

    def result_resource(self, resource: Any, is_error: bool) -> Any:
        """A failed call read nothing."""
        return None if is_error else resource

    def log_result(self, message: dict) -> None:
        """Count the read and log the call in the trial's tool log and transcript (``report``: by its conclusion)."""
        name = message["_tool"]
        if name == self.offer.final_name:
            return
        self.runner.log_tool(
            self.run_id, self.seen, name, message["_args"], message["content"], message["_error"], message["_resource"]
        )

    # ------------------------------------------------------------ report

    def final_call(self, args: dict, request: list[dict], reply: dict) -> CallResult:
        """``report``: keep the conclusion; the sub-agent is done."""
        self.conclusion = str(args.get("conclusion") or NO_CONCLUSION)
        return CallResult("Conclusion received. The sub-task is over.", False, None, True)


@dataclass
class SubagentStats:
    """Sub-agent runs of one trial: reads (re-reads counted within each run), budget and compactions."""

    runs: int = 0
    reads: int = 0
    rereads: int = 0
    compactions: int = 0
    budget: BudgetTracker | None = None


def _no_nested_delegation(task: str, max_steps: int, strategy: Any = None, budget: int | None = None) -> str:
    raise ToolError("a sub-agent cannot delegate")


class SubagentRunner:
    """Runs the sub-agents of one trial (``ctx.run_subagent``) and logs them in the trial's records."""

    def __init__(self, trial: Any) -> None:
        self.trial = trial
        self.stats = SubagentStats()

    def run(self, task: str, max_steps: int, strategy: Any = None, budget: int | None = None) -> str:
        """Run one sub-agent on ``task`` under ``strategy`` and ``budget`` (default: the trial's); its conclusion."""
        trial = self.trial
        self.stats.runs += 1
        run_id = self.stats.runs
        if self.stats.budget is None:  # one budget per trial: isolate's subagent_budget, else the trial's
            self.stats.budget = BudgetTracker(int(budget or trial.settings.budget))
        try:
            session = subagent_session(trial.model, trial.instance, task, trial.trial_index, run_id)
        except ModelError as exc:
            return f"ERROR: the sub-agent could not start: {exc}"
        trial.transcript.event(
            "subagent_start",
            step=trial.ctx.step,
            subagent=run_id,
            task=task,
            **({"budget": self.stats.budget.budget} if strategy is not None else {}),
        )
        conclusion = self.conclude(run_id, task, session, strategy, max_steps)
        trial.transcript.event("subagent_end", step=trial.ctx.step, subagent=run_id, conclusion=conclusion)
        return conclusion

    def conclude(self, run_id: int, task: str, session: Session, strategy: Any, max_steps: int) -> str:
        """Run sub-agent ``run_id`` (unmanaged, ``FullHistory``, without a strategy) and return its conclusion."""
        ctx = self.context(run_id, self.budget().budget)
        try:
            subagent = Subagent(
                runner=self,
                run_id=run_id,
                task=task,
                session=session,
                strategy=strategy if strategy is not None else FullHistory(),
                ctx=ctx,
                max_steps=max_steps,
            )
        except TypeError as exc:  # not a strategy (no prepare): the sub-task ends, not the trial
            return f"[sub-agent stopped: its strategy failed to start: {exc}]"
        conclusion = subagent.run()
        self.add_counts(subagent)
        return conclusion

    def budget(self) -> BudgetTracker:
        """The sub-agents' budget tracker (made by the first ``run``)."""
        assert self.stats.budget is not None
        return self.stats.budget

    def context(self, run_id: int, budget: int) -> TrialContext:
        """The strategy context of one sub-agent: its own budget and store; summaries billed to the trial."""
        trial = self.trial
        ctx = TrialContext(
            budget,
            trial.counter,
            Path(trial.ctx.store) / f"subagent-{run_id}",
            trial.transcript,
            trial.summarize,
            _no_nested_delegation,
        )
        ctx.step = trial.ctx.step
        ctx.subagent = run_id
        return ctx

    def add_counts(self, subagent: Subagent) -> None:
        """Add a finished sub-agent's compactions and refused or failed calls to the trial's counts."""
        trial = self.trial
        self.stats.compactions += subagent.ctx.compactions
        trial.tool_runner.counts.add(subagent.tool_runner.counts)

    def log_tool(
        self, run_id: int, seen: set, name: str, args: dict, content: str, is_error: bool, resource: Any
    ) -> None:
        """Count a sub-agent's read and log its tool call in the trial's tool log and transcript."""
        trial = self.trial
        if resource is not None:
            self.stats.reads += 1
            self.stats.rereads += resource in seen
            seen.add(resource)
        trial.tool_log.append(
            {
                "step": trial.ctx.step,
                "name": name,
                "args": args,
                "is_error": is_error,
                "resource": resource,
                "subagent": run_id,
            }
        )
        trial.transcript.event(
            "tool",
            step=trial.ctx.step,
            subagent=run_id,
            name=name,
            args=args,
            is_error=is_error,
            resource=resource,
            content=content,
        )

    def columns(self) -> dict:
        """The trial-row columns of the sub-agents' runs, reads and budget adherence."""
        budget = self.stats.budget
        return {
            "subagent_runs": self.stats.runs,
            "subagent_reads": self.stats.reads,
            "subagent_rereads": self.stats.rereads,
            "subagent_compactions": self.stats.compactions,
            "subagent_budget": budget.budget if budget else None,
            "subagent_peak_context": budget.peak if budget else 0,
            "subagent_over_budget_steps": budget.over_steps if budget else 0,
            "subagent_max_budget_ratio": budget.max_ratio if budget else 0.0,
        }

"""Sub-agents for the ``isolate`` strategy: a fresh context on the same task environment.

A sub-agent runs a small agent loop: system prompt, the delegated task, the task's tools
(plus its strategy's tools) and ``report(conclusion)``. It is managed like the main agent:
before every call its strategy (``isolate`` passes a fresh copy of its ``base``) projects
its history under its own budget (``isolate``'s ``subagent_budget``; by default the trial's
budget), and the projection is validated. A sub-agent cannot delegate again.

Its model calls go through the trial's ``CallRecorder`` as ``kind=subagent`` steps (with
``subagent``, ``substep``, ``over_budget`` and ``budget_ratio``), its tool calls join the
trial's tool log and transcript, and only the conclusion is returned to the main agent.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from harness.accounting import BudgetTracker
from harness.conversation import iter_calls, parse_arguments, strip_private, validate_projection
from harness.models.base import Completion, ModelError, session_for, takes_trial
from harness.trial_context import TrialContext
from strategies.base import ToolError

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

Record = Callable[[int, list[dict], list[dict], Completion, int], None]
OnTool = Callable[[str, dict, Any], None]


def subagent_session(model: Any, instance: Any, task: str, trial: int = 0, run: int = 1) -> Any:
    """The model session of a sub-agent: ``model.for_subtask`` if the model has it, else a normal session.

    ``trial`` and ``run`` (the sub-agent's number in the trial) seed a model's variation.
    """
    factory = getattr(model, "for_subtask", None)
    if callable(factory):
        return factory(instance, task, trial, run) if takes_trial(factory) else factory(instance, task)
    return session_for(model, instance, trial)


class SubagentLoop:
    """One sub-agent run; ``run()`` returns its conclusion (or why it has none)."""

    def __init__(self, *, task: str, instance: Any, session: Any, counter: Any, max_steps: int, record: Record,
                 on_tool: OnTool, strategy: Any = None, ctx: Any = None) -> None:
        self.instance, self.session, self.counter, self.max_steps = instance, session, counter, max_steps
        self.record, self.on_tool, self.strategy, self.ctx = record, on_tool, strategy, ctx
        self.history: list[dict] = [{"role": "system", "content": f"{instance.system_prompt}\n\n{SUBAGENT_SYSTEM}"},
                                    {"role": "user", "content": task}]
        self.strategy_tools = self.bind_strategy()
        self.strategy_tool_names = {t["function"]["name"] for t in self.strategy_tools}
        self.tools = list(instance.tools) + self.strategy_tools + [REPORT_TOOL]
        if ctx is not None:
            ctx.tools = self.tools

    def bind_strategy(self) -> list[dict]:
        """Bind the strategy to the sub-agent's context; its tools, minus ``delegate``."""
        if self.strategy is None:
            return []
        if hasattr(self.strategy, "bind"):
            self.strategy.bind(self.ctx)
        tools = list(self.strategy.tools()) if hasattr(self.strategy, "tools") else []
        return [t for t in tools if t.get("function", {}).get("name") != "delegate"]

    def run(self) -> str:
        """Loop until ``report`` or a limit."""
        for step in range(1, self.max_steps + 1):
            if self.ctx is not None:
                self.ctx.events_this_step = []
            try:
                request = self.prepare()
            except Exception as exc:  # an invalid projection (InvalidConversation) or a strategy bug
                return f"[sub-agent stopped: its strategy failed: {type(exc).__name__}: {exc}]"
            tokens = self.counter.request(request, self.tools)
            if tokens > self.session.context_window:
                return f"[sub-agent stopped: its context reached {tokens:,} tokens, over the model's window]"
            try:
                completion = self.session.complete([strip_private(m) for m in request], self.tools)
            except ModelError as exc:
                return f"[sub-agent failed: {exc}]"
            reply = {**completion.message, "role": "assistant", "_step": step}
            self.history.append(reply)
            self.record(step, request, self.tools, completion, tokens)
            conclusion = self.execute(reply, step)
            if conclusion is not None:
                return conclusion
        return f"[sub-agent stopped after {self.max_steps} steps without a conclusion]"

    def prepare(self) -> list[dict]:
        """The strategy's projection of the sub-agent's history (validated), or the history itself."""
        if self.strategy is None:
            return list(self.history)
        request = self.strategy.prepare(list(self.history))
        validate_projection(request, self.history[0])
        return request

    def execute(self, reply: dict, step: int) -> str | None:
        """Run the reply's tool calls; the conclusion when it reports."""
        calls = list(iter_calls(reply))
        if not calls:
            self.history.append({"role": "user", "content": "Use the tools; finish with report(conclusion).",
                                 "_step": step, "_nudge": True})
            return None
        for call_id, name, raw in calls:
            try:
                args = parse_arguments(raw)
            except ValueError as exc:
                self.append_result(call_id, name, {}, f"ERROR: {exc}", True, None, step)
                continue
            if name == "report":
                return str(args.get("conclusion") or "[sub-agent reported no conclusion]")
            if name in self.strategy_tool_names:
                self.append_result(call_id, name, args, *self.strategy_call(name, args), None, step)
                continue
            result = self.instance.call(name, args)
            self.on_tool(name, args, result)
            self.append_result(call_id, name, args, result.content, result.is_error, result.resource, step)
        return None

    def strategy_call(self, name: str, args: dict) -> tuple[str, bool]:
        """A call of the strategy's own tool: ``(content, is_error)``."""
        try:
            return str(self.strategy.call(name, args)), False
        except ToolError as exc:
            return f"ERROR: {exc}", True
        except Exception as exc:
            return f"ERROR: internal error in {name}: {type(exc).__name__}", True

    def append_result(self, call_id: str, name: str, args: dict, content: str, is_error: bool, resource: Any,
                      step: int) -> None:
        """Append a tool result with the private keys strategies read."""
        self.history.append({"role": "tool", "tool_call_id": call_id, "content": content, "_step": step,
                             "_tool": name, "_args": args, "_error": is_error,
                             "_resource": None if is_error else resource})


def run_subagent(*, task: str, instance: Any, session: Any, counter: Any, max_steps: int, record: Record,
                 on_tool: OnTool, strategy: Any = None, ctx: Any = None) -> str:
    """Run the sub-task and return the sub-agent's conclusion (or why it has none)."""
    try:
        loop = SubagentLoop(task=task, instance=instance, session=session, counter=counter, max_steps=max_steps,
                            record=record, on_tool=on_tool, strategy=strategy, ctx=ctx)
    except Exception as exc:  # a strategy that cannot start ends the sub-task, not the trial
        return f"[sub-agent stopped: its strategy failed to start: {type(exc).__name__}: {exc}]"
    return loop.run()


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
        budget = self.stats.budget.budget
        try:
            session = subagent_session(trial.model, trial.instance, task, trial.trial_index, run_id)
        except ModelError as exc:
            return f"ERROR: the sub-agent could not start: {exc}"
        trial.transcript.event("subagent_start", step=trial.ctx.step, subagent=run_id, task=task,
                               **({"budget": budget} if strategy is not None else {}))
        ctx = self.context(run_id, budget) if strategy is not None else None
        tracker = self.stats.budget
        seen: set[str] = set()

        def record(sub_step: int, request: list[dict], tools: list[dict], completion: Completion, tokens: int) -> None:
            extra = {"subagent": run_id, "substep": sub_step, **tracker.observe(tokens)}
            trial.recorder.record("subagent", trial.ctx.step, request, tools, completion, tokens, extra)

        def on_tool(name: str, args: dict, result: Any) -> None:
            self.log_tool(run_id, seen, name, args, result)

        conclusion = run_subagent(task=task, instance=trial.instance, session=session, counter=trial.counter,
                                  max_steps=max_steps, record=record, on_tool=on_tool, strategy=strategy, ctx=ctx)
        if ctx is not None:
            self.stats.compactions += ctx.compactions
        trial.transcript.event("subagent_end", step=trial.ctx.step, subagent=run_id, conclusion=conclusion)
        return conclusion

    def context(self, run_id: int, budget: int) -> TrialContext:
        """The strategy context of one sub-agent: its own budget and store; summaries billed to the trial."""
        trial = self.trial
        ctx = TrialContext(budget, trial.counter, Path(trial.ctx.store) / f"subagent-{run_id}", trial.transcript,
                           trial.summarize, _no_nested_delegation)
        ctx.step = trial.ctx.step
        ctx.subagent = run_id
        return ctx

    def log_tool(self, run_id: int, seen: set, name: str, args: dict, result: Any) -> None:
        """Count a sub-agent's read and log its tool call in the trial's tool log and transcript."""
        trial = self.trial
        resource = None if result.is_error else result.resource
        if resource is not None:
            self.stats.reads += 1
            self.stats.rereads += resource in seen
            seen.add(resource)
        trial.tool_log.append({"step": trial.ctx.step, "name": name, "args": args, "is_error": result.is_error,
                               "resource": resource, "subagent": run_id})
        trial.transcript.event("tool", step=trial.ctx.step, subagent=run_id, name=name, args=args,
                               is_error=result.is_error, resource=resource, content=result.content)

    def columns(self) -> dict:
        """The trial-row columns of the sub-agents' runs, reads and budget adherence."""
        budget = self.stats.budget
        return {"subagent_runs": self.stats.runs, "subagent_reads": self.stats.reads,
                "subagent_rereads": self.stats.rereads, "subagent_compactions": self.stats.compactions,
                "subagent_budget": budget.budget if budget else None,
                "subagent_peak_context": budget.peak if budget else 0,
                "subagent_over_budget_steps": budget.over_steps if budget else 0,
                "subagent_max_budget_ratio": budget.max_ratio if budget else 0.0}

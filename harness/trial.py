"""The main agent's run: one trial, from the task's prompts to ``submit`` or a limit.

``Trial`` is the step pipeline of harness/agent_loop.py (the one agent loop, which sub-agents
run too) with the trial around it: the task's prompts (and the start hook) open the
append-only history, the final tool is ``submit`` (which grades and ends the trial, unless the
stop hook refuses it), its model calls are recorded as ``kind=agent``, and everything is logged
to the trial's transcript and to ``steps.jsonl``. Every model call, whatever its kind, is
recorded by the trial's ``CallRecorder`` (harness/accounting.py); ``finish`` returns the trial's row.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, ParamSpec

from harness.accounting import BudgetTracker, CallRecorder
from harness.agent_loop import AgentLoop, Prepared, TaskEnvironment
from harness.cache_sim import PROFILES, CacheProfile
from harness.contracts import strategy_class
from harness.hooks import CONTINUE_MESSAGE, PLAN_INSTRUCTION, Hooks, completion_gaps
from harness.models.base import Completion, Model, ModelError, session_for
from harness.pricing import AutoPricing, Pricing
from harness.records import RunWriter
from harness.subagent import SubagentRunner
from harness.tokens import TokenCounter
from harness.tool_runner import CallResult
from harness.trial_context import MessageTable, TrialContext
from harness.trial_row import LoopCounts, ReadTracker, TrialIdentity, TrialStats, agent_profile
from tasks.base import Grade

NO_TOOL_CALL = (
    "Your reply contained no tool call. Continue the task with the tools; call submit(...) with your answer when done."
)


def submit_tool(answer_schema: dict) -> dict:
    """The ``submit`` tool the harness adds to every task."""
    return {
        "type": "function",
        "function": {
            "name": "submit",
            "description": "Submit your final answer. This ends the task.",
            "parameters": answer_schema,
        },
    }


@dataclass
class TrialSettings:
    """Per-run limits and labels that every trial needs."""

    budget: int
    max_steps: int
    strategy_name: str
    strategy_params: dict
    model_name: str
    pricing: Pricing | AutoPricing = field(default_factory=Pricing)
    run_name: str = ""
    cache_profile: CacheProfile = field(default_factory=lambda: PROFILES["openai"])
    hooks: Hooks = field(default_factory=Hooks)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Trial(AgentLoop):
    """One trial of one strategy on one task instance; ``run()`` returns its row."""

    call_kind = "agent"
    no_tool_call = NO_TOOL_CALL

    def __init__(
        self,
        *,
        trial_id: str,
        trial_index: int,
        instance: TaskEnvironment,
        strategy: Any,
        model: Model,
        summarizer: Model | None,
        settings: TrialSettings,
        writer: RunWriter,
        text_cache: dict[str, int] | None = None,
    ) -> None:
        self.trial_id, self.trial_index, self.model, self.settings = trial_id, trial_index, model, settings
        self.started, self.started_at = time.perf_counter(), _now()
        counter = TokenCounter(text_cache)
        self.transcript = writer.transcript(trial_id)
        self.table = MessageTable(self.transcript)
        session = session_for(model, instance, trial_index)
        self.summarizer = (
            session if summarizer is None or summarizer is model else session_for(summarizer, instance, trial_index)
        )
        recorder = CallRecorder(trial_id, counter, settings.pricing, settings.cache_profile, writer.step)
        ctx = TrialContext(
            settings.budget,
            counter,
            writer.run_dir / "stores" / trial_id,
            self.transcript,
            self.summarize,
            self.run_subagent,
        )
        super().__init__(
            instance=instance,
            strategy=strategy,
            session=session,
            counter=counter,
            recorder=recorder,
            ctx=ctx,
            budget=BudgetTracker(settings.budget),
            final_tool=submit_tool(instance.answer_schema),
            max_steps=settings.max_steps,
            history=[
                {"role": "system", "content": instance.system_prompt},
                {"role": "user", "content": instance.user_prompt},
            ],
        )
        self.tool_log: list[dict] = []
        self.reads = ReadTracker()
        self.subagents = SubagentRunner(self)
        self.grade: Any = None
        self.answer: dict | None = None
        self.continues = 0

    # ------------------------------------------------------------ the run

    def run(self) -> dict:
        """Run the trial to its end and return its row."""
        self.start()
        self.run_steps()
        return self.finish()

    def start(self) -> None:
        """Add the start hook, bind the strategy, offer the tools, log the trial's start."""
        if self.settings.hooks.plan:
            self.history.messages.append({"role": "user", "content": PLAN_INSTRUCTION, "_hook": "plan"})
            self.transcript.event("hook", step=0, name="plan")
        self.history.tokens = self.counter.messages(self.history.messages)
        self.offer_tools()
        self.transcript.event(
            "trial_start",
            trial_id=self.trial_id,
            instance=self.instance.id,
            family=self.instance.family,
            seed=self.instance.seed,
            trial=self.trial_index,
            strategy=self.settings.strategy_name,
            strategy_params=self.settings.strategy_params,
            budget=self.settings.budget,
            model=self.settings.model_name,
            reference_agent=self.is_reference,
            tools=self.offer.tools,
            started_at=self.started_at,
        )
        for message in self.history.messages:
            self.table.ref(message)

    @property
    def is_reference(self) -> bool:
        """Whether the model is the scripted reference agent (not an LLM)."""
        return bool(self.model.is_reference)

    # ------------------------------------------------------------ records

    def record_step(self) -> int:
        """The trial's step (its strategy events are numbered with it too)."""
        return self.steps

    def step_fields(self, prepared: Prepared, calls: list[tuple[str, str, Any]]) -> dict:
        """The history's size, the reply's calls, the strategy's events and the budget fields."""
        return {
            "history_tokens": self.history.tokens,
            "tool_calls": [name for _, name, _ in calls],
            "strategy_events": list(self.ctx.events_this_step),
            **prepared.budget_fields,
        }

    def ref(self, message: dict) -> str:
        """The message's ref in the transcript (its body logged the first time)."""
        return self.table.ref(message)

    def log_request(self, prepared: Prepared) -> None:
        """The request event: refs, tokens and this step's choice of tools."""
        self.transcript.event(
            "request", step=self.steps, refs=prepared.refs, tokens=prepared.tokens, **self.offer.fields()
        )

    def log_reply(self, reply: dict, completion: Completion) -> None:
        """The reply event: its ref and the call's latency."""
        self.transcript.event(
            "reply", step=self.steps, ref=self.table.ref(reply), latency_s=round(completion.latency_s, 6)
        )

    def log_result(self, message: dict) -> None:
        """Count the read, add the call to the tool log and log the result."""
        name, args, is_error, resource = message["_tool"], message["_args"], message["_error"], message["_resource"]
        self.reads.observe(None if is_error else resource)
        self.tool_log.append(
            {"step": self.steps, "name": name, "args": args, "is_error": is_error, "resource": resource}
        )
        self.transcript.event(
            "tool",
            step=self.steps,
            name=name,
            args=args,
            is_error=is_error,
            resource=resource,
            ref=self.table.ref(message),
        )

    # ------------------------------------------------------------ submit

    def final_call(self, args: dict, request: list[dict], reply: dict) -> CallResult:
        """``submit``: the answer is graded and ends the trial, unless the stop hook refuses it."""
        content, is_error = self.submit(args, request, reply)
        return CallResult(content, is_error, None, self.answer is not None)

    def submit(self, args: dict, request: list[dict], reply: dict) -> tuple[str, bool]:
        """Grade the answer, unless the stop hook finds unfinished work and refuses it."""
        hooks = self.settings.hooks
        if hooks.completion_check and self.continues < hooks.max_continues:
            try:
                gaps = completion_gaps(self.instance, self.model, [*request, reply], args, self.judge)
            except ModelError as exc:
                self.end("model_error", f"the stop hook's judge call failed: {exc}")
                return "ERROR: the completion check could not run.", True
            if gaps:
                self.continues += 1
                self.transcript.event("hook", step=self.steps, name="completion_check", accepted=False, gaps=gaps)
                self.ctx.events_this_step.append("stop_hook")
                return CONTINUE_MESSAGE.format(gaps=gaps), False
        self.answer = args
        self.grade = self.safe_grade(args)
        return "Answer received. The task is over.", False

    def safe_grade(self, args: dict) -> Grade:
        """The grader's verdict; a grader that raises makes a failed trial with its reason, never a crash."""
        try:
            return self.instance.grade(args)
        except Exception as exc:
            self.error = f"the grader raised {type(exc).__name__}: {str(exc)[:200]}"
            return Grade(success=False, score=0.0, detail={"grader_error": self.error})

    # ------------------------------------------------------------ other kinds of call

    def summarize(self, request: list[dict]) -> str:
        """A summarizer call (``ctx.summarize``): sent, logged and recorded as ``kind=summarizer``.

        Any failure of the call is a ``ModelError`` (a backend bug included), so the trial ends as
        ``model_error`` however the strategy lets it through.
        """
        try:
            completion = self.summarizer.complete(request, [])
        except ModelError:
            raise
        except Exception as exc:
            raise ModelError(f"{type(exc).__name__}: {exc}") from exc
        tokens = self.counter.request(request, [])
        self.transcript.event(
            "summarizer",
            step=self.ctx.step,
            request=[self.table.ref(m) for m in request],
            reply=completion.message.get("content"),
        )
        self.recorder.record("summarizer", self.ctx.step, request, [], completion, tokens)
        return str(completion.message.get("content") or "")

    def judge(self, request: list[dict]) -> Completion:
        """A stop-hook call to the agent's model, recorded as ``kind=stop_hook``."""
        completion = self.agent.complete(request, [])
        self.recorder.record("stop_hook", self.ctx.step, request, [], completion, self.counter.request(request, []))
        return completion

    def run_subagent(self, task: str, max_steps: int, strategy: Any = None, budget: int | None = None) -> str:
        """A sub-agent run (``ctx.run_subagent``); its calls are recorded as ``kind=subagent``."""
        return self.subagents.run(task, max_steps, strategy, budget)

    # ------------------------------------------------------------ finish

    def stats(self, wall_s: float) -> TrialStats:
        """What the finished trial's row is made of."""
        settings, instance, meter = self.settings, self.instance, self.meter
        identity = TrialIdentity(
            trial_id=self.trial_id,
            run=settings.run_name,
            strategy=settings.strategy_name,
            strategy_class=strategy_class(self.strategy),
            strategy_params=settings.strategy_params,
            budget=settings.budget,
            family=instance.family,
            instance_id=instance.id,
            seed=instance.seed,
            trial=self.trial_index,
            model=settings.model_name,
            reference_agent=self.is_reference,
            agent_profile=agent_profile(self.model) if self.is_reference else None,
        )
        counts = LoopCounts(
            steps=self.steps,
            calls=self.tool_runner.counts,
            peak_context=meter.peak_context,
            over_budget_steps=meter.budget.over_steps,
            max_budget_ratio=meter.budget.max_ratio,
            final_history_tokens=self.history.tokens,
            compactions=self.ctx.compactions,
            rewrites_system=self.strategy.rewrites_system,
            tool_schema_tokens=meter.tool_schema_tokens,
            tool_schema_tokens_saved=meter.tool_schema_tokens_saved,
        )
        return TrialStats(
            identity=identity,
            outcome=self.outcome,
            grade=self.grade,
            error=self.error,
            counts=counts,
            reads=self.reads,
            recorder=self.recorder,
            cache_profile=settings.cache_profile.name,
            hook_continues=self.continues,
            subagent_columns=self.subagents.columns(),
            task_metrics=instance.trial_metrics(self.tool_log),
            request_tokens=self.transcript.request_tokens,
            wall_s=wall_s,
            started_at=self.started_at,
        )

    def finish(self) -> dict:
        """Close the transcript and return the trial's row."""
        if self.outcome is None:
            self.outcome = "step_limit"
        row = self.stats(wall_s=time.perf_counter() - self.started).row()
        self.transcript.event(
            "trial_end",
            outcome=self.outcome,
            success=row["success"],
            score=row["score"],
            error=self.error,
            answer=self.answer,
            steps=self.steps,
        )
        self.transcript.commit()
        return row


P = ParamSpec("P")


def running(trial: Callable[P, Trial]) -> Callable[P, dict]:
    """``run_trial``: make the trial with the arguments ``Trial`` takes, run it, and return its row."""

    def run_trial(*args: P.args, **kwargs: P.kwargs) -> dict:
        """Run one trial (``Trial``'s keyword arguments) and return its row (the caller appends it to
        ``trials.jsonl``)."""
        return trial(*args, **kwargs).run()

    return run_trial


run_trial = running(Trial)

"""Sub-agents for the ``isolate`` strategy: a fresh context on the same task environment.

``run_subagent`` runs a small, unmanaged agent loop: system prompt, the delegated task,
the task's tools plus ``report(conclusion)``. Its calls are recorded through the
``record`` callback as ``kind=subagent`` steps and its tool calls through ``on_tool``,
so the trial bills and logs them apart. Only the conclusion is returned.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from harness.conversation import iter_calls, parse_arguments, strip_private
from harness.models.base import Completion, ModelError

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


def subagent_session(model: Any, instance: Any, task: str) -> Any:
    """The model session of a sub-agent: ``model.for_subtask`` if the model has it, else a normal session."""
    factory = getattr(model, "for_subtask", None)
    if callable(factory):
        return factory(instance, task)
    trial_factory = getattr(model, "for_trial", None)
    return trial_factory(instance) if callable(trial_factory) else model


def run_subagent(*, task: str, instance: Any, session: Any, counter: Any, max_steps: int,
                 record: Callable[[int, list[dict], list[dict], Completion, int], None],
                 on_tool: Callable[[str, dict, Any], None]) -> str:
    """Run the sub-task and return the sub-agent's conclusion (or why it has none)."""
    tools = list(instance.tools) + [REPORT_TOOL]
    history: list[dict] = [{"role": "system", "content": f"{instance.system_prompt}\n\n{SUBAGENT_SYSTEM}"},
                           {"role": "user", "content": task}]
    for step in range(1, max_steps + 1):
        tokens = counter.request(history, tools)
        if tokens > session.context_window:
            return f"[sub-agent stopped: its context reached {tokens:,} tokens, over the model's window]"
        try:
            completion = session.complete([strip_private(m) for m in history], tools)
        except ModelError as exc:
            return f"[sub-agent failed: {exc}]"
        reply = dict(completion.message)
        reply["role"] = "assistant"
        history.append(reply)
        record(step, history[:-1], tools, completion, tokens)
        calls = list(iter_calls(reply))
        if not calls:
            history.append({"role": "user", "content": "Use the tools; finish with report(conclusion)."})
            continue
        for call_id, name, raw in calls:
            try:
                args = parse_arguments(raw)
            except ValueError as exc:
                history.append({"role": "tool", "tool_call_id": call_id, "content": f"ERROR: {exc}"})
                continue
            if name == "report":
                return str(args.get("conclusion") or "[sub-agent reported no conclusion]")
            result = instance.call(name, args)
            on_tool(name, args, result)
            history.append({"role": "tool", "tool_call_id": call_id, "content": result.content})
    return f"[sub-agent stopped after {max_steps} steps without a conclusion]"


@dataclass
class SubagentStats:
    """Sub-agent runs of one trial and their reads (re-reads are counted within each run)."""

    runs: int = 0
    reads: int = 0
    rereads: int = 0


class SubagentRunner:
    """Runs the sub-agents of one trial (``ctx.run_subagent``) and logs them in the trial's records.

    Their model calls go through the trial's ``CallRecorder`` as ``kind=subagent``; their tool
    calls join the trial's tool log and transcript, marked with the run number.
    """

    def __init__(self, trial: Any) -> None:
        self.trial = trial
        self.stats = SubagentStats()

    def run(self, task: str, max_steps: int) -> str:
        """Run one sub-agent on ``task`` and return its conclusion."""
        trial = self.trial
        self.stats.runs += 1
        run_id = self.stats.runs
        try:
            session = subagent_session(trial.model, trial.instance, task)
        except ModelError as exc:
            return f"ERROR: the sub-agent could not start: {exc}"
        trial.transcript.event("subagent_start", step=trial.ctx.step, subagent=run_id, task=task)
        seen: set[str] = set()

        def record(sub_step: int, request: list[dict], tools: list[dict], completion: Completion, tokens: int) -> None:
            trial.recorder.record("subagent", trial.ctx.step, request, tools, completion, tokens,
                                  {"subagent": run_id, "substep": sub_step})

        def on_tool(name: str, args: dict, result: Any) -> None:
            self.log_tool(run_id, seen, name, args, result)

        conclusion = run_subagent(task=task, instance=trial.instance, session=session, counter=trial.counter,
                                  max_steps=max_steps, record=record, on_tool=on_tool)
        trial.transcript.event("subagent_end", step=trial.ctx.step, subagent=run_id, conclusion=conclusion)
        return conclusion

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
        """The trial-row columns of the sub-agents' runs and reads."""
        return {"subagent_runs": self.stats.runs, "subagent_reads": self.stats.reads,
                "subagent_rereads": self.stats.rereads}

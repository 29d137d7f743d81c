"""Sub-agents for the ``isolate`` strategy: a fresh context on the same task environment.

``run_subagent`` runs a small, unmanaged agent loop: system prompt, the delegated task,
the task's tools plus ``report(conclusion)``. Its calls are recorded through the
``record`` callback as ``kind=subagent`` steps and its tool calls through ``on_tool``,
so the trial bills and logs them apart. Only the conclusion is returned.
"""
from __future__ import annotations

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

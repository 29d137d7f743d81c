"""Helpers for the batching tests of the family policies (profile ``realistic``, ``parallel_calls``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.trial import TrialSettings, run_trial
from harness.records import RunWriter
from reference_agent.profiles import RATE_LIMITED
from reference_agent.scripted import ScriptedModel
from strategies.none import NoManagement


def start(instance: Any) -> list[dict]:
    """The first request of a trial: system prompt and task."""
    return [{"role": "system", "content": instance.system_prompt}, {"role": "user", "content": instance.user_prompt}]


def call_args(call: dict) -> tuple[str, dict]:
    """A call's tool name and parsed arguments."""
    return call["function"]["name"], json.loads(call["function"].get("arguments") or "{}")


def answer_round(
    instance: Any, messages: list[dict], reply: dict, calls: list[dict], limit: int | None = None, step: int = 0
) -> list[dict]:
    """``messages`` plus the assistant turn issuing ``calls`` and one result per call; calls beyond ``limit``
    get a rate-limited result (the call was not done)."""
    calls = [{**call, "id": f"c{step}-{i}"} for i, call in enumerate(calls)]
    out = messages + [{"role": "assistant", "content": reply.get("content") or "", "tool_calls": calls}]
    for index, call in enumerate(calls):
        if limit is not None and index >= limit:
            content = f"{RATE_LIMITED}: at most {limit} calls per turn; this call was not done"
        else:
            name, args = call_args(call)
            content = instance.call(name, args).content
        out.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    return out


def batched_run(
    instance: Any, policy: Any, limit: int | None = None, max_steps: int = 60
) -> tuple[list[list[dict]], dict]:
    """Drive ``policy`` the way the realistic profile does, without noise: each turn issues ``act``'s call
    plus every call of ``parallel_calls``; a task ``limit`` rate-limits the calls of a turn beyond it.
    Returns the requests the policy saw and its final (submitting) reply."""
    messages = start(instance)
    requests = []
    for step in range(max_steps):
        requests.append(list(messages))
        reply = policy.act(messages, instance.tools)
        calls = list(reply.get("tool_calls") or [])
        if not calls or any(c["function"]["name"] == "submit" for c in calls):
            return requests, reply
        if len(calls) == 1:
            calls += policy.parallel_calls(messages, instance.tools, calls[0])
        messages = answer_round(instance, messages, reply, calls, limit, step)
    raise AssertionError("the policy did not submit")


def profiled_row(directory: Path, instance: Any, trial: int = 0, profile: str = "realistic") -> dict:
    """One unmanaged trial of the scripted reference agent under ``profile`` (unbounded window), recorded in
    ``directory``."""
    writer = RunWriter(directory / f"{profile}-{instance.seed}-{trial}")
    settings = TrialSettings(
        budget=10_000_000, max_steps=150, strategy_name="none", strategy_params={}, model_name="scripted"
    )
    row = run_trial(
        trial_id=f"t{trial}",
        trial_index=trial,
        instance=instance,
        strategy=NoManagement(),
        model=ScriptedModel(context_window=10_000_000, profile=profile),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    return row

"""Shared helpers for the task-family tests: one trial of the reference agent."""

from __future__ import annotations

import json
from typing import Iterator

from harness.trial import TrialSettings, run_trial
from harness.records import RunWriter
from reference_agent.policies import reference_policy
from reference_agent.scripted import ScriptedModel
from strategies.none import NoManagement


def run(tmp_path, family, seed=0, strategy=None, budget=10_000_000, max_steps=400, trial_id="t"):
    """Run one trial of ``family``'s instance for ``seed`` (unbounded window by default); return (row, instance)."""
    instance = family.generate(seed)
    row = _run(tmp_path / f"{trial_id}-{seed}", instance, strategy, budget, max_steps, trial_id)
    return row, instance


def run_reference(tmp_path, instance, strategy=None, max_steps=150, trial_id="t", budget=10_000_000, model=None):
    """The scripted reference agent (``model``, default perfect) on ``instance`` with ``strategy`` (default: none)."""
    return _run(tmp_path, instance, strategy, budget, max_steps, trial_id, model)


def _run(directory, instance, strategy, budget, max_steps, trial_id, model=None):
    writer = RunWriter(directory)
    settings = TrialSettings(
        budget=budget, max_steps=max_steps, strategy_name="test", strategy_params={}, model_name="scripted"
    )
    row = run_trial(
        trial_id=trial_id,
        trial_index=0,
        instance=instance,
        strategy=strategy or NoManagement(),
        model=model or ScriptedModel(profile="perfect", context_window=10_000_000),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    return row


def unmanaged_requests(instance, max_steps: int = 80) -> Iterator[list[dict]]:
    """Each request the reference agent sees in an unmanaged run (the whole history), until it submits."""
    policy = reference_policy(instance)
    messages = [
        {"role": "system", "content": instance.system_prompt},
        {"role": "user", "content": instance.user_prompt},
    ]
    for step in range(max_steps):
        yield list(messages)
        message = dict(policy.act(messages, instance.tools))
        calls = [{**call, "id": f"c{step}-{i}"} for i, call in enumerate(message.get("tool_calls") or [])]
        if not calls or any(c["function"]["name"] == "submit" for c in calls):
            return
        messages.append({**message, "tool_calls": calls})
        for call in calls:
            result = instance.call(call["function"]["name"], json.loads(call["function"]["arguments"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result.content})
    raise AssertionError("the reference agent did not submit")

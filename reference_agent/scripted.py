"""``model=scripted``: the reference agent. Deterministic, no LLM, no cost.

Each task family has a policy (``reference_agent/policies``) that acts only on the messages of the
prepared request.
Whatever a strategy removed, the reference agent no longer knows: it re-reads it or
answers without it. It also writes the summaries that summarizing strategies ask for,
from what is visible, in the seed's four-part template. It is an instrument for what a
strategy preserves and what it costs; it is not an LLM, and every output says so.
"""

from __future__ import annotations

import itertools
from typing import Any

from harness.models.base import Completion, ModelError, PreflightError, Usage
from harness.summarizer import is_summary_request
from reference_agent.policies import missing_policy_line, policy_source, reference_policy
from reference_agent.policy_kit import StrategyToolUse
from reference_agent.profiles import AgentProfile, ProfiledPolicy, make_profile

REFERENCE_LABEL = "scripted reference agent (deterministic policy, not an LLM)"


def reference_label(profile: AgentProfile) -> str:
    """How every output names the reference agent and its profile."""
    if profile.is_perfect and profile.name == "perfect":
        return "scripted reference agent, profile perfect (deterministic policy, not an LLM)"
    return (
        f"scripted reference agent, profile {profile.name} (a policy with batching up to {profile.batch_cap} "
        "calls, seeded variation and an attention model; not an LLM)"
    )


class ScriptedModel:
    """Factory of per-trial reference-agent sessions.

    Parameters:
        name: the name recorded in every row (default ``scripted``).
        context_window: the window a request may not exceed (default 131,072 tokens).
        profile: ``realistic`` (default: batching, seeded variation, attention model; calibrated on a
            real LLM) or ``perfect`` (the noise-free instrument); see reference_agent/profiles.py.
        profile_params: overrides of the profile's parameters (``batch_cap``, ``batch_min_share``,
            ``shuffle``, ``early_submit``, ``attention: {base, rot, middle, ref_tokens, cap}``);
            ``None`` values keep the profile's own.
    """

    is_reference = True
    cpu_bound = True
    """Its policy is Python that competes for the GIL: ``workers=N`` runs it in processes (harness/workers.py)."""

    def __init__(
        self,
        name: str = "scripted",
        context_window: int = 131_072,
        profile: str = "realistic",
        profile_params: dict | None = None,
    ) -> None:
        self.name = name
        self.context_window = int(context_window)
        self.profile = make_profile(str(profile), **dict(profile_params or {}))
        self.label = reference_label(self.profile)

    def check_task(self, instance: Any) -> None:
        """Refuse, before any trial runs, a family it has no policy for (``PreflightError``; the runner calls it with
        one instance of each family of the run): a family from outside the repository without ``reference_policy()``
        (reference_agent/policies/__init__.py)."""
        if policy_source(instance) is None:
            raise PreflightError(missing_policy_line(instance.family))

    def for_trial(self, instance: Any, trial: int = 0) -> "ScriptedSession":
        """A session following ``instance``'s reference policy under the profile (seeded by seed and trial)."""
        policy = ProfiledPolicy(reference_policy(instance), self.profile, instance.id, trial)
        return ScriptedSession(self, StrategyToolUse(policy))

    def for_subtask(self, instance: Any, task: str, trial: int = 0, run: int = 1) -> "ScriptedSession":
        """A sub-agent session: the family policy's ``subagent_policy(task)``, if it has one."""
        base = reference_policy(instance)
        factory = getattr(base, "subagent_policy", None)
        if not callable(factory):
            raise ModelError(f"the {instance.family} reference policy cannot act as a sub-agent")
        policy = ProfiledPolicy(factory(task), self.profile, instance.id, trial, stream=f"subagent-{run}")
        return ScriptedSession(self, StrategyToolUse(policy))

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:  # pragma: no cover
        raise ModelError("the scripted model needs a task: use for_trial(instance)")


class ScriptedSession:
    """One trial of the reference agent: its policy plus a tool-call id counter."""

    is_reference = True

    def __init__(self, model: ScriptedModel, policy: Any) -> None:
        self.name = model.name
        self.context_window = model.context_window
        self.policy = policy
        self._ids = itertools.count(1)

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        """Act (or summarize) on exactly the messages given."""
        if is_summary_request(messages):
            text = self.policy.summarize(str(messages[-1].get("content", "")))
            message = {"role": "assistant", "content": text}
        else:
            message = dict(self.policy.act(messages, tools))
            message.setdefault("content", "")
            calls = []
            for call in message.get("tool_calls") or []:
                call = dict(call)
                call.pop("repeat", None)  # the policy's mark for repeated consuming calls (policy_kit.make_call)
                call.setdefault("type", "function")
                call["id"] = f"call_{next(self._ids)}"
                calls.append(call)
            if calls:
                message["tool_calls"] = calls
        message["role"] = "assistant"
        return Completion(message=message, usage=Usage(cached_source="none", tokens_source="tiktoken"))

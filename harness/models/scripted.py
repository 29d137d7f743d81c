"""``model=scripted``: the reference agent. Deterministic, no LLM, no cost.

Each task family ships a policy that acts only on the messages of the prepared request.
Whatever a strategy removed, the reference agent no longer knows: it re-reads it or
answers without it. It also writes the summaries that summarizing strategies ask for,
from what is visible, in the seed's four-part template. It is an instrument for what a
strategy preserves and what it costs; it is not an LLM, and every output says so.
"""
from __future__ import annotations

import itertools
from typing import Any

from harness.models.base import Completion, ModelError, Usage
from harness.summarizer import is_summary_request

REFERENCE_LABEL = "scripted reference agent (deterministic policy, not an LLM)"


class ScriptedModel:
    """Factory of per-trial reference-agent sessions.

    Parameters:
        name: the name recorded in every row (default ``scripted``).
        context_window: the window a request may not exceed (default 131,072 tokens).
    """

    is_reference = True

    def __init__(self, name: str = "scripted", context_window: int = 131_072) -> None:
        self.name = name
        self.context_window = int(context_window)
        self.label = REFERENCE_LABEL

    def for_trial(self, instance: Any) -> "ScriptedSession":
        """A session following ``instance``'s reference policy."""
        from tasks.policy_kit import StrategyToolUse

        return ScriptedSession(self, StrategyToolUse(instance.reference_policy()))

    def for_subtask(self, instance: Any, task: str) -> "ScriptedSession":
        """A sub-agent session: the family policy's ``subagent_policy(task)``, if it has one."""
        from tasks.policy_kit import StrategyToolUse

        base = instance.reference_policy()
        factory = getattr(base, "subagent_policy", None)
        if not callable(factory):
            raise ModelError(f"the {instance.family} reference policy cannot act as a sub-agent")
        return ScriptedSession(self, StrategyToolUse(factory(task)))

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
                call.setdefault("type", "function")
                call["id"] = f"call_{next(self._ids)}"
                calls.append(call)
            if calls:
                message["tool_calls"] = calls
        message["role"] = "assistant"
        return Completion(message=message, usage=Usage(cached_source="none", tokens_source="tiktoken"))

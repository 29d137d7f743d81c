"""The default reference policy: for a family that registers none, it submits an empty answer at once.

A family registered in ``tasks`` whose ``FamilySpec`` names no ``policy`` (and whose instances have no
``reference_policy()``) still runs under ``model=scripted``: this policy calls no task tool and submits
``{}``, the answer of an agent that did nothing. Its numbers mean little: success is whatever the family's
grader gives an empty answer (normally failure, score 0), every strategy sees the same two-message
history, and no strategy has anything to manage. It exists so that a new family of the repository runs
end to end (configs, records, report) before its own policy is written, and it is honest: it never reads
the instance's hidden state.

A family from outside the repository gets no such run: with neither a registration nor a
``reference_policy()``, ``model=scripted`` refuses it before the first trial (one line, exit 2;
``reference_agent/policies/__init__.py``), since 0% from an empty answer reads like a result. Only direct
callers of ``reference_policy`` (the dry run's estimate, tests) still get this policy for it.
"""

from __future__ import annotations

from reference_agent.policy_kit import failed_attempts, format_summary, submit, tools_used

EMPTY_ANSWER_NOTE = "This family has no reference policy; the default policy submits an empty answer."
"""The text of the default policy's one reply."""


class EmptyAnswerPolicy:
    """Submits ``{}`` on its first step, whatever the task says (the default reference policy)."""

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Submit an empty answer."""
        return submit(EMPTY_ANSWER_NOTE)

    def summarize(self, history_text: str) -> str:
        """The four-part summary of a history in which nothing was found."""
        return format_summary([], tools_used(history_text), failed_attempts(history_text), ["submit an empty answer"])

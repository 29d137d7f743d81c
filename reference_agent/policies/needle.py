"""``needle``'s reference policy: one search, then it answers from what it sees.

It acts as a single-pass QA model does: it takes no notes and does not search again (a second
search would hide the position effect the family exists to measure). Under the ``perfect``
profile it always sees the fact, so success is flat by construction; under ``realistic`` the
attention model (``reference_agent/profiles.py``) may hide the fact's line, with a chance that
grows with the request's length and peaks in its middle.
"""

from __future__ import annotations

from reference_agent.policy_kit import (
    failed_attempts,
    format_summary,
    latest_results,
    make_call,
    reply,
    submit,
    texts,
    tool_texts,
    tools_used,
)
from tasks.needle import CODE, QUESTION, SEARCH_REPLY


class NeedlePolicy:
    """Searches once, then submits the asked vault's code if a visible line gives it (``"unknown"`` if not).

    The asked vault is read from the visible task statement, like everything else it knows."""

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Search if no result is in view; otherwise answer from the visible results."""
        vault = self._asked(messages)
        if not tool_texts(messages):
            return reply(SEARCH_REPLY, make_call("search_documents", query=f"{vault or 'vault'} vault access code"))
        code = self._visible_code(messages, vault)
        if code is None:
            return submit(f"The results do not give the {vault} vault's code.", code="unknown")
        return submit(f"The {vault} vault's access code is {code}.", code=code)

    @staticmethod
    def _asked(messages: list[dict]) -> str | None:
        for text in texts(messages, roles=("user",)):
            match = QUESTION.search(text)
            if match:
                return match.group(1)
        return None

    @staticmethod
    def _visible_code(messages: list[dict], vault: str | None) -> str | None:
        for text in latest_results(messages) + tool_texts(messages):
            for name, code in CODE.findall(text):
                if name == vault:
                    return code
        return None

    def summarize(self, history_text: str) -> str:
        """The code if the history shows it."""
        match = QUESTION.search(history_text)
        vault = match.group(1) if match else None
        found = [f"{vault} vault code: {code}" for name, code in CODE.findall(history_text) if name == vault]
        return format_summary(
            found[:1],
            tools_used(history_text),
            failed_attempts(history_text),
            ["searched; submit the code next" if found else "search the bulletins"],
        )

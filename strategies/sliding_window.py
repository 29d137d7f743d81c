"""``sliding_window``: the naive last-N-messages window that source 002 warns against.

It keeps the system message and the most recent messages, either the last
``max_messages`` or, when that is unset, as many as fit the budget. It does not protect
the task statement or group tool calls with their results; it only repairs what it cut
so the request stays valid (orphaned tool results and unanswered calls are dropped).
Its prefix moves every step, so it breaks the prefix cache every step, and key results
slide out of view, so the agent repeats calls (source 002, "common mistakes").
"""

from __future__ import annotations

from harness.conversation import drop_orphans, split_rounds
from strategies.base import BaseStrategy
from strategies.triggers import RequestSizeMixin


class SlidingWindow(RequestSizeMixin, BaseStrategy):
    """Keep the system message plus the last messages that fit.

    The room they fill is the budget less the tool schemas and reply primer
    (``RequestSizeMixin.message_room``).

    Parameters:
        max_messages: keep at most this many non-system messages; ``None`` (default)
            means "as many as fit the budget".
    """

    budget_guarantee = "hard"
    """With ``max_messages`` set it counts messages, not tokens: ``none``."""
    budget_exception = "the system message and the newest round alone exceed it"
    """When nothing else fits, the newest round is sent anyway."""

    def __init__(self, max_messages: int | None = None) -> None:
        if max_messages is not None and max_messages < 1:
            raise ValueError("sliding_window: max_messages must be at least 1")
        self.max_messages = max_messages
        if max_messages is not None:
            self.budget_guarantee = "none"
        self._dropped = 0

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Take the tail of the history, then drop orphans at the cut."""
        system, rest = messages[0], messages[1:]
        if self.max_messages is not None:
            tail = rest[-self.max_messages :]
        else:
            room = self.message_room() - self.ctx.count_message(system)
            tail = []
            for message in reversed(rest):
                cost = self.ctx.count_message(message)
                if cost > room and tail:
                    break
                room -= cost
                tail.append(message)
            tail.reverse()
        window = drop_orphans(tail)
        if not window or window[-1] is not rest[-1]:  # too small for anything: keep the last round
            window = split_rounds(rest)[-1]
        self._log_cut(len(window), len(rest) - len(window))
        return [system, *window]

    def _log_cut(self, kept: int, dropped: int) -> None:
        """Log a ``compaction`` each time the window's start moves (almost every step once full)."""
        if dropped and dropped != self._dropped:
            self.ctx.log(
                "compaction", method="sliding_window", kept=kept, dropped=dropped, newly_dropped=dropped - self._dropped
            )
        self._dropped = dropped

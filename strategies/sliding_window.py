"""``sliding_window``: the naive last-N-messages window that seed 002 warns against.

It keeps the system message and the most recent messages, either the last
``max_messages`` or, when that is unset, as many as fit the budget. It does not protect
the task statement or group tool calls with their results; it only repairs what it cut
so the request stays valid (orphaned tool results and unanswered calls are dropped).
Its prefix moves every step, so it breaks the prefix cache every step, and key results
slide out of view, so the agent repeats calls (seed 002, 常见误区).
"""
from __future__ import annotations

from harness.conversation import drop_orphans, split_rounds
from strategies.base import BaseStrategy


class SlidingWindow(BaseStrategy):
    """Keep the system message plus the last messages that fit.

    Parameters:
        max_messages: keep at most this many non-system messages; ``None`` (default)
            means "as many as fit the budget".
    """

    budget_guarantee = "hard"
    """With ``max_messages`` set it counts messages, not tokens: ``none``."""

    def __init__(self, max_messages: int | None = None) -> None:
        if max_messages is not None and max_messages < 1:
            raise ValueError("sliding_window: max_messages must be at least 1")
        self.max_messages = max_messages
        if max_messages is not None:
            self.budget_guarantee = "none"

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Take the tail of the history, then drop orphans at the cut."""
        system, rest = messages[0], messages[1:]
        if self.max_messages is not None:
            tail = rest[-self.max_messages :]
        else:
            room = self.ctx.budget - self.ctx.request_overhead() - self.ctx.count_message(system)
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
        if len(window) < len(rest):
            self.ctx.log("window", kept=len(window), dropped=len(rest) - len(window))
        return [system, *window]

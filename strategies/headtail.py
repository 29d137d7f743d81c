"""``headtail``: keep the head and the most recent rounds that fit the budget (seed 000 §7.3).

The head is the system message and the task (the first user message). The tail is as
many of the most recent rounds as fit; a round is an assistant message with all of its
tool results, never split. One placeholder line after the head says what was cut.
The cut point moves as the history grows, so the cache breaks after the head each time
rounds are dropped. No model call.
"""
from __future__ import annotations

from harness.conversation import split_head, split_rounds
from strategies.base import BaseStrategy

PLACEHOLDER = "[context note] {n} earlier rounds ({messages} messages) were cut to fit the {budget:,}-token budget. Re-run a tool if you need something from them."


class HeadTail(BaseStrategy):
    """Head (system + task) plus the most recent whole rounds that fit the budget.

    Parameters:
        min_recent_rounds: rounds always kept even when they exceed the budget
            (default 1: the latest round, so the agent sees its last tool results).
    """

    def __init__(self, min_recent_rounds: int = 1) -> None:
        if min_recent_rounds < 1:
            raise ValueError("headtail: min_recent_rounds must be at least 1")
        self.min_recent_rounds = min_recent_rounds
        self._cut_rounds = 0

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Return head + placeholder + the most recent rounds within budget."""
        if self.fits(messages):
            return list(messages)
        head, body = split_head(messages)
        rounds = split_rounds(body)
        budget = self.ctx.budget
        room = budget - self.ctx.request_overhead() - self.ctx.count_tokens(head)
        room -= self.ctx.count_message({"role": "user", "content": PLACEHOLDER.format(n=999, messages=9999, budget=budget)})
        kept = 0
        for index in range(len(rounds) - 1, -1, -1):
            cost = self.ctx.count_tokens(rounds[index])
            if cost > room and kept >= self.min_recent_rounds:
                break
            room -= cost
            kept += 1
        cut = len(rounds) - kept
        if cut == 0:
            return list(messages)
        cut_messages = sum(len(r) for r in rounds[:cut])
        if cut != self._cut_rounds:
            self.ctx.log("compaction", method="headtail", cut_rounds=cut, newly_cut=cut - self._cut_rounds)
            self._cut_rounds = cut
        note = {"role": "user", "content": PLACEHOLDER.format(n=cut, messages=cut_messages, budget=budget)}
        return [*head, note, *(m for r in rounds[cut:] for m in r)]

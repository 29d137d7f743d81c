"""``headtail``: keep the head and the most recent rounds that fit the budget (source 000 §7.3).

The head is the system message and the task (the first user message). The tail is as
many of the most recent rounds as fit; a round is an assistant message with all of its
tool results, never split. One placeholder line after the head says what was cut.
The cut point moves as the history grows, so the cache breaks after the head each time
rounds are dropped. No model call.
"""

from __future__ import annotations

from harness.conversation import split_head
from strategies.base import BaseStrategy
from strategies.triggers import RequestSizeMixin

PLACEHOLDER = (
    "[context note] {n} earlier rounds ({messages} messages) were cut to fit the {budget:,}-token budget. "
    "Re-run a tool if you need something from them."
)


class HeadTail(RequestSizeMixin, BaseStrategy):
    """Head (system + task) plus the most recent whole rounds that fit the budget.

    It cuts only when the request is over the budget; the room its rounds may fill is the
    budget less the tool schemas and reply primer (``RequestSizeMixin.message_room``).

    Parameters:
        min_recent_rounds: rounds always kept even when they exceed the budget
            (default 1: the latest round, so the agent sees its last tool results).
    """

    budget_guarantee = "hard"
    """With ``min_recent_rounds`` > 1 the kept rounds may not fit: ``soft``."""
    budget_exception = "the head, the newest round and the one-line note alone exceed it"
    """The newest round is never cut: a batch of large results can put one round over the budget."""

    def __init__(self, min_recent_rounds: int = 1) -> None:
        if min_recent_rounds < 1:
            raise ValueError("headtail: min_recent_rounds must be at least 1")
        self.min_recent_rounds = min_recent_rounds
        if min_recent_rounds > 1:
            self.budget_guarantee = "soft"
        self._cut_rounds = 0
        self._reset(None)

    def _reset(self, messages: list[dict] | None) -> None:
        self._seen: dict | None = None  # the last message indexed (to detect a history that is not ours)
        self._cum = [0]  # _cum[i] = tokens of messages[:i]
        self._starts: list[int] = []  # start index of every round of the body
        self._head_len = len(split_head(messages)[0]) if messages else 0

    def _index(self, messages: list[dict]) -> None:
        """Extend the per-message token sums and the round starts to the new messages only.

        The history is append-only, so each step indexes what was appended; anything else
        (a shorter or different list) is indexed again from the start. Rounds follow
        ``harness.conversation.split_rounds`` on the body (after the head).
        """
        done = len(self._cum) - 1
        if self._seen is None or done > len(messages) or messages[done - 1] is not self._seen:
            self._reset(messages)
            done = 0
        for index in range(done, len(messages)):
            message = messages[index]
            self._cum.append(self._cum[-1] + self.ctx.count_message(message))
            if index < self._head_len:
                continue
            joins = (
                message.get("role") == "tool" and self._starts and messages[self._starts[-1]].get("role") == "assistant"
            )
            if not joins:
                self._starts.append(index)
        self._seen = messages[-1] if messages else None

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Return head + placeholder + the most recent rounds within budget.

        Costs O(new messages + kept rounds) per step: token sums and round starts are
        indexed incrementally, and the rounds are walked back from the newest.
        """
        self._index(messages)
        total = self._cum[-1]
        budget = self.ctx.budget
        room = self.message_room()
        if total <= room:
            return list(messages)
        room -= self._cum[self._head_len]  # the head
        room -= self.ctx.count_message(
            {"role": "user", "content": PLACEHOLDER.format(n=999, messages=9999, budget=budget)}
        )
        starts, end, kept = self._starts, len(messages), 0
        for index in range(len(starts) - 1, -1, -1):
            cost = self._cum[end] - self._cum[starts[index]]
            if cost > room and kept >= self.min_recent_rounds:
                break
            room -= cost
            kept += 1
            end = starts[index]
        cut = len(starts) - kept
        if cut == 0:
            return list(messages)
        boundary = starts[cut]
        if cut != self._cut_rounds:
            self.ctx.log("compaction", method="headtail", cut_rounds=cut, newly_cut=cut - self._cut_rounds)
            self._cut_rounds = cut
        note = {"role": "user", "content": PLACEHOLDER.format(n=cut, messages=boundary - self._head_len, budget=budget)}
        return [*messages[: self._head_len], note, *messages[boundary:]]

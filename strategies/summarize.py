"""``summarize``: compaction by a model-written summary (source 000 §7.3; source 004 tier 3).

When the prepared request exceeds ``threshold`` tokens, the older rounds (never a part
of a round) become ONE structured summary written by ``ctx.summarize`` with the seed's
four-part template (key findings / tools used / failed attempts / progress and
remaining; ``harness/summarizer.py``). The summary is a user message placed right after
the head (system + task); the ``keep_recent_rounds`` most recent rounds stay verbatim.
A later compaction passes the previous summary message plus the newly old rounds to the
summarizer, so the new summary absorbs the old one instead of stacking (source 004).
Between compactions the summary message is frozen (the same object, byte-identical),
so the cache breaks only after the head, once per compaction.

Breaker (source 002 §2.7.4): a compaction that leaves the request above the budget is a
failure; after ``max_failures`` consecutive failures the strategy stops summarizing for
the rest of the trial (logged as ``summarize_breaker``) and keeps the last summary plus
everything after it. Each summary is one summarizer call, billed to the trial as a
``summarizer`` step (the ``summarizer`` config key chooses its model).
"""

from __future__ import annotations

from harness.conversation import split_head, split_rounds
from strategies.base import BaseStrategy
from strategies.triggers import RequestSizeMixin, SizeTrigger, Trigger

SUMMARY_PREFIX = (
    "[summary of the earlier work: {rounds} rounds, written by the summarizer; the recent rounds follow verbatim]\n"
)
INSTRUCTIONS = (
    "The agent will continue from this summary and the most recent rounds, which it still sees. "
    "Keep every exact id, name, number and date it will need, and every failed attempt with its error."
)


class Summarize(RequestSizeMixin, BaseStrategy):
    """Head + one frozen, self-absorbing summary of the older rounds + the recent rounds verbatim.

    Parameters:
        threshold: summarize when the request exceeds this many tokens. A float in (0, 1]
            is a fraction of the budget (default 0.8); an int or ``25k`` is tokens;
            ``None`` is the budget itself. Declared as ``size_trigger`` (strategies/triggers.py).
        keep_recent_rounds: rounds always kept verbatim after the summary (default 4; at
            least 1, so the agent sees its latest tool results).
        max_failures: consecutive compactions that leave the request over the budget
            before the breaker stops summarizing for the trial (default 3).
        instructions: extra instructions for the summarizer (default: keep ids, names,
            numbers, dates and failed attempts).
    """

    budget_guarantee = "soft"
    """The ``keep_recent_rounds`` recent rounds and the summary stay; after the breaker it sends
    everything after the last summary (as ``none``)."""

    def __init__(
        self,
        threshold: Trigger = 0.8,
        keep_recent_rounds: int = 4,
        max_failures: int = 3,
        instructions: str = INSTRUCTIONS,
    ) -> None:
        self.size_trigger = SizeTrigger(threshold, "summarize: threshold")
        if keep_recent_rounds < 1:
            raise ValueError("summarize: keep_recent_rounds must be at least 1")
        if max_failures < 1:
            raise ValueError("summarize: max_failures must be at least 1")
        self.threshold = threshold
        self.keep_recent_rounds = int(keep_recent_rounds)
        self.max_failures = int(max_failures)
        self.instructions = instructions
        self.summary: dict | None = None  # the frozen summary message
        self.covered = 0  # body messages (after the head) that the summary replaces
        self.summarized_rounds = 0
        self.failures = 0
        self.tripped = False

    def _project(self, head: list[dict], body: list[dict]) -> list[dict]:
        return [*head, *([self.summary] if self.summary else []), *body[self.covered :]]

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Summarize the older rounds when over the threshold; otherwise reuse the frozen summary."""
        head, body = split_head(messages)
        out = self._project(head, body)
        if self.tripped or not self.over_trigger(out):
            return out
        rounds = split_rounds(body[self.covered :])
        if len(rounds) <= self.keep_recent_rounds:
            return out  # nothing old enough to summarize; the recent rounds alone are this big
        old = rounds[: len(rounds) - self.keep_recent_rounds]
        old_messages = [m for r in old for m in r]
        before = self.request_tokens(out)
        text = self.ctx.summarize(([self.summary] if self.summary else []) + old_messages, self.instructions)
        self.summarized_rounds += len(old)
        self.covered += len(old_messages)
        self.summary = {"role": "user", "content": SUMMARY_PREFIX.format(rounds=self.summarized_rounds) + text}
        out = self._project(head, body)
        after = self.request_tokens(out)
        self.failures = self.failures + 1 if after > self.ctx.budget else 0
        self.ctx.log(
            "compaction",
            method="summarize",
            summarized_rounds=len(old),
            total_rounds=self.summarized_rounds,
            tokens_before=before,
            tokens_after=after,
            over_budget=after > self.ctx.budget,
        )
        if self.failures >= self.max_failures:
            self.tripped = True
            self.ctx.log(
                "summarize_breaker",
                consecutive_failures=self.failures,
                detail="summaries keep failing to bring the request under the budget; no more summaries this trial",
            )
        return out

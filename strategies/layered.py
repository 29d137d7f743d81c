"""``layered``: source 004's three tiers of compression, cheapest first (LayeredContext).

Measure, and while the request is over the budget apply the next tier, measuring again
after each one (source 000 §7.3: 压实先于摘要, stop as soon as it fits):

1. clear old tool results: every tool result but the ``keep_tool_results`` most recent
   becomes a frozen one-line placeholder with the tool's name and arguments (the
   ``clear_tool_results`` mechanism; error results are never cleared). Free, recoverable.
2. drop the oldest rounds: all rounds but the ``keep_recent_rounds`` most recent are
   replaced by one line, "the N earlier rounds were omitted". Free, lossy.
3. summarize (only with ``summarize: true``): the same old rounds are summarized
   instead of dropped, into one summary after the head that absorbs the previous one.
   One summarizer call per compaction, billed to the trial.

Tiers 2 and 3 act on the same old rounds, so with ``summarize: true`` tier 3 takes the
place of tier 2 (as in the seed's code: ``if self.summarize: ... else: drop``);
dropping first would leave the summary nothing to read. The summarizer reads the old
rounds as the agent last saw them (tool results already cleared), as in the seed.

Differences from the seed's ``LayeredContext`` (reported in strategies/README.md): the
head keeps the task (the seed folds the first user message into the summarized rounds);
the placeholders say tokens and carry the call's arguments; the budget counts the tool
schemas; the note/summary is frozen until the next compaction.
"""

from __future__ import annotations

from harness.conversation import split_head, split_rounds
from strategies._common import ToolResultClearer
from strategies.base import BaseStrategy
from strategies.triggers import AT_BUDGET, RequestSizeMixin

DROP_NOTE = (
    "[context note] the {n} earlier rounds were omitted to fit the {budget:,}-token budget. "
    "Re-run a tool if you need something from them."
)
SUMMARY_PREFIX = "[summary of the earlier work: {n} rounds, written by the summarizer; the recent rounds follow]\n"


class Layered(RequestSizeMixin, BaseStrategy):
    """Source 004's LayeredContext: clear tool results, then drop or summarize the oldest rounds.

    Parameters:
        keep_tool_results: tool results never cleared by tier 1 (default 3, as the seed).
        keep_recent_rounds: rounds kept verbatim by tiers 2 and 3 (default 6, as the seed).
        summarize: use tier 3 (a summary) instead of tier 2 (a one-line note) for the old
            rounds (default false: no model call).
        exclude_tools: tool names tier 1 never clears (default none).
    """

    budget_guarantee = "soft"
    """The ``keep_recent_rounds`` recent rounds (their results past ``keep_tool_results`` cleared)
    and the note or summary stay, and can exceed the budget (source 004: a soft target)."""
    size_trigger = AT_BUDGET
    """Each tier runs only while the request is over the budget itself (no parameter)."""

    def __init__(
        self,
        keep_tool_results: int = 3,
        keep_recent_rounds: int = 6,
        summarize: bool = False,
        exclude_tools: list[str] | None = None,
    ) -> None:
        if keep_recent_rounds < 1:
            raise ValueError("layered: keep_recent_rounds must be at least 1")
        self.clearer = ToolResultClearer(keep=keep_tool_results, exclude_tools=exclude_tools or ())
        self.keep_recent_rounds = int(keep_recent_rounds)
        self.summarize = bool(summarize)
        self.note: dict | None = None  # the frozen drop note or summary
        self.covered = 0  # body messages (after the head) that the note replaces
        self.covered_rounds = 0
        self.stats = {"cleared": 0, "dropped_rounds": 0, "summaries": 0}

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Tier 1, then tier 2 or 3, each only while the request is over the budget."""
        head, body = split_head(messages)
        body = self.clearer.apply(body, start=len(head))
        out = [*head, *([self.note] if self.note else []), *body[self.covered :]]
        if not self.over_trigger(out):
            return out
        # tier 1: clear old tool results (in the part still shown)
        shown = self.clearer.clear_batch(
            body[self.covered :], self.ctx, method="layered", start=len(head) + self.covered
        )
        body = body[: self.covered] + shown
        self.stats["cleared"] = len(self.clearer.placeholders)
        out = [*head, *([self.note] if self.note else []), *shown]
        if not self.over_trigger(out):
            return out
        rounds = split_rounds(shown)
        if len(rounds) <= self.keep_recent_rounds:
            return out  # the recent rounds alone are over the budget: a soft target (source 004)
        old = rounds[: len(rounds) - self.keep_recent_rounds]
        old_messages = [m for r in old for m in r]
        before = self.request_tokens(out)
        self.covered += len(old_messages)
        self.covered_rounds += len(old)
        if self.summarize:  # tier 3
            text = self.ctx.summarize(([self.note] if self.note else []) + old_messages)
            self.note = {"role": "user", "content": SUMMARY_PREFIX.format(n=self.covered_rounds) + text}
            self.stats["summaries"] += 1
            tier = "summarize"
        else:  # tier 2
            self.note = {"role": "user", "content": DROP_NOTE.format(n=self.covered_rounds, budget=self.ctx.budget)}
            self.stats["dropped_rounds"] += len(old)
            tier = "drop_rounds"
        out = [*head, self.note, *body[self.covered :]]
        self.ctx.log(
            "compaction",
            method="layered",
            tier=tier,
            rounds=len(old),
            total_rounds=self.covered_rounds,
            tokens_before=before,
            tokens_after=self.request_tokens(out),
        )
        return out

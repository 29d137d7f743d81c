"""``adaptive_window``: source 002 experiment 2-10, "80% 才触发,一次压完".

Three mechanisms (source 002 §2.7): a threshold trigger (the prepared request exceeds
``ratio`` of the budget); a batch (then EVERY not-yet-compressed tool message is
compressed at once); no repeats (a compressed message is marked ``[COMPRESSED]`` and is
never processed again). The early rounds therefore stay verbatim until the first
trigger, which suits tasks that gather broadly at first.

Each tool message is compressed by its own ``ctx.summarize`` call (one summarizer call
per message, billed to the trial) on the call and its result, with instructions to keep
names, dates, companies, amounts and ids (source 002 §2.7.5: "Sutskever 于 2024 年 5 月离开
OpenAI" must not become "Sutskever 离开"). One call per message, not one for the batch,
so that each compressed text stays next to its own call and the pairing is kept.
Compressed texts are frozen by the result's history position and ``tool_call_id``
(source 002 §2.7.4: a replacement, once decided, is frozen so the cache is not broken twice).
Error results are kept verbatim.

Deviation, as a parameter: with ``keep_last_round: true`` (default) the results of the
latest round, which the model has not read yet, are left for the next batch; set it to
false for the seed's literal "compress all".
"""

from __future__ import annotations

from harness.conversation import split_head, split_rounds
from strategies._common import ResultKey, apply_frozen, is_error, result_calls, result_identity, result_key
from strategies.base import BaseStrategy
from strategies.triggers import RequestSizeMixin, SizeTrigger

MARK = "[COMPRESSED] "
INSTRUCTIONS = (
    "Compress this ONE tool result for the agent that called it. Keep every name, date, company, "
    "amount, id and number it contains that the task may need; drop navigation, boilerplate and "
    "repetition. Do not invent anything."
)


class AdaptiveWindow(RequestSizeMixin, BaseStrategy):
    """Above ``ratio`` x budget, compress every uncompressed tool message in one batch; never twice.

    Parameters:
        ratio: the trigger as a fraction of the budget (default 0.8: 102,400 of 128K in the seed),
            declared as ``size_trigger`` (strategies/triggers.py).
        keep_last_round: leave the latest round's results for the next batch (default true).
        instructions: the summarizer instructions for one tool result.
    """

    budget_guarantee = "soft"
    """Only tool results are compressed: the agent's messages, errors, the compressed texts and the
    latest round (``keep_last_round``) stay, and can exceed the budget."""

    def __init__(self, ratio: float = 0.8, keep_last_round: bool = True, instructions: str = INSTRUCTIONS) -> None:
        if not 0 < float(ratio) <= 1:
            raise ValueError("adaptive_window: ratio must be in (0, 1]")
        self.ratio = float(ratio)
        self.size_trigger = SizeTrigger(self.ratio, "adaptive_window: ratio")
        self.keep_last_round = bool(keep_last_round)
        self.instructions = instructions
        self.compressed: dict[ResultKey, str] = {}  # (history position, tool_call_id) -> frozen "[COMPRESSED] ..."
        self._copies: dict[ResultKey, tuple[dict, dict]] = {}

    def _apply(self, messages: list[dict]) -> list[dict]:
        return apply_frozen(messages, self.compressed, self._copies)

    def _batch(self, messages: list[dict]) -> list[int]:
        """Positions of the tool results a new batch compresses (not yet compressed, not errors, not spared)."""
        _, body = split_head(messages)
        last_start = len(messages) - len(split_rounds(body)[-1]) if body and self.keep_last_round else len(messages)
        return [
            position
            for position, m in enumerate(messages)
            if m.get("role") == "tool"
            and position < last_start
            and result_key(position, m) not in self.compressed
            and not is_error(m)
            and not str(m.get("content") or "").startswith(MARK.strip())
        ]

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Frozen compressed texts; a new batch when the request passes ``ratio`` of the budget."""
        out = self._apply(messages)
        if not self.over_trigger(out):
            return out
        batch = self._batch(messages)
        if not batch:
            return out
        before = self.request_tokens(out)
        calls = result_calls(messages)
        for position in batch:
            message, raw = messages[position], calls.get(position)
            stub = {"role": "assistant", "content": "", "tool_calls": [raw]} if raw else None
            text = self.ctx.summarize(([stub] if stub else []) + [message], self.instructions)
            self.compressed[result_key(position, message)] = MARK + text.strip()
        out = self._apply(messages)
        after = self.request_tokens(out)
        self.ctx.log(
            "compaction",
            method="adaptive_window",
            compressed=len(batch),
            summarizer_calls=len(batch),
            tokens_before=before,
            tokens_after=after,
            total_compressed=len(self.compressed),
            tools=sorted({result_identity(messages[p], calls.get(p))[0] for p in batch}),
        )
        return out

"""``clear_tool_results``: observation masking (source 004 tier 1; Anthropic ``clear_tool_uses``).

When the prepared request exceeds ``trigger`` tokens, every tool result older than the
``keep`` most recent ones is replaced, in ONE batch, by a one-line placeholder with a
recovery hint: the tool's name and arguments, e.g.
``[cleared: get_invoice_page {"page": 3} returned 1,234 tokens; call it again if you need it]``.
The batch is applied only if it frees at least ``clear_at_least`` tokens (so the prefix
cache is not broken for a small gain). Error results and ``exclude_tools`` are never
cleared (source 000 §7.3: failures are never compacted). A placeholder, once written, is
reused byte for byte for the rest of the trial: the cache breaks once per batch, at the
oldest newly cleared result, and the request then grows again from a lower level (the
sawtooth of source 000 §7.3). Messages are never deleted; no model call.
"""

from __future__ import annotations

from strategies._common import ToolResultClearer
from strategies.base import BaseStrategy
from strategies.triggers import RequestSizeMixin, SizeTrigger, Trigger


class ClearToolResults(RequestSizeMixin, BaseStrategy):
    """Clear old tool results in batches, with frozen placeholders that say how to get them back.

    Parameters:
        trigger: clear when the request (tool schemas included) exceeds this many tokens.
            ``None`` = the budget; a float in (0, 1] = that fraction of the budget; an int
            or ``25k`` = tokens. Default 1.0 (the budget itself). Anthropic's default is 100,000.
            Declared as ``size_trigger`` (strategies/triggers.py).
        keep: the most recent tool results never cleared (default 3, as Anthropic's).
        clear_at_least: skip a batch that would free fewer tokens than this (default 0:
            any gain). Raise it to trade context for fewer cache breaks.
        exclude_tools: tool names whose results are never cleared (default none).
    """

    budget_guarantee = "soft"
    """Only tool results are cleared: the agent's own messages, errors, excluded tools and the
    ``keep`` newest results stay, and can exceed the budget (3x at 8k on invoice_audit)."""

    def __init__(
        self, trigger: Trigger = 1.0, keep: int = 3, clear_at_least: int = 0, exclude_tools: list[str] | None = None
    ) -> None:
        self.size_trigger = SizeTrigger(trigger, "clear_tool_results: trigger")
        self.trigger = trigger
        self.clearer = ToolResultClearer(keep=keep, exclude_tools=exclude_tools or (), clear_at_least=clear_at_least)

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Frozen placeholders for what was cleared before; a new batch only above the trigger."""
        out = self.clearer.apply(messages)
        if self.over_trigger(out):
            out = self.clearer.clear_batch(out, self.ctx, method="clear_tool_results")
        return out

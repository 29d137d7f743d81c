"""Size triggers: a strategy declares WHEN it acts on the request's size; it is measured in one place.

A strategy that compacts above a size declares a ``SizeTrigger`` (the threshold as a fraction of
the budget, a token count or ``None`` for the budget itself) and asks ``over_trigger(messages)``
in ``prepare``; it never counts the request's tokens itself. What is measured is always the
prepared request as the model would receive it: the messages plus the request overhead (tool
schemas and reply primer). A strategy that fits the budget (``headtail``, ``sliding_window``)
asks ``message_room()`` for the tokens its messages may take, and one that logs sizes asks
``request_tokens`` or ``messages_tokens``.

As in inspect_ai, where the orchestrator decides when to compact, the trigger is declared data
(``size_trigger``) and the rule that evaluates it lives here, so every strategy fires at the same
boundary: strictly above the resolved threshold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from strategies._common import check_threshold, resolve_tokens
from strategies.base import StrategyContext


@dataclass(frozen=True)
class SizeTrigger:
    """Fire when the prepared request (messages, tool schemas, reply primer) exceeds ``threshold`` tokens.

    Attributes:
        threshold: ``None`` = the budget; a float in (0, 1] = that fraction of the budget (rounded
            down, at least 1); an int or ``25k`` = tokens (the spellings of ``resolve_tokens``).
        name: what error messages call the threshold, e.g. ``"summarize: threshold"``.
    """

    threshold: Any = None
    name: str = "trigger"

    def __post_init__(self) -> None:
        check_threshold(self.threshold, self.name)

    def tokens(self, budget: int) -> int:
        """The threshold in tokens at this budget."""
        return resolve_tokens(self.threshold, budget, self.name)

    def fires(self, request_tokens: int, budget: int) -> bool:
        """Whether a request of ``request_tokens`` tokens is over the threshold (strictly above it)."""
        return request_tokens > self.tokens(budget)


AT_BUDGET = SizeTrigger()
"""The trigger at the budget itself: fire when the request does not fit."""


class RequestSizeMixin:
    """The one place a strategy's request is measured: its ``size_trigger`` is evaluated by ``over_trigger``.

    Mix it in before ``BaseStrategy`` (``class Summarize(RequestSizeMixin, BaseStrategy)``) and set
    ``self.size_trigger`` in ``__init__`` from the strategy's own config parameter; the default
    fires above the budget.
    """

    ctx: StrategyContext
    size_trigger: SizeTrigger = AT_BUDGET
    """When the strategy acts (default: above the budget)."""

    def request_tokens(self, messages: list[dict]) -> int:
        """Tokens of the request ``messages`` would make: the messages plus the tool schemas and reply primer."""
        return self.ctx.count_tokens(messages) + self.ctx.request_overhead()

    def messages_tokens(self, messages: list[dict]) -> int:
        """Tokens of ``messages`` alone (no tool schemas, no reply primer)."""
        return self.ctx.count_tokens(messages)

    def message_room(self) -> int:
        """Tokens the messages of a request may take: the budget less the tool schemas and reply primer."""
        return self.ctx.budget - self.ctx.request_overhead()

    def trigger_tokens(self) -> int:
        """The strategy's trigger in tokens at the bound budget."""
        return self.size_trigger.tokens(self.ctx.budget)

    def over_trigger(self, messages: list[dict]) -> bool:
        """Whether the request ``messages`` would make is over the strategy's trigger."""
        return self.size_trigger.fires(self.request_tokens(messages), self.ctx.budget)

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

``Trigger`` is the parameter type of such a threshold (harness/params.py converts a config's value with
it before the strategy is built): ``trigger: Trigger = 1.0`` in a constructor accepts ``0.8`` (a fraction),
``60000``, ``60k`` or ``0.5M`` (tokens, ``60k`` passed on as 60000) and ``null`` (the budget).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from harness.budget import parse_budget
from strategies._common import check_threshold, resolve_tokens
from strategies.base import StrategyContext


class TriggerValue:
    """The converter of ``Trigger`` (a ``ParamConverter``, harness/params.py): a fraction of the budget or tokens."""

    expects = "a fraction of the budget in (0, 1] or a token count such as 60000, 60k or 0.5M"

    def convert(self, value: object) -> float | int | None:
        """``None`` and a float in (0, 1] as they are; a whole number or ``60k`` as tokens (an int).

        ``ValueError`` for anything else: ``true``, ``0``, ``1.5`` (neither a fraction nor whole tokens), ``abc``.
        """
        if value is None or (isinstance(value, float) and 0 < value <= 1):
            return value
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError(f"not a trigger: {value!r}")
        return parse_budget(value)


Trigger = Annotated[float | int | None, TriggerValue()]
"""A size threshold parameter: a float in (0, 1] (that fraction of the budget), a token count, or ``None``."""


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

"""Measuring the requests of one agent loop: ``Prepared`` (one step's request) and ``RequestMeter``.

The meter counts each request (messages, this step's tool schemas, the reply primer), gives its
messages their transcript refs and strips their private keys, keeps the peak context and the
budget adherence (``BudgetTracker``), adds up the tool-schema tokens sent and those
``expose_tools`` left out, and checks the model's context window. A request that extends the
previous one (append-only strategies) costs only its new messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from harness.accounting import BudgetTracker
from harness.conversation import strip_private
from harness.tokens import REPLY_PRIMER, TokenCounter
from harness.tool_offer import ToolOffer


@dataclass
class Prepared:
    """One step's request as sent: the projection, its refs, the stripped messages and its token count."""

    request: list[dict] = field(default_factory=list)
    message_tokens: int = 0
    refs: list[str] = field(default_factory=list)
    sent: list[dict] = field(default_factory=list)
    tokens: int = 0
    budget_fields: dict = field(default_factory=dict)


class RequestMeter:
    """Counts, refs and strips one agent's requests, and keeps the figures the trial row reports."""

    def __init__(self, counter: TokenCounter, budget: BudgetTracker, ref: Callable[[dict], str]) -> None:
        self.counter, self.budget, self._ref = counter, budget, ref
        self.previous = Prepared()
        self.peak_context = 0
        self.tool_schema_tokens = 0  # tool-schema tokens sent over the agent's requests
        self.tool_schema_tokens_saved = 0  # tool-schema tokens not sent because expose_tools hid them
        self._stripped: dict[int, tuple[dict, dict]] = {}

    def known_prefix(self, request: list[dict]) -> int:
        """How many leading messages ``request`` shares with the previous request (0 unless it extends it).

        A request that extends the previous one (append-only strategies) is only checked,
        counted and logged for its new messages; the list comparison runs in C.
        """
        previous = self.previous.request
        if previous and len(request) >= len(previous) and request[: len(previous)] == previous:
            return len(previous)
        return 0

    def measure(self, request: list[dict], known: int, offer: ToolOffer) -> Prepared:
        """Count, ref and strip ``request`` with this step's tools (reusing the previous request's figures for its
        first ``known`` messages); observe it against the budget and add its tool-schema tokens to the totals."""
        base = self.previous if known else Prepared()
        tail = request[known:]
        message_tokens = base.message_tokens + self.counter.messages(tail)
        tools_tokens = self.counter.tools(offer.tools)
        prepared = Prepared(
            request=request,
            message_tokens=message_tokens,
            refs=base.refs + [self._ref(m) for m in tail],
            sent=base.sent + [self.stripped(m) for m in tail],
            tokens=message_tokens + tools_tokens + REPLY_PRIMER,
        )
        self.previous = prepared
        self.peak_context = max(self.peak_context, prepared.tokens)
        prepared.budget_fields = self.budget.observe(prepared.tokens)
        self.tool_schema_tokens += tools_tokens
        if offer.exposed:
            self.tool_schema_tokens_saved += max(0, self.counter.tools(offer.all_tools) - tools_tokens)
        return prepared

    def overflow(self, prepared: Prepared, context_window: int) -> str | None:
        """Why the request does not fit the model's context window (``None`` when it fits)."""
        if prepared.tokens <= context_window:
            return None
        return f"request of {prepared.tokens:,} tokens exceeds the {context_window:,}-token context window"

    def stripped(self, message: dict) -> dict:
        """``strip_private`` memoized by identity, so a step does not copy the whole history."""
        entry = self._stripped.get(id(message))
        if entry is None or entry[0] is not message:
            entry = (message, strip_private(message))
            self._stripped[id(message)] = entry
        return entry[1]

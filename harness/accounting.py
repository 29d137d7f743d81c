"""Recording model calls: one path for every kind of call a trial makes.

A call replayed from the response cache (``Completion.from_cache``) costs 0 in ``cost``; what it
cost when it was made stays beside it, in ``cost_uncached`` (equal to ``cost`` for a call made now).

``CallRecorder.record`` is the only place where a model call becomes a ``steps.jsonl`` row
and enters the trial's totals. Agent, summarizer, sub-agent and stop-hook calls all go
through it, so no total can leave a kind of call out. Per kind it keeps a ``CallTotals``
and its own prefix-cache simulator (each kind of call has its own cache history).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.cache_sim import CacheProfile, PrefixCacheSimulator
from harness.models.base import Completion, Usage
from harness.pricing import AutoPricing, Pricing
from harness.tokens import TokenCounter

CALL_KINDS = ("agent", "summarizer", "subagent", "stop_hook")


@dataclass
class CallTotals:
    """Token and cost totals of one kind of call (agent, summarizer, ...)."""

    calls: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    cost_uncached: float = 0.0
    from_cache_calls: int = 0
    cached_sources: set = field(default_factory=set)
    sim_cached_tokens: int = 0
    cache_lost_tokens: int = 0
    cache_breaks: int = 0

    def add(self, usage: Usage, cost: float, sim_cached: int = 0, lost: int = 0, from_cache: bool = False) -> None:
        """Accumulate one call; ``cost`` is what it would cost made now (a replayed call adds 0 to ``cost``)."""
        self.calls += 1
        self.from_cache_calls += from_cache
        self.cost_uncached += cost
        cost = 0.0 if from_cache else cost
        self.sim_cached_tokens += sim_cached
        self.cache_lost_tokens += lost
        self.cache_breaks += bool(lost)
        self.input_tokens += usage.prompt_tokens or 0
        self.cached_tokens += usage.cached_tokens or 0
        self.cache_write_tokens += usage.cache_write_tokens or 0
        self.output_tokens += usage.output_tokens or 0
        self.cost += cost
        self.cached_sources.add(usage.cached_source)


MAX_TOKENS = 10_000_000  # no single call reads or writes more: a figure above it is not a token count
USAGE_FIELDS = ("prompt_tokens", "cached_tokens", "output_tokens", "reasoning_tokens", "cache_write_tokens")


def reject_invalid_usage(usage: Usage) -> str | None:
    """Drop the usage figures that cannot be token counts, and say which (``None`` when all are valid).

    A figure that is not an integer, is negative or is above ``MAX_TOKENS`` is dropped: a reported count
    becomes unreported (the harness then counts the tokens itself, as for a backend that reports none), a
    secondary one (reasoning, cache writes) becomes 0. Cached tokens above the prompt's are cut to the prompt.
    """
    bad = []
    for key in USAGE_FIELDS:
        value = getattr(usage, key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
            bad.append(f"{key}={value!r}"[:80])
            setattr(usage, key, None if key in USAGE_FIELDS[:3] else 0)
    if (
        usage.cached_tokens is not None
        and usage.prompt_tokens is not None
        and usage.cached_tokens > usage.prompt_tokens
    ):
        bad.append(f"cached_tokens={usage.cached_tokens} > prompt_tokens={usage.prompt_tokens}")
        usage.cached_tokens = usage.prompt_tokens
    if usage.cached_tokens is None and usage.cached_source == "reported":
        usage.cached_source = "none"
    if usage.prompt_tokens is None:
        usage.tokens_source = "tiktoken"
    return "; ".join(bad) or None


def fill_usage(usage: Usage, request_tokens: int, reply_tokens: int, sim_cached: int) -> Usage:
    """Fill what the backend did not report: tiktoken counts and the simulated cache figure."""
    if usage.prompt_tokens is None:
        usage.prompt_tokens = request_tokens
        usage.tokens_source = "tiktoken"
    if usage.output_tokens is None:
        usage.output_tokens = reply_tokens
    if usage.cached_tokens is None:  # not reported: the simulated figure is the cache figure
        usage.cached_tokens = min(sim_cached, usage.prompt_tokens)
        usage.cached_source = "simulated"
    return usage


def filled_counts(usage: Usage) -> tuple[int, int, int]:
    """``prompt_tokens``, ``cached_tokens`` and ``output_tokens`` of a usage ``fill_usage`` has filled."""
    prompt, cached, output = usage.prompt_tokens, usage.cached_tokens, usage.output_tokens
    assert prompt is not None and cached is not None and output is not None  # fill_usage filled every None
    return prompt, cached, output


def reported_model(completion: Completion) -> str | None:
    """The model name the backend's reply reports (the response's ``model``), or ``None``."""
    raw = completion.raw if isinstance(completion.raw, dict) else {}
    name = raw.get("model")
    if not isinstance(name, str):
        return None
    return name.strip() or None


class CallRecorder:
    """Turns each model call of one trial into a step row and adds it to the totals of its kind."""

    def __init__(
        self,
        trial_id: str,
        counter: TokenCounter,
        pricing: Pricing | AutoPricing,
        cache_profile: CacheProfile,
        write_step: Any,
    ) -> None:
        self.trial_id = trial_id
        self.counter = counter
        self.pricing = pricing
        self.cache_profile = cache_profile
        self._write_step = write_step
        self.totals = {kind: CallTotals() for kind in CALL_KINDS}
        self._sims = {kind: PrefixCacheSimulator(cache_profile, counter) for kind in CALL_KINDS}
        self.price_sources: set[str] = set()

    def record(
        self,
        kind: str,
        step: int,
        request: list[dict],
        tools: list[dict],
        completion: Completion,
        request_tokens: int,
        extra: dict | None = None,
        events: list[str] | None = None,
    ) -> None:
        """Record one call of ``kind`` made at ``step``: its usage, cost, simulated cache and step row."""
        sim = self._sims[kind].observe(request, tools)
        self._sims[kind].observe_reply(completion.message)
        invalid = reject_invalid_usage(completion.usage)
        usage = fill_usage(
            completion.usage,
            request_tokens,
            self.counter.message(completion.message) if completion.usage.output_tokens is None else 0,
            sim.cached,
        )
        prompt, cached, output = filled_counts(usage)
        if usage.cached_source == "simulated":  # the simulated cache writes as the profile's provider would
            usage.cache_write_tokens = self.cache_profile.simulated_writes(prompt, cached)
        price = self.pricing.price_for(kind, reported_model(completion))
        self.price_sources.add(price.source)
        cost_uncached = price.cost(prompt, cached, output, usage.cache_write_tokens)
        cost = 0.0 if completion.from_cache else cost_uncached
        self.totals[kind].add(usage, cost_uncached, sim.cached, sim.lost, completion.from_cache)
        cache_break = None
        if sim.lost and kind == "agent":
            cache_break = "+".join(dict.fromkeys(events or [])) or "strategy rewrite"
        self._write_step(
            {
                "trial_id": self.trial_id,
                "step": step,
                "kind": kind,
                "request_tokens": request_tokens,
                "prompt_tokens": usage.prompt_tokens,
                "cached_tokens": usage.cached_tokens,
                "cached_source": usage.cached_source,
                "cache_write_tokens": usage.cache_write_tokens,
                "output_tokens": usage.output_tokens,
                "reasoning_tokens": usage.reasoning_tokens,
                "tokens_source": usage.tokens_source,
                "request_messages": len(request),
                "latency_s": round(completion.latency_s, 6),
                "cost": cost,
                "from_cache": completion.from_cache,
                "cost_uncached": cost_uncached,
                "sim_cached_tokens": sim.cached,
                "cache_profile": self.cache_profile.name,
                "cache_lost_tokens": sim.lost,
                "cache_break": cache_break,
                "pricing": self.pricing.name,
                "usage_invalid": invalid,
                **(extra or {}),
            }
        )

    def price_source(self) -> str:
        """Where the trial's prices came from: each source its calls were priced by, joined by ``+``
        (the configured pricing's source when it made no call)."""
        return "+".join(sorted(self.price_sources)) or self.pricing.source

    def total_cost(self) -> float:
        """USD cost of every call of the trial, all kinds together (replayed calls count 0)."""
        return sum(t.cost for t in self.totals.values())

    def total_cost_uncached(self) -> float:
        """USD cost of every call of the trial as if none had come from the response cache."""
        return sum(t.cost_uncached for t in self.totals.values())

    def from_cache_calls(self) -> int:
        """How many calls of the trial were replayed from the response cache."""
        return sum(t.from_cache_calls for t in self.totals.values())


@dataclass
class BudgetTracker:
    """Budget adherence of one agent (the main agent, or all sub-agents of a trial) against ``budget``.

    A request is over budget when its prepared tokens (tool schemas and reply primer
    included) exceed the budget; ``max_ratio`` is the largest request / budget.
    """

    budget: int
    over_steps: int = 0
    max_ratio: float = 0.0
    peak: int = 0

    def observe(self, request_tokens: int) -> dict:
        """Count one request; return its step-row fields ``over_budget`` and ``budget_ratio``."""
        ratio = round(request_tokens / self.budget, 4) if self.budget > 0 else 0.0
        over = request_tokens > self.budget
        self.over_steps += over
        self.max_ratio = max(self.max_ratio, ratio)
        self.peak = max(self.peak, request_tokens)
        return {"over_budget": over, "budget_ratio": ratio}


def total_columns(totals: dict[str, CallTotals]) -> dict:
    """What the trial cost, all kinds of call together: ``total_input_tokens``, ``total_cached_tokens``, ..."""
    kinds = list(totals.values())
    return {
        "total_input_tokens": sum(t.input_tokens for t in kinds),
        "total_cached_tokens": sum(t.cached_tokens for t in kinds),
        "total_output_tokens": sum(t.output_tokens for t in kinds),
        "total_calls": sum(t.calls for t in kinds),
    }

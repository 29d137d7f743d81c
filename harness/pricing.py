"""Pricing profiles: USD per 1M tokens for input, cached input, cache writes and output."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pricing:
    """Per-1M-token prices. ``name`` is recorded with every cost figure.

    Parameters:
        name: profile name (``none`` prices everything at 0).
        input: USD per 1M uncached input tokens.
        cached_input: USD per 1M input tokens served from the prefix cache (cache reads).
        output: USD per 1M output tokens (reasoning tokens included).
        cache_write: USD per 1M input tokens written to the cache (Anthropic's
            ``cache_creation_input_tokens``, at a premium over ``input``); ``None`` (every
            profile but ``anthropic-like``) prices them as plain input, as a provider that
            caches for free does.
    """

    name: str = "none"
    input: float = 0.0
    cached_input: float = 0.0
    output: float = 0.0
    cache_write: float | None = None

    def cost(self, prompt_tokens: int, cached_tokens: int, output_tokens: int, cache_write_tokens: int = 0) -> float:
        """USD cost of one call; ``cache_write_tokens`` are part of ``prompt_tokens``, not cached."""
        writes = min(max(cache_write_tokens, 0), max(prompt_tokens - cached_tokens, 0))
        uncached = max(prompt_tokens - cached_tokens - writes, 0)
        write_price = self.input if self.cache_write is None else self.cache_write
        return (uncached * self.input + cached_tokens * self.cached_input + writes * write_price
                + output_tokens * self.output) / 1e6

"""Pricing profiles: USD per 1M tokens for input, cached input and output."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pricing:
    """Per-1M-token prices. ``name`` is recorded with every cost figure.

    Parameters:
        name: profile name (``none`` prices everything at 0).
        input: USD per 1M uncached input tokens.
        cached_input: USD per 1M input tokens served from the prefix cache.
        output: USD per 1M output tokens (reasoning tokens included).
    """

    name: str = "none"
    input: float = 0.0
    cached_input: float = 0.0
    output: float = 0.0

    def cost(self, prompt_tokens: int, cached_tokens: int, output_tokens: int) -> float:
        """USD cost of one call."""
        uncached = max(prompt_tokens - cached_tokens, 0)
        return (uncached * self.input + cached_tokens * self.cached_input + output_tokens * self.output) / 1e6

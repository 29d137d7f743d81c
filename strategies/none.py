"""``none``: the baseline. The model sees the whole history, every step."""

from __future__ import annotations

from strategies.base import BaseStrategy


class NoManagement(BaseStrategy):
    """Send the full history unchanged. Cache-friendly (append-only), but unbounded."""

    budget_guarantee = "none"

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Return the history as it is."""
        return list(messages)

"""Model wrappers for tests and benchmarks. A wrapper is itself a Model."""
from __future__ import annotations

import time
from typing import Any

from harness.models.base import Completion, session_for


class Delayed:
    """Adds a fixed latency to every call of the wrapped model (to measure parallel speed-up).

    Parameters:
        inner: the wrapped model.
        latency_s: seconds slept per call, added to the completion's latency.
    """

    def __init__(self, inner: Any, latency_s: float) -> None:
        self.inner = inner
        self.latency_s = latency_s
        self.name = inner.name
        self.context_window = inner.context_window
        self.is_reference = getattr(inner, "is_reference", False)
        self.label = getattr(inner, "label", "")

    def for_trial(self, instance: Any, trial: int = 0) -> "Delayed":
        """Wrap the inner model's per-trial session."""
        return Delayed(session_for(self.inner, instance, trial), self.latency_s)

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        """Sleep, then delegate."""
        time.sleep(self.latency_s)
        completion = self.inner.complete(messages, tools)
        completion.latency_s += self.latency_s
        return completion

"""Model wrappers. A wrapper is itself a Model, so each works around any backend.

- ``Delayed``: a fixed latency per call (``latency_s``, for benchmarks and tests);
- ``Throttled``: a model's ``max_concurrency`` and its shared rate-limit pause, over all workers;
- ``harness.models.response_cache.Cached`` (its own module): replays recorded responses.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

from harness.models.base import Completion, session_for, subagent_session
from harness.models.retry import RateGate, gate_scope


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


class Limits:
    """What every worker thread shares for one model: a ``max_concurrency`` semaphore and a rate gate.

    Parameters:
        name: the model's name.
        max_concurrency: most calls in flight at once over all workers (``None``: no limit).
    """

    def __init__(self, name: str, max_concurrency: int | None = None) -> None:
        if max_concurrency is not None and int(max_concurrency) < 1:
            raise ValueError(f"max_concurrency={max_concurrency} must be at least 1 (or null for no limit)")
        self.max_concurrency = None if max_concurrency is None else int(max_concurrency)
        self.slots = threading.BoundedSemaphore(self.max_concurrency) if self.max_concurrency else None
        self.gate = RateGate(name)
        self._lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0

    @contextlib.contextmanager
    def slot(self):
        """Hold one of the ``max_concurrency`` slots (retries and their waits included) and the rate gate."""
        if self.slots is not None:
            self.slots.acquire()
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            with gate_scope(self.gate):
                yield
        finally:
            with self._lock:
                self.in_flight -= 1
            if self.slots is not None:
                self.slots.release()


class Throttled:
    """Every call of the wrapped model through one shared ``Limits``: at most ``max_concurrency`` in
    flight, and one rate-limit pause for all workers (see ``harness.models.retry.RateGate``).

    Wraps any backend: its retries (``call_with_retries``) find the gate by themselves.

    Parameters:
        inner: the wrapped model (or one session of it).
        limits: the model's shared limits (one ``Limits`` per model, shared by its sessions).
    """

    def __init__(self, inner: Any, limits: Limits) -> None:
        self.inner = inner
        self.limits = limits
        self.name = inner.name
        self.context_window = inner.context_window
        self.is_reference = getattr(inner, "is_reference", False)
        self.label = getattr(inner, "label", "")

    def for_trial(self, instance: Any, trial: int = 0) -> "Throttled":
        """The inner model's per-trial session, under the same limits."""
        return Throttled(session_for(self.inner, instance, trial), self.limits)

    def for_subtask(self, instance: Any, task: str, trial: int = 0, run: int = 1) -> "Throttled":
        """A sub-agent's session, under the same limits."""
        return Throttled(subagent_session(self.inner, instance, task, trial, run), self.limits)

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        """Wait for a slot and for any rate-limit pause, then delegate."""
        with self.limits.slot():
            self.limits.gate.wait()
            return self.inner.complete(messages, tools)

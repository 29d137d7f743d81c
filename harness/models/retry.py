"""Retries for model backends, wrapped once around tenacity.

A backend says which exceptions are transient (``is_transient``) and, optionally, how
long the server asked it to wait (``retry_after``). Transient errors are retried with
exponential backoff plus jitter, capped; a server's ``Retry-After`` is honoured (up to
``max_retry_after``). Any other exception propagates at once (the backend maps it to
``ModelError`` or ``ContextOverflowError``). When the attempts are exhausted the last
error becomes a ``ModelError`` (the trial's outcome ``model_error``).

Workers share a model's rate limit: ``RateGate`` (one per model, installed for a call by
``harness.models.wrappers.Throttled`` through ``gate_scope``) holds every worker back while any
one of them is told to wait. When an attempt is rate-limited (HTTP 429 or 529, or an injected
``rate_limit``), its wait (the server's ``Retry-After``, else the backoff) becomes a pause of
the gate, and every attempt of every worker on that model waits for the pause to pass before
it starts: one 429 slows the whole pool down at once, instead of each worker finding out alone.

Tests make the waits instant by patching ``harness.models.retry.sleep``.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
import random
import threading
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Mapping, TypeVar

import tenacity

from harness.models.base import ModelError

T = TypeVar("T")
RATE_LIMIT_STATUS = (429, 529)  # 429 Too Many Requests; 529 Anthropic's overloaded_error
log = logging.getLogger("ctxbench")


def sleep(seconds: float) -> None:
    """The wait between attempts (module-level so tests can patch it)."""
    time.sleep(seconds)


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try.

    Parameters:
        attempts: total attempts, the first included (1 = no retry).
        initial_wait: seconds before the first retry; doubles each time.
        max_wait: cap on one backoff wait, jitter included.
        jitter: up to this many random seconds are added to each backoff wait.
        max_retry_after: cap on a server's ``Retry-After``.
    """

    attempts: int = 6
    initial_wait: float = 1.0
    max_wait: float = 60.0
    jitter: float = 1.0
    max_retry_after: float = 300.0

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        base = self.initial_wait * (2 ** (attempt - 1))
        return min(self.max_wait, base + random.uniform(0, self.jitter))


def _seconds(raw: Any, scale: float = 1.0) -> float | None:
    """A header's number of seconds (``None`` for one that is not a number, or is NaN: ``sleep(nan)`` raises)."""
    try:
        value = float(raw) / scale
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else max(value, 0.0)  # +inf stays: the caller caps it at max_retry_after


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The wait a response's ``Retry-After`` / ``retry-after-ms`` headers ask for, if any (``None`` for garbage)."""
    if not headers:
        return None
    lower = {str(k).lower(): v for k, v in dict(headers).items()}
    raw_ms = lower.get("retry-after-ms")
    if raw_ms is not None:
        seconds = _seconds(raw_ms, 1000.0)
        if seconds is not None:
            return seconds
    raw = lower.get("retry-after")
    if raw is None:
        return None
    seconds = _seconds(raw)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(raw)
        return max(when.timestamp() - time.time(), 0.0)
    except (TypeError, ValueError, OverflowError):  # not a date; a naive or far-off date
        return None


def is_rate_limited(exc: BaseException | None) -> bool:
    """Whether an error says "slow down": HTTP 429/529 (``status_code`` or ``status``) or an injected rate limit."""
    if exc is None:
        return False
    status = getattr(exc, "status_code", None) or getattr(exc, "status", None)
    return status in RATE_LIMIT_STATUS or getattr(exc, "kind", None) == "rate_limit"


class RateGate:
    """A model's shared rate-limit pause: while it lasts, no worker starts an attempt on that model.

    Parameters:
        name: the model's name (for the log line).
        clock: monotonic seconds (tests may pass a fake clock).
    """

    def __init__(self, name: str = "", clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.clock = clock
        self._lock = threading.Lock()
        self._until = 0.0
        self.pauses = 0
        self.waits = 0

    def pause(self, seconds: float) -> None:
        """Hold every worker back for ``seconds`` from now (an earlier, longer pause stands)."""
        if seconds <= 0:
            return
        with self._lock:
            until = self.clock() + seconds
            if until > self._until:
                self._until = until
                self.pauses += 1
                log.info("rate limit on %s: every worker pauses %.2fs", self.name or "model", seconds)

    def remaining(self) -> float:
        """Seconds left of the current pause (0 when none)."""
        with self._lock:
            return max(self._until - self.clock(), 0.0)

    def wait(self) -> None:
        """Block until the pause has passed (again if another worker extends it meanwhile)."""
        while True:
            with self._lock:
                target = self._until
                left = target - self.clock()
            if left <= 0:
                return
            self.waits += 1
            sleep(left)
            with self._lock:
                if self._until <= target:
                    return


_GATE: contextvars.ContextVar[RateGate | None] = contextvars.ContextVar("ctxbench_rate_gate", default=None)


@contextlib.contextmanager
def gate_scope(gate: RateGate | None):
    """Make ``gate`` the rate gate of every ``call_with_retries`` made inside (in this thread)."""
    token = _GATE.set(gate)
    try:
        yield gate
    finally:
        _GATE.reset(token)


def current_gate() -> RateGate | None:
    """The rate gate installed by the innermost ``gate_scope`` of this thread, if any."""
    return _GATE.get()


def call_with_retries(
    fn: Callable[[], T],
    *,
    policy: RetryPolicy,
    is_transient: Callable[[BaseException], bool],
    retry_after: Callable[[BaseException], float | None] = lambda exc: None,
    describe: Callable[[BaseException], str] = lambda exc: f"{type(exc).__name__}: {exc}",
    on_retry: Callable[[int, BaseException, float], None] | None = None,
    gate: RateGate | None = None,
) -> T:
    """Call ``fn`` until it succeeds, a non-transient error propagates, or the attempts run out.

    ``gate`` (default: the one ``gate_scope`` installed, if any) is waited on before every attempt,
    and a rate-limited attempt pauses it for the wait it asked for, so all workers back off together.
    """
    gate = gate if gate is not None else current_gate()

    def wait(state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after(exc) if exc is not None else None
        if asked is not None:
            seconds = min(asked, policy.max_retry_after)
        else:
            seconds = policy.backoff(state.attempt_number)
        if gate is not None and is_rate_limited(exc):
            gate.pause(seconds)
        if on_retry is not None and exc is not None:
            on_retry(state.attempt_number, exc, seconds)
        return seconds

    def attempt() -> T:
        if gate is not None:
            gate.wait()
        return fn()

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(max(1, int(policy.attempts))),
        wait=wait,
        retry=tenacity.retry_if_exception(is_transient),
        sleep=lambda seconds: sleep(seconds),
        reraise=False,
    )
    try:
        return retrying(attempt)
    except tenacity.RetryError as exc:
        last = exc.last_attempt.exception()
        assert last is not None  # only a failed attempt is retried, so the attempts ran out on an exception
        raise ModelError(f"gave up after {policy.attempts} attempts: {describe(last)}") from last


def policy_from(spec: Mapping[str, Any] | RetryPolicy | None) -> RetryPolicy:
    """A ``RetryPolicy`` from a config mapping (unknown keys are an error)."""
    if isinstance(spec, RetryPolicy):
        return spec
    return RetryPolicy(**dict(spec or {}))

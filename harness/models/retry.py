"""Retries for model backends, wrapped once around tenacity.

A backend says which exceptions are transient (``is_transient``) and, optionally, how
long the server asked it to wait (``retry_after``). Transient errors are retried with
exponential backoff plus jitter, capped; a server's ``Retry-After`` is honoured (up to
``max_retry_after``). Any other exception propagates at once (the backend maps it to
``ModelError`` or ``ContextOverflowError``). When the attempts are exhausted the last
error becomes a ``ModelError`` (the trial's outcome ``model_error``).

Tests make the waits instant by patching ``harness.models.retry.sleep``.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Mapping, TypeVar

import tenacity

from harness.models.base import ModelError

T = TypeVar("T")


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


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The wait a response's ``Retry-After`` / ``retry-after-ms`` headers ask for, if any."""
    if not headers:
        return None
    lower = {str(k).lower(): v for k, v in dict(headers).items()}
    raw_ms = lower.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = lower.get("retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def call_with_retries(fn: Callable[[], T], *, policy: RetryPolicy, is_transient: Callable[[BaseException], bool],
                      retry_after: Callable[[BaseException], float | None] = lambda exc: None,
                      describe: Callable[[BaseException], str] = lambda exc: f"{type(exc).__name__}: {exc}",
                      on_retry: Callable[[int, BaseException, float], None] | None = None) -> T:
    """Call ``fn`` until it succeeds, a non-transient error propagates, or the attempts run out."""

    def wait(state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after(exc) if exc is not None else None
        if asked is not None:
            seconds = min(asked, policy.max_retry_after)
        else:
            seconds = policy.backoff(state.attempt_number)
        if on_retry is not None and exc is not None:
            on_retry(state.attempt_number, exc, seconds)
        return seconds

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(max(1, int(policy.attempts))),
        wait=wait,
        retry=tenacity.retry_if_exception(is_transient),
        sleep=lambda seconds: sleep(seconds),
        reraise=False,
    )
    try:
        return retrying(fn)
    except tenacity.RetryError as exc:
        last = exc.last_attempt.exception()
        raise ModelError(f"gave up after {policy.attempts} attempts: {describe(last)}") from last


def policy_from(spec: Mapping[str, Any] | RetryPolicy | None) -> RetryPolicy:
    """A ``RetryPolicy`` from a config mapping (unknown keys are an error)."""
    if isinstance(spec, RetryPolicy):
        return spec
    return RetryPolicy(**dict(spec or {}))

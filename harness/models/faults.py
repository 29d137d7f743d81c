"""Fault injection around any model (``faults=flaky``, ``faults=down``): the harness under stress.

``FaultInjecting`` wraps a model and, before each call, draws from a per-trial seeded RNG
whether this attempt times out, is rate-limited (429), fails with a 5xx, or succeeds; a
successful reply may be replaced by garbage (a truncated tool call in text). Transient
faults go through the same retry wrapper as the real backends (``harness.models.retry``,
tenacity), so: retries recover; garbage goes back to the model as an error it can correct;
exhausted retries raise ``ModelError`` and the trial ends as ``model_error``; the run goes
on. Draws depend only on the seed, the task instance and the call order, so records are
identical whatever the concurrency.

A garbled reply is marked ``injected``, and the response cache sits inside the injector
(``harness.runner.wrap_model``): it records the real replies only, so a run without faults
never replays an injected one, and a rerun with the same faults replays every model call and
injects the same faults again.
"""

from __future__ import annotations

import random
from typing import Any

from harness.models.base import Completion, Usage, session_for, subagent_session
from harness.models.retry import call_with_retries, policy_from

GARBAGE = '```json\n{"name": "get_'  # a tool call cut off mid-way, as a flaky stream delivers it
GARBAGE_ERROR = "the reply was cut off: it holds an unfinished tool call and no complete one"


class InjectedFault(Exception):
    """A simulated transient failure (``timeout``, ``rate_limit`` or ``server_error``)."""

    def __init__(self, kind: str, retry_after: float | None = None) -> None:
        super().__init__(f"injected {kind}")
        self.kind = kind
        self.retry_after = retry_after


class FaultInjecting:
    """Wrap ``inner`` and inject faults with the given probabilities per attempt.

    Parameters:
        inner: the wrapped model.
        timeout, rate_limit, server_error: probability of each transient fault per attempt.
        garbage: probability that a successful reply is replaced by a garbled one.
        seed: seeds the per-trial fault sequence.
        retry: retry policy for the injected faults (``attempts``, ``initial_wait``, ...).
        rate_limit_retry_after: the ``Retry-After`` seconds a simulated 429 asks for.
    """

    def __init__(
        self,
        inner: Any,
        timeout: float = 0.0,
        rate_limit: float = 0.0,
        server_error: float = 0.0,
        garbage: float = 0.0,
        seed: int = 0,
        retry: dict | None = None,
        rate_limit_retry_after: float = 0.0,
        _rng: random.Random | None = None,
    ) -> None:
        for name, p in (
            ("timeout", timeout),
            ("rate_limit", rate_limit),
            ("server_error", server_error),
            ("garbage", garbage),
        ):
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"faults: {name}={p} must be a probability in [0, 1]")
        if timeout + rate_limit + server_error > 1.0:
            raise ValueError("faults: timeout + rate_limit + server_error must not exceed 1")
        self.inner = inner
        self.rates = (timeout, rate_limit, server_error)
        self.garbage = garbage
        self.seed = seed
        self.retry_spec = retry
        self.policy = policy_from(retry)
        self.rate_limit_retry_after = rate_limit_retry_after
        self.rng = _rng or random.Random(f"faults:{seed}")
        self.name = inner.name
        self.context_window = inner.context_window
        self.is_reference = getattr(inner, "is_reference", False)
        self.label = getattr(inner, "label", "")
        self.injected: dict[str, int] = {"timeout": 0, "rate_limit": 0, "server_error": 0, "garbage": 0}

    def _session(self, inner: Any, key: str) -> "FaultInjecting":
        timeout, rate_limit, server_error = self.rates
        return FaultInjecting(
            inner,
            timeout,
            rate_limit,
            server_error,
            self.garbage,
            self.seed,
            self.retry_spec,
            self.rate_limit_retry_after,
            random.Random(f"faults:{self.seed}:{key}"),
        )

    def for_trial(self, instance: Any, trial: int = 0) -> "FaultInjecting":
        """A per-trial session whose fault sequence depends on the seed and the instance only."""
        return self._session(session_for(self.inner, instance, trial), instance.id)

    def for_subtask(self, instance: Any, task: str, trial: int = 0, run: int = 1) -> "FaultInjecting":
        """Sub-agents see faults too."""
        return self._session(subagent_session(self.inner, instance, task, trial, run), f"{instance.id}:{task}")

    def preflight(self) -> None:
        """Delegate the inner model's preflight, if any."""
        check = getattr(self.inner, "preflight", None)
        if callable(check):
            check()

    def _attempt(self, messages: list[dict], tools: list[dict]) -> Completion:
        draw = self.rng.random()
        timeout, rate_limit, server_error = self.rates
        if draw < timeout:
            self.injected["timeout"] += 1
            raise InjectedFault("timeout")
        if draw < timeout + rate_limit:
            self.injected["rate_limit"] += 1
            raise InjectedFault("rate_limit", retry_after=self.rate_limit_retry_after)
        if draw < timeout + rate_limit + server_error:
            self.injected["server_error"] += 1
            raise InjectedFault("server_error")
        completion = self.inner.complete(messages, tools)
        if self.garbage and self.rng.random() < self.garbage:
            self.injected["garbage"] += 1
            return Completion(
                {"role": "assistant", "content": GARBAGE, "_parse_error": GARBAGE_ERROR},
                Usage(
                    prompt_tokens=completion.usage.prompt_tokens,
                    cached_tokens=completion.usage.cached_tokens,
                    output_tokens=None,
                    cached_source=completion.usage.cached_source,
                    tokens_source=completion.usage.tokens_source,
                ),
                completion.latency_s,
                from_cache=completion.from_cache,
                injected=True,
            )
        return completion

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        """One call, with faults injected and retried by the shared retry wrapper."""
        return call_with_retries(
            lambda: self._attempt(messages, tools),
            policy=self.policy,
            is_transient=lambda exc: isinstance(exc, InjectedFault),
            retry_after=lambda exc: getattr(exc, "retry_after", None),
        )

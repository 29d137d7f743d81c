"""Per-model limits shared by every worker: ``max_concurrency`` and one rate-limit pause for all.

Fake models with injected latency and 429s; waits of at most ~0.15 s.
"""

from __future__ import annotations

import threading
import time

import pytest

from harness.models.base import Completion, Usage
from harness.models.faults import InjectedFault
from harness.models.retry import RateGate, RetryPolicy, call_with_retries, is_rate_limited
from harness.models.wrappers import Limits, Throttled
from harness.records import read_jsonl
from harness.runner import ConfigError, execute
from tests.helpers import compose

FAST = RetryPolicy(attempts=3, initial_wait=0.0, max_wait=0.0, jitter=0.0)


class Slow:
    """Sleeps ``latency_s`` per call and tracks how many calls are in flight at once."""

    name, context_window, is_reference = "slow", 1000, False

    def __init__(self, latency_s: float = 0.03) -> None:
        self.latency_s = latency_s
        self.lock = threading.Lock()
        self.in_flight = self.peak = 0

    def complete(self, messages, tools):
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        time.sleep(self.latency_s)
        with self.lock:
            self.in_flight -= 1
        return Completion({"role": "assistant", "content": "ok"}, Usage())


def hammer(model, threads: int = 8, calls: int = 3) -> None:
    def worker() -> None:
        for _ in range(calls):
            model.complete([], [])

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()


def test_max_concurrency_caps_calls_in_flight_over_all_workers():
    inner = Slow()
    limits = Limits("slow", max_concurrency=2)
    hammer(Throttled(inner, limits))
    assert inner.peak == 2 and limits.peak == 2
    unlimited = Slow()
    hammer(Throttled(unlimited, Limits("slow")))
    assert unlimited.peak > 2, "without a limit the eight workers overlap"


def test_max_concurrency_must_be_positive():
    with pytest.raises(ValueError, match="max_concurrency=0"):
        Limits("m", max_concurrency=0)


class RateLimited(Exception):
    """A 429 as an SDK raises it."""

    status_code = 429


def test_what_counts_as_a_rate_limit():
    assert is_rate_limited(RateLimited()) and is_rate_limited(InjectedFault("rate_limit", 1.0))
    assert not is_rate_limited(InjectedFault("server_error")) and not is_rate_limited(ValueError())


def test_one_429_pauses_every_worker_of_the_model():
    """Worker A is told to wait 0.15 s; worker B, starting meanwhile, waits for the pause too."""
    limits = Limits("m")
    told = threading.Event()
    times: dict[str, float] = {}

    class Backend:
        name, context_window, is_reference = "m", 1000, False

        def __init__(self, who: str) -> None:
            self.who, self.attempts = who, 0

        def attempt(self):
            self.attempts += 1
            if self.who == "a" and self.attempts == 1:
                times["429"] = time.monotonic()
                raise RateLimited()
            times[self.who] = time.monotonic()
            return Completion({"role": "assistant", "content": self.who}, Usage())

        def complete(self, messages, tools):
            def signal(attempt, exc, seconds):
                told.set()

            return call_with_retries(
                self.attempt,
                policy=FAST,
                is_transient=lambda e: isinstance(e, RateLimited),
                retry_after=lambda e: 0.15,
                on_retry=signal,
            )

    a, b = Throttled(Backend("a"), limits), Throttled(Backend("b"), limits)
    worker = threading.Thread(target=a.complete, args=([], []))
    worker.start()
    assert told.wait(2)
    b.complete([], [])
    worker.join()
    assert times["b"] - times["429"] >= 0.14, "B waited for A's pause instead of calling at once"
    assert times["a"] - times["429"] >= 0.14 and limits.gate.pauses == 1


def test_the_gate_waits_with_a_fake_clock(monkeypatch):
    now = [100.0]
    slept: list[float] = []

    def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    monkeypatch.setattr("harness.models.retry.sleep", fake_sleep)
    gate = RateGate("m", clock=lambda: now[0])
    gate.pause(2.0)
    gate.pause(0.5)  # a shorter pause does not cut the longer one
    gate.wait()
    assert slept == [2.0] and gate.remaining() == 0
    gate.wait()
    assert slept == [2.0], "no pause, no wait"
    attempts = []

    def flaky():
        attempts.append(now[0])
        if len(attempts) == 1:
            raise InjectedFault("rate_limit", retry_after=3.0)
        return "ok"

    assert (
        call_with_retries(
            flaky,
            policy=FAST,
            is_transient=lambda e: isinstance(e, InjectedFault),
            retry_after=lambda e: e.retry_after,
            gate=gate,
        )
        == "ok"
    )
    assert gate.pauses == 2 and attempts[1] - attempts[0] == pytest.approx(3.0)


RUN = (
    "suite=smoke",
    "trials=2",
    "strategy=headtail",
    "budget=3k",
    "progress=false",
    "plots=false",
    "faults=flaky",
    "faults.rate_limit=0.2",
    "+faults.rate_limit_retry_after=0.01",
)


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_run_with_shared_limits_and_429s_records_what_one_worker_records(tmp_path):
    execute(compose(*RUN), tmp_path / "one" / "run", echo=lambda _: None)
    execute(compose(*RUN, "workers=4", "+model.max_concurrency=2"), tmp_path / "four" / "run", echo=lambda _: None)

    def strip(rows):
        return [{k: v for k, v in r.items() if k not in ("wall_s", "started_at", "latency_s")} for r in rows]

    assert strip(read_jsonl(tmp_path / "one" / "run" / "trials.jsonl")) == strip(
        read_jsonl(tmp_path / "four" / "run" / "trials.jsonl")
    )
    assert strip(read_jsonl(tmp_path / "one" / "run" / "steps.jsonl")) == strip(
        read_jsonl(tmp_path / "four" / "run" / "steps.jsonl")
    )


def test_a_bad_max_concurrency_is_one_config_error(tmp_path):
    with pytest.raises(ConfigError, match="max_concurrency=0"):
        execute(
            compose("suite=smoke", "trials=1", "progress=false", "+model.max_concurrency=0"),
            tmp_path,
            echo=lambda _: None,
        )
    assert not (tmp_path / "trials.jsonl").exists()

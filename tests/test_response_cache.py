"""The response cache (``cache_responses=true``): a rerun of a finished paid run is free and replays it.

A first run records every reply; a rerun into another folder takes every call from the cache:
its steps say ``from_cache``, cost 0 with the original cost beside it (``cost_uncached``), and
its records equal the first run's apart from those columns (benchmarks/compare_records.py).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from benchmarks.compare_records import main as compare_records
from harness.models.base import Completion, ModelError, Usage
from harness.models.response_cache import Cached, ResponseStore, request_key, request_settings
from harness.records import read_jsonl
from harness.runner import execute
from tests.helpers import compose

PAID = ("pricing=openai-like", "progress=false", "plots=false", "cache_responses=true")
SMOKE = ("suite=smoke", "trials=2", "strategy=headtail", "budget=3k", "workers=2", *PAID)
FAKE = (
    "suite=smoke",
    "task=invoice_audit",
    "task.pages=4",
    "task.invoices_per_page=5",
    "task.duplicates=2",
    "task.max_distance=3",
    "trials=2",
    "budget=2k",
    "strategy=clear_tool_results",
    "strategy.keep=1",
    "model._target_=tests.fake_models.ScriptModel",
    "~model.profile",
    "~model.profile_params",
    "+model.script=repeated_ids",
    "+model.max_concurrency=2",
    "workers=2",
    *PAID,
)
COST_COLUMNS = "cost,agent_cost,summarizer_cost,subagent_cost,stop_hook_cost,from_cache,from_cache_calls"


def run(tmp_path: Path, name: str, overrides: tuple[str, ...], lines: list[str] | None = None) -> Path:
    folder = tmp_path / name / "run"  # the same folder name: ``run`` is a column
    echo = lines.append if lines is not None else (lambda _: None)
    execute(compose(*overrides, f"response_cache={tmp_path / 'responses.sqlite'}"), folder, echo=echo)
    return folder


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@pytest.mark.parametrize("overrides", [SMOKE, FAKE], ids=["reference-agent", "fake-paid-model"])
def test_a_rerun_is_served_from_the_cache_at_no_cost_and_replays_the_records(tmp_path, overrides):
    first, again = run(tmp_path, "first", overrides), run(tmp_path, "again", overrides)
    steps_first, steps_again = read_jsonl(first / "steps.jsonl"), read_jsonl(again / "steps.jsonl")
    assert steps_first and not any(s["from_cache"] for s in steps_first)
    assert all(s["cost"] == s["cost_uncached"] for s in steps_first)
    assert sum(s["cost"] for s in steps_first) > 0, "priced calls, so that 'free' means something"
    assert all(s["from_cache"] and s["cost"] == 0 for s in steps_again)
    assert [s["cost_uncached"] for s in steps_again] == [s["cost"] for s in steps_first]
    trials_first, trials_again = read_jsonl(first / "trials.jsonl"), read_jsonl(again / "trials.jsonl")
    for a, b in zip(trials_first, trials_again, strict=False):
        assert (a["from_cache_calls"], a["cost_uncached"]) == (0, a["cost"])
        assert (b["from_cache_calls"], b["cost"], b["cost_uncached"]) == (b["total_calls"], 0, a["cost"])
    assert compare_records([str(first), str(again), "--ignore-columns", COST_COLUMNS]) == 0
    assert compare_records([str(first), str(again)]) == 1, "the comparison sees the cost columns unless told"


SUMMARIZE = (
    "strategy=summarize",
    "strategy.keep_recent_rounds=2",
    "summarizer=scripted",
    "model.profile=perfect",
    "task=invoice_audit",
    "task.pages=10",
    "task.invoices_per_page=8",
    "task.duplicates=3",
    "task.min_distance=1",
    "task.max_distance=4",
)


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@pytest.mark.parametrize("strategy", [("strategy=isolate",), SUMMARIZE], ids=["subagents", "separate-summarizer"])
def test_every_kind_of_call_is_replayed(tmp_path, strategy):
    overrides = ("suite=smoke", "trials=1", "budget=3k", *PAID, *strategy)
    first, again = run(tmp_path, "first", overrides), run(tmp_path, "again", overrides)
    kinds = {s["kind"] for s in read_jsonl(first / "steps.jsonl")}
    assert len(kinds) > 1, kinds
    assert all(s["from_cache"] for s in read_jsonl(again / "steps.jsonl"))
    assert compare_records([str(first), str(again), "--ignore-columns", COST_COLUMNS]) == 0


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_the_summary_reports_what_was_paid_and_what_it_would_have_cost(tmp_path):
    import pandas as pd

    printed: list[str] = []
    first, again = run(tmp_path, "first", SMOKE, printed), run(tmp_path, "again", SMOKE, printed)
    said = [line for line in printed if line.startswith("response cache:")]
    assert len(said) == 1 and "paid $0.0000" in said[0], "only the replaying run says so"
    paid, replay = pd.read_csv(first / "summary.csv").iloc[0], pd.read_csv(again / "summary.csv").iloc[0]
    assert replay["total_cost"] == 0 and replay["from_cache_calls"] > 0
    assert replay["total_cost_uncached"] == pytest.approx(paid["total_cost"])
    assert paid["from_cache_calls"] == 0


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_replayed_side_compares_on_what_its_calls_cost(tmp_path):
    from harness import analysis

    first, again = run(tmp_path, "first", SMOKE), run(tmp_path, "again", SMOKE)
    cmp = analysis.paired(analysis.load_trials([first]), analysis.load_trials([again]))
    row = cmp.table.iloc[0]
    assert row["cost_ratio"] == pytest.approx(1.0) and not cmp.regression, "not 'free', the same calls"


def test_without_cache_responses_nothing_is_stored(tmp_path):
    overrides = tuple(o for o in SMOKE if o != "cache_responses=true")
    run(tmp_path, "plain", overrides)
    assert not (tmp_path / "responses.sqlite").exists()
    assert not any(s["from_cache"] for s in read_jsonl(tmp_path / "plain" / "steps.jsonl"))


MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]


def test_the_key_is_the_exact_request_and_its_sample():
    settings = request_settings(
        {"name": "m", "model": "gpt", "temperature": 0.0, "retry": {"attempts": 3}, "timeout": 10, "max_concurrency": 4}
    )
    assert settings == {"name": "m", "model": "gpt", "temperature": 0.0}, "transport keys do not change replies"
    key = request_key(settings, ["inst", 0], 0, MESSAGES, [])
    assert key == request_key(dict(reversed(settings.items())), ["inst", 0], 0, [dict(m) for m in MESSAGES], [])
    differ = [
        request_key({**settings, "temperature": 0.7}, ["inst", 0], 0, MESSAGES, []),
        request_key(settings, ["inst", 1], 0, MESSAGES, []),
        request_key(settings, ["inst", 0], 1, MESSAGES, []),
        request_key(settings, ["inst", 0], 0, MESSAGES[:1], []),
        request_key(settings, ["inst", 0], 0, MESSAGES, [{"type": "function", "function": {"name": "f"}}]),
    ]
    assert len({key, *differ}) == 6


class Counting:
    """A paid-model stand-in: counts calls, answers with the call number; fails when told to."""

    name, context_window, is_reference = "counting", 1000, False

    def __init__(self) -> None:
        self.calls = 0
        self.fail = False
        self._lock = threading.Lock()

    def complete(self, messages, tools):
        with self._lock:
            self.calls += 1
            n = self.calls
        if self.fail:
            raise ModelError("down")
        return Completion({"role": "assistant", "content": f"reply {n}"}, Usage(prompt_tokens=10, output_tokens=n))


def test_the_same_request_twice_in_a_session_replays_both_replies_in_order(tmp_path):
    store = ResponseStore(tmp_path / "r.sqlite")
    inner = Counting()
    first = Cached(inner, store, {"name": "counting"}, ["i", 0])
    replies = [first.complete(MESSAGES, []).message["content"] for _ in range(2)]
    replay = Cached(inner, store, {"name": "counting"}, ["i", 0])
    again = [replay.complete(MESSAGES, []) for _ in range(2)]
    assert replies == ["reply 1", "reply 2"] and [c.message["content"] for c in again] == replies
    assert all(c.from_cache for c in again) and [c.usage.output_tokens for c in again] == [1, 2]
    assert inner.calls == 2


def test_a_completion_round_trips_with_every_field(tmp_path):
    from harness.models.response_cache import decode_completion, encode_completion

    original = Completion(
        {"role": "assistant", "content": "x", "tool_calls": []},
        Usage(prompt_tokens=5, cached_tokens=None, output_tokens=2, reasoning_tokens=1, cached_source="reported"),
        latency_s=1.5,
        raw={"id": "r1"},
    )
    replay = decode_completion(encode_completion(original))
    assert replay.from_cache and not original.from_cache
    assert (replay.message, replay.usage, replay.latency_s, replay.raw) == (
        original.message,
        original.usage,
        original.latency_s,
        original.raw,
    )
    assert decode_completion(encode_completion(Completion({}, raw={"sdk": object()}))).raw is None


def test_errors_are_not_cached(tmp_path):
    store = ResponseStore(tmp_path / "r.sqlite")
    inner = Counting()
    inner.fail = True
    with pytest.raises(ModelError):
        Cached(inner, store, {}, ["i", 0]).complete(MESSAGES, [])
    inner.fail = False
    assert not Cached(inner, store, {}, ["i", 0]).complete(MESSAGES, []).from_cache
    assert inner.calls == 2 and len(store) == 1


def test_the_store_is_thread_safe(tmp_path):
    store = ResponseStore(tmp_path / "r.sqlite")
    inner = Counting()

    def worker(w: int) -> None:
        session = Cached(inner, store, {}, ["i", w])
        for step in range(20):
            session.complete([*MESSAGES, {"role": "user", "content": str(step)}], [])

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store) == 160 and inner.calls == 160
    for t in (threads := [threading.Thread(target=worker, args=(w,)) for w in range(8)]):
        t.start()
    for t in threads:
        t.join()
    assert inner.calls == 160 and store.hits == 160, "every call of the second round is a hit"


def test_request_options_are_part_of_the_key(tmp_path):
    """A server-side strategy's request options (context management) change what the server does, so the same
    messages with other options are another request."""
    from harness.models.base import request_options
    from harness.models.response_cache import Cached, ResponseStore

    class Echo:
        name = "echo"
        context_window = 1000
        is_reference = False

        def __init__(self):
            self.calls = 0

        def complete(self, messages, tools):
            from harness.models.base import Completion

            self.calls += 1
            return Completion({"role": "assistant", "content": f"reply {self.calls}"})

    inner = Echo()
    store = ResponseStore(tmp_path / "r.sqlite")
    messages = [{"role": "user", "content": "hi"}]
    Cached(inner, store, {"model": "m"}, ["i", 0]).complete(messages, [])
    with request_options(context_management={"edits": [{"type": "clear_tool_uses_20250919"}]}):
        other = Cached(inner, store, {"model": "m"}, ["i", 0]).complete(messages, [])
    again = Cached(inner, store, {"model": "m"}, ["i", 0]).complete(messages, [])
    assert inner.calls == 2 and not other.from_cache and again.from_cache

"""Invariants of none, sliding_window and headtail on hand-built histories."""

import pytest

from harness.conversation import validate_projection
from strategies.headtail import HeadTail
from strategies.none import NoManagement
from strategies.sliding_window import SlidingWindow
from tests.helpers import FakeContext, frozen, history

STRATEGIES = [NoManagement, SlidingWindow, HeadTail]
CASES = {
    "parallel": dict(rounds=8, parallel=3, size=200),
    "errors": dict(rounds=8, error_at=2, size=200),
    "user_turns": dict(rounds=8, user_turn_at=4, size=200),
    "huge_result": dict(rounds=3, size=6000),
}


def bound(cls, budget):
    strategy = cls()
    ctx = FakeContext(budget)
    strategy.bind(ctx)
    return strategy, ctx


@pytest.mark.parametrize("cls", STRATEGIES)
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("budget", [1_500, 4_000, 100_000])
def test_projection_is_valid_and_input_untouched(cls, case, budget):
    messages = history(**CASES[case])
    before = frozen(messages)
    strategy, _ = bound(cls, budget)
    # every prefix of the history, as the loop would call it (ending after tool results)
    for end in range(2, len(messages) + 1):
        prefix = messages[:end]
        if prefix[-1]["role"] == "assistant" or (end < len(messages) and messages[end]["role"] == "tool"):
            continue
        out = strategy.prepare(prefix)
        validate_projection(out, messages[0])
        assert out[-1] is prefix[-1] or out[-1] == prefix[-1], "the newest message must stay visible"
    assert messages == before, "prepare must not mutate the history"


@pytest.mark.parametrize("cls", [NoManagement, SlidingWindow, HeadTail])
def test_deterministic(cls):
    messages = history(rounds=10, parallel=2, size=300)
    outs = []
    for _ in range(2):
        strategy, _ = bound(cls, 3_000)
        outs.append(strategy.prepare(messages))
    assert outs[0] == outs[1]


def test_none_returns_everything():
    messages = history(rounds=5)
    strategy, _ = bound(NoManagement, 10)
    assert strategy.prepare(messages) == messages


def test_headtail_keeps_head_and_fits_budget():
    messages = history(rounds=12, parallel=2, size=300)
    strategy, ctx = bound(HeadTail, 6_000)
    out = strategy.prepare(messages)
    assert out[:2] == messages[:2]
    assert "earlier rounds" in out[2]["content"]
    assert ctx.count_tokens(out) + ctx.request_overhead() <= 6_000
    assert out[-1] is messages[-1]
    assert any(e[0] == "compaction" for e in ctx.events)


def test_headtail_never_splits_a_round():
    messages = history(rounds=12, parallel=3, size=300)
    strategy, _ = bound(HeadTail, 5_000)
    out = strategy.prepare(messages)
    kept_ids = {m.get("tool_call_id") for m in out if m["role"] == "tool"}
    for m in out:
        if m["role"] == "assistant":
            assert {c["id"] for c in m["tool_calls"]} <= kept_ids


def test_headtail_under_budget_is_identity():
    messages = history(rounds=2, size=50)
    strategy, ctx = bound(HeadTail, 100_000)
    assert strategy.prepare(messages) == messages
    assert ctx.events == []


def test_headtail_keeps_latest_round_even_if_alone_over_budget():
    messages = history(rounds=3, size=6000)
    strategy, _ = bound(HeadTail, 2_000)
    out = strategy.prepare(messages)
    assert out[-1] is messages[-1] and out[-2] is messages[-2]


def test_sliding_window_loses_the_task_and_repairs_orphans():
    messages = history(rounds=12, parallel=3, size=300)
    strategy, ctx = bound(SlidingWindow, 12_000)
    out = strategy.prepare(messages)
    assert messages[1] not in out[1:], "the naive window does not protect the task"
    assert out[1]["role"] == "assistant"
    assert ctx.count_tokens(out) + ctx.request_overhead() <= 12_000


def test_sliding_window_fixed_count():
    messages = history(rounds=6, size=10)
    strategy, _ = bound(lambda: SlidingWindow(max_messages=3), 10**6)
    out = strategy.prepare(messages)
    assert len(out) == 1 + 2  # the orphan tool at the cut is dropped; assistant + its result stay
    with pytest.raises(ValueError):
        SlidingWindow(max_messages=0)


def test_offload_never_offloads_a_result_the_agent_has_not_seen():
    """With parallel calls a round holds more results than keep_recent: all of them are still unseen."""
    from strategies.offload import Offload
    from tests.helpers import SYSTEM, TASK, FakeContext, call

    offload = Offload(threshold=10, keep_recent=1)
    offload.bind(FakeContext(budget=100_000))
    calls = [call(f"c{i}", "read", page=i) for i in range(4)]
    history = [dict(SYSTEM), dict(TASK), {"role": "assistant", "content": "", "tool_calls": calls}]
    history += [
        {"role": "tool", "tool_call_id": f"c{i}", "content": "word " * 50, "_tool": "read", "_args": {"page": i}}
        for i in range(4)
    ]
    assert offload.prepare(history) == history, "the four results of the newest round are not seen yet"
    history += [
        {"role": "assistant", "content": "noted", "tool_calls": [call("c9", "read", page=9)]},
        {"role": "tool", "tool_call_id": "c9", "content": "tiny", "_tool": "read", "_args": {"page": 9}},
    ]
    out = offload.prepare(history)
    assert all(out[i]["content"].startswith("[offloaded to memory") for i in range(3, 7)), "seen: now offloaded"


def test_clearing_never_clears_a_result_the_agent_has_not_seen():
    from strategies.clear_tool_results import ClearToolResults
    from tests.helpers import SYSTEM, TASK, FakeContext, call

    clear = ClearToolResults(keep=1, trigger=10)
    clear.bind(FakeContext(budget=100))
    calls = [call(f"c{i}", "read", page=i) for i in range(4)]
    history = [dict(SYSTEM), dict(TASK), {"role": "assistant", "content": "", "tool_calls": calls}]
    history += [
        {"role": "tool", "tool_call_id": f"c{i}", "content": "word " * 50, "_tool": "read", "_args": {"page": i}}
        for i in range(4)
    ]
    assert clear.prepare(history) == history, "over the trigger, but all four results are unseen"

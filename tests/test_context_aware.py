"""``context_aware_compression`` (source 002 exp 2-10 上下文感知压缩): each read, big tool result is compressed once,
with the task and the agent's reading of it as context; errors, small and unread results stay."""

import pytest

from harness.conversation import validate_projection
from strategies.context_aware import MARK, ContextAwareCompression
from tests.helpers import FakeContext, frozen, history


def bound(strategy, summary="Key findings:\n- kept"):
    strategy.bind(FakeContext(100_000, summary=summary))
    return strategy


def test_read_big_results_are_compressed_once_with_the_task_and_the_reply():
    hist = history(rounds=4, size=400)
    before = frozen(hist)
    strategy = bound(ContextAwareCompression(keep_recent_rounds=1, min_tokens=100))
    out = strategy.prepare(hist)
    assert hist == before
    validate_projection(out, hist[0])
    tools = [i for i, m in enumerate(hist) if m["role"] == "tool"]
    assert [out[i]["content"] for i in tools[:-1]] == [MARK + "Key findings:\n- kept"] * 3
    assert out[tools[-1]] is hist[tools[-1]], "the latest round is unread: kept verbatim"
    first = strategy.ctx.summaries[0]
    assert first[0] == hist[1], "the task statement comes first"
    assert first[1]["tool_calls"][0]["id"] == "c0_0" and first[2]["tool_call_id"] == "c0_0"
    assert first[3] == {"role": "assistant", "content": "step 1"}, "the agent's reply to the result"
    event, data = strategy.ctx.events[-1]
    assert event == "compaction" and data["compressed"] == 3 and data["compressed_chars"] < data["result_chars"]
    assert strategy.prepare(hist) == out and len(strategy.ctx.summaries) == 3, "frozen: never compressed twice"


def test_the_recent_rounds_stay_whole():
    """Default: the unread round and the one the agent just read stay (a file and its helper, side by side)."""
    hist = history(rounds=4, size=400)
    out = bound(ContextAwareCompression(min_tokens=100)).prepare(hist)
    tools = [i for i, m in enumerate(hist) if m["role"] == "tool"]
    assert [out[i]["content"].startswith(MARK) for i in tools] == [True, True, False, False]
    with pytest.raises(ValueError, match="keep_recent_rounds"):
        ContextAwareCompression(keep_recent_rounds=0)


def test_instructions_carry_the_task():
    strategy = ContextAwareCompression(keep_recent_rounds=1, min_tokens=0)
    ctx = FakeContext(100_000)
    seen = []
    ctx.summarize = lambda messages, instructions="": seen.append(instructions) or "s"
    strategy.bind(ctx)
    strategy.prepare(history(rounds=2, size=5))
    assert seen and "Do the task." in seen[0] and "{task}" not in seen[0]


def test_small_and_error_results_stay():
    hist = history(rounds=4, size=400, error_at=1)
    strategy = bound(ContextAwareCompression(keep_recent_rounds=1, min_tokens=100))
    out = strategy.prepare(hist)
    error = next(i for i, m in enumerate(hist) if m.get("_error"))
    assert out[error] is hist[error]
    small = history(rounds=4, size=5)
    assert bound(ContextAwareCompression(min_tokens=100)).prepare(small) == small


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="context_aware_compression"):
        ContextAwareCompression(min_tokens=-1)

"""The three cache anti-patterns added for issue 16 (strategies/pitfalls.py): live user config at the front,
JSON keys re-serialized in a seeded random order, tools added and removed between turns. Each must change the
cached prefix and nothing else the reference agent acts on."""

import json

import pytest

from harness.conversation import validate_projection
from strategies.none import NoManagement
from strategies.pitfalls import ShuffledJsonKeys, ToolChurn, UserConfigAtFront
from strategies.base import ToolError
from tasks.failure_memory import FailureMemory
from tests.helpers import FakeContext, frozen, history
from tests.test_pitfalls import trial

FAMILY = FailureMemory(tickets=3, ticket_messages=4, rows=30, page_rows=10)


def bound(strategy):
    strategy.bind(FakeContext(100_000))
    return strategy


def json_history():
    """A history whose calls have two-key arguments and whose results are JSON objects."""
    messages = history(rounds=3, size=5)
    for m in messages:
        if m.get("role") == "assistant":
            m["tool_calls"] = [
                {**c, "function": {**c["function"], "arguments": json.dumps({"a": 1, "b": 2, "c": [{"x": 1, "y": 2}]})}}
                for c in m["tool_calls"]
            ]
        if m.get("role") == "tool":
            m["content"] = json.dumps({"id": 7, "name": "n", "rows": [1, 2], "meta": {"p": 1, "q": 2}})
    return messages


@pytest.mark.parametrize("make", [UserConfigAtFront, ShuffledJsonKeys, ToolChurn])
def test_valid_deterministic_and_pure(make):
    hist = json_history()
    before = frozen(hist)
    a, b = bound(make()).prepare(hist), bound(make()).prepare(hist)
    assert a == b and hist == before
    validate_projection(a, hist[0])


def test_user_config_heads_the_task_message_and_changes_every_step():
    strategy = bound(UserConfigAtFront(call_limit=10, balance=5.0, cost_per_step=0.5))
    one, two = strategy.prepare(history(rounds=1, size=5)), strategy.prepare(history(rounds=2, size=5))
    assert one[0] == history(rounds=1)[0], "the system message is untouched"
    assert one[1]["content"].startswith("[account] tool calls left: 9 of 10; balance: $4.50\n\nDo the task.")
    assert two[1]["content"].startswith("[account] tool calls left: 8 of 10; balance: $4.00")
    assert one[2:] == history(rounds=1, size=5)[2:]


def test_json_keys_change_order_not_content_and_repeat_per_seed():
    hist = json_history()
    out = bound(ShuffledJsonKeys(seed=0)).prepare(hist)
    args = [c["function"]["arguments"] for m in out if m.get("role") == "assistant" for c in m["tool_calls"]]
    results = [m["content"] for m in out if m.get("role") == "tool"]
    originals = [c["function"]["arguments"] for m in hist if m.get("role") == "assistant" for c in m["tool_calls"]]
    assert [json.loads(a) for a in args] == [json.loads(a) for a in originals], "same objects"
    assert args != originals or results != [m["content"] for m in hist if m.get("role") == "tool"]
    other_seed = bound(ShuffledJsonKeys(seed=1)).prepare(hist)
    assert other_seed != out, "another seed, other orders"
    only_args = bound(ShuffledJsonKeys(targets=["arguments"])).prepare(hist)
    assert [m["content"] for m in only_args if m.get("role") == "tool"] == [
        m["content"] for m in hist if m.get("role") == "tool"
    ]
    with pytest.raises(ValueError, match="targets"):
        ShuffledJsonKeys(targets=["everything"])


def test_json_keys_reorder_between_steps():
    """The same message, one step later, is serialized in another order at least once in a few steps."""
    hist = json_history()
    strategy = bound(ShuffledJsonKeys())
    seen = set()
    for extra in range(6):
        out = strategy.prepare(hist + [{"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}] * extra)
        seen.add(out[2]["tool_calls"][0]["function"]["arguments"])
    assert len(seen) > 1


def test_tool_churn_offers_one_helper_per_step():
    strategy = bound(ToolChurn(helpers=3))
    task_tools = [
        {"type": "function", "function": {"name": "read", "parameters": {}}},
        *strategy.tools(),
        {"type": "function", "function": {"name": "submit", "parameters": {}}},
    ]
    offered = []
    for rounds in range(1, 5):
        strategy.prepare(history(rounds=rounds, size=5))
        offered.append([t["function"]["name"] for t in strategy.expose_tools(task_tools)])
    assert [o[1] for o in offered] == ["convert_currency", "calculate", "get_current_time", "convert_currency"]
    assert all(o[0] == "read" and o[-1] == "submit" and len(o) == 3 for o in offered)
    assert "placeholder" in strategy.call("calculate", {})
    with pytest.raises(ToolError):
        strategy.call("read", {})
    with pytest.raises(ValueError, match="helpers"):
        ToolChurn(helpers=0)


@pytest.mark.parametrize("make", [UserConfigAtFront, ShuffledJsonKeys, ToolChurn])
def test_only_the_cache_changes_in_a_run(tmp_path, make):
    """Same steps and answer as the append-only baseline; fewer cached tokens (failure_memory has two-key calls)."""
    base, _ = trial(tmp_path / "none", NoManagement(), family=FAMILY, max_steps=60)
    row, _ = trial(tmp_path / "pitfall", make(), family=FAMILY, max_steps=60)
    assert (row["outcome"], row["success"], row["steps"]) == (base["outcome"], base["success"], base["steps"])
    assert row["sim_cached_tokens"] < base["sim_cached_tokens"] and row["cache_breaks"] > 0

import pytest
from harness.conversation import (
    InvalidConversation,
    drop_orphans,
    render_history,
    split_head,
    split_rounds,
    strip_private,
    validate_projection,
)
from tests.helpers import SYSTEM, call, history


def test_valid_history_with_parallel_calls_passes():
    messages = history(rounds=3, parallel=3)
    validate_projection(messages, messages[0])


@pytest.mark.parametrize(
    "breaker,reason",
    [
        (lambda m: m[1:], "system"),
        (lambda m: [{"role": "system", "content": "changed"}] + m[1:], "system"),
        (lambda m: m[:-1], "no results"),  # last call's result missing
        (lambda m: m[:2] + m[3:], "no matching call"),  # first assistant removed, its result orphaned
        (lambda m: m + [{"role": "assistant", "content": "done"}], "ends with an assistant"),
        (lambda m: m[:3] + [{"role": "user", "content": "hi"}] + m[3:], "before tool results"),
    ],
)
def test_invalid_projections_are_named(breaker, reason):
    messages = history(rounds=2)
    with pytest.raises(InvalidConversation, match=reason):
        validate_projection(breaker(messages), messages[0])


def test_parallel_results_may_come_in_any_order():
    messages = history(rounds=1, parallel=3)
    swapped = messages[:3] + [messages[5], messages[3], messages[4]]
    validate_projection(swapped, messages[0])


def test_rounds_keep_calls_with_results():
    messages = history(rounds=3, parallel=2, user_turn_at=1)
    head, body = split_head(messages)
    assert head == messages[:2]
    rounds = split_rounds(body)
    assert [len(r) for r in rounds] == [3, 1, 3, 3]
    for r in rounds:
        if r[0]["role"] == "assistant":
            assert {m["tool_call_id"] for m in r[1:]} == {c["id"] for c in r[0]["tool_calls"]}


def test_drop_orphans_repairs_a_cut():
    messages = history(rounds=3, parallel=2)
    cut = messages[3:]  # starts with an orphan tool result
    repaired = drop_orphans(cut)
    validate_projection([SYSTEM] + repaired, SYSTEM)
    assert repaired[0]["role"] == "assistant"


def test_strip_private_drops_underscore_keys_only():
    message = {"role": "tool", "tool_call_id": "a", "content": "x", "_error": True}
    assert strip_private(message) == {"role": "tool", "tool_call_id": "a", "content": "x"}
    assert "_error" in message


def test_render_history_names_tools():
    messages = [
        SYSTEM,
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [call("a", "read", path="x")]},
        {"role": "tool", "tool_call_id": "a", "content": "data"},
    ]
    text = render_history(messages)
    assert "[user]: go" in text and '[tool_call] read {"path": "x"}' in text and "[tool read]: data" in text

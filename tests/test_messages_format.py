"""OpenAI format <-> Messages format: the round trip is lossless for what the harness holds (hypothesis)."""

import pytest
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.models.messages_format import canonical, from_messages, to_messages

TEXT = st.text(min_size=0, max_size=30)
NAMES = st.sampled_from(["get_invoice_page", "read_file", "memory", "submit"])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
ARGUMENTS = st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4).map(
    lambda d: json.dumps(d, ensure_ascii=False)
) | st.text(max_size=20)  # garbage arguments the model wrote travel unchanged
IDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=12)


@st.composite
def rounds(draw):
    """One assistant turn (text, tool calls or both) and, for its calls, the results (some of them errors)."""
    calls = draw(st.lists(st.tuples(IDS, NAMES, ARGUMENTS), max_size=3, unique_by=lambda c: c[0]))
    message = {"role": "assistant", "content": draw(TEXT)}
    if calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls
        ]
    if draw(st.booleans()) and not calls:
        message["server_blocks"] = [{"type": "compaction", "content": draw(TEXT)}]
    out = [message]
    for call_id, _, _ in calls:
        content = draw(st.one_of(TEXT, TEXT.map(lambda t: "ERROR: " + t)))
        result = {"role": "tool", "tool_call_id": call_id, "content": content}
        if draw(st.booleans()):
            result["_error"] = content.startswith("ERROR")
        out.append(result)
    if draw(st.booleans()):
        out.append({"role": "user", "content": draw(TEXT)})  # a nudge, a notes block, a status bar
    return out


@st.composite
def conversations(draw):
    history = [{"role": "system", "content": draw(TEXT)}, {"role": "user", "content": draw(TEXT)}]
    for chunk in draw(st.lists(rounds(), max_size=4)):
        history.extend(chunk)
    return history


TOOLS = st.lists(
    st.builds(
        lambda n, d, p: {"type": "function", "function": {"name": n, "description": d, "parameters": p}},
        NAMES,
        TEXT,
        st.just({"type": "object", "properties": {"page": {"type": "integer"}}}),
    ),
    max_size=3,
)


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@settings(max_examples=300, deadline=None)
@given(conversations(), TOOLS)
def test_round_trip_is_lossless(messages, tools):
    back, tools_back = from_messages(to_messages(messages, tools))
    assert back == canonical(messages)
    assert tools_back == tools


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@settings(max_examples=200, deadline=None)
@given(conversations())
def test_every_parallel_result_sits_in_one_user_turn_right_after_its_calls(messages):
    turns = to_messages(messages).messages
    for i, turn in enumerate(turns):
        uses = [b["id"] for b in turn["content"] if b["type"] == "tool_use"]
        if uses:
            results = [b["tool_use_id"] for b in turns[i + 1]["content"] if b["type"] == "tool_result"]
            assert turns[i + 1]["role"] == "user" and results == uses


def test_canonical_form_is_what_the_loop_holds():
    history = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"page": 1}'}}],
            "_step": 1,
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ERROR: bad page", "_error": True, "_step": 1},
    ]
    stripped = [{k: v for k, v in m.items() if not k.startswith("_")} for m in history]
    assert canonical(history) == stripped
    assert from_messages(to_messages(stripped))[0] == stripped

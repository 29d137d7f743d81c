"""The cache anti-patterns (strategies/pitfalls.py) and the harness extensions they need:
``rewrites_system`` (validation relaxed for one rule, recorded in the row) and ``order_tools``."""

import pytest

from harness.conversation import InvalidConversation, check_tool_order, validate_projection
from harness.trial import TrialSettings, run_trial
from harness.records import RunWriter, read_transcript
from reference_agent.scripted import ScriptedModel
from strategies.pitfalls import FlattenedTranscript, FrequencyOrderedTools, LastRounds, TimestampedSystem
from tasks.code_review import CodeReview
from tasks.invoice_audit import InvoiceAudit
from tests.helpers import SYSTEM, FakeContext, call, frozen, history

SMALL = dict(pages=5, invoices_per_page=5, duplicates=2, min_distance=1, max_distance=3)


def bound(strategy, budget=100_000):
    strategy.bind(FakeContext(budget))
    return strategy


def tool(name):
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {"type": "object"}}}


def trial(tmp_path, strategy, family=None, max_steps=40):
    instance = (family or InvoiceAudit(**SMALL)).generate(0)
    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=1_000_000, max_steps=max_steps, strategy_name="x", strategy_params={}, model_name="scripted"
    )
    row = run_trial(
        trial_id="t0",
        trial_index=0,
        instance=instance,
        strategy=strategy,
        model=ScriptedModel(profile="perfect", context_window=131_072),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    return row, read_transcript(tmp_path, "t0")


# --- the strategies: valid, deterministic, never mutating ---------------------------------------------------


@pytest.mark.parametrize(
    "make", [TimestampedSystem, FrequencyOrderedTools, lambda: LastRounds(rounds=3), FlattenedTranscript]
)
def test_pitfalls_are_valid_deterministic_and_pure(make):
    hist = history(rounds=8, size=20, parallel=2)
    before = frozen(hist)
    a, b = bound(make()).prepare(hist), bound(make()).prepare(hist)
    assert a == b, "deterministic"
    assert hist == before, "the history is never mutated"
    strategy = make()
    validate_projection(a, hist[0], allow_system_rewrite=bool(getattr(strategy, "rewrites_system", False)))


def test_timestamp_rewrites_the_head_every_step():
    strategy = bound(TimestampedSystem(start="2025-07-01T09:00:00", seconds_per_step=7))
    first = strategy.prepare(history(rounds=1, size=5))
    second = strategy.prepare(history(rounds=2, size=5))
    assert first[0]["content"].startswith("Current time: 2025-07-01T09:00:07\n\n")
    assert second[0]["content"].startswith("Current time: 2025-07-01T09:00:14")
    assert first[0]["content"].endswith(SYSTEM["content"]) and first[1:] == history(rounds=1, size=5)[1:]
    with pytest.raises(InvalidConversation, match="system message was changed"):
        validate_projection(first, SYSTEM)  # without the opt-in, the harness refuses it


def test_tool_order_follows_use_most_used_first_stable():
    strategy = bound(FrequencyOrderedTools())
    tools = [tool("list_files"), tool("read_file"), tool("grep"), tool("submit")]
    assert strategy.order_tools(tools) == tools, "before any call: the task's order"
    hist = [
        dict(SYSTEM),
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [call("a", "list_files")]},
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "assistant", "content": "", "tool_calls": [call("b", "grep"), call("c", "grep")]},
        {"role": "tool", "tool_call_id": "b", "content": "x"},
        {"role": "tool", "tool_call_id": "c", "content": "x"},
    ]
    assert strategy.prepare(hist) == hist
    ordered = [t["function"]["name"] for t in strategy.order_tools(tools)]
    assert ordered == ["grep", "list_files", "read_file", "submit"]
    check_tool_order(strategy.order_tools(tools), tools)


def test_last_rounds_keeps_whole_rounds_and_drops_the_task():
    hist = history(rounds=8, size=5, parallel=3)
    out = bound(LastRounds(rounds=2)).prepare(hist)
    assert out[0] == hist[0] and out[1]["role"] == "assistant" and len(out) == 1 + 2 * 4
    assert out[1:] == hist[-8:]


def test_flattened_transcript_is_one_user_text():
    hist = history(rounds=2, size=3)
    out = bound(FlattenedTranscript()).prepare(hist)
    assert len(out) == 2 and out[0] == hist[0] and out[1]["role"] == "user"
    text = out[1]["content"]
    assert text.startswith("USER: Do the task.") and 'ASSISTANT: step 0\n[called read {"path": "f0_0.py"}]' in text
    assert "TOOL (read): word0_0_0" in text and text.count("ASSISTANT:") == 2


# --- the validation extension ---------------------------------------------------------------------------------


def test_allow_system_rewrite_still_needs_a_leading_system_message():
    changed = [{"role": "system", "content": "other"}, {"role": "user", "content": "x"}]
    validate_projection(changed, SYSTEM, allow_system_rewrite=True)
    with pytest.raises(InvalidConversation, match="removed"):
        validate_projection([{"role": "user", "content": "x"}], SYSTEM, allow_system_rewrite=True)
    with pytest.raises(InvalidConversation, match="before tool results"):  # the other rules still hold
        validate_projection(
            [
                *changed,
                {"role": "assistant", "content": "", "tool_calls": [call("z")]},
                {"role": "user", "content": "y"},
            ],
            SYSTEM,
            allow_system_rewrite=True,
        )


def test_check_tool_order_refuses_anything_but_a_permutation():
    tools = [tool("a"), tool("b")]
    check_tool_order([tools[1], tools[0]], tools)
    for bad in ([tools[0]], [*tools, tool("c")], [tools[0], tool("b2")], [tools[0], tools[0]]):
        with pytest.raises(InvalidConversation, match="order_tools"):
            check_tool_order(bad, tools)


class SneakySystem:
    """Changes the system message without declaring rewrites_system."""

    def prepare(self, messages):
        return [{"role": "system", "content": "changed"}, *messages[1:]]


class DropsTools(FrequencyOrderedTools):
    def order_tools(self, tools):
        return tools[:-1]


def test_loop_refuses_an_undeclared_system_rewrite(tmp_path):
    row, _ = trial(tmp_path, SneakySystem())
    assert row["outcome"] == "strategy_error" and "system message was changed" in row["error"]
    assert row["rewrites_system"] is False


def test_loop_runs_a_declared_rewrite_and_records_it(tmp_path):
    row, transcript = trial(tmp_path, TimestampedSystem())
    assert row["outcome"] == "submitted" and row["success"] and row["rewrites_system"] is True
    events = transcript
    bodies = {e["ref"]: e["message"] for e in events if e["event"] == "message"}
    heads = [bodies[e["refs"][0]]["content"].splitlines()[0] for e in events if e["event"] == "request"]
    assert len(set(heads)) == len(heads) == row["steps"], "a new system message every step"


def test_loop_applies_order_tools_per_step(tmp_path):
    row, transcript = trial(tmp_path, FrequencyOrderedTools(), family=CodeReview(files=6, bugs=2))
    assert row["outcome"] == "submitted" and row["success"]
    orders = [e["tool_order"] for e in transcript if e["event"] == "request"]
    assert orders[0] == ["list_files", "read_file", "grep", "submit"]
    assert orders[-1][0] in ("grep", "read_file") and len({tuple(o) for o in orders}) > 1  # the reviewer's most used


def test_loop_refuses_order_tools_that_drops_a_tool(tmp_path):
    row, _ = trial(tmp_path, DropsTools())
    assert row["outcome"] == "strategy_error" and "order_tools" in row["error"]


def test_flattened_transcript_loses_the_reference_agent(tmp_path):
    row, _ = trial(tmp_path, FlattenedTranscript(), max_steps=15)
    assert row["outcome"] == "step_limit" and not row["success"] and row["rereads"] > 0

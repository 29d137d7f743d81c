"""offload and notes: strategies that give the agent tools."""

import pytest

from harness.conversation import validate_projection
from strategies.base import ToolError
from strategies.headtail import HeadTail
from strategies.notes import NOTES_HEADER, Notes
from strategies.offload import Offload
from tests.helpers import FakeContext, frozen, history


def bound(strategy, budget=100_000):
    ctx = FakeContext(budget, tools=strategy.tools())
    strategy.bind(ctx)
    return strategy, ctx


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(rounds=6, parallel=3, size=300),
        dict(rounds=6, error_at=2, size=300),
        dict(rounds=6, user_turn_at=3, size=300),
        dict(rounds=3, size=6000),
    ],
)
@pytest.mark.parametrize("make", [lambda: Offload(threshold=100, keep_recent=1), lambda: Notes(base=HeadTail())])
def test_valid_untouched_deterministic(kwargs, make):
    messages = history(**kwargs)
    before = frozen(messages)
    outs = []
    for _ in range(2):
        strategy, _ = bound(make(), budget=3_000)
        if isinstance(strategy, Notes):
            strategy.call("write_note", {"text": "found x"})
        outs.append(strategy.prepare(messages))
        validate_projection(outs[-1], messages[0])
    assert messages == before
    assert outs[0] == outs[1]


def test_offload_keeps_id_and_preview_and_round_trips():
    messages = history(rounds=5, size=300)
    strategy, ctx = bound(Offload(threshold=100, keep_recent=1, preview_chars=40))
    out = strategy.prepare(messages)
    placeholders = [m for m in out if m["role"] == "tool" and m["content"].startswith("[offloaded")]
    assert len(placeholders) == 4 and out[-1] is messages[-1]
    first = placeholders[0]["content"]
    assert 'read {"path": "f0_0.py"}' in first and "preview: word0_0_0" in first
    memory_id = first.split("id=")[1].split(" ")[0]
    assert strategy.call("read_memory", {"id": memory_id}) == messages[3]["content"]
    assert ctx.count_tokens(out) < ctx.count_tokens(messages) / 2
    again = strategy.prepare(messages + [])
    assert again[3] is out[3], "a placeholder, once written, stays the same object (byte-identical)"


def test_offload_never_offloads_errors():
    messages = history(rounds=4, size=300, error_at=0)
    strategy, _ = bound(Offload(threshold=10, keep_recent=0))
    out = strategy.prepare(messages)
    assert out[3]["content"].startswith("ERROR")


@pytest.mark.parametrize("bad", ["../secrets", "/etc/passwd", "mem-0001/../../x", "..", "", None, 5, "mem-1"])
def test_offload_refuses_ids_that_escape_the_store(bad):
    strategy, _ = bound(Offload())
    with pytest.raises(ToolError):
        strategy.call("read_memory", {"id": bad})


def test_notes_are_reinjected_last_and_saved():
    messages = history(rounds=6, size=300)
    strategy, ctx = bound(Notes(base=HeadTail()), budget=4_000)
    plain, _ = bound(HeadTail(), budget=4_000)
    assert strategy.prepare(messages) == plain.prepare(messages), "no notes: the base projection alone"
    assert strategy.call("write_note", {"text": "page 3 has INV-1"}) == "note 1 saved"
    out = strategy.prepare(messages)
    assert out[-1]["content"].startswith(NOTES_HEADER) and "page 3 has INV-1" in out[-1]["content"]
    assert ctx.count_tokens(out) + ctx.request_overhead() <= 4_000
    assert (ctx.store / "notes.md").read_text() == "page 3 has INV-1"
    assert "1. page 3 has INV-1" in strategy.call("read_notes", {})
    with pytest.raises(ToolError):
        strategy.call("write_note", {"text": ""})


def test_reference_agent_uses_read_memory_and_write_note(tmp_path):
    from harness.trial import TrialSettings, run_trial
    from reference_agent.scripted import ScriptedModel
    from harness.records import RunWriter
    from tasks.invoice_audit import InvoiceAudit

    for strategy, tool in ((Notes(base=HeadTail()), "write_note"),):
        writer = RunWriter(tmp_path / tool)
        settings = TrialSettings(
            budget=6_000, max_steps=60, strategy_name="x", strategy_params={}, model_name="scripted"
        )
        instance = InvoiceAudit(pages=10, invoices_per_page=10, duplicates=3, max_distance=8).generate(1)
        row = run_trial(
            trial_id="t",
            trial_index=0,
            instance=instance,
            strategy=strategy,
            model=ScriptedModel(profile="perfect"),
            summarizer=None,
            settings=settings,
            writer=writer,
        )
        assert row["outcome"] == "submitted" and row["success"], row
        assert len(strategy.notes) >= 9


def test_reference_agent_reads_memory_instead_of_repeating_an_offloaded_call():
    from reference_agent.policy_kit import StrategyToolUse, make_call, reply

    class RepeatsFirstCall:
        def act(self, messages, tools):
            return reply("again", make_call("read", path="f0_0.py"))

        def summarize(self, text):
            return ""

    messages = history(rounds=3, size=300)
    strategy, _ = bound(Offload(threshold=100, keep_recent=1))
    request = strategy.prepare(messages)
    adapted = StrategyToolUse(RepeatsFirstCall()).act(request, strategy.tools())
    call = adapted["tool_calls"][0]["function"]
    assert call["name"] == "read_memory" and "mem-0001" in call["arguments"]
    plain = StrategyToolUse(RepeatsFirstCall()).act(messages, [])
    assert plain["tool_calls"][0]["function"]["name"] == "read"


def test_isolate_runs_subagents_billed_apart(tmp_path):
    from harness.trial import TrialSettings, run_trial
    from reference_agent.scripted import ScriptedModel
    from harness.records import RunWriter, read_jsonl
    from strategies.isolate import Isolate
    from tasks.invoice_audit import InvoiceAudit

    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=8_000, max_steps=30, strategy_name="isolate", strategy_params={}, model_name="scripted"
    )
    instance = InvoiceAudit(pages=12, invoices_per_page=6, duplicates=3, min_distance=1, max_distance=2).generate(0)
    row = run_trial(
        trial_id="iso",
        trial_index=0,
        instance=instance,
        strategy=Isolate(subagent_budget="1M"),
        model=ScriptedModel(profile="perfect"),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    assert row["outcome"] == "submitted"
    assert row["subagent_runs"] == 2 and row["subagent_reads"] == 12 and row["reads"] == 0
    steps = read_jsonl(tmp_path / "steps.jsonl")
    sub = [s for s in steps if s["kind"] == "subagent"]
    assert len(sub) == row["subagent_calls"] and sum(s["prompt_tokens"] for s in sub) == row["subagent_input_tokens"]
    assert row["input_tokens"] == sum(s["prompt_tokens"] for s in steps if s["kind"] == "agent")
    assert row["peak_context"] < 2_000, "the raw pages never enter the main context"
    with pytest.raises(ToolError):
        Isolate().call("delegate", {"task": ""})

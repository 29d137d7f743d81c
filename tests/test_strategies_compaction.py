"""Invariants and behaviour of clear_tool_results, summarize, layered, adaptive_window and status_bar."""

import pytest

from harness.conversation import validate_projection
from strategies.adaptive_window import AdaptiveWindow
from strategies.clear_tool_results import ClearToolResults
from strategies.headtail import HeadTail
from strategies.layered import Layered
from strategies.status_bar import StatusBar
from strategies.summarize import Summarize
from tests.helpers import FakeContext, call, frozen, history

FACTORIES = {
    "clear_tool_results": ClearToolResults,
    "clear_tool_results_at_least": lambda: ClearToolResults(trigger=0.5, keep=1, clear_at_least=2_000),
    "summarize": Summarize,
    "layered": Layered,
    "layered_summarize": lambda: Layered(summarize=True, keep_recent_rounds=2),
    "adaptive_window": AdaptiveWindow,
    "adaptive_window_all": lambda: AdaptiveWindow(keep_last_round=False),
    "status_bar": StatusBar,
    "status_bar_append": lambda: StatusBar(mode="append"),
    "status_bar_append_headtail": lambda: StatusBar(mode="append", base=HeadTail()),
}
CASES = {
    "parallel": dict(rounds=8, parallel=3, size=200),
    "errors": dict(rounds=8, error_at=2, size=200),
    "user_turns": dict(rounds=8, user_turn_at=4, size=200),
    "huge_result": dict(rounds=3, size=6000),
}


def bound(factory, budget, **ctx_args):
    strategy = factory()
    ctx = FakeContext(budget, **ctx_args)
    strategy.bind(ctx)
    return strategy, ctx


def steps(messages):
    """Every prefix the loop would prepare (ending after a round's tool results or a user message)."""
    for end in range(2, len(messages) + 1):
        prefix = messages[:end]
        if prefix[-1]["role"] == "assistant" or (end < len(messages) and messages[end]["role"] == "tool"):
            continue
        yield prefix


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("budget", [1_500, 4_000, 100_000])
def test_projection_is_valid_and_input_untouched(name, case, budget):
    messages = history(**CASES[case])
    before = frozen(messages)
    strategy, ctx = bound(FACTORIES[name], budget)
    for prefix in steps(messages):
        out = strategy.prepare(prefix)
        validate_projection(out, messages[0])
        newest = prefix[-1]
        if name == "adaptive_window_all":  # the seed's literal "compress all" compresses even the newest result
            assert any(
                m.get("tool_call_id") == newest.get("tool_call_id") and m["role"] == newest["role"] for m in out[-2:]
            )
        else:
            assert any(m is newest or m == newest for m in out[-2:]), "the newest message stays visible"
        for message in out:  # errors are never compacted
            if message.get("_error"):
                assert message["content"].startswith("ERROR")
    assert messages == before, "prepare must not mutate the history"


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_deterministic(name):
    messages = history(rounds=10, parallel=2, size=300, error_at=4)
    outs = []
    for _ in range(2):
        strategy, _ = bound(FACTORIES[name], 3_000)
        for prefix in steps(messages):
            out = strategy.prepare(prefix)
        outs.append(out)
    assert outs[0] == outs[1]


# --- clear_tool_results ---------------------------------------------------------------------------


def pages(n, size=300, error_at=None):
    """History of get_invoice_page calls with the loop's private keys."""
    messages = history(rounds=0)
    for r in range(n):
        messages.append(
            {"role": "assistant", "content": f"step {r}", "tool_calls": [call(f"p{r}", "get_invoice_page", page=r + 1)]}
        )
        err = r == error_at
        messages.append(
            {
                "role": "tool",
                "tool_call_id": f"p{r}",
                "_tool": "get_invoice_page",
                "_args": {"page": r + 1},
                "_error": err,
                "_resource": None if err else f"page:{r + 1}",
                "_step": r + 1,
                "content": ("ERROR: page out of range " if err else "") + " ".join(f"inv{r}_{k}" for k in range(size)),
            }
        )
    return messages


def test_clear_placeholder_has_recovery_hint_and_stays_frozen():
    messages = pages(12, error_at=1)
    strategy, ctx = bound(ClearToolResults, 6_000)
    seen = {}
    for prefix in steps(messages):
        out = strategy.prepare(prefix)
        for m in out:
            if m["role"] == "tool" and m["content"].startswith("[cleared:"):
                assert seen.setdefault(m["tool_call_id"], m["content"]) == m["content"], "byte-identical once written"
    first = next(m for m in out if m.get("tool_call_id") == "p0")
    tokens = ctx.count_message(messages[3])
    assert (
        first["content"]
        == f'[cleared: get_invoice_page {{"page": 1}} returned {tokens:,} tokens; call it again if you need it]'
    )
    assert next(m for m in out if m.get("tool_call_id") == "p1")["content"].startswith("ERROR"), (
        "errors are never cleared"
    )
    assert all(not m["content"].startswith("[cleared:") for m in [m for m in out if m["role"] == "tool"][-3:])
    batches = [d for e, d in ctx.events if e == "compaction"]
    assert 1 <= len(batches) < 12 - 3, "a batch at a time, not every step"
    assert all(d["tokens_freed"] > 0 for d in batches)
    assert ctx.count_tokens(out) + ctx.request_overhead() <= 6_000


def test_clear_only_above_trigger_and_respects_clear_at_least_and_excludes():
    messages = pages(8)
    strategy, ctx = bound(lambda: ClearToolResults(trigger=100_000), 10_000)
    assert strategy.prepare(messages) == messages and ctx.events == []
    strategy, ctx = bound(lambda: ClearToolResults(clear_at_least=10**6), 3_000)
    assert strategy.prepare(messages) == messages
    assert [e for e, _ in ctx.events] == ["clear_skipped"]
    strategy, ctx = bound(lambda: ClearToolResults(exclude_tools=["get_invoice_page"]), 3_000)
    assert strategy.prepare(messages) == messages
    strategy, ctx = bound(lambda: ClearToolResults(trigger="2k", keep=0), 100_000)
    out = strategy.prepare(messages)
    results = [m for m in out if m["role"] == "tool"]
    assert all(m["content"].startswith("[cleared:") for m in results[:-1])
    assert not results[-1]["content"].startswith("[cleared:"), "keep=0, but the newest result is not seen yet"
    with pytest.raises(ValueError):
        ClearToolResults(trigger="lots")


# --- summarize ------------------------------------------------------------------------------------


def test_summarize_places_one_summary_after_the_head_and_keeps_rounds_whole():
    messages = history(rounds=12, parallel=3, size=150, user_turn_at=6)
    strategy, ctx = bound(lambda: Summarize(keep_recent_rounds=2), 6_000)
    out = strategy.prepare(messages)
    assert out[:2] == messages[:2]
    assert out[2]["role"] == "user" and out[2]["content"].startswith("[summary of the earlier work")
    assert out[2]["content"].endswith(ctx.summary)
    assert out[3:] == messages[-8:], "the 2 recent rounds (3 parallel results each) verbatim"
    summarized = ctx.summaries[0]
    assert summarized[0] is messages[2] and summarized[-1] is messages[-9]
    assert [e for e, _ in ctx.events] == ["compaction"]


def test_summarize_absorbs_previous_summary_and_is_frozen_between_compactions():
    messages = history(rounds=20, size=200)
    strategy, ctx = bound(lambda: Summarize(keep_recent_rounds=2), 5_000)
    previous = None
    changes = 0
    for prefix in steps(messages):
        out = strategy.prepare(prefix)
        summary = out[2] if len(out) > 2 and str(out[2]["content"]).startswith("[summary") else None
        if summary is not None and summary is not previous:
            changes += 1
        previous = summary or previous
    assert changes == len(ctx.summaries) >= 2
    assert ctx.summaries[1][0]["content"].startswith("[summary of the earlier work"), "absorbs, not stacks"
    assert sum(1 for m in out if str(m.get("content", "")).startswith("[summary")) == 1


def test_summarize_breaker_stops_after_consecutive_failures():
    messages = history(rounds=10, size=3_000)  # every round alone is over the budget
    strategy, ctx = bound(lambda: Summarize(keep_recent_rounds=1, max_failures=2), 2_000)
    for prefix in steps(messages):
        strategy.prepare(prefix)
    assert len(ctx.summaries) == 2 and strategy.tripped
    assert [e for e, _ in ctx.events][-1] == "summarize_breaker"


# --- adaptive_window ------------------------------------------------------------------------------


def test_adaptive_window_batches_marks_and_never_reprocesses():
    messages = pages(14, size=200, error_at=2)
    strategy, ctx = bound(AdaptiveWindow, 8_000, summary="vendor Acme, 2026-03-01, USD 12.00")
    first_batch = None
    for prefix in steps(messages):
        out = strategy.prepare(prefix)
        if ctx.summaries and first_batch is None:
            first_batch = len(ctx.summaries)
            tools = [m for m in out if m["role"] == "tool"]
            # every earlier uncompressed result, in one batch; the unread latest one is left; the error is kept
            assert sum(m["content"].startswith("[COMPRESSED]") for m in tools) == len(tools) - 2
    compressed_ids = [m[-1]["tool_call_id"] for m in ctx.summaries]
    assert len(compressed_ids) == len(set(compressed_ids)), "a compressed message is never processed again"
    assert "p2" not in compressed_ids
    assert ctx.summaries[0][0]["tool_calls"][0]["function"]["name"] == "get_invoice_page", "the call goes with it"
    batches = [d for e, d in ctx.events if e == "compaction"]
    assert batches[0]["compressed"] == first_batch > 1
    assert (
        next(m for m in out if m.get("tool_call_id") == "p0")["content"]
        == "[COMPRESSED] vendor Acme, 2026-03-01, USD 12.00"
    )


def test_adaptive_window_below_ratio_is_identity():
    messages = pages(3)
    strategy, ctx = bound(AdaptiveWindow, 100_000)
    assert strategy.prepare(messages) == messages and not ctx.summaries
    with pytest.raises(ValueError):
        AdaptiveWindow(ratio=1.5)


# --- status_bar -----------------------------------------------------------------------------------


def merchant_history():
    messages = history(rounds=0)
    plan = [("acme",), ("acme",), ("globex",), ("acme",)]
    for r, (merchant,) in enumerate(plan):
        note = "- [x] call acme\n- [ ] call globex" if r == 2 else f"calling {merchant}"
        messages.append(
            {"role": "assistant", "content": note, "tool_calls": [call(f"m{r}", "call_merchant", merchant=merchant)]}
        )
        messages.append(
            {
                "role": "tool",
                "tool_call_id": f"m{r}",
                "content": "busy" if r else "ERROR: no answer",
                "_tool": "call_merchant",
                "_args": {"merchant": merchant},
                "_error": r == 0,
                "_resource": None,
            }
        )
    return messages


def test_status_bar_counts_by_code_and_policies_can_read_it():
    from reference_agent.policy_kit import status_calls, status_counts

    messages = merchant_history()
    strategy, _ = bound(lambda: StatusBar(limits={"call_merchant": 3}, max_steps=20), 10_000)
    out = strategy.prepare(messages)
    status = out[-1]
    assert status["role"] == "user" and out[:-1] == messages
    text = status["content"]
    assert "steps used: 4 of 20" in text
    assert "calls per tool: call_merchant 4 (1 failed)" in text
    assert "call_merchant: merchant=acme 3/3" in text and "call_merchant: merchant=globex 1/3" in text
    assert text.endswith("todo (from your latest notes):\n- [x] call acme\n- [ ] call globex")
    assert status_counts(out) == {"call_merchant": {"merchant=acme": (3, 3), "merchant=globex": (1, 3)}}
    assert status_calls(out, "call_merchant", "merchant=acme") == 3
    assert status_calls(out, "call_merchant", "merchant=initech") == 0
    assert status_counts(messages) is None and status_calls(messages, "call_merchant", "x") is None
    reads = pages(3)
    reads[3]["_resource"] = None  # no resource from the task: the arguments stand in
    out = bound(StatusBar, 10_000)[0].prepare(reads)
    assert status_counts(out)["get_invoice_page"] == {"page=1": (1, None), "page:2": (1, None), "page:3": (1, None)}


def test_status_bar_replace_vs_append():
    messages = merchant_history()
    replace, _ = bound(StatusBar, 10_000)
    append, _ = bound(lambda: StatusBar(mode="append"), 10_000)
    outs = {"replace": [], "append": []}
    for prefix in steps(messages):
        outs["replace"].append(replace.prepare(prefix))
        outs["append"].append(append.prepare(prefix))
    last_replace, last_append = outs["replace"][-1], outs["append"][-1]

    def is_status(m):
        return str(m.get("content", "")).startswith("[status bar]")

    assert sum(map(is_status, last_replace)) == 1
    assert sum(map(is_status, last_append)) == len(outs["append"])
    # append: every earlier projection is a prefix of the next one (byte-identical: cache-friendly)
    for before, after in zip(outs["append"], outs["append"][1:], strict=False):
        assert after[: len(before)] == before
        assert all(a is b for a, b in zip(before, after, strict=False) if is_status(a))
    for out in outs["append"]:
        validate_projection(out, messages[0])


def test_status_bar_wraps_a_base_within_budget():
    messages = history(rounds=12, parallel=2, size=300)
    strategy, ctx = bound(lambda: StatusBar(mode="append", base=HeadTail()), 6_000)
    for prefix in steps(messages):
        out = strategy.prepare(prefix)
        validate_projection(out, messages[0])
        assert ctx.count_tokens(out) + ctx.request_overhead() <= 6_000
    assert any(e == "compaction" for e, _ in ctx.events)
    spec = StatusBar(base={"_target_": "strategies.headtail.HeadTail", "min_recent_rounds": 2})
    assert isinstance(spec.base, HeadTail) and spec.base.min_recent_rounds == 2
    with pytest.raises(ValueError):
        StatusBar(mode="sometimes")


def test_reference_agent_keeps_taking_notes_under_a_status_bar(tmp_path):
    from harness.trial import TrialSettings, run_trial
    from reference_agent.scripted import ScriptedModel
    from harness.records import RunWriter
    from strategies.none import NoManagement
    from tasks.invoice_audit import InvoiceAudit

    family = InvoiceAudit(pages=5, invoices_per_page=5, duplicates=2, min_distance=1, max_distance=3)
    rows = {}
    for name, strategy in (("none", NoManagement()), ("status_bar", StatusBar())):
        writer = RunWriter(tmp_path / name)
        settings = TrialSettings(
            budget=100_000, max_steps=50, strategy_name=name, strategy_params={}, model_name="scripted"
        )
        rows[name] = run_trial(
            trial_id="t0",
            trial_index=0,
            instance=family.generate(0),
            strategy=strategy,
            model=ScriptedModel(profile="perfect"),
            summarizer=None,
            settings=settings,
            writer=writer,
        )
        writer.close()
    assert rows["status_bar"]["success"] and rows["status_bar"]["steps"] == rows["none"]["steps"]
    # same notes as without the bar, plus one status message per step
    assert rows["status_bar"]["final_history_tokens"] == rows["none"]["final_history_tokens"]
    assert rows["status_bar"]["input_tokens"] > rows["none"]["input_tokens"]

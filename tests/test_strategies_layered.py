"""``layered`` reproduces source 004's context_demo (counted with the source's own est_tokens).

Source (its own code, copied in tests/seed004_demo.py):   62 msgs ~30,759 -> clear only 62 msgs ~6,017
                                                         -> with a summarizer (budget 4,000) 14 msgs ~4,468
Ours (strategies.layered.Layered, same history/counting): clear only 62 msgs ~6,000
                                                         -> with a summarizer 15 msgs ~4,515
Why they differ (exact breakdown, asserted below; see strategies/README.md):
* clearing, -17: our placeholder "[cleared: get_invoice_page {} returned 954 tokens; call it again if you
  need it]" estimates 37 tokens on every page; the seed's "[已清理] 原结果 2290 字,..." 37 for pages 0-9 and
  38 for pages 10-29 (one more digit). 10x37 + 17x38 = 1,016 vs 27x37 = 999.
* summary, +47: our head keeps the task message (+33; the seed folds it into the summarized rounds, so it
  has 14 messages to our 15), our summary prefix is longer (+17: 51 vs 34 tokens), and the three cleared
  results among the 6 kept rounds are 37 instead of 38 (-3).
"""

from harness.conversation import validate_projection
from strategies.layered import Layered
from tests.seed004_demo import SYSTEM, EstContext, SeedLayeredContext, est_tokens, fake_history, fake_summarize, total
from tests.helpers import FakeContext, history


def run(budget, summarize):
    strategy = Layered(summarize=summarize)
    ctx = EstContext(budget)
    strategy.bind(ctx)
    hist = fake_history(30)
    out = strategy.prepare(hist)
    validate_projection(out, SYSTEM)
    return strategy, ctx, hist, out


def test_seed_code_gives_the_seed_numbers():
    hist = fake_history(30)
    assert (len(hist), total(hist)) == (62, 30_759)
    only_clear = SeedLayeredContext(budget=24_000)
    out = only_clear.prepare(hist)
    assert (len(out), total(out)) == (62, 6_017)
    layered = SeedLayeredContext(budget=4_000, summarize=fake_summarize)
    out = layered.prepare(hist)
    assert (len(out), total(out)) == (14, 4_468)


def test_layered_clearing_only_vs_seed():
    strategy, ctx, hist, out = run(24_000, False)
    assert len(out) == 62 and total(out) == 6_000  # seed: 6,017
    assert strategy.stats == {"cleared": 27, "dropped_rounds": 0, "summaries": 0}  # seed: the same
    assert out[:2] == hist[:2]
    cleared = [m for m in out if m["role"] == "tool" and m["content"].startswith("[cleared:")]
    assert len(cleared) == 27 and all(est_tokens(m) == 37 for m in cleared)
    assert cleared[0]["content"] == "[cleared: get_invoice_page {} returned 954 tokens; call it again if you need it]"
    seed_out = SeedLayeredContext(budget=24_000).prepare(fake_history(30))
    seed_cleared = [est_tokens(m) for m in seed_out if m["role"] == "tool" and m["content"].startswith("[已清理]")]
    assert sum(seed_cleared) - 27 * 37 == 6_017 - 6_000 == 17
    assert [e for e, _ in ctx.events] == ["compaction"]


def test_layered_with_summarizer_vs_seed():
    strategy, ctx, hist, out = run(4_000, True)
    assert len(out) == 15 and total(out) == 4_515  # seed: 14 messages, 4,468
    assert strategy.stats == {"cleared": 27, "dropped_rounds": 0, "summaries": 1}  # seed: the same
    assert out[:2] == hist[:2], "the task stays in the head"
    assert out[2]["content"].endswith("已核对 24 页发票,暂未发现重复扣款。")
    assert len(out[3:]) == 12 and out[-1]["tool_call_id"] == "c29", "the 6 recent rounds follow verbatim"
    assert len(ctx.summarize_calls) == 1 and sum(m["role"] == "tool" for m in ctx.summarize_calls[0]) == 24
    seed_out = SeedLayeredContext(budget=4_000, summarize=fake_summarize).prepare(fake_history(30))
    task, our_summary, seed_summary = est_tokens(hist[1]), est_tokens(out[2]), est_tokens(seed_out[1])
    assert (task, our_summary, seed_summary) == (33, 51, 34)
    assert total(out[3:]) - total(seed_out[2:]) == -3
    assert 4_515 - 4_468 == task + (our_summary - seed_summary) - 3


def test_layered_drop_tier_without_summarizer():
    strategy, ctx, hist, out = run(4_000, False)
    assert "the 24 earlier rounds were omitted" in out[2]["content"]
    assert strategy.stats["dropped_rounds"] == 24 and ctx.summarize_calls == []
    assert len(out) == 15


def test_layered_stops_at_the_first_tier_that_fits():
    strategy, ctx, hist, out = run(100_000, True)
    assert out == hist and ctx.events == []
    strategy, ctx, hist, out = run(24_000, True)
    assert ctx.summarize_calls == [] and strategy.stats["summaries"] == 0


def test_layered_frozen_between_compactions_and_absorbs_previous_summary():
    messages = history(rounds=30, size=300)
    strategy = Layered(summarize=True, keep_recent_rounds=3)
    ctx = FakeContext(5_000)
    strategy.bind(ctx)
    outs = {}
    for end in range(4, len(messages) + 1, 2):
        outs[end] = strategy.prepare(messages[:end])
        validate_projection(outs[end], messages[0])
    assert len(ctx.summaries) >= 2
    second = ctx.summaries[1]
    assert second[0]["content"].startswith("[summary of the earlier work"), "the new summary absorbs the previous one"
    notes = [o[2] for o in outs.values() if len(o) > 2 and str(o[2].get("content", "")).startswith("[summary")]
    assert sum(1 for a, b in zip(notes, notes[1:], strict=False) if a is not b) == len(ctx.summaries) - 1, (
        "frozen between compactions"
    )


def test_layered_never_clears_errors():
    errors = history(rounds=12, size=300, error_at=2)
    strategy = Layered()
    ctx = FakeContext(8_000)
    strategy.bind(ctx)
    out = strategy.prepare(errors)
    assert strategy.stats["cleared"] == 8 and strategy.stats["dropped_rounds"] == 0
    assert [m for m in out if m["role"] == "tool" and m["content"].startswith("ERROR")] == [errors[7]]

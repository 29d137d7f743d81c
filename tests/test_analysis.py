"""harness.analysis and harness.curves: statistics, curve shapes, aggregation, pairing."""

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from harness import analysis
from harness.curves import classify, is_thrashing, trial_curve_fields

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "results" / "fixtures" / "smoke-1500"


# ---------------------------------------------------------------- curve shapes (synthetic)


def sawtooth_curve(budget=25_000, cycles=3, rise=2_500, floor=8_000):
    out, value = [], 1_000
    for _ in range(cycles):
        while value < budget * 0.95:
            out.append(value)
            value += rise
        out.append(min(value, budget))
        value = floor  # compaction (e.g. clear_tool_results) brings it down
    return out


def test_sawtooth_is_recognised():
    curve = sawtooth_curve()
    assert classify(curve, 25_000) == "sawtooth"
    fields = trial_curve_fields(curve, 25_000, 0.05)
    assert fields["curve_shape"] == "sawtooth" and fields["thrashing"] is False


def test_monotonic_even_far_above_the_budget():
    curve = list(range(300, 72_000, 2_400))
    assert classify(curve, 8_000) == "monotonic"
    assert classify(curve, 1_000_000) == "monotonic"


def test_pinned_flat_along_the_budget_and_thrashing():
    curve = [300, 2_000, 4_500, 6_800] + [7_400 + (i % 3) * 40 for i in range(27)]
    assert classify(curve, 8_000) == "pinned"
    fields = trial_curve_fields(curve, 8_000, 0.55)
    assert fields["curve_shape"] == "pinned" and fields["thrashing"] is True
    assert not is_thrashing("pinned", 0.15) and is_thrashing("pinned", 0.16)


def test_fine_grained_cuts_at_every_step_are_pinned_not_sawtooth():
    curve = [1_000, 4_000, 7_000] + [8_200 if i % 2 else 7_300 for i in range(20)]  # cut 11% of B every other step
    assert classify(curve, 8_000) == "pinned"


BUDGET = 8_000


def ramp(top: float, steps: int = 6) -> list[float]:
    return [BUDGET * top * (i + 1) / steps for i in range(steps)]


def test_ramp_then_flat_along_the_budget_is_pinned():
    # ramps, then runs flat at 0.87 B for 35 steps (sliding_window@8k on brand_report): was `monotonic`
    curve = ramp(0.9) + [BUDGET * (0.87 + 0.01 * (i % 3 - 1)) for i in range(35)]
    assert classify(curve, BUDGET) == "pinned"
    # flat just above the budget (layered@8k on invoice_audit, 1.16 B)
    assert classify(ramp(1.1, 8) + [BUDGET * 1.16] * 23, BUDGET) == "pinned"


def test_plateau_below_the_budget_is_a_plateau():
    # summarize@8k on brand_report: levels off at 0.75 B and stays there: was `monotonic`
    curve = ramp(0.74, 5) + [BUDGET * (0.75 + 0.01 * (i % 3 - 1)) for i in range(36)]
    assert classify(curve, BUDGET) == "plateau"


def test_growth_far_past_the_budget_after_one_dip_is_monotonic():
    # summarize@8k on callback_search: one dip, then 4x the budget: was `sawtooth`
    ratios = [0.06, 0.23, 0.26, 0.94, 1.61, 2.09, 2.70, 2.20, 2.23, 2.86, 3.51, 3.55, 4.20, 4.90]
    assert classify([BUDGET * r for r in ratios], BUDGET) == "monotonic"


def test_identical_jittery_curves_get_one_label():
    # headtail, sliding_window and notes at 8K on callback_search: one cycle 0.7 -> 0.95 B every four
    # steps (visually identical): were pinned / sawtooth / sawtooth
    starts = [0.06, 0.23, 0.26, 0.94]
    cycles = {
        "headtail": [0.69, 0.87, 0.90, 0.94],
        "sliding_window": [0.68, 0.85, 0.88, 0.92],
        "notes": [0.71, 0.89, 0.92, 0.95],
    }
    shapes = {name: classify([BUDGET * r for r in starts + cycle * 36], BUDGET) for name, cycle in cycles.items()}
    assert set(shapes.values()) == {"pinned"}, shapes


def test_a_steady_climb_through_the_band_is_not_pinned():
    curve = [BUDGET * (0.07 + 0.032 * i) for i in range(41)]  # offload@8k on brand_report: 0.07 -> 1.35 B
    assert classify(curve, BUDGET) == "monotonic"


def test_jitter_is_not_a_cut_but_a_real_cut_is():
    # a window sliding by one message (drops of 12% of B) below the band, then a real cut
    jitter = ramp(0.5) + [BUDGET * (0.5 if i % 2 else 0.62) for i in range(20)]
    assert classify(jitter, BUDGET) == "plateau"
    assert classify(jitter + [BUDGET * 0.2, BUDGET * 0.3, BUDGET * 0.4], BUDGET) == "sawtooth"


def test_thrashing_from_rereads_whatever_the_shape():
    sawtooth = sawtooth_curve()
    # the seed's anchor: a re-read rate above 15% is thrashing, pinned or not
    assert trial_curve_fields(sawtooth, 25_000, 0.97)["thrashing"]
    assert trial_curve_fields(list(range(300, 72_000, 2_400)), 8_000, 0.77)["thrashing"]
    assert not trial_curve_fields(sawtooth, 25_000, 0.15)["thrashing"]
    # one resource read four times or more, even with a low overall rate
    assert trial_curve_fields(sawtooth, 25_000, 0.08, max_resource_reads=5)["thrashing"]
    assert not trial_curve_fields(sawtooth, 25_000, 0.08, max_resource_reads=3)["thrashing"]
    assert is_thrashing("sawtooth", 0.16) and is_thrashing(None, 0.0, 4)


def test_trivial_curves():
    assert classify([100, 200], 8_000) == "short"
    assert classify([], 8_000) == "short"
    assert classify([5_000, 5_010, 4_990, 5_020], 100_000) == "flat"


def test_trial_rows_carry_the_shape():
    trials = [json.loads(line) for line in (FIXTURE / "none" / "trials.jsonl").read_text().splitlines()]
    assert {t["curve_shape"] for t in trials} == {"monotonic"} and not any(t["thrashing"] for t in trials)


# ---------------------------------------------------------------- statistics


def test_wilson_known_values():
    low, high = analysis.wilson(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-3) and high == pytest.approx(0.9433, abs=1e-3)
    assert analysis.wilson(0, 2)[0] == 0.0 and analysis.wilson(2, 2)[1] == 1.0
    assert all(math.isnan(v) for v in analysis.wilson(0, 0))


def test_mcnemar_exact():
    assert analysis.mcnemar_exact(6, 0) == pytest.approx(2 / 64)
    assert analysis.mcnemar_exact(0, 0) == 1.0
    assert analysis.mcnemar_exact(3, 3) == 1.0
    assert analysis.mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)


def test_pass_hat_k():
    tasks = [(4, 4), (4, 2), (4, 0)]
    assert analysis.pass_hat_k(tasks, 1) == pytest.approx((1 + 0.5 + 0) / 3)
    assert analysis.pass_hat_k(tasks, 2) == pytest.approx((1 + 1 / 6 + 0) / 3)
    assert analysis.pass_hat_k(tasks, 4) == pytest.approx(1 / 3)
    assert math.isnan(analysis.pass_hat_k(tasks, 5))


def test_bootstrap_is_deterministic_and_order_free():
    values = [10, 20, 30, 40, 1000]
    a = analysis.bootstrap_mean(values)
    assert a == analysis.bootstrap_mean(list(reversed(values)))
    assert a[0] < np.mean(values) < a[1]
    assert analysis.bootstrap_mean([5, 5, 5]) == (5.0, 5.0)
    ratio, low, high = analysis.paired_bootstrap_ratio([100, 110, 90], [200, 230, 170])
    assert ratio == pytest.approx(2.0) and low > 1.8 and high < 2.2


# ---------------------------------------------------------------- frames and aggregates


def test_load_fixture_and_summarize_columns():
    trials = analysis.load_trials([FIXTURE])
    assert len(trials) == 18 and trials["run_dir"].nunique() == 3
    summary = analysis.summarize(trials)
    assert len(summary) == 3
    for col in (
        "strategy",
        "params",
        "family",
        "budget",
        "model",
        "trials",
        "tasks",
        "successes",
        "success_rate",
        "success_ci_low",
        "success_ci_high",
        "pass^1",
        "pass^2",
        "mean_input_tokens",
        "input_tokens_ci_low",
        "input_tokens_ci_high",
        "mean_cached_tokens",
        "mean_output_tokens",
        "mean_total_input_tokens",
        "cache_hit_ratio",
        "mean_cost",
        "cost_ci_low",
        "total_cost",
        "reread_rate",
        "mean_peak_context",
        "mean_compactions",
        "mean_steps",
        "outcome_submitted",
        "outcome_context_overflow",
        "curve_shapes",
        "thrashing_trials",
        "reference_agent",
    ):
        assert col in summary.columns, col
    none = summary[summary["strategy"] == "none"].iloc[0]
    assert none["success_rate"] == 1.0 and none["pass^2"] == 1.0 and none["curve_shapes"] == "monotonic:6"
    assert none["outcome_submitted"] == 6 and none["reference_agent"]
    assert analysis.summarize(trials).equals(summary)  # deterministic


def test_old_records_get_shapes_and_new_columns_are_aggregated(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE / "headtail", run)
    rows = [json.loads(line) for line in (run / "trials.jsonl").read_text().splitlines()]
    expected = [r["curve_shape"] for r in rows]
    with (run / "trials.jsonl").open("w") as handle:
        for r in rows:
            r.pop("curve_shape"), r.pop("thrashing")
            r["sim_cached_tokens"] = r["input_tokens"] // 2
            handle.write(json.dumps(r) + "\n")
    trials = analysis.load_trials([tmp_path])  # a folder of runs, searched recursively
    assert trials["curve_shape"].tolist() == expected
    summary = analysis.summarize(trials)
    assert summary["sim_cache_hit_ratio"].iloc[0] == pytest.approx(0.5, abs=0.01)


def test_unknown_path_raises():
    with pytest.raises(FileNotFoundError):
        analysis.load_trials(["/nonexistent/run"])


def test_paired_comparison():
    trials = analysis.load_trials([FIXTURE])
    base, cand = trials[trials["strategy"] == "none"], trials[trials["strategy"] == "sliding_window"]
    cmp = analysis.paired(base, cand)
    row = cmp.table.iloc[0]
    assert row["pairs"] == 6 and row["base_only"] == 6 and row["cand_only"] == 0
    assert row["mcnemar_p"] == pytest.approx(2 / 64) and row["input_ratio"] < 1
    assert cmp.regression and "McNemar" in row["reasons"]
    same = analysis.paired(base, base)
    assert not same.regression and same.table.iloc[0]["input_ratio"] == pytest.approx(1.0)
    # `none` against sliding_window as base: more successes for more input tokens is a trade-off the gate passes
    reverse = analysis.paired(cand, base)
    assert not reverse.regression and reverse.table.iloc[0]["verdict"] == "trade-off"
    # costlier beyond the tolerance at the same successes: the gate fails it
    fat = base.assign(total_input_tokens=base["total_input_tokens"] * 2)
    costlier = analysis.paired(base, fat)
    assert costlier.regression and "input tokens" in costlier.table.iloc[0]["reasons"]
    assert not analysis.paired(base, fat, tolerance=10.0).regression
    with pytest.raises(analysis.CompareError):
        analysis.paired(trials, base)  # several strategies on one side only

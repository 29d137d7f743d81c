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
    assert trial_curve_fields(curve, 25_000, 0.5) == {"curve_shape": "sawtooth", "thrashing": False}


def test_monotonic_even_far_above_the_budget():
    curve = list(range(300, 72_000, 2_400))
    assert classify(curve, 8_000) == "monotonic"
    assert classify(curve, 1_000_000) == "monotonic"


def test_pinned_flat_along_the_budget_and_thrashing():
    curve = [300, 2_000, 4_500, 6_800] + [7_400 + (i % 3) * 40 for i in range(27)]
    assert classify(curve, 8_000) == "pinned"
    assert trial_curve_fields(curve, 8_000, 0.55) == {"curve_shape": "pinned", "thrashing": True}
    assert not is_thrashing("pinned", 0.15) and is_thrashing("pinned", 0.16)


def test_fine_grained_cuts_at_every_step_are_pinned_not_sawtooth():
    curve = [1_000, 4_000, 7_000] + [8_200 if i % 2 else 7_300 for i in range(20)]  # cut 11% of B every other step
    assert classify(curve, 8_000) == "pinned"


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
    for col in ("strategy", "params", "family", "budget", "model", "trials", "tasks", "successes", "success_rate",
                "success_ci_low", "success_ci_high", "pass^1", "pass^2", "mean_input_tokens", "input_tokens_ci_low",
                "input_tokens_ci_high", "mean_cached_tokens", "mean_output_tokens", "mean_total_input_tokens",
                "cache_hit_ratio", "mean_cost", "cost_ci_low", "total_cost", "reread_rate", "mean_peak_context",
                "mean_compactions", "mean_steps", "outcome_submitted", "outcome_context_overflow", "curve_shapes",
                "thrashing_trials", "reference_agent"):
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
    # costlier beyond the tolerance: the candidate is `none` against sliding_window as base
    reverse = analysis.paired(cand, base)
    assert reverse.regression and "input tokens" in reverse.table.iloc[0]["reasons"]
    assert not analysis.paired(cand, base, tolerance=10.0).regression
    with pytest.raises(analysis.CompareError):
        analysis.paired(trials, base)  # several strategies on one side only

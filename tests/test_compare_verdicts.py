"""``compare``'s decision on synthetic trial frames: Holm's correction, the verdict vocabulary (better, trade-off,
worse, no detectable difference) on fixtures where each is true, the regression gate's word on each, the family-knob
check of pairing, and the Pareto frontier (harness/verdicts.py, ``analysis.compare_runs``)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from harness import analysis, verdicts

FAMILY = "invoice_audit"


def arm(name: str, successes: list[bool], cost: float, tokens: float = 10_000.0, **knobs) -> pd.DataFrame:
    """One arm's trials: one per instance (``successes[i]`` for instance i), each costing ``cost`` and ``tokens``;
    ``knobs`` are the family's knobs in its identity (default ``pages=4``)."""
    flat = {"strategy.name": name, "budget": 8000, "model.name": "scripted"}
    flat.update({f"suite.families.{FAMILY}.{k}": v for k, v in ({"pages": 4} | knobs).items()})
    rows = [
        {
            "family": FAMILY,
            "instance_id": f"{FAMILY}-p4-s{i}",
            "seed": i,
            "trial": 0,
            "trial_id": f"{FAMILY}-p4-s{i}-t0",
            "success": ok,
            "score": float(ok),
            "outcome": "submitted",
            "input_tokens": tokens,
            "cached_tokens": 0,
            "output_tokens": 100,
            "total_input_tokens": tokens,
            "cost": cost,
            "reads": 4,
            "rereads": 1,
            "reread_rate": 0.25,
            "compactions": 2,
            "peak_context": 5_000,
            "steps": 5,
            "strategy": name,
            "params": "-",
            "budget": 8000,
            "model": "scripted",
            "reference_agent": True,
            "run_dir": f"/runs/{name}",
            "config_id": f"id-{name}-{sorted(knobs.items())}",
            "identity": dict(flat),
        }
        for i, ok in enumerate(successes)
    ]
    frame = pd.DataFrame(rows)
    frame["config"] = frame["config_id"].map(analysis.config_names(frame))
    return frame


def rate(solved: int, n: int) -> list[bool]:
    """``solved`` successes then failures: instances 0..solved-1 succeed."""
    return [i < solved for i in range(n)]


def decide(base: pd.DataFrame, *cands: pd.DataFrame) -> list[dict]:
    """Each candidate's one stratum row after ``compare_runs`` (verdict, verdict_text, regression, p_adjusted ...)."""
    multi = analysis.compare_runs([base, *cands], [f"arm{i}" for i in range(len(cands) + 1)])
    return [cmp.table.iloc[0].to_dict() for cmp in multi.comparisons]


# ---------------------------------------------------------------- Holm


def test_holm_adjusts_in_order_and_keeps_a_single_p():
    assert verdicts.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert verdicts.holm([0.2]) == [0.2]
    assert verdicts.holm([0.5, 0.5]) == [1.0, 1.0]  # capped at 1
    assert verdicts.holm([0.001, 0.02, 0.04, 0.9]) == pytest.approx([0.004, 0.06, 0.08, 0.9])
    assert verdicts.holm([]) == []


def test_two_candidates_share_alpha_a_loss_significant_alone_is_not_after_holm():
    base = arm("none", rate(30, 30), cost=1.0)
    loser = arm("headtail", rate(24, 30), cost=1.0)  # 6 lost pairs: p = 0.031
    alone = decide(base, loser)[0]
    assert alone["mcnemar_p"] == pytest.approx(0.03125) and alone["p_adjusted"] == alone["mcnemar_p"]
    assert alone["verdict"] == verdicts.WORSE and alone["regression"]
    twice = decide(base, loser, arm("clear", rate(30, 30), cost=1.0))
    assert twice[0]["p_adjusted"] == pytest.approx(0.0625)
    assert twice[0]["verdict"] == verdicts.NO_DIFFERENCE and not twice[0]["regression"]


# ---------------------------------------------------------------- the vocabulary, each where it is true


def test_better_more_successes_at_equal_cost():
    row = decide(arm("none", rate(10, 40), cost=1.0), arm("clear", rate(30, 40), cost=1.0))[0]
    assert row["verdict"] == verdicts.BETTER and not row["regression"]
    assert row["verdict_text"] == "better: more successes at equal or lower cost (+50 points of success, x1.00 cost)"


def test_better_lower_cost_at_the_same_successes():
    row = decide(arm("none", rate(20, 30), cost=2.0), arm("clear", rate(20, 30), cost=1.0))[0]
    assert row["verdict"] == verdicts.BETTER and not row["regression"]
    assert row["verdict_text"] == "better: lower cost (x0.50 cost) at no detectable difference in success"


def test_trade_off_more_successes_for_more_cost_passes_the_gate():
    # the case: none 5/35, clear 30/35 at x1.26 cost was called a REGRESSION
    row = decide(arm("none", rate(5, 35), cost=1.0), arm("clear", rate(30, 35), cost=1.26))[0]
    assert row["verdict"] == verdicts.TRADE_OFF
    assert row["verdict_text"] == "trade-off: +71 points of success for x1.26 cost"
    assert not row["regression"] and row["reasons"] == ""


def test_trade_off_fewer_successes_for_less_cost_fails_the_gate():
    row = decide(arm("none", rate(30, 30), cost=2.0), arm("headtail", rate(10, 30), cost=1.0))[0]
    assert row["verdict"] == verdicts.TRADE_OFF
    assert row["verdict_text"] == "trade-off: -67 points of success for x0.50 cost"
    assert row["regression"] and row["reasons"].startswith("successes base 30/30, candidate 10/30 (McNemar p=")


def test_worse_fewer_successes_at_the_same_cost():
    row = decide(arm("none", rate(30, 30), cost=1.0), arm("headtail", rate(10, 30), cost=1.0))[0]
    assert row["verdict"] == verdicts.WORSE and row["regression"]
    assert row["verdict_text"] == "worse: fewer successes at equal or higher cost (-67 points of success, x1.00 cost)"


def test_worse_higher_cost_at_the_same_successes():
    row = decide(arm("none", rate(20, 30), cost=1.0, tokens=1_000), arm("big", rate(20, 30), cost=1.5, tokens=1_000))[0]
    assert row["verdict"] == verdicts.WORSE and row["regression"]
    assert row["verdict_text"] == "worse: higher cost (x1.50 cost) at no detectable difference in success"
    assert row["reasons"] == "cost x1.50 [1.50, 1.50]"


def test_no_detectable_difference_at_this_sample_size():
    base = arm("none", rate(20, 30), cost=1.0)
    row = decide(base, arm("clear", [*rate(19, 20), True, *[False] * 9], cost=1.05))[0]
    assert row["base_only"] == 1 and row["cand_only"] == 1
    assert row["verdict"] == verdicts.NO_DIFFERENCE and not row["regression"]
    assert row["verdict_text"] == "no detectable difference at this sample size"


def test_a_loss_too_small_to_show_is_never_called_better_even_when_cheaper():
    row = decide(arm("none", rate(30, 30), cost=2.0), arm("cheap", rate(27, 30), cost=1.0))[0]
    assert row["mcnemar_p"] > 0.05
    assert row["verdict"] == verdicts.NO_DIFFERENCE and not row["regression"]
    assert row["verdict_text"] == (
        "no detectable difference at this sample size: -10 points of success (not significant) at lower cost "
        "(x0.50 cost)"
    )


def test_unpriced_runs_decide_cost_on_input_tokens():
    base = arm("none", rate(5, 35), cost=0.0, tokens=10_000)
    row = decide(base, arm("clear", rate(30, 35), cost=0.0, tokens=20_000))[0]
    assert math.isnan(row["cost_ratio"])
    assert row["verdict_text"] == "trade-off: +71 points of success for x2.00 input tokens" and not row["regression"]
    same = decide(base, arm("fat", rate(5, 35), cost=0.0, tokens=20_000))[0]
    assert same["verdict"] == verdicts.WORSE and same["reasons"] == "input tokens x2.00 [2.00, 2.00]"


@pytest.mark.parametrize(
    "success,cost,kind,fails",
    [
        (verdicts.HIGHER, verdicts.HIGHER, verdicts.TRADE_OFF, False),
        (verdicts.HIGHER, verdicts.SAME, verdicts.BETTER, False),
        (verdicts.HIGHER, verdicts.LOWER, verdicts.BETTER, False),
        (verdicts.SAME, verdicts.HIGHER, verdicts.WORSE, True),
        (verdicts.SAME, verdicts.SAME, verdicts.NO_DIFFERENCE, False),
        (verdicts.SAME, verdicts.LOWER, verdicts.BETTER, False),
        (verdicts.LOWER, verdicts.HIGHER, verdicts.WORSE, True),
        (verdicts.LOWER, verdicts.SAME, verdicts.WORSE, True),
        (verdicts.LOWER, verdicts.LOWER, verdicts.TRADE_OFF, True),
    ],
)
def test_the_verdict_table(success, cost, kind, fails):
    """Every cell of harness/verdicts.py's table, on rows built to land in it (success via p and counts)."""
    succ = {verdicts.HIGHER: (10, 30, 0.001), verdicts.SAME: (20, 20, 1.0), verdicts.LOWER: (30, 10, 0.001)}
    ratio = {verdicts.HIGHER: 1.5, verdicts.SAME: 1.0, verdicts.LOWER: 0.5}[cost]
    b, c, p = succ[success]
    row = {
        "pairs": 40,
        "base_successes": b,
        "cand_successes": c,
        "mcnemar_p": p,
        "success_diff": (c - b) / 40,
        **{f"cost_ratio{s}": ratio for s in ("", "_ci_low", "_ci_high")},
        **{f"input_ratio{s}": ratio for s in ("", "_ci_low", "_ci_high")},
    }
    decided = verdicts.verdict(row, p, alpha=0.05, tolerance=0.10)
    assert (decided.kind, decided.regression) == (kind, fails)
    assert decided.text.startswith(kind)


# ---------------------------------------------------------------- pairing must be of the same instances


def test_instances_generated_with_different_family_knobs_do_not_pair():
    base = arm("none", rate(3, 5), cost=1.0, pages=4)
    with pytest.raises(analysis.CompareError) as caught:
        analysis.paired(base, arm("headtail", rate(3, 5), cost=1.0, pages=8))
    assert str(caught.value) == (
        "compare: invoice_audit instances differ in pages (4 in none, 8 in headtail): not the same instances"
    )
    analysis.paired(base, arm("headtail", rate(3, 5), cost=1.0, pages=4))  # same knobs: pairs
    one_family = arm("headtail", rate(3, 5), cost=1.0)
    one_family["identity"] = [{"strategy.name": "headtail", "budget": 8000, "model.name": "scripted"}] * 5
    analysis.paired(base, one_family)  # a side that does not say (imported, older runs) is not checked


def test_task_knobs_pair_with_the_same_suite_knobs():
    flat = {"strategy.name": "none", "budget": 8000, "model.name": "scripted"}
    assert analysis.family_knobs({**flat, "task.name": FAMILY, "task.pages": 4}, FAMILY) == {"pages": 4}
    assert analysis.family_knobs({**flat, f"suite.families.{FAMILY}.pages": 4}, FAMILY) == {"pages": 4}
    assert analysis.family_knobs(flat, FAMILY) == {}


# ---------------------------------------------------------------- tables and the frontier


def test_arm_table_family_table_and_pareto_frontier():
    arms = [
        arm("none", rate(5, 10), cost=2.0),
        arm("clear", rate(9, 10), cost=1.0),
        arm("sum", rate(10, 10), cost=3.0),
        arm("drop", rate(4, 10), cost=2.5),
    ]
    labels = ["none", "clear", "sum", "drop"]
    table = analysis.arm_table(arms, labels)
    assert list(table["arm"]) == labels and list(table.columns) == analysis.ARM_COLUMNS
    clear = table.set_index("arm").loc["clear"]
    assert clear["successes"] == 9 and clear["cost_per_success"] == pytest.approx(10 / 9)
    assert clear["success_ci_low"] < 0.9 < clear["success_ci_high"] and clear["mean_compactions"] == 2
    families = analysis.family_table(arms, labels)
    assert families[["arm", "successes", "trials"]].values.tolist() == [
        ["none", 5, 10],
        ["clear", 9, 10],
        ["sum", 10, 10],
        ["drop", 4, 10],
    ]
    frontier = analysis.pareto_frontier(table).set_index("arm")
    assert set(frontier.index[frontier["frontier"]]) == {"clear", "sum"}
    assert frontier.loc["none", "dominated_by"] == "clear" and frontier.loc["drop", "dominated_by"] == "none, clear"
    assert (frontier["measure"] == "cost").all()
    table["mean_cost"] = 0.0  # unpriced: input tokens instead
    assert (analysis.pareto_frontier(table)["measure"] == "input tokens").all()


def test_pareto_ignores_unknown_points():
    points = [verdicts.Point("a", 0.5, 1.0), verdicts.Point("b", math.nan, 0.5), verdicts.Point("c", 0.4, 2.0)]
    assert verdicts.pareto_frontier(points) == {"a": [], "b": [], "c": ["a"]}

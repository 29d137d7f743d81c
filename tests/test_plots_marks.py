"""What the figures draw, on small synthetic runs (matplotlib Agg, no run needed): the sawtooth band its title
names, each strategy's size trigger, overflowed trials, the Pareto plot's cost axis and labels, the tick
formatter."""

from __future__ import annotations

import itertools
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from harness import plots  # noqa: E402
from harness.curves import BAND  # noqa: E402

BUDGET = 128_000


def _trial(strategy: str, params: dict, outcome: str = "submitted", cls: str | None = None, n: int = 0) -> dict:
    return {
        "trial_id": f"code_review-f44-s{n}-t0-{strategy}",
        "run_dir": f"runs/{strategy}",
        "instance_id": f"code_review-f44-s{n}",
        "trial": 0,
        "family": "code_review",
        "strategy": strategy,
        "strategy_params": params,
        "strategy_class": cls,
        "budget": BUDGET,
        "outcome": outcome,
        "success": outcome == "submitted",
        "curve_shape": "sawtooth",
        "thrashing": False,
        "reference_agent": True,
    }


def _steps(trial: dict, tokens: list[int]) -> list[dict]:
    return [
        {
            "trial_id": trial["trial_id"],
            "run_dir": trial["run_dir"],
            "kind": "agent",
            "step": i + 1,
            "request_tokens": t,
        }
        for i, t in enumerate(tokens)
    ]


@pytest.fixture
def run() -> tuple[pd.DataFrame, pd.DataFrame]:
    """none (overflows at 131K), clear_tool_results at 60k (declared class), summarize at 100k (no class: an
    older row) and at 0.5 of the budget, adaptive_window at its default ratio."""
    trials = [
        _trial("none", {}, outcome="context_overflow"),
        _trial(
            "clear_tool_results", {"trigger": "60k", "keep": 3}, cls="strategies.clear_tool_results.ClearToolResults"
        ),
        _trial("summarize", {"threshold": 100_000, "keep_recent_rounds": 4}, n=1),
        _trial("summarize", {"threshold": 0.5, "keep_recent_rounds": 4}, n=2),
        _trial("clear_tool_results", {"trigger": 1.0, "keep": 3}, n=3),  # at the budget: no line of its own
    ]
    curves = [
        [20_000, 60_000, 100_000, 131_000],
        [30_000, 61_000, 25_000, 58_000, 62_000, 30_000],
        [40_000, 80_000, 101_000, 20_000, 50_000],
        [40_000, 65_000, 20_000, 50_000],
        [40_000, 80_000, 120_000, 129_000],
    ]
    steps = [row for t, c in zip(trials, curves, strict=True) for row in _steps(t, c)]
    return pd.DataFrame(trials), pd.DataFrame(steps)


def _lines(fig, gid: str) -> list:
    return [line for ax in fig.axes for line in ax.get_lines() if line.get_gid() == gid]


def _legend_texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]


def test_sawtooth_title_names_the_band_it_draws(run):
    trials, steps = run
    fig = plots.sawtooth_figure(steps, trials)
    stated = re.search(r"band ±(\d+)%", fig.get_suptitle())
    assert stated, fig.get_suptitle()
    bands = [p for ax in fig.axes for p in ax.patches if p.get_gid() == "budget-band"]
    assert bands
    for band in bands:
        low, high = band.get_y(), band.get_y() + band.get_height()
        assert low == pytest.approx(BUDGET * (1 - BAND)) and high == pytest.approx(BUDGET * (1 + BAND))
        assert (high - low) / 2 / BUDGET == pytest.approx(int(stated.group(1)) / 100)
    plt.close(fig)


@pytest.mark.parametrize("figure", ["token_curves", "sawtooth"])
def test_trigger_lines_at_each_strategys_own_trigger(run, figure):
    trials, steps = run
    fig = plots.token_curves_figure(steps, trials) if figure == "token_curves" else plots.sawtooth_figure(steps, trials)
    at = sorted(line.get_ydata()[0] for line in _lines(fig, "trigger"))
    assert at == [60_000, 64_000, 100_000], at  # 0.5 x 128k resolves to 64k; trigger 1.0 is the budget line itself
    labels = _legend_texts(fig)
    assert any(label.startswith("trigger 60k (clear_tool_results: trigger") for label in labels), labels
    assert any(label.startswith("trigger 100k (summarize: threshold") for label in labels), labels
    budget = [line for ax in fig.axes for line in ax.get_lines() if line.get_label().startswith("budget")]
    assert budget and all(
        (b.get_color(), b.get_linestyle()) != (t.get_color(), t.get_linestyle())
        for b in budget
        for t in _lines(fig, "trigger")
    )
    plt.close(fig)


def test_trigger_of_reads_the_trigger_parameter_of_the_strategy_or_its_class():
    row = {"strategy": "clear_tool_results", "budget": 25_000, "strategy_params": {"trigger": 0.8}}
    assert plots.trigger_of(row) == (20_000, "clear_tool_results: trigger = 0.8 x budget")
    declared = dict(row, strategy_class="strategies.clear_tool_results.ClearToolResults")
    assert plots.trigger_of(declared) == (20_000, "clear_tool_results: trigger = 0.8 x budget")
    aw = {"strategy": "adaptive_window", "budget": 10_000, "strategy_params": {"ratio": 0.8, "keep_last_round": True}}
    assert plots.trigger_of(dict(aw, strategy_class="strategies.adaptive_window.AdaptiveWindow")) == (
        8_000,
        "adaptive_window: ratio = 0.8 x budget",
    )
    assert (
        plots.trigger_of({"strategy": "headtail", "budget": 25_000, "strategy_params": {"min_recent_rounds": 1}})
        is None
    )
    assert plots.trigger_of({"strategy": "none", "budget": 25_000, "strategy_params": float("nan")}) is None
    # a class named in a results file is only looked up in the table, never imported or built
    evil = {"strategy": "x", "budget": 1_000, "strategy_params": {"command": "true"}, "strategy_class": "os.system"}
    assert plots.trigger_of(evil) is None
    arm = {"strategy": "clear60", "budget": 1_000_000, "strategy_params": {"trigger": "60k"}}
    assert plots.trigger_of(dict(arm, strategy_class="strategies.clear_tool_results.ClearToolResults")) == (
        60_000,
        "clear60: trigger",
    )


@pytest.mark.parametrize("figure", ["token_curves", "sawtooth"])
def test_overflowed_trials_are_marked_at_their_last_step(run, figure):
    trials, steps = run
    fig = plots.token_curves_figure(steps, trials) if figure == "token_curves" else plots.sawtooth_figure(steps, trials)
    marks = _lines(fig, "overflow")
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [4] and list(marks[0].get_ydata()) == [131_000]
    assert any(label.startswith("context overflow (1 trial") for label in _legend_texts(fig))
    plt.close(fig)


@pytest.mark.parametrize(
    "value,text",
    [(0, "0"), (1_500, "1.5K"), (25_000, "25K"), (950_000, "950K"), (999_999, "1M"), (1e6, "1M"), (1.25e6, "1.25M")],
)
def test_token_ticks_read_M_for_millions(value, text):
    assert plots._k(value) == text


def _summary(cost: float) -> pd.DataFrame:
    """Six configurations, four of them crowded on one spot (the labels used to print "C1C2")."""
    rows = []
    for i, (x, y) in enumerate(
        [(300_000, 0.5), (310_000, 0.52), (305_000, 0.48), (302_000, 0.5), (900_000, 0.9), (1e6, 0.2)]
    ):
        rows.append(
            {
                "strategy": f"strategy_{i}",
                "budget": BUDGET,
                "config": f"strategy_{i}@128k [a long list of parameters that forces a short code]",
                "mean_total_input_tokens": x,
                "total_input_tokens_ci_low": x * 0.9,
                "total_input_tokens_ci_high": x * 1.1,
                "mean_cost": cost * x / 1e6,
                "cost_ci_low": cost * x / 1e6 * 0.9,
                "cost_ci_high": cost * x / 1e6 * 1.1,
                "success_rate": y,
                "success_ci_low": max(0.0, y - 0.1),
                "success_ci_high": min(1.0, y + 0.1),
                "held_budget": True,
            }
        )
    return pd.DataFrame(rows)


def _label_boxes(fig) -> list:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [Text.get_window_extent(t, renderer) for t in fig.axes[0].texts if t.get_gid() == "pareto-label"]


def test_pareto_labels_do_not_overlap():
    fig = plots.pareto_figure(_summary(cost=5.0))
    boxes = _label_boxes(fig)
    assert len(boxes) >= 5  # the crowded four: at least three labels (two coincide exactly in x and success)
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), (a, b)
    frame = fig.axes[0].get_window_extent()
    assert all(frame.contains(b.x0, b.y0) and frame.contains(b.x1, b.y1) for b in boxes)
    plt.close(fig)


def test_pareto_puts_cost_on_x_and_falls_back_to_tokens_saying_so():
    fig = plots.pareto_figure(_summary(cost=5.0))
    ax = fig.axes[0]
    assert "cost per trial" in ax.get_xlabel() and "Success vs cost per trial" in fig.get_suptitle()
    points = [line for line in ax.get_lines() if len(line.get_xdata()) == 1 and line.get_marker() not in ("|", "_")]
    xs = [line.get_xdata()[0] for line in points]
    assert max(xs) == pytest.approx(5.0)  # 1M tokens at $5 per 1M
    assert ax.xaxis.get_major_formatter()(2.5) == "$2.5"
    plt.close(fig)
    fig = plots.pareto_figure(_summary(cost=0.0))
    ax = fig.axes[0]
    assert "input tokens" in ax.get_xlabel() and "cost $0" in ax.get_xlabel().replace("\n", " ")
    assert ax.xaxis.get_major_formatter()(1e6) == "1M"
    plt.close(fig)

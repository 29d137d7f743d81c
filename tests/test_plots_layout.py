"""Every plot of the five experiment presets (run small) is readable: tight bbox, no text outside the
figure, titles clear of the first axes, short configuration codes with a key, `none` budget not targeted."""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from harness import analysis, plots

ROOT = Path(__file__).resolve().parent.parent
PRESETS = ("review44", "invoice_layers", "compression_six", "status_bar", "cache_pitfalls")
SMALL = ["suite.instances=1", "trials=1", "max_steps=40", "plots=false"]  # the test draws the figures itself


def _run_small(name: str, results: Path) -> Path:
    """Every job of preset ``name``, one instance, one trial, at most 40 steps, into ``results/name``."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from experiments_table import sweep_points
    from hydra import compose, initialize_config_dir
    from omegaconf import open_dict

    from harness.config import CONFIG_DIR
    from harness.runner import execute

    for point in sweep_points(name):
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
            cfg = compose("config", overrides=[f"experiment={name}", *point, "progress=false", *SMALL])
        with open_dict(cfg):
            cfg.pop("hydra", None)
        job = "_".join(sorted(point)).replace("/", "_").replace("=", "-")
        execute(cfg, results / name / job, echo=lambda _: None)
    return results / name


class PresetRuns(dict):
    """Each preset's small run (trials, steps), made the first time a test asks for it."""

    def __init__(self, results: Path) -> None:
        super().__init__()
        self.results = results

    def __missing__(self, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        dirs = analysis.run_dirs([_run_small(name, self.results)])
        self[name] = (analysis.load_trials(dirs), analysis.load_steps(dirs))
        return self[name]


@pytest.fixture(scope="module")
def presets(tmp_path_factory) -> PresetRuns:
    return PresetRuns(tmp_path_factory.mktemp("presets"))


FAST = {"status_bar", "invoice_layers"}  # the default command lays out these two; the slow tier all five


def _figures(trials: pd.DataFrame, steps: pd.DataFrame) -> dict[str, Figure]:
    by_config = analysis.summarize(trials, by=analysis.CONFIG_KEYS)
    return {
        "token_curve": plots.token_curves_figure(steps, trials, "strategy=x budget=8k model=reference " * 3),
        "sawtooth": plots.sawtooth_figure(steps, trials),
        "cumulative_input": plots.cumulative_input_figure(steps, trials),
        "pareto": plots.pareto_figure(by_config, trials),
        "reread_cache": plots.reread_cache_figure(by_config, trials),
    }


def _undrawn_tick_labels(fig: Figure) -> set[int]:
    """Tick labels matplotlib keeps beyond the axis' view limits (never drawn)."""
    skip = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            eps = (hi - lo) * 1e-6
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                if not lo - eps <= tick.get_loc() <= hi + eps:
                    skip |= {id(tick.label1), id(tick.label2)}
    return skip


def layout_problems(fig: Figure) -> list[str]:
    """Text drawn outside the figure, and a suptitle that overlaps the first axes or its title."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox.padded(1)
    problems = []
    undrawn = _undrawn_tick_labels(fig)
    for text in fig.findobj(Text):
        if id(text) in undrawn or not text.get_visible() or not text.get_text().strip():
            continue
        ext = text.get_window_extent(renderer)
        if not (box.contains(ext.x0, ext.y0) and box.contains(ext.x1, ext.y1)):
            problems.append(f"text outside the figure: {text.get_text()[:60]!r}")
    first = fig.axes[0]
    title = fig._suptitle
    if title is not None and title.get_text():
        sup = title.get_window_extent(renderer)
        if sup.overlaps(first.bbox) or sup.overlaps(first.title.get_window_extent(renderer)):
            problems.append("the figure title overlaps the first axes")
    return problems


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in FAST else pytest.mark.slow) for n in PRESETS])
def test_every_plot_of_a_preset_is_laid_out(presets, name, tmp_path):
    trials, steps = presets[name]
    for kind, fig in _figures(trials, steps).items():
        assert layout_problems(fig) == [], (name, kind)
        width, height = fig.get_size_inches()
        assert 6 <= width <= 24 and 3 <= height <= 40, (name, kind, width, height)
        path = plots._save(fig, tmp_path / f"{kind}.png")
        assert path.stat().st_size > 10_000, (name, kind)
    assert not plt.get_fignums()


def test_status_bar_labels_are_short_with_a_key(presets):
    trials, _ = presets["status_bar"]
    by_config = analysis.summarize(trials, by=analysis.CONFIG_KEYS)
    fig = plots.pareto_figure(by_config, trials)
    annotations = [t.get_text() for t in fig.axes[0].texts]
    assert annotations and all(len(a) <= 12 for a in annotations)
    key = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert any(k.startswith("C1 = ") for k in key) and len(key) == len(by_config)
    plt.close(fig)


def test_none_budget_is_not_targeted_and_identical_curves_are_counted(presets):
    trials, steps = presets["invoice_layers"]
    none = trials[trials["strategy"] == "none"]
    twin = none.assign(trial=1, trial_id=none["trial_id"] + "-twin")  # a copy: same curve, another trial
    steps_twin = steps[steps["trial_id"].isin(none["trial_id"])].assign(trial_id=lambda f: f["trial_id"] + "-twin")
    fig = plots.sawtooth_figure(pd.concat([steps, steps_twin]), pd.concat([trials, twin]))
    labels = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    assert any("(not targeted)" in label for label in labels)
    assert any("2 identical curves" in label for label in labels)
    plt.close(fig)


def test_family_colours_are_fixed():
    assert plots.family_color("code_review") == plots.FAMILY_COLORS["code_review"]
    assert plots.family_color("made_up") == plots.family_color("made_up")
    assert len(set(plots.FAMILY_COLORS.values())) == len(plots.FAMILY_COLORS)

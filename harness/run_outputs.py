"""What a finished ``run`` writes next to its records: ``summary.csv`` and ``plots/``.

Both are derived from ``trials.jsonl`` and ``steps.jsonl``, so a rerun that recorded nothing new
keeps them when they are newer than both files (``outputs_current``): a no-op rerun of a finished
run neither recomputes the summary nor draws the plots. matplotlib is imported only to draw.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.analysis import all_reference, load_steps, load_trials, reference_note, summarize
from harness.budget import format_budget
from harness.trial import TrialSettings
from harness.records import STEPS, TRIALS

if TYPE_CHECKING:
    import pandas as pd

SUMMARY = "summary.csv"
PLOTS = ("plots/token_curve.png", "plots/cumulative_input.png")


def write_run_outputs(run_dir: Path, settings: TrialSettings, plots: bool = True) -> pd.DataFrame:
    """Write ``summary.csv`` and (unless ``plots`` is false) ``plots/token_curve.png`` and
    ``plots/cumulative_input.png``, unless they are current already; return every trial row."""
    trials = load_trials([run_dir])
    if trials.empty or outputs_current(Path(run_dir), plots):
        return trials
    summarize(trials).to_csv(run_dir / SUMMARY, index=False)
    steps = load_steps([run_dir]) if plots else None
    if steps is not None and not steps.empty:
        from harness.plots import cumulative_input_plot, token_curves  # matplotlib: only to draw

        reference = f" — {reference_note(trials)}" if all_reference(trials) else ""
        title = (
            f"strategy={settings.strategy_name} budget={format_budget(settings.budget)} "
            f"model={settings.model_name}{reference}"
        )
        token_curves(steps, trials, run_dir / PLOTS[0], title)
        cumulative_input_plot(steps, trials, run_dir / PLOTS[1])
    return trials


def outputs_current(run_dir: Path, plots: bool) -> bool:
    """Whether ``summary.csv`` (and the plots, when ``plots``) exist and are newer than the records."""
    outputs = [run_dir / SUMMARY, *((run_dir / p for p in PLOTS) if plots else ())]
    records = [run_dir / TRIALS, run_dir / STEPS]
    if not all(p.exists() for p in outputs):
        return False
    newest_record = max((p.stat().st_mtime_ns for p in records if p.exists()), default=0)
    return min(p.stat().st_mtime_ns for p in outputs) > newest_record

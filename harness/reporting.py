"""What a finished ``run`` writes next to its records: ``summary.csv`` and ``plots/``."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.analysis import all_reference, reference_note, load_steps, load_trials, summarize
from harness.budget import format_budget
from harness.loop import TrialSettings
from harness.plots import cumulative_input_plot, token_curves


def write_run_outputs(run_dir: Path, settings: TrialSettings, plots: bool = True) -> pd.DataFrame:
    """Write ``summary.csv`` and (unless ``plots`` is false) ``plots/token_curve.png`` and
    ``plots/cumulative_input.png``; return every trial row."""
    trials = load_trials([run_dir])
    if trials.empty:
        return trials
    summarize(trials).to_csv(run_dir / "summary.csv", index=False)
    steps = load_steps([run_dir]) if plots else None
    if steps is not None and not steps.empty:
        reference = f" — {reference_note(trials)}" if all_reference(trials) else ""
        title = f"strategy={settings.strategy_name} budget={format_budget(settings.budget)} model={settings.model_name}{reference}"
        token_curves(steps, trials, run_dir / "plots" / "token_curve.png", title)
        cumulative_input_plot(steps, trials, run_dir / "plots" / "cumulative_input.png")
    return trials

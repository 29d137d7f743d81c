"""What a finished ``run`` writes next to its records: ``summary.csv`` and ``plots/``."""
from __future__ import annotations

from pathlib import Path

from harness.analysis import load_steps, load_trials, summarize
from harness.budget import format_budget
from harness.loop import TrialSettings
from harness.plots import token_curves


def write_run_outputs(run_dir: Path, settings: TrialSettings) -> list[dict]:
    """Write ``summary.csv`` and ``plots/token_curve.png``; return all trial rows of the run."""
    trials = load_trials([run_dir])
    if trials.empty:
        return []
    steps = load_steps([run_dir])
    summarize(trials).to_csv(run_dir / "summary.csv", index=False)
    if not steps.empty:
        reference = " — scripted reference agent, not an LLM" if trials["reference_agent"].all() else ""
        title = f"strategy={settings.strategy_name} budget={format_budget(settings.budget)} model={settings.model_name}{reference}"
        token_curves(steps, trials, run_dir / "plots" / "token_curve.png", title)
    return trials.to_dict("records")

"""Loading run folders into tidy pandas frames and aggregating them.

Notebooks and the CLI use these functions; they never re-implement them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from harness.records import STEPS, TRIALS, read_jsonl

GROUP_KEYS = ["strategy", "family", "budget", "model"]


def run_dirs(paths: Iterable[str | Path]) -> list[Path]:
    """Every run folder (one holding ``trials.jsonl``) at or below the given paths (sweeps included)."""
    found: list[Path] = []
    for path in paths:
        path = Path(path)
        if (path / TRIALS).exists():
            found.append(path)
        elif path.is_dir():
            found.extend(sorted(p.parent for p in path.rglob(TRIALS)))
        else:
            raise FileNotFoundError(f"{path}: not a run folder (no {TRIALS}) nor a folder of runs")
    return found


def load_trials(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per trial across the given runs, with a ``run_dir`` column."""
    frames = []
    for run in run_dirs(paths):
        rows = read_jsonl(run / TRIALS)
        if rows:
            frame = pd.DataFrame(rows)
            frame["run_dir"] = str(run)
            frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def load_steps(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per model call across the given runs, with a ``run_dir`` column."""
    frames = []
    for run in run_dirs(paths):
        rows = read_jsonl(run / STEPS)
        if rows:
            frame = pd.DataFrame(rows)
            frame["run_dir"] = str(run)
            frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def summarize(trials: pd.DataFrame) -> pd.DataFrame:
    """Aggregates per strategy x task family x budget x model (basic columns)."""
    if trials.empty:
        return pd.DataFrame()
    grouped = trials.groupby(GROUP_KEYS, sort=True)
    out = grouped.agg(
        trials=("trial_id", "count"),
        success_rate=("success", "mean"),
        mean_score=("score", "mean"),
        mean_input_tokens=("input_tokens", "mean"),
        mean_cached_tokens=("cached_tokens", "mean"),
        mean_output_tokens=("output_tokens", "mean"),
        mean_cost=("cost", "mean"),
        reread_rate=("reread_rate", "mean"),
        mean_peak_context=("peak_context", "mean"),
        mean_compactions=("compactions", "mean"),
        mean_steps=("steps", "mean"),
        reference_agent=("reference_agent", "all"),
    ).reset_index()
    outcomes = trials.pivot_table(index=GROUP_KEYS, columns="outcome", values="trial_id", aggfunc="count", fill_value=0)
    outcomes.columns = [f"outcome_{c}" for c in outcomes.columns]
    return out.merge(outcomes.reset_index(), on=GROUP_KEYS, how="left")

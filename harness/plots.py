"""Matplotlib figures of runs, written as PNG files."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def token_curves(steps: pd.DataFrame, trials: pd.DataFrame, path: Path, title: str = "") -> Path:
    """Prepared-request tokens per step, one line per trial, a panel per family, budget as a dashed line."""
    agent = steps[steps["kind"] == "agent"]
    families = sorted(trials["family"].unique())
    fig, axes = plt.subplots(len(families), 1, figsize=(9, 3.2 * len(families)), squeeze=False)
    info = trials.set_index("trial_id")
    for ax, family in zip(axes[:, 0], families):
        ids = trials.loc[trials["family"] == family, "trial_id"]
        for trial_id in ids:
            curve = agent[agent["trial_id"] == trial_id]
            row = info.loc[trial_id]
            label = f"{trial_id} ({row['outcome']}{', ok' if row['success'] else ''})"
            ax.plot(curve["step"], curve["request_tokens"], linewidth=1.2, label=label)
        budgets = sorted(trials.loc[trials["family"] == family, "budget"].unique())
        for budget in budgets:
            ax.axhline(budget, color="red", linestyle="--", linewidth=1, label=f"budget {budget:,} tokens")
        ax.set_title(f"{family}: prepared-request tokens per step")
        ax.set_xlabel("step (model call)")
        ax.set_ylabel("request tokens")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

"""Matplotlib figures of runs, written as PNG files (the data comes from harness.analysis).

Every figure states its units, draws the budget where one applies, and says in its title when
all trials come from the scripted reference agent (not an LLM).
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from harness.analysis import all_reference, config_label, cumulative_input, reference_note  # noqa: E402
from harness.budget import format_budget  # noqa: E402
from harness.curves import NEAR, THRASH_REREAD  # noqa: E402

SHAPE_STYLE = {"sawtooth": "-", "monotonic": "-", "pinned": "-", "flat": ":", "short": ":"}


def _suffix(trials: pd.DataFrame) -> str:
    return f" — {reference_note(trials)}" if all_reference(trials) else ""


def _save(fig, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _labels(summary: pd.DataFrame) -> list[str]:
    """The readable configuration name per row (``config``), else ``strategy@budget`` (+ params where ambiguous)."""
    if "config" in summary:
        return [str(c) for c in summary["config"]]
    many = summary.groupby("strategy")["params"].nunique() if "params" in summary else pd.Series(dtype=int)
    return [config_label(r) if many.get(r["strategy"], 1) > 1 else f"{r['strategy']}@{format_budget(int(r['budget']))}"
            for _, r in summary.iterrows()]


def _tokens_axis(ax) -> None:
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_k))
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))


def _k(value: float, _=None) -> str:
    """Token counts as 1.5K / 25K / 1,100K."""
    if not value:
        return "0"
    return f"{value / 1000:,.1f}K" if abs(value) < 10_000 and value % 1000 else f"{value / 1000:,.0f}K"


def token_curves(steps: pd.DataFrame, trials: pd.DataFrame, path: Path, title: str = "") -> Path:
    """Prepared-request tokens per step, one line per trial, a panel per family, budget as a dashed line."""
    agent = steps[steps["kind"] == "agent"]
    families = sorted(trials["family"].unique())
    fig, axes = plt.subplots(len(families), 1, figsize=(9, 3.4 * len(families)), squeeze=False)
    for ax, family in zip(axes[:, 0], families):
        for _, row in trials[trials["family"] == family].iterrows():
            curve = agent[(agent["trial_id"] == row["trial_id"]) & (agent["run_dir"] == row["run_dir"])].sort_values("step")
            shape = row.get("curve_shape") or "?"
            label = f"{row['trial_id']} ({row['outcome']}{', ok' if row['success'] else ''}; {shape})"
            ax.plot(curve["step"], curve["request_tokens"], linewidth=1.2, label=label)
        for budget in sorted(trials.loc[trials["family"] == family, "budget"].unique()):
            ax.axhline(budget, color="red", linestyle="--", linewidth=1, label=f"budget {format_budget(int(budget))} tokens")
        ax.set_title(f"{family}: prepared-request tokens per agent step")
        ax.set_xlabel("agent step (model call)")
        ax.set_ylabel("request tokens")
        _tokens_axis(ax)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def sawtooth(steps: pd.DataFrame, trials: pd.DataFrame, path: Path) -> Path:
    """Token curve of every trial, one panel per strategy (rows) x budget (columns), budget line and band."""
    agent = steps[steps["kind"] == "agent"]
    strategies = sorted(trials["strategy"].unique())
    budgets = sorted(trials["budget"].unique())
    fig, axes = plt.subplots(len(strategies), len(budgets), figsize=(4.6 * len(budgets) + 0.5, 3.0 * len(strategies) + 0.6),
                             squeeze=False, sharex=True)
    for i, strategy in enumerate(strategies):
        for j, budget in enumerate(budgets):
            ax = axes[i, j]
            cell = trials[(trials["strategy"] == strategy) & (trials["budget"] == budget)]
            if cell.empty:
                ax.set_axis_off()
                continue
            for _, row in cell.iterrows():
                curve = agent[(agent["trial_id"] == row["trial_id"]) & (agent["run_dir"] == row["run_dir"])].sort_values("step")
                ok = "ok" if row["success"] else "fail"
                ax.plot(curve["step"], curve["request_tokens"], linewidth=1.1, linestyle=SHAPE_STYLE.get(row.get("curve_shape"), "-"),
                        label=f"{row['instance_id']} t{row['trial']} ({ok})")
            ax.axhline(budget, color="red", linestyle="--", linewidth=1.2, label="budget")
            ax.axhspan(budget * (1 - NEAR), budget * (1 + NEAR), color="red", alpha=0.07)
            shapes = cell["curve_shape"].value_counts() if "curve_shape" in cell else pd.Series(dtype=int)
            shape_text = ", ".join(f"{s} {n}" for s, n in shapes.items())
            thrash = int(cell["thrashing"].astype(bool).sum()) if "thrashing" in cell else 0
            ax.set_title(f"{strategy} @ {format_budget(int(budget))}: {shape_text}" + (f", THRASHING {thrash}" if thrash else ""),
                         fontsize=9)
            ax.set_ylabel("request tokens")
            _tokens_axis(ax)
            ax.grid(alpha=0.3)
            if len(cell) <= 6:
                ax.legend(fontsize=6, loc="upper left")
        for ax in axes[-1, :]:
            ax.set_xlabel("agent step")
    fig.suptitle("Token curves: prepared-request tokens per agent step (red: budget, band ±10%)" + _suffix(trials), fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def cumulative_input_plot(steps: pd.DataFrame, trials: pd.DataFrame, path: Path) -> Path:
    """Mean cumulative input tokens (all model calls) by step, one line per configuration, a panel per budget."""
    cum = cumulative_input(steps, trials)
    budgets = sorted(trials["budget"].unique())
    fig, axes = plt.subplots(1, len(budgets), figsize=(5.2 * len(budgets) + 0.5, 4.0), squeeze=False)
    for ax, budget in zip(axes[0], budgets):
        part = cum[cum["budget"] == budget]
        names = ["config"] if "config" in part else ["strategy", "params"]
        for name, g in part.groupby(names):
            # carry each trial's total forward after it ended, then average over trials
            wide = g.pivot_table(index="step", columns=["run_dir", "trial_id"], values="cum_input_tokens").sort_index().ffill()
            name = name if isinstance(name, tuple) else (name,)
            label = name[0] if len(name) == 1 or name[1] == "-" else f"{name[0]} [{name[1]}]"
            style = ["-", "--", "-.", ":"][len(ax.lines) % 4]
            ax.plot(wide.index, wide.mean(axis=1), linewidth=1.8, linestyle=style, label=f"{label} ({wide.shape[1]} trials)")
        ax.set_title(f"budget {format_budget(int(budget))}", fontsize=10)
        ax.set_xlabel("step")
        ax.set_ylabel("cumulative input tokens (mean over trials)")
        _tokens_axis(ax)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("Cumulative input tokens per step (all calls: agent, summarizer, sub-agents, stop hook)" + _suffix(trials),
                 fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def pareto(config_summary: pd.DataFrame, path: Path, trials: pd.DataFrame | None = None) -> Path:
    """Success rate (Wilson 95%) vs mean input tokens of all calls (bootstrap 95%), one point per configuration.

    The Pareto frontier is drawn; a configuration that did not hold its budget (some agent request
    above it, ``held_budget`` false) has a hollow marker ("exceeded budget" in the legend).
    """
    fig, ax = plt.subplots(figsize=(8, 5.2))
    s = config_summary.reset_index(drop=True)
    colors = plt.cm.tab10(np.linspace(0, 1, 10))
    strategies = sorted(s["strategy"].unique())
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    budgets = sorted(s["budget"].unique())
    labels_at: dict = {}  # configurations closer than 4% of the x range on the same success share one label
    span = max(float(s["mean_total_input_tokens"].max() - s["mean_total_input_tokens"].min()), 1.0)
    for i, row in s.sort_values("mean_total_input_tokens").iterrows():
        x, y = row["mean_total_input_tokens"], round(row["success_rate"], 3)
        spot = next((k for k in labels_at if k[1] == y and abs(k[0] - x) < 0.04 * span), (x, y))
        labels_at.setdefault(spot, []).append(i)
    for _, row in s.iterrows():
        x, y = row["mean_total_input_tokens"], row["success_rate"]
        xerr = [[max(0.0, x - row["total_input_tokens_ci_low"])], [max(0.0, row["total_input_tokens_ci_high"] - x)]]
        yerr = [[max(0.0, y - row["success_ci_low"])], [max(0.0, row["success_ci_high"] - y)]]
        color = colors[strategies.index(row["strategy"]) % 10]
        marker = markers[budgets.index(row["budget"]) % len(markers)]
        held = bool(row.get("held_budget", True))
        ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt=marker, color=color, capsize=3, markersize=7, alpha=0.8,
                    markerfacecolor=color if held else "none", markeredgewidth=1.0 if held else 1.8)
    for (x, y), names in labels_at.items():  # one label per spot: coinciding configurations are listed together
        ax.annotate("\n".join(_labels(s)[i] for i in names),
                    (x, y), textcoords="offset points", xytext=(7, -4), fontsize=8, va="top")
    # Pareto frontier: no other configuration is at least as good on both axes and better on one
    points = s[["mean_total_input_tokens", "success_rate"]].to_numpy()
    front = [i for i, (x, y) in enumerate(points)
             if not any((x2 <= x and y2 >= y) and (x2 < x or y2 > y) for x2, y2 in points)]
    if len(front) > 1:
        fp = points[sorted(front, key=lambda i: points[i][0])]
        ax.plot(fp[:, 0], fp[:, 1], color="grey", linestyle=":", linewidth=1, label="Pareto frontier")
    for strategy in strategies:
        ax.plot([], [], "o", color=colors[strategies.index(strategy) % 10], label=strategy)
    for budget in budgets:
        ax.plot([], [], markers[budgets.index(budget) % len(markers)], color="black", label=f"budget {format_budget(int(budget))}")
    if "held_budget" in s and not s["held_budget"].fillna(True).astype(bool).all():
        ax.plot([], [], "o", color="black", markerfacecolor="none", markeredgewidth=1.8, label="exceeded budget (hollow)")
    ax.set_xlabel("mean input tokens per trial (all calls: agent, summarizer, sub-agents, stop hook; bars: bootstrap 95%)")
    ax.set_ylabel("success rate (bars: Wilson 95%)")
    ax.set_ylim(-0.05, 1.1)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_k))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    note = _suffix(trials) if trials is not None else ""
    ax.set_title("Success vs input tokens per configuration (up and left is better)" + note, fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def reread_cache(config_summary: pd.DataFrame, path: Path, trials: pd.DataFrame | None = None) -> Path:
    """Bars of re-read rate (15% thrashing line) and cache-hit ratio per configuration."""
    s = config_summary.reset_index(drop=True)
    labels = _labels(s)
    fig, axes = plt.subplots(1, 2, figsize=(max(8, 1.1 * len(s) * 2), 4.4))
    x = np.arange(len(s))
    bars = axes[0].bar(x, s["reread_rate"] * 100, color="tab:orange")
    axes[0].bar_label(bars, labels=[f"{v:.0%}" for v in s["reread_rate"]], fontsize=8)
    axes[0].axhline(THRASH_REREAD * 100, color="red", linestyle="--", linewidth=1, label="15%: loosen the budget first")
    axes[0].set_ylabel("re-read rate (% of reads)")
    axes[0].set_title("Re-read rate (mean over trials)", fontsize=10)
    axes[0].legend(fontsize=8)
    bars = axes[1].bar(x, s["cache_hit_ratio"] * 100, color="tab:blue")
    axes[1].bar_label(bars, labels=[f"{v:.0%}" for v in s["cache_hit_ratio"]], fontsize=8)
    axes[1].set_ylabel("cache-hit ratio (% of input tokens cached)")
    axes[1].set_title("Cache-hit ratio (cached / input tokens)", fontsize=10)
    for ax in axes:
        ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3, axis="y")
    note = _suffix(trials) if trials is not None else ""
    fig.suptitle("Re-reads and prefix-cache hits per configuration" + note, fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def trial_curve(curve: pd.DataFrame, events: pd.DataFrame, budget: int, ax=None, title: str = ""):
    """One trial's token curve with its strategy events marked (vertical lines, labelled); returns the axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4.5))
    ax.plot(curve["step"], curve["request_tokens"], marker=".", linewidth=1.4, label="request tokens (agent step)")
    if "history_tokens" in curve:
        ax.plot(curve["step"], curve["history_tokens"], color="grey", linewidth=1, linestyle=":",
                label="full history tokens (messages only; what `none` would keep)")
    ax.axhline(budget, color="red", linestyle="--", linewidth=1.2, label=f"budget {format_budget(int(budget))}")
    names = sorted(events["name"].unique()) if not events.empty else []
    colors = dict(zip(names, plt.cm.Set1(np.linspace(0, 1, max(len(names), 1)))))
    for name in names:
        steps = sorted(events.loc[events["name"] == name, "step"].unique())
        for k, step in enumerate(steps):
            ax.axvline(step, color=colors[name], alpha=0.35, linewidth=1, label=f"strategy event: {name}" if k == 0 else None)
    ax.set_xlabel("agent step")
    ax.set_ylabel("tokens")
    _tokens_axis(ax)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    if title:
        ax.set_title(title, fontsize=10)
    return ax

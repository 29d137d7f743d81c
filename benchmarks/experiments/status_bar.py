"""Preset status_bar: at most 3 calls per merchant, with and without the status bar (source 002 exp 2-8)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .claims import claims, judge, verdict_row, verdict_table
from .common import NOTE, by_cell, cells, fmt_int, frac, table, trials

LABELS = {
    "none": "whole history (nothing lost)",
    "headtail": "control A: no status bar (headtail 8K)",
    "status_replace": "arm B: status bar, replace (headtail 8K)",
    "status_append": "arm B: status bar, append (headtail 8K)",
}
HEADER = [
    "arm",
    "success",
    "mean score",
    "mean violations (4th+ calls)",
    "trials with a violation",
    "max calls to one merchant",
    "mean input tok",
    "peak context",
    "steps",
]


def _row(cell: str, g: pd.DataFrame) -> list[str]:
    """One arm."""
    return [
        f"`{cell}` {LABELS.get(cell, '')}",
        f"{int(g['success'].sum())}/{len(g)}",
        f"{g['score'].mean():.2f}",
        f"{g['call_violations'].mean():.1f}",
        f"{int((g['call_violations'] > 0).sum())}/{len(g)}",
        f"{g['max_calls_per_merchant'].max():.0f}",
        fmt_int(g["input_tokens"].mean()),
        fmt_int(g["peak_context"].mean()),
        f"{g['steps'].mean():.0f}",
    ]


def status_bar(results: Path) -> str:
    """Call-limit violations per arm."""
    t = trials("status_bar", results)
    rows = [_row(cell, t[t["cell"] == cell]) for cell in cells(t, list(LABELS))]
    return table(HEADER, rows) + (
        f"\n\n{NOTE} Source 002 exp 2-8 (Qwen3-0.6B, qualitative): without the status bar the model often breaks "
        "the 3-call limit; with it, it keeps to it."
    )


def _without_bar(a: pd.DataFrame) -> tuple:
    """headtail without the bar: does the trimmed agent break the limit?"""
    broken = int((a["call_violations"] > 0).sum())
    ours = f"headtail 8K: {a['call_violations'].mean():.1f} violations a trial, {broken}/{len(a)} trials with one"
    reason = (
        "the trimmed agent cannot count a merchant's earlier calls"
        if broken
        else "the agent's ledger restates every merchant's calls so far (as the calibration LLM's did), so a cut "
        "cannot make it place a 4th call; the published observation was on Qwen3-0.6B"
    )
    claim = claims("status_bar")["no_bar.breaks_limit"]
    return verdict_row(claim, ours, judge(claim, broken, reason=reason))


def _with_bar(c: dict[str, pd.DataFrame], bars: list[str]) -> tuple:
    """The two status-bar arms."""
    v = {k: int((c[k]["call_violations"] > 0).sum()) for k in bars}
    ours = ", ".join(f"{k}: {v[k]}/{len(c[k])} trials with a violation, success {frac(c[k])}" for k in bars)
    claim = claims("status_bar")["bar.keeps_limit"]
    return verdict_row(
        claim, ours, judge(claim, sum(v.values()), reason="the bar restates the count per merchant every step")
    )


def status_bar_verdict(results: Path) -> str:
    """Source 002 exp 2-8: the 3-call limit with and without the status bar."""
    c = by_cell(trials("status_bar", results))
    rows = [_without_bar(c["headtail"])] if "headtail" in c else []
    bars = [k for k in ("status_replace", "status_append") if k in c]
    if bars:
        rows.append(_with_bar(c, bars))
    return verdict_table(rows)

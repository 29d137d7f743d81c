"""What every table module shares: the trial rows of a preset's sweep and the markdown formatting."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent.parent
for _path in (ROOT, ROOT / "benchmarks"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from harness.analysis import load_trials, run_dirs  # noqa: E402

RESULTS = ROOT / "results" / "experiments"
NOTE = (
    "Reference agent (scripted, not an LLM), profile perfect (the noise-free instrument); means per trial over "
    "every instance x trial of the cell."
)
NOTE_REALISTIC = (
    "Reference agent (scripted, not an LLM), profile realistic (batching, seeded variation, attention "
    "model; docs/reference_agent.md); means per trial over every instance x trial of the cell."
)


def trials(name: str, results: Path, curves: bool = False) -> pd.DataFrame:
    """The trial rows of preset ``name``'s sweep under ``results``, with a ``cell`` column (the job's folder)."""
    folder = results / name
    if not folder.exists():
        raise SystemExit(f"{folder}: no results; run: python -m harness run -m experiment={name}")
    rows = load_trials(run_dirs([folder]), curves=curves)
    rows["cell"] = rows["run_dir"].map(lambda p: Path(p).name.split("-", 1)[-1])
    return rows


def cells(rows: pd.DataFrame, order: list[str]) -> list[str]:
    """The cells of ``rows`` in ``order`` first, then any others in the order they appear."""
    present = list(dict.fromkeys(rows["cell"]))
    return [c for c in order if c in present] + [c for c in present if c not in order]


def by_cell(rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``rows`` split by cell."""
    return {cell: g for cell, g in rows.groupby("cell")}


def fmt_int(x: float) -> str:
    """``x`` rounded, with thousands separators."""
    return f"{x:,.0f}"


def pct(x: float) -> str:
    """``x`` as a whole percentage."""
    return f"{100 * x:.0f}%"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def col(frame: pd.DataFrame, name: str, default: float = 0):
    """Column ``name`` of ``frame`` with gaps filled, or ``default`` when there is no such column."""
    return frame[name].fillna(default) if name in frame else default


def rate(g: pd.DataFrame) -> float:
    """Success rate of ``g`` (nan when empty)."""
    return float(g["success"].mean()) if len(g) else float("nan")


def frac(g: pd.DataFrame) -> str:
    """``successes/trials`` of ``g``."""
    return f"{int(g['success'].sum())}/{len(g)}"


def outcomes(g: pd.DataFrame) -> str:
    """The outcomes of ``g`` with their counts, most frequent first."""
    return ", ".join(f"{k} {v}" for k, v in g["outcome"].value_counts().items())


def tokens(g: pd.DataFrame) -> float:
    """Mean input tokens of every call of a trial."""
    return float(g["total_input_tokens"].mean())


def pricing(rows: pd.DataFrame) -> str:
    """The pricing presets of ``rows``."""
    return ", ".join(sorted(set(map(str, rows.get("pricing", ["none"])))))

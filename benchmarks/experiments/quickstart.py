"""The README's main job (``run strategy=headtail budget=25k``): its console output as a table block."""

from __future__ import annotations

from pathlib import Path

QUICKSTART = ("strategy=headtail", "budget=25k")
RUNS = "results/runs"  # the CLI writes a run to RUNS/<folder_name of its config>


def quickstart(results: Path) -> str:
    """The console output of the main job, as the README shows it."""
    path = results / "quickstart.txt"
    if not path.exists():
        raise SystemExit(f"{path}: no results; run: python benchmarks/experiments_table.py --run")
    return "```console\n$ .venv/bin/python -m harness run " + " ".join(QUICKSTART) + "\n" + path.read_text() + "\n```"

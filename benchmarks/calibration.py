"""The reference agent beside a frontier-class LLM on the calibration trajectories.

    python benchmarks/calibration.py [--profile realistic|perfect|both] [--trials 1]

``shared/calibration/`` (beside this checkout) holds five runs of an LLM written by ctxbench
itself; its README lists each run's overrides. This script runs the reference agent with the
same overrides (same families, sizes, seeds, strategies and budgets) and prints, per run, its
steps, input tokens, reads, re-reads and success beside the LLM's, with the ratios
(reference / LLM). It also prints the default-size comparison the issue recorded
(failure_memory under headtail at 25k; the LLM's figures come from a run outside
shared/calibration and are quoted, with their source, in ``DEFAULT_SIZE_LLM``).

Targets (read off the output, not asserted here; tests/test_calibration.py asserts them):
with ``realistic``, steps and input tokens within 1.5x of the LLM's on every run, and success
wherever the LLM succeeded.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from _common import ROOT, compose  # noqa: E402  (puts the repository on sys.path)

CALIBRATION = ROOT.parent / "shared" / "calibration"
FIELDS = ("steps", "input_tokens", "reads", "rereads", "success")
# failure_memory at default size under headtail 25k, seed 0: the LLM's figures as recorded in the
# issue that introduced profiles (issue 12/13 text; the run's records are not in shared/calibration)
DEFAULT_SIZE_LLM = {"steps": 4, "input_tokens": 61_000, "success": True}
DEFAULT_SIZE_OVERRIDES = ("task=failure_memory", "suite.instances=1", "trials=1", "strategy=headtail", "budget=25k")


@dataclass
class CalibrationRun:
    """One LLM trajectory: its folder and the overrides that reproduce its configuration."""

    folder: str
    overrides: list[str]


def calibration_runs(directory: Path = CALIBRATION) -> list[CalibrationRun]:
    """The runs listed in the calibration README's table, with the common overrides."""
    text = (directory / "README.md").read_text(encoding="utf-8")
    common = re.search(r"Common overrides: `([^`]*)`", text)
    base = common.group(1).split() if common else []
    runs, previous = [], []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        folder = cells[0].strip("`")
        task = previous if cells[1] == "same" else cells[1].strip("`").split("` `")[0].split()
        previous = task
        runs.append(CalibrationRun(folder, [*base, *task, f"strategy={cells[2].strip('`')}",
                                            f"budget={cells[3].strip('`')}"]))
    return runs


def llm_row(directory: Path, folder: str) -> dict:
    """The LLM's trial row of one calibration run."""
    return json.loads((directory / folder / "trials.jsonl").read_text(encoding="utf-8").splitlines()[0])


def run_reference(overrides: list[str], profile: str, trials: int, out: Path) -> list[dict]:
    """Run the reference agent with ``overrides`` under ``profile``; its trial rows."""
    from harness.runner import execute

    cfg = compose(*overrides, f"trials={trials}", f"model.profile={profile}", "progress=false")
    execute(cfg, out, echo=lambda _: None)
    return [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]


def mean(rows: list[dict], key: str) -> float:
    """Mean of ``key`` over ``rows`` (success as a share)."""
    return sum(float(r[key]) for r in rows) / len(rows)


def comparison_row(label: str, llm: dict, ours: list[dict]) -> list[str]:
    """One line of the table: LLM, reference agent and ratio for steps and input tokens; reads; success."""
    cells = [label]
    for key in ("steps", "input_tokens"):
        value = mean(ours, key)
        cells += [f"{llm[key]:,}", f"{value:,.1f}" if key == "steps" else f"{value:,.0f}", f"{value / llm[key]:.2f}"]
    cells.append(f"{llm.get('reads', '-')}/{llm.get('rereads', '-')} vs {mean(ours, 'reads'):.1f}/{mean(ours, 'rereads'):.1f}")
    cells.append(f"{'yes' if llm['success'] else 'no'} vs {mean(ours, 'success'):.0%}")
    return cells


HEADER = ["run", "LLM steps", "ref steps", "ratio", "LLM input tok", "ref input tok", "ratio",
          "reads/re-reads (LLM vs ref)", "success (LLM vs ref)"]


def table(rows: list[list[str]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def calibrate(profile: str, trials: int, directory: Path = CALIBRATION) -> list[list[str]]:
    """The comparison rows of every calibration run under ``profile``."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, run in enumerate(calibration_runs(directory)):
            ours = run_reference(run.overrides, profile, trials, Path(tmp) / str(index))
            rows.append(comparison_row(run.folder, llm_row(directory, run.folder), ours))
    return rows


def default_size(profile: str, trials: int) -> list[str]:
    """failure_memory, default size, headtail 25k: the recorded LLM figures beside the reference agent's."""
    with tempfile.TemporaryDirectory() as tmp:
        ours = run_reference(list(DEFAULT_SIZE_OVERRIDES), profile, trials, Path(tmp))
    llm = {**DEFAULT_SIZE_LLM, "reads": "-", "rereads": "-"}
    return comparison_row("failure_memory default size, headtail 25k (LLM figures as recorded)", llm, ours)


def main(argv: list[str] | None = None) -> int:
    """Print the calibration tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="both", choices=["realistic", "perfect", "both"])
    parser.add_argument("--trials", type=int, default=1, help="reference-agent trials per run (realistic varies)")
    parser.add_argument("--calibration", type=Path, default=CALIBRATION)
    args = parser.parse_args(argv)
    if not (args.calibration / "README.md").exists():
        print(f"{args.calibration}: no calibration trajectories", file=sys.stderr)
        return 2
    for profile in (["realistic", "perfect"] if args.profile == "both" else [args.profile]):
        rows = calibrate(profile, args.trials, args.calibration) + [default_size(profile, args.trials)]
        print(f"## reference agent, profile {profile} (scripted, not an LLM), {args.trials} trial(s) per run\n")
        print(table(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

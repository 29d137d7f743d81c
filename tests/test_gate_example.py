"""docs/regression_gate.md's worked example: the gate fails a candidate that loses success, passes one that only
saves tokens and one that wins success at a higher cost (a trade-off), and fails the loser among several candidates
(issues 34 and 35, on ``late_question``). Runs the page's commands and checks the exit codes and every line the page
quotes between its ``<!-- gate-example:NAME -->`` markers."""

from __future__ import annotations

import pytest

import re
from pathlib import Path

from tests.test_cli import ROOT, harness

DOC = ROOT / "docs" / "regression_gate.md"
RUNS = {"none": ("none", "1M"), "headtail": ("headtail", "8k"), "clear": ("clear_tool_results", "8k")}
COMPARISONS = {  # the page's name of each comparison: its runs (base first) and its exit code
    "headtail": (("none", "headtail"), 1),
    "clear": (("none", "clear"), 0),
    "tradeoff": (("headtail", "none"), 0),
    "three": (("none", "headtail", "clear"), 1),
}


def quoted(name: str) -> list[str]:
    """The lines the page quotes for comparison ``name`` (inside its markers and code fence)."""
    pattern = rf"<!-- gate-example:{name} -->\n```text\n(.*?)```\n<!-- /gate-example:{name} -->"
    block = re.search(pattern, DOC.read_text(), re.S)
    assert block, f"docs/regression_gate.md has no gate-example:{name} block"
    return [line for line in block.group(1).splitlines() if line.strip()]


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_the_gate_fails_a_success_loss_and_passes_a_token_saving(tmp_path: Path):
    for folder, (strategy, budget) in RUNS.items():
        result = harness(
            "run", "--fresh", "task=late_question", f"strategy={strategy}", f"budget={budget}", "suite.instances=8",
            "trials=1", "progress=false", "plots=false", f"hydra.run.dir=results/gate/{folder}", cwd=tmp_path,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-2000:]
    text = DOC.read_text()
    for name, (runs, exit_code) in COMPARISONS.items():
        folders = [f"results/gate/{run}" for run in runs]
        assert f"compare {' '.join(folders)} --fail-on-regression" in text, name  # the page shows the command
        result = harness("compare", *folders, "--fail-on-regression", cwd=tmp_path)
        assert result.returncode == exit_code, (name, result.stdout, result.stderr)
        for line in quoted(name):
            assert line in result.stdout.splitlines(), (name, line, result.stdout)

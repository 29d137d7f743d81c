"""docs/regression_gate.md's worked example: the gate fails a candidate that loses success and passes one that only
saves tokens (issue 34, on ``late_question``). Runs the page's commands and checks the exit codes and every line the
page quotes between its ``<!-- gate-example:NAME -->`` markers."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_cli import ROOT, harness

DOC = ROOT / "docs" / "regression_gate.md"
RUNS = {"none": ("none", "1M"), "headtail": ("headtail", "8k"), "clear": ("clear_tool_results", "8k")}


def quoted(name: str) -> list[str]:
    """The lines the page quotes for comparison ``name`` (inside its markers and code fence)."""
    pattern = rf"<!-- gate-example:{name} -->\n```text\n(.*?)```\n<!-- /gate-example:{name} -->"
    block = re.search(pattern, DOC.read_text(), re.S)
    assert block, f"docs/regression_gate.md has no gate-example:{name} block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_gate_fails_a_success_loss_and_passes_a_token_saving(tmp_path: Path):
    for folder, (strategy, budget) in RUNS.items():
        result = harness(
            "run", "--fresh", "task=late_question", f"strategy={strategy}", f"budget={budget}", "suite.instances=6",
            "trials=1", "progress=false", "plots=false", f"hydra.run.dir=results/gate/{folder}", cwd=tmp_path,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-2000:]
    for candidate, exit_code in (("headtail", 1), ("clear", 0)):
        result = harness(
            "compare", "results/gate/none", f"results/gate/{candidate}", "--fail-on-regression", cwd=tmp_path
        )
        assert result.returncode == exit_code, (candidate, result.stdout, result.stderr)
        for line in quoted(candidate):
            assert line in result.stdout.splitlines(), (candidate, line, result.stdout)

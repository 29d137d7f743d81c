"""``python -m harness report`` / ``compare`` in subprocesses, and the notebooks executed by nbclient."""

import json
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.test_cli import harness

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "results" / "fixtures" / "smoke-1500"


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_report_on_a_sweep_folder(tmp_path):
    sweep = tmp_path / "sweep"
    shutil.copytree(FIXTURE, sweep)
    result = harness("report", str(sweep), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "sliding_window" in result.stdout and "success [95% CI]" in result.stdout
    assert "not an LLM" in result.stdout
    md = (sweep / "summary.md").read_text()
    assert "| none |" in md and "monotonic:6" in md and "pass^2" in md and "reference agent, not an LLM" in md
    for name in ("sawtooth.png", "cumulative_input.png", "pareto.png", "reread_cache.png"):
        assert (sweep / "plots" / name).stat().st_size > 10_000, name
    assert (sweep / "summary.csv").exists()


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_report_several_runs_with_out(tmp_path):
    result = harness(
        "report", str(FIXTURE / "none"), str(FIXTURE / "headtail"), "--out", str(tmp_path / "out"), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "summary.md").exists() and (tmp_path / "out" / "plots" / "pareto.png").exists()


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@pytest.mark.parametrize("command", ["report", "compare"])
def test_unknown_path_is_one_line_exit_2(tmp_path, command):
    args = [str(tmp_path / "nope")] if command == "report" else [str(FIXTURE / "none"), str(tmp_path / "nope")]
    result = harness(command, *args, cwd=tmp_path)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "nope" in lines[0], result.stderr


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_compare_gate(tmp_path):
    worse = harness(
        "compare", str(FIXTURE / "none"), str(FIXTURE / "sliding_window"), "--fail-on-regression", cwd=tmp_path
    )
    assert worse.returncode == 1, worse.stdout + worse.stderr
    assert "REGRESSION" in worse.stdout and "McNemar exact p=0.0312" in worse.stdout
    same = harness(
        "compare", str(FIXTURE / "headtail"), str(FIXTURE / "headtail"), "--fail-on-regression", cwd=tmp_path
    )
    assert same.returncode == 0, same.stdout + same.stderr
    assert "verdict: OK" in same.stdout
    informational = harness("compare", str(FIXTURE / "none"), str(FIXTURE / "sliding_window"), cwd=tmp_path)
    assert informational.returncode == 0 and "verdict: REGRESSION" in informational.stdout
    ambiguous = harness("compare", str(FIXTURE), str(FIXTURE / "none"), cwd=tmp_path)
    assert ambiguous.returncode == 2 and "several values" in ambiguous.stderr


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_run_writes_new_summary_columns(tmp_path):
    run = tmp_path / "run"
    result = harness(
        "run",
        "suite=smoke",
        "strategy=sliding_window",
        "budget=1500",
        "trials=1",
        "progress=false",
        f"hydra.run.dir={run}",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    header = (run / "summary.csv").read_text().splitlines()[0].split(",")
    for col in ("success_ci_low", "pass^1", "total_input_tokens_ci_high", "cache_hit_ratio", "curve_shapes"):
        assert col in header, col
    assert (run / "plots" / "token_curve.png").exists() and (run / "plots" / "cumulative_input.png").exists()
    again = harness("compare", str(run), str(run), "--fail-on-regression", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@pytest.mark.parametrize("name", ["compare_strategies.ipynb", "token_curves.ipynb"])
def test_notebook_executes_on_the_fixture(name, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}
    )
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "no figure shown"


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_plots_false_writes_records_and_summary_but_no_plots(tmp_path):
    from harness.runner import execute
    from tests.helpers import compose

    for plots, folder in ((False, tmp_path / "without"), (True, tmp_path / "with")):
        execute(
            compose("suite=smoke", "task=invoice_audit", "trials=1", "progress=false", f"plots={str(plots).lower()}"),
            folder,
            echo=lambda _: None,
        )
        assert (folder / "summary.csv").exists() and (folder / "trials.jsonl").exists()
        assert (folder / "plots" / "token_curve.png").exists() == plots


def test_compare_labels_the_counts_base_first_with_three_decimals(tmp_path):
    result = harness("compare", str(FIXTURE / "none"), str(FIXTURE / "sliding_window"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if " pairs: " in line)
    assert re.search(r"pairs: successes base \d+, candidate \d+ \(base-only \d+, candidate-only \d+; McNemar", line), (
        line
    )
    assert re.search(r"success diff \(candidate - base\) [+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]$", line), line


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_compare_json_holds_every_figure_and_keeps_the_exit_code(tmp_path):
    text = harness("compare", str(FIXTURE / "none"), str(FIXTURE / "sliding_window"), cwd=tmp_path).stdout
    result = harness(
        "compare",
        str(FIXTURE / "none"),
        str(FIXTURE / "sliding_window"),
        "--json",
        "--fail-on-regression",
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["verdict"] == "REGRESSION" and data["regression"] is True and data["alpha"] == 0.05
    assert data["base"] in text and data["candidate"] in text
    stratum = data["strata"][0]
    assert f"successes base {stratum['base_successes']}, candidate {stratum['cand_successes']}" in text
    assert f"{stratum['success_diff']:+.3f} [{stratum['success_diff_ci_low']:+.3f}" in text
    assert {"pairs", "mcnemar_p", "input_ratio", "cost_ratio", "reasons"} <= set(stratum)
    same = harness("compare", str(FIXTURE / "headtail"), str(FIXTURE / "headtail"), "--json", cwd=tmp_path)
    assert same.returncode == 0 and json.loads(same.stdout)["verdict"] == "OK"

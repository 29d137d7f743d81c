"""``python -m harness compare BASE CAND [CAND ...]`` and ``report`` end to end in subprocesses: the N-run form with
its tables, Holm-adjusted verdicts and exit codes; pairing refused (exit 2, one line) when the same instance ids were
generated with different family knobs; report folders named for their inputs, never overwriting another report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.test_cli import harness

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "results" / "fixtures" / "smoke-1500"


def smoke_run(folder: Path, *overrides: str) -> Path:
    """A one-instance smoke run (every family, reference agent) into ``folder``."""
    result = harness(
        "run", "--fresh", "suite=smoke", "budget=1500", "trials=1", "progress=false", "plots=false",
        f"hydra.run.dir={folder}", *overrides, cwd=folder.parent,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return folder


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_compare_refuses_instances_of_different_family_knobs(tmp_path):
    base = smoke_run(tmp_path / "base", "strategy=none")
    cand = smoke_run(tmp_path / "cand", "strategy=headtail")
    knob = smoke_run(tmp_path / "knob", "strategy=none", "suite.families.callback_search.functions_per_file=3")
    assert harness("compare", base, cand, cwd=tmp_path).returncode == 0
    for args in ((base, knob), (base, cand, knob)):
        result = harness("compare", *args, "--fail-on-regression", cwd=tmp_path)
        assert result.returncode == 2, result.stdout
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert lines == [
            "ctxbench: error: compare: callback_search instances differ in functions_per_file (2 in base, 3 in knob): "
            "not the same instances"
        ], result.stderr


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_three_runs_print_arms_families_holm_verdicts_and_the_frontier(tmp_path):
    runs = [str(FIXTURE / name) for name in ("none", "headtail", "sliding_window")]
    result = harness("compare", *runs, "--fail-on-regression", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr  # alone each loss is p=0.031: not after Holm
    out = result.stdout.splitlines()
    assert out[:3] == ["base:        none@1.5k", "candidate 1: headtail@1.5k", "candidate 2: sliding_window@1.5k"]
    for needle in (
        "arm                  trials  success [95% CI]  cost $  $/success  input tok  re-read  compactions",
        "none@1.5k (base)          6  6/6 [0.61, 1.00]  0.0000     0.0000      7,673       0%          0.0",
        "family         none@1.5k  headtail@1.5k  sliding_window@1.5k",
        "invoice_audit        6/6            0/6                  0/6",
        "headtail@1.5k against none@1.5k:",
        "Pareto frontier (success vs input tokens per trial: every arm costs 0):",
        "verdicts against none@1.5k:",
        "verdict: OK",
    ):
        assert needle in out, (needle, result.stdout)
    assert "(McNemar p Holm-adjusted over the candidates: 0.0625)" in result.stdout
    assert "not after Holm's correction over 2 candidates (p=0.0625): run more instances" in result.stdout
    alone = harness("compare", runs[0], runs[2], "--fail-on-regression", cwd=tmp_path)
    assert alone.returncode == 1 and alone.stdout.splitlines()[-1] == "verdict: REGRESSION"


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_three_runs_as_json(tmp_path):
    runs = [str(FIXTURE / name) for name in ("none", "headtail", "sliding_window")]
    data = json.loads(harness("compare", *runs, "--json", cwd=tmp_path).stdout)
    assert data["base"] == "none@1.5k" and data["candidates"] == ["headtail@1.5k", "sliding_window@1.5k"]
    assert [a["arm"] for a in data["arms"]] == ["none@1.5k", "headtail@1.5k", "sliding_window@1.5k"]
    assert {"success_ci_low", "cost_per_success", "mean_total_input_tokens", "reread_rate"} <= set(data["arms"][0])
    assert [c["candidate"] for c in data["comparisons"]] == data["candidates"]
    stratum = data["comparisons"][0]["strata"][0]
    assert stratum["mcnemar_p"] == pytest.approx(0.03125) and stratum["p_adjusted"] == pytest.approx(0.0625)
    assert stratum["verdict"] == "no detectable difference" and stratum["regression"] is False
    assert {p["arm"] for p in data["pareto"] if p["frontier"]} == {"none@1.5k", "sliding_window@1.5k"}
    assert data["verdict"] == "OK" and "strata" not in data  # the two-run keys only with one candidate


def copy_runs(root: Path, *names: str) -> None:
    """The fixture's runs ``names`` copied into ``root``."""
    for name in names:
        shutil.copytree(FIXTURE / name, root / name)


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_reports_of_different_runs_go_to_different_folders(tmp_path):
    runs = tmp_path / "results" / "runs"
    copy_runs(runs, "none", "headtail", "sliding_window")
    first = harness("report", "results/runs/none", "results/runs/headtail", cwd=tmp_path)
    second = harness("report", "results/runs/sliding_window", "results/runs/none", cwd=tmp_path)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    a, b = runs / "report-headtail+none", runs / "report-none+sliding_window"
    assert (a / "summary.md").exists() and (b / "summary.md").exists() and not (runs / "summary.md").exists()
    assert json.loads((a / "report_inputs.json").read_text()) == {"inputs": ["../headtail", "../none"]}
    assert f"wrote {a / 'summary.md'}" in first.stdout
    again = harness("report", "results/runs/headtail", "results/runs/none", cwd=tmp_path)  # same inputs: rewritten
    assert again.returncode == 0, again.stderr
    clash = harness("report", "results/runs/none", "results/runs/headtail", "--out", str(b), cwd=tmp_path)
    lines = [line for line in clash.stderr.splitlines() if line.strip()]
    assert clash.returncode == 2 and len(lines) == 1, clash.stderr
    assert "holds a report of other runs (../none, ../sliding_window); give another --out" in lines[0]


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_default_folder_of_other_runs_gets_a_distinct_name(tmp_path):
    copy_runs(tmp_path / "x", "none", "headtail")
    copy_runs(tmp_path / "y", "none")
    shutil.copytree(FIXTURE / "sliding_window", tmp_path / "y" / "headtail")  # same names, other runs
    assert harness("report", "x/none", "x/headtail", cwd=tmp_path).returncode == 0
    other = harness("report", "y/none", "y/headtail", cwd=tmp_path)
    assert other.returncode == 0, other.stderr
    reports = sorted(p.name for p in (tmp_path / "results" / "reports").iterdir())
    assert len(reports) == 2 and reports[0] == "headtail+none" and reports[1].startswith("headtail+none-")
    held = json.loads((tmp_path / "results" / "reports" / reports[1] / "report_inputs.json").read_text())
    assert held["inputs"] == ["../../../y/headtail", "../../../y/none"]

"""Hydra sweeps: basic, joblib and submitit launchers; one readable folder per job, named by its config."""

import importlib.util
import re

import pytest

from harness.records import read_jsonl
from tests.test_cli import harness

SMALL = ["suite=smoke", "task=call_budget", "task.merchants=4", "task.noise=2"]  # one small trial per job

LAUNCHERS = [
    [],
    ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"],
    pytest.param(
        ["hydra/launcher=local_processes"],
        marks=[
            pytest.mark.skipif(
                importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is None,
                reason="hydra-submitit-launcher not installed",
            ),
            pytest.mark.slow,  # a process per job (5 s); the basic and joblib launchers run by default
        ],
    ),
]


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@pytest.mark.parametrize("launcher", LAUNCHERS, ids=["basic", "joblib", "submitit_local"])
def test_sweep_writes_one_folder_per_job(tmp_path, launcher):
    sweep = tmp_path / "sweep"
    result = harness(
        "run",
        "-m",
        "strategy=none,headtail",
        "budget=3k",
        *SMALL,
        "trials=1",
        "progress=false",
        "plots=false",
        *launcher,
        f"hydra.sweep.dir={sweep}",
        cwd=tmp_path,
    )  # one small family: the launcher is tested
    assert result.returncode == 0, result.stderr[-2000:]
    jobs = sorted(p.name for p in sweep.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert [re.sub(r"-[0-9a-f]{10}$", "-<hash>", j) for j in jobs] == [
        "headtail-3k-call_budget-<hash>",
        "none-3k-call_budget-<hash>",
    ]
    for job in jobs:
        rows = read_jsonl(sweep / job / "trials.jsonl")
        assert rows and {r["strategy"] for r in rows} == {job.split("-")[0]}
    assert "sweep done" in result.stdout and "success [95% CI]" in result.stdout


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_sweep_folder_is_named_by_the_sweep_and_a_rerun_resumes(tmp_path):
    """No hydra.sweep.dir: results/sweeps/<swept keys>-<hash>; the same sweep spelled differently resumes there."""
    common = [*SMALL, "trials=1", "progress=false", "plots=false"]
    first = harness("run", "-m", "strategy=none,headtail", "budget=3k,8k", *common, cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    sweeps = list((tmp_path / "results" / "sweeps").iterdir())
    assert len(sweeps) == 1 and re.fullmatch(r"budget-3k\.8k_strategy-headtail\.none-[0-9a-f]{10}", sweeps[0].name)
    assert len([p for p in sweeps[0].iterdir() if (p / "trials.jsonl").exists()]) == 4
    again = harness("run", "-m", "budget=8000,3K", "strategy=headtail,none", *common, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    assert list((tmp_path / "results" / "sweeps").iterdir()) == sweeps
    assert again.stdout.count("trials to run: 0 (already recorded: 1)") == 4

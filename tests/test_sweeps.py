"""Hydra sweeps: basic, joblib and submitit launchers; one readable folder per job."""
import importlib.util

import pytest

from harness.records import read_jsonl
from tests.test_cli import harness

LAUNCHERS = [
    [],
    ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"],
    pytest.param(["hydra/launcher=local_processes"], marks=pytest.mark.skipif(
        importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is None,
        reason="hydra-submitit-launcher not installed")),
]


@pytest.mark.parametrize("launcher", LAUNCHERS, ids=["basic", "joblib", "submitit_local"])
def test_sweep_writes_one_folder_per_job(tmp_path, launcher):
    sweep = tmp_path / "sweep"
    result = harness("run", "-m", "strategy=none,headtail", "budget=3k", "suite=smoke", "trials=1", "progress=false",
                     *launcher, f"hydra.sweep.dir={sweep}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    jobs = sorted(p.name for p in sweep.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert jobs == ["budget-3k_strategy-headtail_suite-smoke", "budget-3k_strategy-none_suite-smoke"]
    for job in jobs:
        rows = read_jsonl(sweep / job / "trials.jsonl")
        assert rows and {r["strategy"] for r in rows} == {job.split("strategy-")[1].split("_suite")[0]}

"""Experiment presets (configs/experiment/): every one composes with Hydra's compose API, names valid
strategies and tasks for every sweep value, and a small variant runs end to end through the CLI."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf, open_dict

from harness.config import CONFIG_DIR, options, register_resolvers, sweep_values
from harness.records import read_jsonl
from harness.runner import _node, build, families_from, settings_from

ROOT = Path(__file__).resolve().parent.parent
PRESETS = options("experiment")
STRATEGIES = {
    (CONFIG_DIR / "strategy" / f"{n}.yaml").read_text().split("_target_:")[1].split()[0] for n in options("strategy")
}


def test_the_issue_presets_exist():
    assert {"review44", "invoice_layers", "compression_six", "status_bar", "cache_pitfalls"} <= set(PRESETS)
    assert {"lost_in_middle", "context_growth", "three_versions", "review44_budget"} <= set(PRESETS)  # issue 16


def sweep_points(name: str) -> list[list[str]]:
    """The override lists of every job the preset's sweep launches (cartesian over its params)."""
    register_resolvers()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[f"experiment={name}"], return_hydra_config=True)
    params = OmegaConf.to_container(cfg.hydra.sweeper.params) or {}
    points = [[]]
    for key, value in params.items():
        points = [p + [f"{key}={v}"] for p in points for v in sweep_values(str(value))]
    return points


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@pytest.mark.parametrize("name", PRESETS)
def test_preset_composes_and_names_valid_strategies_and_tasks(name, tmp_path):
    first = (CONFIG_DIR / "experiment" / f"{name}.yaml").read_text().splitlines()[0]
    assert first == "# @package _global_"
    points = sweep_points(name)
    assert len(points) >= 2, "a preset is a sweep"
    for point in points:
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
            cfg = compose("config", overrides=[f"experiment={name}", *point], return_hydra_config=True)
        assert str(cfg.hydra.sweep.dir) == f"results/experiments/{name}"
        spec = _node(cfg.strategy)
        assert spec["_target_"] in STRATEGIES, spec
        build(spec, "strategy")
        with open_dict(cfg):
            del cfg["hydra"]
        families = families_from(cfg)
        assert families and set(families) <= set(options("task"))
        settings_from(cfg, tmp_path)  # budget, steps, pricing and hooks parse


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_variants_differ_where_the_seed_says():
    def composed(name, *over):
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
            return compose("config", overrides=[f"experiment={name}", *over])

    hook = composed("review44", "variant/review44=headtail_8k")
    nohook = composed("review44", "variant/review44=headtail_8k_nohook")
    assert (hook.strategy.name, hook.budget, hook.hooks.completion_check) == ("headtail", "8k", True)
    assert (nohook.strategy.name, nohook.budget, nohook.hooks.completion_check) == ("headtail", "8k", False)
    assert composed("review44", "variant/review44=isolate").strategy.name == "isolate"
    assert composed("review44").task.files == 44
    bar = composed("status_bar", "variant/status_bar=status_append")
    assert bar.strategy.mode == "append" and bar.strategy.limits.call_merchant == 3
    assert bar.strategy.base._target_ == "strategies.headtail.HeadTail"
    notes = composed("invoice_layers", "variant/invoice_layers=clear_notes")
    assert notes.strategy.base._target_ == "strategies.clear_tool_results.ClearToolResults"
    assert composed("invoice_layers", "variant/invoice_layers=clear_summary").strategy.summarize is True
    assert composed("compression_six").budget == "128k"
    terse = composed("context_growth", "variant/context_growth=sliding_window_terse")
    assert (terse.strategy.name, terse.task.notes_window, terse.task.name) == ("sliding_window", False, "brand_report")
    assert "notes_window" not in composed("context_growth", "variant/context_growth=sliding_window").task
    lim = composed("lost_in_middle", "variant/lost_in_middle=perfect")
    assert (lim.model.profile, lim.trials, list(lim.task.positions)) == ("perfect", 1, [1, 3, 5, 10, 15, 20])
    assert composed("lost_in_middle").model.profile == "realistic"
    assert composed("three_versions", "variant/three_versions=isolation").strategy.name == "isolate"
    assert composed("review44_budget").hooks.completion_check is True


def harness(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env
    )


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_small_preset_variant_runs_end_to_end(tmp_path):
    sweep = tmp_path / "sweep"
    args = [
        "run",
        "-m",
        "experiment=status_bar",
        "variant/status_bar=headtail,status_replace",
        "task.merchants=6",
        "suite.instances=1",
        "progress=false",
        "plots=false",
        f"hydra.sweep.dir={sweep}",
    ]
    result = harness(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    jobs = sorted(p.name for p in sweep.iterdir() if p.is_dir())
    prefix = "suite.instances-1_task.merchants-6_variant_status_bar-"
    assert jobs == [prefix + "headtail", prefix + "status_replace"]
    bar = read_jsonl(sweep / (prefix + "status_replace") / "trials.jsonl")
    assert len(bar) == 1 and bar[0]["strategy"] == "status_bar" and bar[0]["call_violations"] == 0
    again = harness(*args, cwd=tmp_path)  # the fixed sweep dir resumes
    assert again.returncode == 0 and "already recorded: 1" in again.stdout


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_cli_lists_presets_and_validates_variants(tmp_path):
    listed = harness("list", cwd=tmp_path)
    assert all(name in listed.stdout for name in PRESETS)
    bad = harness("run", "experiment=review44", "variant/review44=bogus", cwd=tmp_path)
    assert bad.returncode == 2 and "unknown variant/review44 'bogus'" in bad.stderr
    bad = harness("run", "experiment=nope", cwd=tmp_path)
    assert bad.returncode == 2 and "unknown experiment 'nope'" in bad.stderr

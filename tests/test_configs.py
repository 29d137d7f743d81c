"""Every config composes, and what it configures is built (after lightning-hydra-template's config tests).

1. ``configs/`` composes with plain Hydra in a fresh Python that never imports ``harness``: its resolvers are
   registered by the Hydra plugin hydra_plugins/ctxbench_resolvers, which Hydra imports while it discovers
   plugins. ``${ctxbench_run:}`` names the run folder by the run's identity with the plugin's own naming
   (hydra_plugins/ctxbench_resolvers/_naming.py), so the main config and an experiment preset compose and their
   folders (``hydra.run.dir``, ``hydra.sweep.dir``, the job's ``override_dirname`` and ``subdir``) resolve with
   ``harness`` never imported, to the names the harness gives them.
2. Every option of every config group (each ``configs/<group>/<option>.yaml``, nested groups such as
   ``variant/<preset>/`` and ``hydra/launcher/`` included; ``claims/`` is not a group) composes with the main
   config, and the run's objects are built as a run builds them (harness.runner: the checked ``RunConfig``, the
   strategy, the task families, the model and summarizer with their wrappers), with no network and no server
   started. Where an option cannot be built offline, its target is checked to be an importable class instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from harness.config import CONFIG_DIR, register_resolvers, run_folder_name
from harness.dryrun import job_folder, override_dirname
from harness.identity import RUN_TIME_KEYS
from harness.runner import build, build_families, build_model, families_from, run_config, wrap_model

ROOT = Path(__file__).resolve().parent.parent
NOT_GROUPS = ("claims",)  # configs/claims/: the sources' published claims, read by the verdict tables
# Models that start a local llama-server when built (model=local, local_messages): their class is checked instead.
# The API presets (openai, deepseek, vllm, llamacpp, anthropic, ...) are built: the SDK client and the key are
# only made and read at the first call, so building one sends nothing.
SERVER_MODELS = ("harness.models.local.LocalModel", "harness.models.local.LocalMessagesModel")
# The Ray launcher's configs extend the `ray` config that the hydra-ray-launcher plugin stores (extra `ray`).
RAY_PLUGIN = "hydra_plugins.hydra_ray_launcher"


def config_options() -> list[tuple[str, str]]:
    """(group, option) for every config file of every group, nested groups by their path (``variant/review44``)."""
    return sorted(
        (path.parent.relative_to(CONFIG_DIR).as_posix(), path.stem)
        for path in CONFIG_DIR.rglob("*.yaml")
        if path.parent != CONFIG_DIR and path.relative_to(CONFIG_DIR).parts[0] not in NOT_GROUPS
    )


def overrides_for(group: str, option: str) -> list[str]:
    """The overrides that select ``option``: a preset's variant is selected with its preset."""
    if group.startswith("variant/"):
        return [f"experiment={group.split('/', 1)[1]}", f"{group}={option}"]
    return [f"{group}={option}"]


@pytest.fixture(scope="module")
def compose_config():
    """Hydra's compose API on configs/ (one initialisation for the module), Hydra's own node included."""
    register_resolvers()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        yield lambda overrides: compose("config", overrides=overrides, return_hydra_config=True)


def job_config(cfg: DictConfig) -> DictConfig:
    """``cfg`` without Hydra's node: the config a job gets (as ``compose(..., return_hydra_config=False)``)."""
    with read_write(cfg), open_dict(cfg):
        del cfg["hydra"]
    return cfg


def check_folder_names(cfg: DictConfig) -> None:
    """The resolvers resolve: the run folder (``ctxbench_run``), the sweep's job folder (``ctxbench_run`` or,
    in a preset, ``ctxbench_dirname``) and the keys a job folder's name leaves out (``ctxbench_exclude_keys``)."""
    assert cfg.hydra.run.dir == f"results/runs/{run_folder_name(cfg)}"
    assert cfg.hydra.sweep.subdir
    assert set(RUN_TIME_KEYS) <= set(cfg.hydra.job.config.override_dirname.exclude_keys)


def build_or_check_model(spec: dict, what: str) -> object:
    """The model of ``spec`` built as the runner builds it; a model that would start a server: its class."""
    if spec["_target_"] in SERVER_MODELS:
        return get_class(spec["_target_"])  # offline: the class imports, no llama-server is started
    return build_model(spec, what)


def build_run(cfg: DictConfig) -> None:
    """Build what a run of ``cfg`` builds before its first trial (harness.runner.execute), servers excepted."""
    run = run_config(cfg, Path("unused-run-folder"))  # every setting checked: pricing, cache profile, hooks, plan
    assert build(run.strategy_spec, "strategy") is not None
    assert build_families(run.plan.families)
    model = build_or_check_model(run.model_spec, "model")
    if not isinstance(model, type):
        assert wrap_model(model, run) is not None  # latency, faults (FaultInjecting) and limits
    if run.summarizer_spec is not None:
        assert build_or_check_model(run.summarizer_spec, "summarizer") is not None


def check_launcher(cfg: DictConfig, option: str) -> None:
    """The launcher's class imports and is built from its config (building one starts no job)."""
    launcher = cfg.hydra.launcher
    assert get_class(launcher._target_).__name__.endswith("Launcher")
    if option.startswith("ray_"):
        return  # building the Ray launcher reads $RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER (ray_local): the class is checked
    assert instantiate(launcher) is not None


@pytest.mark.parametrize(("group", "option"), config_options(), ids=lambda value: value)
def test_every_option_composes_and_builds(compose_config, group, option):
    if option.startswith("ray_"):
        pytest.importorskip(RAY_PLUGIN, reason="hydra/launcher=ray_*: the `ray` extra is not installed")
    cfg = compose_config(overrides_for(group, option))
    check_folder_names(cfg)
    if group == "hydra/launcher":
        check_launcher(cfg, option)
    build_run(job_config(cfg))


def test_every_group_is_covered():
    groups = {group.split("/")[0] for group, _ in config_options()}
    assert {"model", "pricing", "suite", "faults", "summarizer", "strategy", "task", "arm", "experiment"} <= groups
    assert {"variant", "hydra"} <= groups


MAIN_SUITES = ("default", "long", "smoke")  # the run's default, issue 13's long size, the tiny one
NOT_IN_SUITES = {"needle"}  # the position-effect family of preset lost_in_middle only (tasks/README.md)


@pytest.mark.parametrize("suite", MAIN_SUITES)
def test_the_main_suites_hold_every_family_and_long_and_smoke_size_each(compose_config, suite):
    """Every configured family (``needle`` aside) is in default, long and smoke; long and smoke give each its sizes,
    which build (issue 34 added late_question, one_shot_queue and latest_value)."""
    families = {path.stem for path in (CONFIG_DIR / "task").glob("*.yaml")} - NOT_IN_SUITES
    cfg = job_config(compose_config([f"suite={suite}"]))
    assert set(cfg.suite.families) == families
    if suite != "default":
        assert set(OmegaConf.load(CONFIG_DIR / "suite" / f"{suite}.yaml").families) == families
    assert set(families_from(cfg)) == families


PRESET = ["experiment=strategy_zoo", "strategy=headtail", "budget=8k", "trials=3"]  # one job of a preset's sweep
PLAIN_HYDRA = """
import json, sys
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

config_dir, preset_overrides = sys.argv[1], json.loads(sys.argv[2])
with initialize_config_dir(config_dir=config_dir, version_base="1.3"):
    cfg = compose(config_name="config", return_hydra_config=True)
    job = OmegaConf.to_container(cfg.hydra.job, resolve=True)
    preset = compose(config_name="config", overrides=preset_overrides, return_hydra_config=True)
    empty = compose(config_name="config", overrides=["experiment=review44"], return_hydra_config=True)
    folders = {
        "exclude_keys": job["config"]["override_dirname"]["exclude_keys"],
        "run_dir": cfg.hydra.run.dir,
        "preset_run_dir": preset.hydra.run.dir,
        "preset_sweep_dir": preset.hydra.sweep.dir,
        "preset_override_dirname": preset.hydra.job.override_dirname,
        "preset_subdir": preset.hydra.sweep.subdir,
        "empty_preset_subdir": empty.hydra.sweep.subdir,
    }
print(json.dumps({**folders, "harness_imported": sorted(m for m in sys.modules if m.split(".")[0] == "harness")}))
"""


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_plain_hydra_composes_and_names_folders_without_the_harness(tmp_path, compose_config):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # a source checkout: hydra_plugins/ is found from the repository
    result = subprocess.run(
        [sys.executable, "-c", PLAIN_HYDRA, str(CONFIG_DIR), json.dumps(PRESET)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    plain = json.loads(result.stdout.splitlines()[-1])
    assert plain["harness_imported"] == []  # composed, and every folder resolved, with no module of harness loaded
    assert plain["exclude_keys"][:2] == ["trials", "progress"] and "hydra/launcher" in plain["exclude_keys"]
    cfg = compose_config([])
    assert plain["run_dir"] == cfg.hydra.run.dir == f"results/runs/{run_folder_name(cfg)}"
    preset = compose_config(PRESET)
    assert plain["preset_run_dir"] == f"results/runs/{run_folder_name(preset)}" == "results/runs/headtail-8k-20de97ec8f"
    assert plain["preset_sweep_dir"] == preset.hydra.sweep.dir == "results/experiments/strategy_zoo"
    assert plain["preset_override_dirname"] == override_dirname(preset, PRESET) == "budget=8k,strategy=headtail"
    sweep_dir = Path(plain["preset_sweep_dir"])
    assert sweep_dir / plain["preset_subdir"] == Path(job_folder(preset, sweep_dir, PRESET))  # harness.dryrun's name
    assert plain["preset_subdir"] == "budget-8k_strategy-headtail"
    assert plain["empty_preset_subdir"] == "defaults"  # ${ctxbench_dirname:} of an empty override list


AFTER_THE_PLUGIN_SCAN = """
import sys
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from harness.budget import BudgetError, parse_budget
from harness.config import config_dict
from harness.errors import UsageError

with initialize_config_dir(config_dir=sys.argv[1], version_base="1.3"):  # Hydra scans hydra_plugins/ now
    compose(config_name="config")
try:
    parse_budget("lots")
except BudgetError:
    print("BudgetError caught")
try:
    config_dict(OmegaConf.create({"extra": "???"}))
except UsageError as exc:
    print(exc)
"""


def test_the_harness_catches_the_plugins_errors_after_hydra_scans_its_plugins(tmp_path):
    """Hydra's plugin scan executes hydra_plugins' modules again (not those named ``_*``): the error classes
    the harness imported from the plugin must still be the ones raised."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", AFTER_THE_PLUGIN_SCAN, str(CONFIG_DIR)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["BudgetError caught", "extra has no value (set it: extra=...)"]

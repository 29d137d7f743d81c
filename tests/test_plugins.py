"""Strategies and task families from outside the repository, end to end through the CLI (offline).

The example plugin (examples/plugin) is "installed" into a temporary site folder the way pip lays
it out: the package plus a ``.dist-info`` with its entry points, taken from its pyproject.toml.
"""

import shutil
import tomllib
from pathlib import Path

import pytest

from harness.records import read_jsonl
from tests.test_cli import ROOT, harness

PLUGIN = ROOT / "examples" / "plugin"
SMOKE = ["suite=smoke", "trials=1", "progress=false"]


def install(site: Path, entry_points: bool = True) -> Path:
    """Copy the plugin package into ``site``; with ``entry_points``, also its dist-info (as pip would)."""
    shutil.copytree(PLUGIN / "elide_plugin", site / "elide_plugin")
    if entry_points:
        project = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]
        info = site / "elide_plugin-0.1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
        )
        groups = project["entry-points"]
        (info / "entry_points.txt").write_text(
            "".join(
                f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n" for group, eps in groups.items()
            )
        )
    return site


def run(tmp_path, site, *args):
    return harness("run", *args, "plots=false", cwd=tmp_path, pythonpath=[site])  # the tests read no plots


def only_run_rows(tmp_path) -> list[dict]:
    runs = list((tmp_path / "results" / "runs").iterdir())
    assert len(runs) == 1, runs
    return read_jsonl(runs[0] / "trials.jsonl")


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_class_path_with_parameters(tmp_path):
    site = install(tmp_path / "site", entry_points=False)
    result = run(tmp_path, site, "strategy=elide_plugin:Elide", "strategy.keep=3", "budget=8k", *SMOKE)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = only_run_rows(tmp_path)
    assert rows and {r["strategy"] for r in rows} == {"elide_plugin:Elide"}
    assert {str(r["strategy_params"]) for r in rows} == {str({"keep": 3})}


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_entry_points_of_an_installed_package(tmp_path):
    site = install(tmp_path / "site")
    listed = harness("list", cwd=tmp_path, pythonpath=[site])
    assert "elide_plugin:Elide (entry point" in listed.stdout and "tiny_invoices" in listed.stdout
    result = run(tmp_path, site, "strategy=elide", "strategy.keep=4", "task=tiny_invoices", "task.pages=5", *SMOKE)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = only_run_rows(tmp_path)
    assert {r["strategy"] for r in rows} == {"elide"} and {r["family"] for r in rows} == {
        "invoice_audit"
    }  # a subclass: its instances say so
    assert all(r["instance_id"].startswith("invoice_audit-p5-") for r in rows)


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_config_folder_outside_the_repo(tmp_path):
    site = install(tmp_path / "site", entry_points=False)
    from harness.plugins import plugin_entry_points

    if "elide" not in plugin_entry_points("strategy"):  # unless examples/README.md's route 3 installed the plugin here
        unknown = run(tmp_path, site, "strategy=elide", *SMOKE)
        assert unknown.returncode == 2 and "unknown strategy 'elide'" in unknown.stderr
    result = run(tmp_path, site, "strategy=elide", f"hydra.searchpath=[file://{PLUGIN / 'configs'}]", *SMOKE)
    assert result.returncode == 0, result.stderr[-2000:]
    assert {r["strategy"] for r in only_run_rows(tmp_path)} == {"elide"}


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@pytest.mark.parametrize(
    "args,needle",
    [
        (
            ["strategy=elide_plugin:Elide", "strategy.keep=foo"],
            "strategy.keep=foo: elide_plugin:Elide's parameter keep takes an integer (default 2)",
        ),
        (["strategy=elide_plugin:Nope"], "cannot import elide_plugin:Nope: AttributeError"),
        (
            ["strategy=elide_plugin:Elide", "strategy.nope=1"],
            "strategy elide_plugin:Elide has no parameter 'nope' (its parameters: keep)",
        ),
    ],
)
def test_bad_plugin_input_is_one_line_exit_2(tmp_path, args, needle):
    site = install(tmp_path / "site", entry_points=False)
    result = run(tmp_path, site, *args, *SMOKE)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1 and needle in lines[0], result.stderr
    assert not (tmp_path / "results").exists()

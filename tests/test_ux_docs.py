"""Small things: folder names from identity, the docs' interpreter and gate size, where reports land."""

import pytest
import re
import shutil

from harness.analysis import mcnemar_exact
from harness.identity import folder_name, sweep_folder_name
from tests.test_cli import ROOT, harness

BASE = {
    "strategy": {"name": "headtail", "_target_": "strategies.headtail.HeadTail", "min_recent_rounds": 1},
    "budget": "25k",
    "seed": 0,
    "trials": 2,
    "progress": True,
    "suite": {"name": "default"},
}


def test_folder_name_ignores_spelling_and_run_time_knobs():
    names = {
        folder_name({**BASE, "budget": b, "trials": t, "progress": p})
        for b in ("25k", "25K", "25000", 25000)
        for t in (1, 3)
        for p in (True, False)
    }
    assert len(names) == 1 and re.fullmatch(r"headtail-25k-[0-9a-f]{10}", names.pop())
    assert folder_name({**BASE, "seed": 1}).startswith("headtail-25k-seed1-")
    assert folder_name(BASE) != folder_name({**BASE, "strategy": {**BASE["strategy"], "min_recent_rounds": 2}})


def test_sweep_folder_name_ignores_order_and_spelling():
    a = sweep_folder_name(BASE, {"strategy": ["none", "headtail"], "budget": ["8k", "25k"]})
    b = sweep_folder_name(BASE, {"budget": ["25000", "8K"], "strategy": ["headtail", "none"]})
    assert a == b and re.fullmatch(r"budget-8k\.25k_strategy-headtail\.none-[0-9a-f]{10}", a)


USER_DOCS = [
    "README.md",
    "docs/running.md",
    "docs/reports.md",
    "docs/regression_gate.md",
    "docs/sweeps.md",
    "docs/caching_and_faults.md",
    "docs/backends.md",
    "docs/inspect.md",
    "docs/importing.md",
]


def test_readme_runs_the_venv_interpreter():
    """The README and the pages it moved to docs/ run ``.venv/bin/python``, never a bare ``python``."""
    for doc in USER_DOCS:
        text = (ROOT / doc).read_text()
        bare = [
            line for line in text.splitlines() if re.search(r"(?<![/\w.])(python|pip) (-m|install|benchmarks/)", line)
        ]
        assert not bare, (doc, bare)


def test_readme_gate_is_large_enough_for_14_of_28_vs_18_of_28():
    """At the rates of 18/28 vs 14/28 (4 of 28 pairs lost, none won), McNemar exact p < 0.05 needs the gate's pairs."""
    text = (ROOT / "docs" / "regression_gate.md").read_text()
    gate = re.search(r"name: Context-strategy regression gate.*?```", text, re.S).group(0)
    instances = {int(n) for n in re.findall(r"suite\.instances=(\d+)", gate)}
    assert len(instances) == 1 and "trials=1" in gate and "results/gate/" in gate
    default = (ROOT / "configs" / "suite" / "default.yaml").read_text()
    pairs = instances.pop() * len(re.findall(r"^  - /task@families\.", default, re.M))  # families of the default suite
    assert mcnemar_exact(4, 0) > 0.05  # 28 pairs cannot show it
    assert mcnemar_exact(round(4 * pairs / 28), 0) < 0.05


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_gate_and_reports_are_ignored_and_multi_run_reports_land_under_results(tmp_path):
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert "gate/" in ignored and "reports/" in ignored and "results/*" in ignored
    fixture = ROOT / "results" / "fixtures" / "smoke-1500"
    for name in ("none", "headtail"):
        shutil.copytree(fixture / name, tmp_path / "runs" / name)
    result = harness("report", "runs/none", "runs/headtail", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "results" / "reports" / "headtail+none" / "summary.md").exists()
    assert not (tmp_path / "runs" / "summary.md").exists()


def test_every_benchmark_says_how_long_it_takes():
    text = (ROOT / "benchmarks" / "README.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    scripts = {p.name for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_")}
    for script in scripts:
        row = next((r for r in rows if r.startswith(f"| `{script}")), None)
        assert row is not None and re.search(r"\d+ (s|min)|seconds|under a second", row.split("|")[-2]), script

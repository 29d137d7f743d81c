"""The core never imports inspect_ai (an optional extra): not to load, not to run a trial, not to import a CSV.

A subprocess blocks ``inspect_ai`` (any import of it raises), imports every core module, runs a
trial through ctxbench's own loop with a strategy, and imports a CSV; then ``inspect_ai`` must not
be in ``sys.modules``. The adapter's cost cannot reach ctxbench's own runs.
"""

from __future__ import annotations

import pytest

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import importlib, pkgutil, sys, tempfile
    from pathlib import Path

    class Block:
        def find_spec(self, name, path=None, target=None):
            if name == "inspect_ai" or name.startswith("inspect_ai."):
                raise ImportError("inspect_ai is blocked in this test")
            return None

    sys.meta_path.insert(0, Block())
    import harness, strategies
    skipped = {"harness.integrations.inspect", "harness.integrations.inspect_messages",
               "harness.integrations.inspect_log", "harness.integrations.inspect_export", "harness.__main__"}
    for package in (harness, strategies):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name not in skipped:
                importlib.import_module(info.name)
    sys.path.insert(0, "benchmarks")
    from step_overhead import GrowingTask, InstantModel
    from harness.trial import TrialSettings, run_trial
    from harness.records import RunWriter
    from strategies.headtail import HeadTail
    with tempfile.TemporaryDirectory() as tmp:
        writer = RunWriter(Path(tmp))
        settings = TrialSettings(budget=4000, max_steps=12, strategy_name="headtail", strategy_params={},
                                 model_name="i")
        row = run_trial(trial_id="t", trial_index=0, instance=GrowingTask(), strategy=HeadTail(), model=InstantModel(),
                        summarizer=None, settings=settings, writer=writer)
        writer.close()
        assert row["steps"] == 12 and row["compactions"] > 0, row
        csv = Path(tmp) / "r.csv"
        csv.write_text("config,instance,outcome\\na,i1,1\\nb,i1,0\\n", encoding="utf-8")
        from harness.cli import dispatch
        from harness.errors import UsageError
        assert dispatch(["import", str(csv), "--format", "csv", "--out", str(Path(tmp) / "o")]) == 0
        try:
            dispatch(["import", str(csv), "--format", "inspect-log", "--out", str(Path(tmp) / "o2")])
        except UsageError as exc:
            assert "needs the inspect extra" in str(exc), exc
        else:
            raise AssertionError("inspect-log imported without inspect_ai")
    try:
        import harness.integrations.inspect
    except ImportError:
        pass  # the adapter needs the extra: only it
    else:
        raise AssertionError("the adapter imported without inspect_ai")
    loaded = sorted(m for m in sys.modules if m.startswith("inspect_ai"))
    assert not loaded, loaded
    print("core ok without inspect_ai")
""")


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_core_runs_with_inspect_ai_blocked():
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "core ok without inspect_ai" in result.stdout

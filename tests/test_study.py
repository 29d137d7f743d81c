"""A study: a sweep whose preset declares ``study: {baseline: ARM}`` ends with the decision.

1. ``run -m experiment=strategy_question`` (here on the smoke suite, one trial per instance) prints, after the
   sweep's table, what ``compare arm-none arm-clear60 arm-sum100`` prints: the per-arm table, success per family,
   each arm's verdict against none and the Pareto frontier; it writes the runs' report, with the Pareto plot
   (cost per trial on x), into the sweep folder's ``study/``; the ``study`` block is not in a run's identity.
2. A verdict never changes the exit code: a study whose candidate the gate fails still ends normally.
3. A sweep without a study prints none (tests/test_arms.py runs one); a study block of another shape is one line.
"""

from __future__ import annotations

import json
import shutil

import pytest

from harness.cli import study_baseline
from harness.config import compose
from harness.errors import UsageError
from harness.report import print_study
from tests.test_cli import ROOT, harness

ARMS = ("arm-none_suite-smoke", "arm-clear60_suite-smoke", "arm-sum100_suite-smoke")


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_the_study_preset_ends_with_the_comparison_and_the_pareto_plot(tmp_path):
    sweep = tmp_path / "sq"
    args = ["experiment=strategy_question", "suite=smoke", "trials=1", "progress=false", f"hydra.sweep.dir={sweep}"]
    result = harness("run", "-m", *args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout.split("\nstudy: ", 1)[1]
    assert out.startswith(f"the arms against none, as `compare {' '.join(ARMS)}` prints it")
    lines = out.splitlines()
    assert any(line.startswith("arm ") and "$/success" in line for line in lines)  # the per-arm table
    for arm in ("none@1M (base)", "clear60@1M", "sum100@1M"):
        assert any(line.startswith(arm) and "10/10 [" in line for line in lines), arm
    assert "success per family (successes/trials):" in lines
    assert any(line.split() == ["invoice_audit", "1/1", "1/1", "1/1"] for line in lines)
    assert "verdicts against none@1M:" in lines
    assert "  clear60@1M: no detectable difference at this sample size -> OK" in lines
    assert "Pareto frontier (success vs cost per trial):" in lines
    assert (sweep / "study" / "plots" / "pareto.png").stat().st_size > 0
    assert f"Pareto plot (success against cost per trial): {sweep / 'study' / 'plots' / 'pareto.png'}" in out
    ident = json.loads((sweep / ARMS[0] / "identity.json").read_text())
    assert "study" not in ident and ident["strategy"]["name"] == "none"


def test_a_verdict_never_fails_the_study(tmp_path, capsys):
    fixture = ROOT / "results" / "fixtures" / "smoke-1500"
    runs = [shutil.copytree(fixture / name, tmp_path / name) for name in ("headtail", "none")]
    print_study(runs, "none", tmp_path, plots=False)  # the gate fails headtail against none: printed, not raised
    out = capsys.readouterr().out
    assert "study: the arms against none, as `compare none headtail` prints it" in out
    assert out.rstrip().endswith("verdict: REGRESSION") and not (tmp_path / "study").exists()
    print_study(runs, "sum100", tmp_path, plots=False)
    refused = "study: no comparison: study.baseline=sum100: 0 of the sweep's 2 run folders ran it"
    assert refused in capsys.readouterr().out


def test_the_study_block_is_declared_by_the_preset_and_checked():
    assert study_baseline(compose(["experiment=strategy_question"])) == "none"
    assert study_baseline(compose([])) is None
    assert study_baseline(compose(["experiment=strategy_question", "study.baseline=clear60"])) == "clear60"
    with pytest.raises(UsageError, match=r"must be \{baseline: ARM\}") as caught:
        study_baseline(compose(["experiment=strategy_question", "+study.arms=2"]))
    assert "\n" not in str(caught.value)

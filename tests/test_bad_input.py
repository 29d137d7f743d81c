"""Bad input is one line and exit code 2, and leaves no folder behind (issue 22 §5)."""

from __future__ import annotations

import json

import pytest

from harness.config import SETTINGS, SettingError, check_settings
from tests.test_cli import SMOKE1, harness


def one_line_exit_2(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and lines[0].startswith("ctxbench: error: "), result.stderr
    return lines[0]


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@pytest.mark.parametrize(
    "override,needle",
    [
        ("seed=abc", "seed=abc must be an integer"),
        ("trials=abc", "trials=abc must be an integer"),
        ("workers=0", "workers=0 must be at least 1"),
        ("workers=-2", "workers=-2 must be at least 1"),
        ("progress=maybe", "progress=maybe must be true or false"),
        ("latency_s=nan", "latency_s=nan must be a finite number"),
        ("max_cost=-1", "max_cost=-1 must be at least 0"),
        ("--frseh", "unknown option --frseh for run"),
    ],
)
def test_a_bad_setting_or_option_is_one_line_and_no_folder(tmp_path, override, needle):
    line = one_line_exit_2(harness("run", *SMOKE1, override, cwd=tmp_path))
    assert needle in line
    assert not (tmp_path / "results").exists()


def test_a_misspelt_option_gets_a_suggestion(tmp_path):
    assert "did you mean --fresh?" in one_line_exit_2(harness("run", "--frseh", cwd=tmp_path))


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_every_value_of_a_sweep_is_checked(tmp_path):
    assert "workers=0 must be at least 1" in one_line_exit_2(harness("run", "-m", *SMOKE1, "workers=1,0", cwd=tmp_path))
    assert not (tmp_path / "results").exists()


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_the_preflight_names_the_preset_the_user_chose(tmp_path):
    line = one_line_exit_2(harness("run", *SMOKE1, "model=vllm", "model.base_url=http://127.0.0.1:9/v1", cwd=tmp_path))
    assert line.startswith("ctxbench: error: model vllm: cannot reach"), line


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_folder_that_cannot_be_written_is_one_line(tmp_path):
    (tmp_path / "blocker").write_text("a file where a folder should be")
    line = one_line_exit_2(harness("run", *SMOKE1, "hydra.run.dir=blocker/run", cwd=tmp_path))
    assert "blocker is a file, not a folder" in line
    run = [*SMOKE1, "task=call_budget", "hydra.run.dir=run"]
    assert harness("run", *run, cwd=tmp_path).returncode == 0
    assert "a file is in the way" in one_line_exit_2(harness("report", "run", "--out", "blocker/report", cwd=tmp_path))
    assert "a file is in the way" in one_line_exit_2(harness("view", "run", "--out", "blocker/v.html", cwd=tmp_path))


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_report_on_records_that_are_not_ours_is_one_line(tmp_path):
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "trials.jsonl").write_text(json.dumps({"id": 1, "score": 0.5}) + "\n")
    line = one_line_exit_2(harness("report", "theirs", cwd=tmp_path))
    assert "row 1 is not a ctxbench trial row (no trial_id" in line
    assert "not a ctxbench trial row" in one_line_exit_2(harness("report", str(tmp_path), cwd=tmp_path))


@pytest.mark.parametrize("flag,value", [("--tolerance", "-1"), ("--tolerance", "1.5"), ("--alpha", "0")])
def test_compare_refuses_a_tolerance_or_alpha_out_of_range(tmp_path, flag, value):
    line = one_line_exit_2(harness("compare", "a", "b", flag, value, cwd=tmp_path))
    assert f"compare: {flag} {float(value):g} must be" in line


def test_every_declared_setting_is_in_the_main_config():
    from harness.config import UNSET, compose, setting_value

    config = compose(["faults=flaky"])  # the main config with its defaults (suite, hooks) and a faults preset
    missing = [key for key in SETTINGS if setting_value(config, key) is UNSET]
    assert not missing, f"declared settings the config does not have: {missing}"
    check_settings(config)  # the defaults pass their own checks
    with pytest.raises(SettingError):
        check_settings({"trials": 2.5})
    with pytest.raises(SettingError):
        check_settings({"workers": True})

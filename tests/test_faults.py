"""Fault injection: retries recover, garbage goes back to the model, exhausted retries are model_error,
a raising strategy is strategy_error, and the run goes on in every case."""

import pytest
from harness.records import read_jsonl, read_transcript, transcript_files
from harness.runner import execute
from tests.helpers import compose
from tests.test_cli import SMOKE_FAMILIES, harness

SMOKE = ("suite=smoke", "trials=2", "strategy=headtail", "budget=3k", "progress=false", "plots=false")


def outcomes(run_dir):
    return {r["trial_id"]: (r["outcome"], r["success"]) for r in read_jsonl(run_dir / "trials.jsonl")}


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_flaky_provider_changes_no_outcome_and_garbage_is_sent_back(tmp_path):
    execute(compose(*SMOKE), tmp_path / "clean", echo=lambda _: None)
    execute(compose(*SMOKE, "faults=flaky"), tmp_path / "flaky", echo=lambda _: None)
    assert outcomes(tmp_path / "flaky") == outcomes(tmp_path / "clean"), "retries recover every transient fault"
    nudges = 0
    for path in transcript_files(tmp_path / "flaky" / "transcripts").values():
        for event in read_transcript(path):
            if event["event"] == "message" and "cut off" in str(event["message"].get("content", "")):
                nudges += 1
    assert nudges > 0, "garbled replies come back to the model as an error it can correct"
    steps_clean = sum(r["steps"] for r in read_jsonl(tmp_path / "clean" / "trials.jsonl"))
    steps_flaky = sum(r["steps"] for r in read_jsonl(tmp_path / "flaky" / "trials.jsonl"))
    assert steps_flaky > steps_clean


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_flaky_runs_are_deterministic(tmp_path):
    for name in ("a", "b"):
        execute(compose(*SMOKE, "faults=flaky"), tmp_path / name, echo=lambda _: None)

    def strip(rows):
        return [{k: v for k, v in r.items() if k not in ("wall_s", "started_at", "run")} for r in rows]

    assert strip(read_jsonl(tmp_path / "a" / "trials.jsonl")) == strip(read_jsonl(tmp_path / "b" / "trials.jsonl"))


def test_a_provider_that_is_down_ends_each_trial_as_model_error_and_the_run_goes_on(tmp_path):
    execute(compose(*SMOKE, "faults=down"), tmp_path / "down", echo=lambda _: None)
    rows = read_jsonl(tmp_path / "down" / "trials.jsonl")
    assert len(rows) == 2 * SMOKE_FAMILIES and {r["outcome"] for r in rows} == {"model_error"}
    assert "gave up after 3 attempts" in rows[0]["error"]


def test_a_raising_strategy_is_strategy_error_and_the_run_goes_on(tmp_path):
    cfg = compose(
        "suite=smoke",
        "trials=1",
        "progress=false",
        "plots=false",
        "strategy=none",
        "strategy._target_=tests.helpers.RaisingStrategy",
    )
    execute(cfg, tmp_path / "r", echo=lambda _: None)
    rows = read_jsonl(tmp_path / "r" / "trials.jsonl")
    assert len(rows) == SMOKE_FAMILIES
    assert {r["outcome"] for r in rows if r["steps"] >= 4} == {"strategy_error"}
    assert all("strategy bug" in r["error"] for r in rows if r["outcome"] == "strategy_error")


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_bad_fault_config_is_one_line_exit_2(tmp_path):
    result = harness("run", "faults=flaky", "faults.timeout=2", cwd=tmp_path)
    assert result.returncode == 2 and "faults:" in result.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "results").exists()

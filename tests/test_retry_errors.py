"""``run --retry-errors`` re-runs only the trials that ended in an error and loses nothing;
``--fail-on-error`` makes such a run exit 1 (issue 22 §4)."""

from __future__ import annotations

import json

import pytest

from harness.records import read_jsonl, transcript_path
from harness.retry_errors import error_counts, retry_outcomes, set_aside_errors
from tests.test_cli import SMOKE1, VOLATILE, harness


def stable(rows):
    return [{k: v for k, v in row.items() if k not in VOLATILE} for row in rows]


def forge_outage(run_dir, index=0, outcome="model_error"):
    """Make trial ``index`` of ``run_dir`` look as if the provider had failed it."""
    rows = read_jsonl(run_dir / "trials.jsonl")
    rows[index] = {**rows[index], "outcome": outcome, "success": False, "error": "HTTP 500 (forged)"}
    (run_dir / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows[index]["trial_id"]


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_retry_errors_reruns_only_the_failed_trial_and_keeps_its_first_records(tmp_path):
    run = [*SMOKE1, "task=call_budget", f"hydra.run.dir={tmp_path / 'run'}"]
    assert harness("run", *run, cwd=tmp_path).returncode == 0
    run_dir = tmp_path / "run"
    original = read_jsonl(run_dir / "trials.jsonl")
    original_steps = read_jsonl(run_dir / "steps.jsonl")
    failed = forge_outage(run_dir)

    plain = harness("run", *run, "--fail-on-error", cwd=tmp_path)
    assert "trials to run: 0" in plain.stdout, "without the flag a failed trial is final"
    assert plain.returncode == 1 and "1 trials ended in an error (1 model_error)" in plain.stderr

    retried = harness("run", *run, "--retry-errors", "--fail-on-error", cwd=tmp_path)
    assert retried.returncode == 0, retried.stderr
    assert "retrying 1 trials (1 model_error)" in retried.stdout and "trials to run: 1" in retried.stdout
    assert stable(read_jsonl(run_dir / "trials.jsonl")) == stable(original), "the same trial, recorded again"
    assert stable(read_jsonl(run_dir / "steps.jsonl")) == stable(original_steps)
    aside = run_dir / "retried" / "1"
    assert [r["trial_id"] for r in read_jsonl(aside / "trials.set-aside.jsonl")] == [failed]
    assert read_jsonl(aside / "trials.set-aside.jsonl")[0]["error"] == "HTTP 500 (forged)"
    assert {s["trial_id"] for s in read_jsonl(aside / "steps.set-aside.jsonl")} == {failed}
    assert transcript_path(aside, failed) == aside / "transcripts" / f"{failed}.jsonl.gz"


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_fail_on_error_exits_1_when_the_provider_is_down(tmp_path):
    down = harness("run", *SMOKE1, "task=call_budget", "faults=down", "--fail-on-error", cwd=tmp_path)
    assert down.returncode == 1
    assert (
        down.stderr.strip().splitlines()[-1].startswith("--fail-on-error: 1 trials ended in an error (1 model_error)")
    )


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_retry_errors_refuses_other_outcomes_and_fresh(tmp_path):
    assert retry_outcomes("--retry-errors") == ("model_error",)
    assert retry_outcomes("--retry-errors=model_error,strategy_error") == ("model_error", "strategy_error")
    with pytest.raises(ValueError):
        retry_outcomes("--retry-errors=step_limit")
    for bad in (["--retry-errors=submitted"], ["--retry-errors", "--fresh"]):
        result = harness("run", *SMOKE1, *bad, cwd=tmp_path)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "results").exists()


def trial_row(trial_id: str, outcome: str) -> dict:
    """The least a trial row holds (harness.record_schema.TrialRecord)."""
    return {"trial_id": trial_id, "family": "f", "strategy": "s", "budget": 1, "outcome": outcome,
            "success": False, "input_tokens": 0}  # fmt: skip


def test_set_aside_keeps_unreadable_lines_and_counts_only_errors(tmp_path):
    lines = [
        json.dumps(trial_row("a", "model_error")),
        "{torn",
        json.dumps(trial_row("b", "strategy_error")),
        json.dumps(trial_row("c", "submitted")),
    ]
    (tmp_path / "trials.jsonl").write_text("\n".join(lines) + "\n")
    assert error_counts(tmp_path) == {"model_error": 1, "strategy_error": 1}
    line = set_aside_errors(tmp_path, ["model_error"])
    assert "retrying 1 trials (1 model_error)" in line
    assert (tmp_path / "trials.jsonl").read_text().splitlines() == lines[1:]
    assert "nothing to retry" in set_aside_errors(tmp_path, ["model_error"])
    assert error_counts(tmp_path) == {"strategy_error": 1}, "the set-aside rows are not counted"

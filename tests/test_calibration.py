"""The realistic reference agent is within 1.5x of the calibration LLM (docs/reference_agent.md).

Runs the reference agent on each calibration run's configuration (shared/calibration, beside the
checkout; skipped when absent) and compares its steps and input tokens with the LLM's recorded
ones, per trial, over 3 trials.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import calibration as cal  # noqa: E402

RUNS = cal.calibration_runs() if (cal.CALIBRATION / "README.md").exists() else []
TOLERANCE = 1.5
TRIALS = 3
RECORDED_ON_AN_OLDER_TASK = {
    "invoice_audit_none": "the LLM read get_invoice_page(page) 1-4 in one turn; issue 13 made the history cursor-"
                          "paginated, so no agent can batch its pages any more (one round per page: 5 steps; "
                          "tests/test_batching_readers.py::test_realistic_profile_on_the_calibration_size_of_invoice_audit)",
}


@pytest.mark.skipif(not RUNS, reason="shared/calibration is not beside this checkout")
@pytest.mark.parametrize("run", RUNS, ids=lambda r: r.folder)
def test_realistic_agent_is_within_tolerance_of_the_llm(run):
    if run.folder in RECORDED_ON_AN_OLDER_TASK:
        pytest.skip(RECORDED_ON_AN_OLDER_TASK[run.folder])
    llm = cal.llm_row(cal.CALIBRATION, run.folder)
    with tempfile.TemporaryDirectory() as tmp:
        ours = cal.run_reference(run.overrides, "realistic", TRIALS, Path(tmp))
    assert len(ours) == TRIALS
    for row in ours:
        for key in ("steps", "input_tokens"):
            ratio = row[key] / llm[key]
            assert 1 / TOLERANCE <= ratio <= TOLERANCE, f"{run.folder} trial {row['trial']}: {key} {row[key]} vs {llm[key]}"
        if llm["success"]:
            assert row["success"], f"{run.folder} trial {row['trial']}: the LLM succeeded, the reference agent did not"


@pytest.mark.skipif(not RUNS, reason="shared/calibration is not beside this checkout")
def test_perfect_agent_reproduces_the_recorded_gap():
    """The instrument before profiles: one call per step, 2.5-3.7x the LLM's steps (the issue's figures)."""
    run = next(r for r in RUNS if r.folder == "call_budget_none")
    with tempfile.TemporaryDirectory() as tmp:
        ours = cal.run_reference(run.overrides, "perfect", 1, Path(tmp))
    # 32,595 since issue 13 (was 32,062): the prompt states the 4-line limit and the transcripts' words changed
    assert ours[0]["steps"] == 13 and ours[0]["input_tokens"] == 32_595

"""The typed record schema (harness/record_schema.py): versions, strict types, legacy folders, reading speed."""

import gzip
import json
import time
from pathlib import Path

import pytest

from harness.record_schema import (
    FORMAT_VERSION,
    LEGACY_VERSION,
    TranscriptEvent,
    problem,
    step_problem,
    trial_problem,
    version_of,
)
from harness.records import (
    read_jsonl,
    read_transcript,
    scan_steps,
    scan_trials,
    transcript_files,
    transcript_problem,
)
from tests.test_cli import ROOT
from tests.test_damaged_records import recorded  # noqa: F401  (the module fixture: one small run)

LEGACY_FOLDERS = [ROOT / "calibration", ROOT / "tests" / "fixtures", ROOT / "results" / "fixtures"]


def a_trial_row(**values) -> dict:
    row = {"trial_id": "t", "family": "f", "strategy": "s", "budget": 8000, "outcome": "submitted", "success": True}
    return {**row, "input_tokens": 10, **values}


def test_every_new_record_carries_the_format_version(recorded):  # noqa: F811
    trials = read_jsonl(recorded / "trials.jsonl")
    steps = read_jsonl(recorded / "steps.jsonl")
    assert trials and steps
    assert {version_of(row) for row in trials + steps} == {FORMAT_VERSION}
    assert all(trial_problem(row) is None for row in trials) and all(step_problem(row) is None for row in steps)
    for path in transcript_files(recorded / "transcripts").values():
        events = read_transcript(path)
        assert events[0]["event"] == "trial_start" and events[0]["format_version"] == FORMAT_VERSION
        assert all(problem(TranscriptEvent, event) is None for event in events)


def test_legacy_folders_read_whole_as_version_1():
    files = [p for folder in LEGACY_FOLDERS for p in folder.rglob("trials.jsonl")]
    assert files, "the committed run folders"
    for path in files:
        trials, steps = scan_trials(path), scan_steps(path.with_name("steps.jsonl"))
        assert (trials.reasons, steps.reasons) == ([], []), path
        assert {version_of(row) for row in trials.rows} == {LEGACY_VERSION}, path
        for transcript in transcript_files(path.parent / "transcripts").values():
            assert transcript_problem(transcript) is None, transcript
            opener = gzip.open if transcript.name.endswith(".gz") else open
            with opener(transcript, "rb") as handle:
                lines = [json.loads(raw) for raw in handle if raw.strip()]
            assert [problem(TranscriptEvent, event) for event in lines] == [None] * len(lines), transcript


@pytest.mark.parametrize(
    "values,why",
    [
        ({"cost": "abc"}, "cost: Input should be a valid number (got 'abc')"),
        ({"total_input_tokens": "many"}, "total_input_tokens: Input should be a valid number"),
        ({"peak_context": None}, "peak_context: Input should be a valid number"),
        ({"success": 1}, "success: Input should be a valid boolean"),
        ({"input_tokens": True}, "input_tokens: Input should be a valid number"),
        ({"trial_id": ""}, "trial_id: String should have at least 1 character"),
        (
            {"format_version": FORMAT_VERSION + 1},
            f"format_version: Input should be less than or equal to {FORMAT_VERSION}",
        ),
        ({"format_version": 0}, "format_version: Input should be greater than or equal to 1"),
    ],
)
def test_a_damaged_value_is_named(values, why):
    assert why in (trial_problem(a_trial_row(**values)) or "")


def test_open_columns_pass_and_required_ones_are_named():
    assert trial_problem(a_trial_row(files_read=3, question_kind="late", max_budget_ratio=None)) is None
    assert trial_problem({"trial_id": "t"}) == "no family, strategy, budget, outcome, success, input_tokens"
    assert trial_problem([1]) == "not a JSON object (list)"
    assert step_problem({"trial_id": "t", "step": 1, "kind": "agent", "request_tokens": "x"}).startswith(
        "request_tokens:"
    )


def test_lines_that_do_not_read_are_named_with_their_line(tmp_path):
    path = tmp_path / "trials.jsonl"
    good = json.dumps(a_trial_row())
    path.write_bytes(
        "\n".join([good, "", '{"trial_id": "x", "cost": NaN}', "[1]"]).encode() + b"\n\xff\xfe\n" + b'{"torn'
    )
    scan = scan_trials(path)
    assert len(scan.rows) == 1 and len(scan.bad) == 4
    assert scan.reasons == [
        "line 3: NaN is not a number a record holds",
        "line 4: not a JSON object (list)",
        "line 5: not UTF-8",
        "line 6: torn last line",
    ]


def test_validation_keeps_reading_a_sweep_fast(tmp_path):
    """A 2,200-trial sweep's rows: validated reading costs less than 10x plain JSON decoding (brief: not 10x)."""
    rows = [a_trial_row(trial_id=f"t{i}", cost=0.1 * i, **{f"col{k}": k for k in range(60)}) for i in range(2200)]
    path = tmp_path / "trials.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))

    def best(read) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            read(path)
            times.append(time.perf_counter() - start)
        return min(times)

    assert len(scan_trials(path).rows) == 2200
    assert best(scan_trials) < 10 * best(read_jsonl)


def test_imported_rows_carry_the_version_and_validate(tmp_path):
    source = tmp_path / "results.csv"
    source.write_text("config,instance,outcome,cost\na,i1,1,0.5\nb,i1,0,0.25\n")
    from harness.importer import cmd_import

    assert cmd_import([str(source)], "csv", out=str(tmp_path / "out")) == 0
    rows = [row for path in Path(tmp_path / "out").rglob("trials.jsonl") for row in read_jsonl(path)]
    assert len(rows) == 2 and all(trial_problem(row) is None and version_of(row) == FORMAT_VERSION for row in rows)

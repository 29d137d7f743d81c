"""Damaged records never crash a command: bad rows are set aside (resume) or skipped (reads) in one line each.

One small run is recorded once (module fixture) and copied per test; each test damages its copy the way
the audit of issue 36 did and checks that nothing ends in a traceback, nothing recorded is lost or
duplicated, and the damage is said in one line.
"""

import gzip
import json
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness import retry_errors
from harness.cli import clear_records, main
from harness.records import (
    CORRUPT,
    RunWriter,
    read_jsonl,
    read_steps,
    read_trials,
    scan_trials,
    transcript_files,
    transcript_problem,
)
from tests.test_cli import harness

ARGS = ["suite=smoke", "task=call_budget", "strategy=headtail", "trials=3", "progress=false", "plots=false"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """A finished run of three trials."""
    root = tmp_path_factory.mktemp("recorded")
    result = harness("run", *ARGS, f"hydra.run.dir={root / 'run'}", cwd=root)
    assert result.returncode == 0, result.stderr
    return root / "run"


@pytest.fixture
def run(recorded, tmp_path) -> Path:
    """A copy of the recorded run to damage."""
    return Path(shutil.copytree(recorded, tmp_path / "run"))


def damage(run: Path, index: int, **values) -> str:
    """Set ``values`` in the ``index``-th trial row (as written, other lines untouched); the trial's id."""
    path = run / "trials.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    row = json.loads(lines[index])
    row.update(values)
    lines[index] = (json.dumps(row) + "\n").encode()
    path.write_bytes(b"".join(lines))
    return row["trial_id"]


def resume(run: Path, *flags: str):
    """Rerun the run's command into its folder (``flags`` such as ``--retry-errors``)."""
    return harness("run", *flags, *ARGS, f"hydra.run.dir={run}", cwd=run.parent)


@dataclass
class Ran:
    """What an in-process command returned and printed."""

    returncode: int
    stdout: str
    stderr: str


def command(capsys, *args: str) -> Ran:
    """A read-only command run in this process (``harness.cli.main``): no interpreter start-up per call."""
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return Ran(code, out.out, out.err)


def warnings(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("warning:")]


def assert_no_traceback(result) -> None:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_damaged_cost_is_set_aside_in_one_line_and_its_trial_runs_again(run, recorded):
    trial_id = damage(run, 1, cost="abc")
    result = resume(run)
    assert result.returncode == 0, result.stderr
    assert_no_traceback(result)
    said = [line for line in warnings(result.stdout) if "trials.jsonl" in line]
    assert len(said) == 1 and "line 2: cost:" in said[0] and "'abc'" in said[0], result.stdout
    rows = read_trials(run / "trials.jsonl")
    assert Counter(r["trial_id"] for r in rows) == Counter(
        r["trial_id"] for r in read_trials(recorded / "trials.jsonl")
    )
    assert [json.loads(line)["cost"] for line in (run / f"trials.jsonl{CORRUPT}").read_text().splitlines()] == ["abc"]
    assert len(read_steps(run / "steps.jsonl")) == len(read_steps(recorded / "steps.jsonl")), "its steps again"
    kept = read_jsonl(run / f"steps.jsonl{CORRUPT}")
    assert kept and {s["trial_id"] for s in kept} == {trial_id}, "the set-aside trial's first steps are kept"
    assert (run / "transcripts" / f"{trial_id}.jsonl.gz{CORRUPT}").exists()
    assert sorted(transcript_files(run / "transcripts")) == sorted(r["trial_id"] for r in rows)


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_row_holding_only_its_trial_id_is_not_done(run, recorded):
    trial_id = damage(run, 0)
    (run / "trials.jsonl").write_text(
        json.dumps({"trial_id": trial_id}) + "\n" + "".join((run / "trials.jsonl").read_text().splitlines(True)[1:])
    )
    result = resume(run)
    assert result.returncode == 0, result.stderr
    assert_no_traceback(result)
    assert any("line 1: no family, strategy" in line for line in warnings(result.stdout)), result.stdout
    assert scan_trials(run / "trials.jsonl").bad == []
    assert sorted(r["trial_id"] for r in read_trials(run / "trials.jsonl")) == sorted(
        r["trial_id"] for r in read_trials(recorded / "trials.jsonl")
    )


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_report_and_compare_skip_a_damaged_row_in_one_line_and_leave_the_file(run, recorded, tmp_path, capsys):
    damage(run, 1, cost="abc")
    damage(run, 2, total_input_tokens="many")
    before = (run / "trials.jsonl").read_bytes()
    report = command(capsys, "report", str(run), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    assert_no_traceback(report)
    said = [line for line in warnings(report.stdout) if "trials.jsonl" in line]
    assert len(said) == 1 and "2 corrupt lines" in said[0] and "line 3: total_input_tokens" in said[0], said
    compare = command(capsys, "compare", str(recorded), str(run))
    assert compare.returncode == 0, compare.stderr
    assert_no_traceback(compare)
    assert len(warnings(compare.stderr)) == 1 and "line 2: cost" in compare.stderr
    as_json = command(capsys, "compare", str(recorded), str(run), "--json")
    json.loads(as_json.stdout)  # the warning goes to stderr: stdout stays one JSON object
    assert (run / "trials.jsonl").read_bytes() == before, "read-only commands leave the records as they are"
    assert not (run / f"trials.jsonl{CORRUPT}").exists()


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_retry_errors_and_fresh_survive_a_line_that_is_not_utf8(run):
    failed = damage(run, 0, outcome="model_error", success=False)
    with (run / "trials.jsonl").open("ab") as handle:
        handle.write(b'{"trial_id": "x\xff\xfe"}\n')
    first = resume(run, "--retry-errors")
    assert first.returncode == 0, first.stderr
    assert_no_traceback(first)
    assert "retrying 1 trials (1 model_error)" in first.stdout
    assert any("not UTF-8" in line for line in warnings(first.stdout))
    second = resume(run, "--retry-errors")
    assert second.returncode == 0 and "nothing to retry" in second.stdout, second.stderr
    aside = [r["trial_id"] for f in (run / "retried").glob("*/trials.set-aside.jsonl") for r in read_jsonl(f)]
    assert aside == [failed], "set aside once, never duplicated"
    ids = Counter(r["trial_id"] for r in read_trials(run / "trials.jsonl"))
    assert len(ids) == 3 and set(ids.values()) == {1}
    with (run / "trials.jsonl").open("ab") as handle:
        handle.write(b'{"trial_id": "y\xff"}\n')
    fresh = resume(run, "--fresh")
    assert fresh.returncode == 0, fresh.stderr
    assert_no_traceback(fresh)
    assert "--fresh: deleted the earlier records of this config (3 trials" in fresh.stdout
    assert len(read_trials(run / "trials.jsonl")) == 3 and scan_trials(run / "trials.jsonl").bad == []


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_corrupt_transcript_is_named_by_view_report_and_compare(run, recorded, tmp_path, capsys):
    path = max(transcript_files(run / "transcripts").values(), key=lambda p: p.stat().st_size)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 8] = bytes(b ^ 0xFF for b in data[middle : middle + 8])
    path.write_bytes(bytes(data))
    assert transcript_problem(path) is not None
    for args, stream in (
        (("view", str(run), "--out", str(tmp_path / "v" / "index.html")), "stderr"),
        (("report", str(run), "--out", str(tmp_path / "report")), "stdout"),
        (("compare", str(recorded), str(run)), "stderr"),
    ):
        result = command(capsys, *args)
        assert result.returncode == 0, result.stderr
        assert_no_traceback(result)
        said = [line for line in warnings(getattr(result, stream)) if "damaged transcript" in line]
        assert len(said) == 1 and path.name in said[0], (args, result.stdout, result.stderr)


def test_a_cut_transcript_is_damaged_and_a_whole_one_is_not(recorded, tmp_path):
    path = next(iter(transcript_files(recorded / "transcripts").values()))
    assert transcript_problem(path) is None
    cut = tmp_path / path.name
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert "cut" in (transcript_problem(cut) or "")
    plain = tmp_path / "old.jsonl"
    plain.write_bytes(gzip.decompress(path.read_bytes())[:-20])
    assert transcript_problem(plain) is not None


def test_a_retry_that_crashes_halfway_is_completed_by_the_next_one(run, monkeypatch):
    failed = damage(run, 0, outcome="model_error", success=False)
    before = {name: (run / name).read_bytes() for name in ("trials.jsonl", "steps.jsonl")}

    def crash(*_args, **_kwargs):
        raise OSError("disk full (injected)")

    monkeypatch.setattr(retry_errors, "write_bytes_atomic", crash)  # after staging, before trials.jsonl changes
    with pytest.raises(OSError):
        retry_errors.set_aside_errors(run, ["model_error"])
    assert {name: (run / name).read_bytes() for name in before} == before, "the records are as they were"
    assert (run / "transcripts" / f"{failed}.jsonl.gz").exists()
    monkeypatch.undo()
    line = retry_errors.set_aside_errors(run, ["model_error"])
    assert "nothing to retry" in line, "the pending retry was completed, not set aside twice"
    assert sorted(p.name for p in (run / "retried").iterdir()) == ["1"]
    assert not (run / "retried" / "1" / retry_errors.PENDING).exists()
    assert failed not in {r["trial_id"] for r in read_trials(run / "trials.jsonl")}
    assert failed not in {r["trial_id"] for r in read_steps(run / "steps.jsonl")}
    assert [r["trial_id"] for r in read_jsonl(run / "retried" / "1" / "trials.set-aside.jsonl")] == [failed]
    assert not (run / "transcripts" / f"{failed}.jsonl.gz").exists()
    assert (run / "retried" / "1" / "transcripts" / f"{failed}.jsonl.gz").exists()


def test_a_staged_retry_that_never_published_leaves_the_folder_as_it_was(run, monkeypatch):
    damage(run, 0, outcome="model_error", success=False)
    before = {name: (run / name).read_bytes() for name in ("trials.jsonl", "steps.jsonl")}
    monkeypatch.setattr(retry_errors, "link_transcripts", lambda *a: (_ for _ in ()).throw(OSError("injected")))
    with pytest.raises(OSError):
        retry_errors.set_aside_errors(run, ["model_error"])
    assert {name: (run / name).read_bytes() for name in before} == before
    monkeypatch.undo()
    assert "retrying 1 trials" in retry_errors.set_aside_errors(run, ["model_error"])
    assert sorted(p.name for p in (run / "retried").iterdir()) == ["1"], "the stale staging folder is gone"


def test_fresh_that_crashes_halfway_leaves_no_trial_done_and_a_rerun_completes_it(run, monkeypatch):
    def crash(path, *args, **kwargs):
        raise OSError("injected")

    monkeypatch.setattr(shutil, "rmtree", crash)
    with pytest.raises(OSError):
        clear_records(run)
    assert not (run / "trials.jsonl").exists(), "trials.jsonl goes first: no trial counts as done"
    monkeypatch.undo()
    assert "--fresh: deleted the earlier records" in clear_records(run)
    assert sorted(p.name for p in run.iterdir()) == sorted(
        p.name for p in run.iterdir() if p.name in (".hydra", "run.lock") or p.name.endswith(".log")
    )


def test_a_bad_step_row_of_a_set_aside_trial_is_kept_aside_once(run):
    trial_id = damage(run, 0, cost="abc")
    path = run / "steps.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    own = [index for index, line in enumerate(lines) if json.loads(line)["trial_id"] == trial_id]
    row = json.loads(lines[own[0]])
    row["step"] = "first"
    lines[own[0]] = (json.dumps(row) + "\n").encode()
    path.write_bytes(b"".join(lines))
    RunWriter(run).close()
    aside = (run / ("steps.jsonl" + CORRUPT)).read_bytes().splitlines()
    assert sorted(aside) == sorted(line.rstrip(b"\n") for line in (lines[index] for index in own))

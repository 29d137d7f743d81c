"""Transcripts (issue 23): gzip, byte-identical for the same config, request refs as deltas, older folders still
read."""

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.analysis import max_resource_reads, trial_events
from harness.records import Transcript, read_jsonl, read_transcript, transcript_files, transcript_path
from harness.runner import execute
from tests.test_cli import ROOT
from tests.helpers import compose

FIXTURE = ROOT / "results" / "fixtures" / "smoke-1500" / "headtail"  # a folder written before transcripts were gzip
SMALL = ("suite=smoke", "trials=1", "strategy=headtail", "budget=3k", "progress=false", "plots=false")


def _run(folder: Path, monkeypatch) -> Path:
    monkeypatch.setattr("harness.trial._now", lambda: "2026-01-01T00:00:00+00:00")  # the one wall-clock field
    execute(compose(*SMALL), folder, echo=lambda _: None)
    return folder


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_transcripts_are_gzip_zcat_readable_and_byte_identical_across_runs(tmp_path, monkeypatch):
    a, b = _run(tmp_path / "a", monkeypatch), _run(tmp_path / "b", monkeypatch)
    files = transcript_files(a / "transcripts")
    assert files and sorted(files) == sorted(r["trial_id"] for r in read_jsonl(a / "trials.jsonl"))
    for trial_id, path in files.items():
        data = path.read_bytes()
        assert path.name == f"{trial_id}.jsonl.gz" and data[:2] == b"\x1f\x8b"
        assert data[4:8] == b"\0\0\0\0", "gzip mtime 0"
        assert data == (b / "transcripts" / path.name).read_bytes(), f"{path.name} differs between two runs"
    assert not list((a / "transcripts").glob("*.jsonl")) and not list((a / "transcripts").glob("*.part"))
    path = next(iter(files.values()))
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    if shutil.which("zcat"):
        assert subprocess.run(["zcat", str(path)], capture_output=True, check=True).stdout.decode("utf-8") == text
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["event"] == "trial_start" and lines[-1]["event"] == "trial_end"
    requests = [e for e in lines if e["event"] == "request"]
    assert requests and all("refs" not in e and {"keep", "add"} <= set(e) for e in requests)
    assert requests[0]["keep"] == 0


def test_request_refs_deltas_expand_to_the_full_lists(tmp_path):
    sent = [["m0", "m1"], ["m0", "m1", "m2", "m3"], ["m0", "m4", "m3"], [], ["m5"], ["m5", "m6"], ["m5", "m6"]]
    transcript = Transcript(tmp_path, "t")
    for step, refs in enumerate(sent, 1):
        transcript.event("message", ref=f"x{step}", message={"role": "user", "content": "hi"})
        transcript.event("request", step=step, refs=refs, tokens=10 * step)
    transcript.event("trial_end", outcome="submitted")
    transcript.commit()
    raw = [json.loads(line) for line in gzip.open(tmp_path / "t.jsonl.gz")]
    deltas = [(e["keep"], e["add"]) for e in raw if e["event"] == "request"]
    assert deltas == [
        (0, ["m0", "m1"]),
        (2, ["m2", "m3"]),
        (1, ["m4", "m3"]),
        (0, []),
        (0, ["m5"]),
        (1, ["m6"]),
        (2, []),
    ]
    events = read_transcript(tmp_path / "t.jsonl.gz")
    requests = [e for e in events if e["event"] == "request"]
    assert [e["refs"] for e in requests] == sent
    assert all("keep" not in e and "add" not in e for e in requests)
    assert [e["tokens"] for e in requests] == [10 * s for s in range(1, 8)]
    assert [e["refs"] for e in read_transcript(tmp_path / "t.jsonl.gz", only=("request",))] == sent
    assert [e["event"] for e in read_transcript(tmp_path / "t.jsonl.gz", only=("trial_end",))] == ["trial_end"]


def test_a_cut_part_reads_up_to_its_last_whole_line(tmp_path):
    transcript = Transcript(tmp_path, "t")
    for i in range(200):
        transcript.event("message", ref=f"m{i}", message={"role": "user", "content": f"message {i} " * 50})
    transcript.commit()
    data = (tmp_path / "t.jsonl.gz").read_bytes()
    (tmp_path / "cut.jsonl.gz").write_bytes(data[: len(data) // 2])
    events = read_transcript(tmp_path / "cut.jsonl.gz")
    assert 0 < len(events) < 200 and [e["ref"] for e in events] == [f"m{i}" for i in range(len(events))]


def test_older_uncompressed_folders_still_read():
    files = transcript_files(FIXTURE / "transcripts")
    assert files and all(p.name.endswith(".jsonl") for p in files.values())
    trial_id = sorted(files)[0]
    assert transcript_path(FIXTURE, trial_id) == files[trial_id]
    events = read_transcript(FIXTURE, trial_id)
    plain = [json.loads(line) for line in files[trial_id].read_text(encoding="utf-8").splitlines() if line.strip()]
    assert events == plain and any(e["event"] == "request" and e["refs"] for e in events)
    assert max_resource_reads(FIXTURE, trial_id) >= 1
    assert len(trial_events(FIXTURE, trial_id)) == sum(e["event"] == "strategy" for e in plain)
    assert read_transcript(FIXTURE, "no-such-trial") == [] and transcript_path(FIXTURE, "no-such-trial") is None


def test_a_gzip_transcript_replaces_an_older_uncompressed_one_of_the_trial(tmp_path):
    (tmp_path / "t.jsonl").write_text('{"event": "trial_start"}\n', encoding="utf-8")
    transcript = Transcript(tmp_path, "t")
    transcript.event("trial_end", outcome="submitted")
    transcript.commit()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl.gz"]
    assert transcript_files(tmp_path) == {"t": tmp_path / "t.jsonl.gz"}


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@pytest.mark.parametrize("kind", ["gz", "plain"])
def test_compare_records_reads_both_kinds(tmp_path, monkeypatch, kind):
    from benchmarks.compare_records import main as compare_records

    a, b = _run(tmp_path / "a" / "run", monkeypatch), _run(tmp_path / "b" / "run", monkeypatch)
    if kind == "plain":  # b as an older folder would hold it: uncompressed, full refs
        for trial_id, path in transcript_files(b / "transcripts").items():
            events = read_transcript(path)
            (b / "transcripts" / f"{trial_id}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
            path.unlink()
    assert compare_records([str(a), str(b)]) == 0


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_resuming_an_older_folder_writes_gzip_beside_its_uncompressed_transcripts(tmp_path, monkeypatch):
    from harness.records import TRIALS, dumps
    from harness.view import write_pages
    from harness.view_data import load_run

    folder = _run(tmp_path / "run", monkeypatch)
    old = {}
    for trial_id, path in transcript_files(folder / "transcripts").items():  # as an older version wrote them
        events = read_transcript(path)
        (folder / "transcripts" / f"{trial_id}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
        path.unlink()
        old[trial_id] = events
    rows = read_jsonl(folder / TRIALS)
    lost = rows[-1]["trial_id"]  # its row never written (a crash after its transcript was renamed): it runs again
    (folder / TRIALS).write_text("".join(dumps(r) + "\n" for r in rows[:-1]), encoding="utf-8")
    _run(folder, monkeypatch)
    files = transcript_files(folder / "transcripts")
    assert sorted(files) == sorted(old) and len(read_jsonl(folder / TRIALS)) == len(rows)
    assert files[lost].name == f"{lost}.jsonl.gz" and not (folder / "transcripts" / f"{lost}.jsonl").exists()
    assert all(p.name.endswith(".jsonl") for t, p in files.items() if t != lost)
    assert all(read_transcript(folder, t) == events for t, events in old.items())
    index, pages = write_pages(folder, load_run(folder), tmp_path / "view" / "index.html")
    assert len(pages) == len(rows)

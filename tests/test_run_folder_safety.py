"""Records and folders (issue 22, section 3): what a rerun, a resume, a second process or a torn line may not do.

1. The response cache never stores an injected reply: a run without faults after one with faults
   holds no injected reply, and a rerun with the same faults replays every model call.
2. A trial starts from an empty store of its own every attempt: what an aborted attempt left
   under ``stores/<trial>`` is gone.
3. One process at a time per run folder: a second one says who holds it, in one line, exit 2.
4. A corrupt or torn line of ``trials.jsonl`` / ``steps.jsonl`` is kept aside in ``<file>.corrupt``
   and said, on the rerun and in ``report``; a done trial's steps are fsynced with its row.
"""

from __future__ import annotations

import pytest

import fcntl
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from harness.models.base import Completion, Usage
from harness.models.faults import GARBAGE_ERROR
from harness.records import dumps, read_jsonl, read_transcript, transcript_files
from harness.runner import execute
from tests.helpers import compose
from tests.test_cli import harness

QUIET = ("progress=false", "plots=false")
ONE = (
    "suite=smoke",
    "task=invoice_audit",
    "task.pages=4",
    "task.invoices_per_page=5",
    "task.duplicates=2",
    "task.max_distance=3",
    "trials=1",
    "budget=3k",
    "strategy=headtail",
    *QUIET,
)


def _run(folder: Path, *overrides: str, lines: list[str] | None = None) -> Path:
    execute(compose(*overrides), folder, echo=(lines.append if lines is not None else (lambda _: None)))
    return folder


def _transcripts_text(folder: Path) -> str:
    return "".join(
        dumps(event) for path in transcript_files(folder / "transcripts").values() for event in read_transcript(path)
    )


# ---------------------------------------------------------------- 1. the cache and injected replies


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_run_without_faults_after_one_with_faults_holds_no_injected_reply(tmp_path):
    cache = f"response_cache={tmp_path / 'responses.sqlite'}"
    cached = (*ONE, "cache_responses=true", cache)
    faulty = _run(tmp_path / "faulty", *cached, "faults=flaky", "faults.garbage=0.4")
    assert GARBAGE_ERROR in _transcripts_text(faulty), "the faulty run got injected replies"

    clean = _run(tmp_path / "clean", *cached)
    assert GARBAGE_ERROR not in _transcripts_text(clean), "an injected reply was replayed into a run without faults"
    steps = read_jsonl(clean / "steps.jsonl")
    assert not all(s["from_cache"] for s in steps), "the run without faults makes fresh calls where the requests differ"
    plain = _run(tmp_path / "plain", *ONE)

    def strip(rows):
        return [(r["trial_id"], r["outcome"], r["success"], r["steps"]) for r in rows]

    assert strip(read_jsonl(clean / "trials.jsonl")) == strip(read_jsonl(plain / "trials.jsonl"))

    again = _run(tmp_path / "again", *cached, "faults=flaky", "faults.garbage=0.4")
    assert all(s["from_cache"] for s in read_jsonl(again / "steps.jsonl")), "the same faults: every call replayed"

    def strip_run(rows):
        volatile = ("wall_s", "started_at", "run", "latency_s", "from_cache", "from_cache_calls")
        # a replayed call costs 0 and keeps what it cost in cost_uncached (the reference agent is priced by default)
        return [{k: v for k, v in r.items() if k not in volatile and not k.endswith("cost")} for r in rows]

    replayed, original = read_jsonl(again / "trials.jsonl"), read_jsonl(faulty / "trials.jsonl")
    assert strip_run(replayed) == strip_run(original)
    assert all(r["cost"] == 0 for r in replayed) and all(r["cost"] > 0 for r in original)
    assert [r["cost_uncached"] for r in replayed] == [r["cost"] for r in original]


def test_the_cache_never_stores_a_reply_marked_injected(tmp_path):
    from harness.models.response_cache import Cached, ResponseStore

    class Garbling:
        name, context_window = "m", 1000

        def complete(self, messages, tools):
            completion = Completion({"role": "assistant", "content": "x"}, Usage())
            completion.injected = True
            return completion

    store = ResponseStore(tmp_path / "r.sqlite")
    Cached(Garbling(), store, {"name": "m"}).complete([{"role": "user", "content": "u"}], [])
    assert len(store) == 0
    store.close()


# ---------------------------------------------------------------- 2. per-trial stores


class MemoryPeek:
    """A model for ``strategy=memory_tool``: views ``/memories``, writes a file there, then submits."""

    is_reference = False

    def __init__(self, name: str = "peek", context_window: int = 131_072) -> None:
        self.name, self.context_window = name, context_window
        self.turn = 0

    def for_trial(self, instance: Any) -> "MemoryPeek":
        return MemoryPeek(self.name, self.context_window)

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        self.turn += 1
        calls = {
            1: ("memory", {"command": "view", "path": "/memories"}),
            2: ("memory", {"command": "create", "path": "/memories/mine.md", "file_text": "attempt 2"}),
        }
        name, args = calls.get(self.turn, ("submit", {"invoice_ids": []}))
        call = {"id": f"c{self.turn}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        return Completion({"role": "assistant", "content": "", "tool_calls": [call]}, Usage())


def test_a_trial_does_not_see_what_an_aborted_attempt_left_in_its_store(tmp_path):
    overrides = (
        *ONE,
        "strategy=memory_tool",
        "model._target_=tests.test_run_folder_safety.MemoryPeek",
        "~model.profile",
        "~model.profile_params",
    )
    from harness.runner import plan

    folder = tmp_path / "run"
    [job], _ = plan(compose(*overrides))
    leftover = folder / "stores" / job.trial_id / "memories"
    leftover.mkdir(parents=True)
    (leftover / "notes.md").write_text("LEFTOVER from aborted attempt 1", encoding="utf-8")
    (folder / "stores" / job.trial_id / "offloaded.txt").write_text("LEFTOVER too", encoding="utf-8")

    _run(folder, *overrides)
    text = _transcripts_text(folder)
    assert "memory" in text and "LEFTOVER" not in text and "notes.md" not in text
    store = folder / "stores" / job.trial_id
    assert sorted(p.relative_to(store).as_posix() for p in store.rglob("*")) == ["memories", "memories/mine.md"]


# ---------------------------------------------------------------- 3. one process per run folder


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_second_process_on_a_held_run_folder_says_who_holds_it_and_exits_2(tmp_path):
    from harness.run_lock import LOCK_FILE, RunFolderBusy, hold_run_folder

    folder = tmp_path / "run"
    args = [*ONE, f"hydra.run.dir={folder}"]
    with hold_run_folder(folder, command="python -m harness run (the first one)"):
        assert (folder / LOCK_FILE).exists()
        second = harness("run", *args, cwd=tmp_path)
        failed: list[BaseException] = []

        def other_thread() -> None:
            try:
                execute(compose(*args[:-1]), folder, echo=lambda _: None)
            except BaseException as exc:  # noqa: BLE001 (the test reads it)
                failed.append(exc)

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert len(failed) == 1 and isinstance(failed[0], RunFolderBusy), failed
        assert f"pid {os.getpid()}" in str(failed[0]), "another thread of this process is refused too"
    assert second.returncode == 2, second.stderr
    lines = [line for line in second.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, second.stderr
    for needle in (str(folder), f"pid {os.getpid()}", socket.gethostname(), "since ", "(the first one)"):
        assert needle in lines[0], (needle, lines[0])
    assert not (folder / "trials.jsonl").exists(), "the second process wrote nothing"

    again = harness("run", *args, cwd=tmp_path)  # released: the same command runs now
    assert again.returncode == 0, again.stderr
    assert len(read_jsonl(folder / "trials.jsonl")) == 1


def test_a_lock_left_by_a_killed_process_is_not_stale(tmp_path):
    from harness.run_lock import LOCK_FILE, hold_run_folder

    folder = tmp_path / "run"
    code = (
        "import sys, os; from pathlib import Path; from harness.run_lock import hold_run_folder\n"
        "with hold_run_folder(Path(sys.argv[1])):\n    print('held', flush=True); os.kill(os.getpid(), 9)"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    killed = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, env=env)
    assert killed.returncode == -9 and "held" in killed.stdout
    assert (folder / LOCK_FILE).exists(), "kill -9 leaves the file"
    with hold_run_folder(folder):  # ... but not the lock
        with hold_run_folder(folder):  # the same thread may nest (a caller holding the folder around execute)
            pass
        with open(folder / LOCK_FILE, "rb") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                raise AssertionError("the lock is not held after the nested block")
            except BlockingIOError:
                pass
    assert not (folder / LOCK_FILE).exists(), "released on exit"


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_config_error_leaves_no_lock_file_and_no_folder(tmp_path):
    result = harness("run", "suite=smoke", "max_cost=-1", f"hydra.run.dir={tmp_path / 'run'}", cwd=tmp_path)
    assert result.returncode == 2
    assert not (tmp_path / "run").exists()


# ---------------------------------------------------------------- 4. corrupt lines


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_corrupt_trial_line_is_kept_aside_and_said_on_rerun_and_in_report(tmp_path, caplog):
    folder = _run(tmp_path / "run", *ONE, "trials=2")
    trials = (folder / "trials.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(trials) == 2
    bad = trials[0][:40] + "\x00garbage" + trials[0][40:]
    (folder / "trials.jsonl").write_text(bad + trials[1], encoding="utf-8")

    lines: list[str] = []
    with caplog.at_level("WARNING", logger="ctxbench"):
        _run(folder, *ONE, "trials=2", lines=lines)
    kept = (folder / "trials.jsonl.corrupt").read_text(encoding="utf-8")
    assert kept == bad, "the bad line is kept, byte for byte"
    said = [line for line in lines if "trials.jsonl.corrupt" in line]
    assert len(said) == 1 and "1 corrupt line" in said[0], lines
    assert any("trials.jsonl.corrupt" in r.getMessage() for r in caplog.records), "and in the run's log"
    assert len(read_jsonl(folder / "trials.jsonl")) == 2, "the trial is run again"

    report = harness("report", str(folder), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert "trials.jsonl.corrupt" in report.stdout + report.stderr


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_torn_last_step_line_is_kept_aside_and_said(tmp_path):
    folder = _run(tmp_path / "run", *ONE)
    steps = folder / "steps.jsonl"
    with steps.open("a", encoding="utf-8") as handle:
        handle.write('{"trial_id": "x", "ste')
    lines: list[str] = []
    _run(folder, *ONE, lines=lines)
    assert (folder / "steps.jsonl.corrupt").read_text(encoding="utf-8") == '{"trial_id": "x", "ste\n'
    assert any("steps.jsonl.corrupt" in line and "1 corrupt line" in line for line in lines), lines
    assert steps.read_text(encoding="utf-8").endswith("\n")
    report = harness("report", str(folder), cwd=tmp_path)
    assert "steps.jsonl.corrupt" in report.stdout + report.stderr


def test_a_done_trials_steps_are_fsynced_with_its_row(tmp_path, monkeypatch):
    import harness.records as records

    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(Path(os.readlink(f"/proc/self/fd/{fd}")).name)
        real_fsync(fd)

    monkeypatch.setattr(records.os, "fsync", fsync)
    _run(tmp_path / "run", *ONE)
    first_trial = synced.index("trials.jsonl")
    assert "steps.jsonl" in synced[:first_trial], f"steps are fsynced before the trial row: {synced}"
    steps = len(read_jsonl(tmp_path / "run" / "steps.jsonl"))
    assert steps > 1 and synced.count("steps.jsonl") == 1, f"one fsync per trial, not one per step: {synced}"

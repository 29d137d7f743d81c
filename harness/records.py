"""Run records: ``trials.jsonl``, ``steps.jsonl`` and ``transcripts/<trial>.jsonl``.

Rows are appended and flushed as they happen, one whole line per ``write`` under a lock,
so concurrent writers never interleave partial lines. A trial's transcript is written
to ``<trial>.jsonl.part`` and renamed when the trial ends; its row in ``trials.jsonl``
is the commit point. On resume, steps and transcripts of trials without a row (the
trial in flight when a run crashed) are discarded, and recorded trials are skipped.
"""
from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any, Iterable

TRIALS = "trials.jsonl"
STEPS = "steps.jsonl"
TRANSCRIPTS = "transcripts"


SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def dumps(row: dict) -> str:
    """One JSON line, stable key order, no NaN, always encodable as UTF-8.

    Text stays readable (``ensure_ascii=False``), except surrogate code points (a model may
    send ``"\\ud800"`` in valid JSON): they can only occur inside JSON strings and are
    written as ``\\uXXXX`` escapes, so the line is valid UTF-8 JSON and ``json.loads`` gives
    back exactly the same string (a high surrogate followed by a low one reads back as the
    one character they encode, as any JSON parser reads them).
    """
    text = json.dumps(row, sort_keys=True, ensure_ascii=False, allow_nan=False, default=str)
    if not text.isascii() and SURROGATE.search(text):
        text = SURROGATE.sub(_escape_surrogate, text)
    return text


def read_jsonl(path: Path) -> list[dict]:
    """Read a JSONL file, ignoring a torn last line left by a crash."""
    rows: list[dict] = []
    if not path.exists():
        return rows
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


class JsonlAppender:
    """Append-only JSONL file shared by threads: whole lines, flushed, optionally fsynced."""

    def __init__(self, path: Path, fsync: bool = False) -> None:
        self.path = path
        self.fsync = fsync
        self._lock = threading.Lock()
        self._handle = path.open("a", encoding="utf-8")

    def write(self, row: dict) -> None:
        """Append one row as one line."""
        line = dumps(row) + "\n"
        with self._lock:
            self._handle.write(line)
            self._handle.flush()
            if self.fsync:
                os.fsync(self._handle.fileno())

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._handle.close()


class Transcript:
    """The full event log of one trial, committed by ``commit`` (rename from ``.part``)."""

    def __init__(self, directory: Path, trial_id: str) -> None:
        self.final = directory / f"{trial_id}.jsonl"
        self.part = directory / f"{trial_id}.jsonl.part"
        self._handle = self.part.open("w", encoding="utf-8")
        self.request_tokens: list[int] = []  # tokens of each `request` event: the trial's token curve

    def event(self, event: str, **data: Any) -> None:
        """Append one event."""
        if event == "request":
            self.request_tokens.append(data.get("tokens"))
        self._handle.write(dumps({"event": event, **data}) + "\n")

    def commit(self) -> None:
        """Close and publish the transcript."""
        self._handle.close()
        os.replace(self.part, self.final)

    def abandon(self) -> None:
        """Close without publishing."""
        self._handle.close()


class RunWriter:
    """Writes one run folder; thread-safe; resumable."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / TRANSCRIPTS).mkdir(exist_ok=True)
        self.done = self._recover()
        self._trials = JsonlAppender(self.run_dir / TRIALS, fsync=True)
        self._steps = JsonlAppender(self.run_dir / STEPS)

    def _recover(self) -> set[str]:
        """Trial ids already recorded; drop leftovers of trials that never finished."""
        trials_path = self.run_dir / TRIALS
        rows = read_jsonl(trials_path)
        done = {row["trial_id"] for row in rows if "trial_id" in row}
        if trials_path.exists() and _has_torn_line(trials_path):
            _rewrite(trials_path, rows)
        steps_path = self.run_dir / STEPS
        if steps_path.exists():
            steps = read_jsonl(steps_path)
            kept = [row for row in steps if row.get("trial_id") in done]
            if len(kept) != len(steps) or _has_torn_line(steps_path):
                _rewrite(steps_path, kept)
        for part in (self.run_dir / TRANSCRIPTS).glob("*.part"):
            part.unlink()
        return done

    def transcript(self, trial_id: str) -> Transcript:
        """Open the transcript of a trial."""
        return Transcript(self.run_dir / TRANSCRIPTS, trial_id)

    def step(self, row: dict) -> None:
        """Append a step row (flushed)."""
        self._steps.write(row)

    def trial(self, row: dict) -> None:
        """Append a trial row (flushed and fsynced: the trial's commit point)."""
        self._trials.write(row)
        self.done.add(row["trial_id"])

    def close(self) -> None:
        """Close the files."""
        self._trials.close()
        self._steps.close()

    def canonicalize(self, order: list[str]) -> None:
        """Sort ``trials.jsonl`` and ``steps.jsonl`` into plan order (call after ``close``).

        Parallel trials finish in any order; this makes the files identical whatever the
        number of workers. Steps of one trial keep their written order.
        """
        rank = {trial_id: index for index, trial_id in enumerate(order)}
        for name in (TRIALS, STEPS):
            path = self.run_dir / name
            rows = read_jsonl(path)
            ordered = sorted(rows, key=lambda row: rank.get(row.get("trial_id"), len(rank)))
            if ordered != rows:
                _rewrite(path, ordered)


def _has_torn_line(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() == 0:
            return False
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) != b"\n"


def _rewrite(path: Path, rows: Iterable[dict]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(dumps(row) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)

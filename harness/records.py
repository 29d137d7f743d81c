"""Run records: ``trials.jsonl``, ``steps.jsonl`` and ``transcripts/<trial>.jsonl.gz``.

Rows are appended and flushed as they happen, one whole line per ``write`` under a lock,
so concurrent writers never interleave partial lines. A trial's transcript is written
to ``<trial>.jsonl.gz.part`` and renamed when the trial ends; its row in ``trials.jsonl``
is the commit point (fsynced), and ``steps.jsonl`` is fsynced just before it, so a done
trial's steps are on disk (one fsync per trial, not per step; the transcript is not fsynced).
On resume, steps, transcripts and stores of trials without a row (the trial in flight when
a run crashed) are discarded, and recorded trials are skipped.

Every row goes through the typed schema of ``harness.record_schema`` (``format_version`` 2 written in
every new trial row, step row and transcript ``trial_start``; a record without it is version 1):
``scan_trials`` / ``scan_steps`` (``read_trials`` / ``read_steps``) are the readers every command uses.
A line that does not validate (not UTF-8, not JSON, a torn last line, ``NaN``, a damaged value such as
``"cost": "abc"``, a trial row without its required columns) is never dropped without a word and never
counted as done: on resume it is appended, as it was, to ``<file>.corrupt`` next to the file, removed
from the file (a set-aside trial's step rows and transcript go beside it as ``.corrupt`` too, and the
trial runs again), and ``RunWriter.recovered`` holds one line per file that says so, with the line
numbers and reasons (the run prints and logs it). ``report``, ``compare``, ``view`` and ``export``
leave the files as they are, skip such lines and say so in one line per file (``corruption_notes``),
and one line per transcript that does not decompress to its end (``transcript_problem``).

Transcripts. ``transcripts/<trial>.jsonl.gz`` is one gzip member (``zcat FILE | jq .`` reads it)
of JSON lines, one event each (``event``: ``trial_start``, ``message``, ``request``, ``reply``,
``tool``, ``strategy``, ...; ``trial_start`` carries ``format_version``). The gzip header has no file
name and mtime 0, so the same events give byte-identical files. A ``request`` event does not list its
message refs in full: it holds ``keep`` (the first ``keep`` refs of the previous ``request`` event of
the file, 0 for the first) and ``add`` (the refs that follow), so ``refs = previous_refs[:keep] + add``;
under ``none``, where every request extends the last, that is the new messages only. ``read_transcript``
is the one reader (events that do not validate as ``TranscriptEvent`` are skipped): it reads
``.jsonl.gz`` and the uncompressed ``<trial>.jsonl`` of older run folders (whose ``request`` events
carry ``refs``), and gives every ``request`` event its full ``refs`` list (no ``keep`` / ``add``).
``transcript_path`` and ``transcript_files`` find them.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import threading
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, cast

from harness.record_schema import (
    FORMAT_VERSION,
    VERSION_KEY,
    event_problem,
    stamped,
    step_problem,
    trial_problem,
)

TRIALS = "trials.jsonl"
STEPS = "steps.jsonl"
TRANSCRIPTS = "transcripts"
STORES = "stores"
CORRUPT = ".corrupt"  # suffix of the file that keeps the bad lines of a records file
TRANSCRIPT_SUFFIX = ".jsonl.gz"  # transcripts/<trial>.jsonl.gz
OLD_TRANSCRIPT_SUFFIX = ".jsonl"  # uncompressed transcripts of older run folders
HANDOFF_BYTES = 16_384  # a transcript hands its lines to the compressor in pieces of about this size


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
    return _escaped(json.dumps(row, sort_keys=True, ensure_ascii=False, allow_nan=False, default=str))


def _escaped(text: str) -> str:
    """``text`` with its surrogate code points written as ``\\uXXXX`` escapes (see ``dumps``)."""
    if not text.isascii() and SURROGATE.search(text):
        text = SURROGATE.sub(_escape_surrogate, text)
    return text


def read_jsonl(path: Path) -> list[dict]:
    """Read a JSONL file, ignoring a torn last line left by a crash (and any line that is not a JSON object)."""
    return scan_records(path).rows


@dataclass
class Scan:
    """A records file read through its schema: the valid rows, and the bad lines with where and why."""

    rows: list[dict] = field(default_factory=list)
    bad: list[bytes] = field(default_factory=list)  # as they are, each ending in a newline
    reasons: list[str] = field(default_factory=list)  # ``line N: why``, one per bad line

    def reason_text(self, most: int = 3) -> str:
        """The first ``most`` reasons, joined (``...`` when there are more)."""
        shown = "; ".join(self.reasons[:most])
        return shown + ("; ..." if len(self.reasons) > most else "")


class NonFinite(ValueError):
    """A records line holding ``NaN`` or ``Infinity``, which ``dumps`` never writes."""


def _refuse_constant(name: str) -> Any:
    raise NonFinite(f"{name} is not a number a record holds")


def scan_records(path: Path, check: Callable[[Any], str | None] | None = None) -> Scan:
    """Every line of a JSONL file: a row when it decodes as UTF-8 JSON to an object that ``check`` passes
    (``check(row)`` is why not, or None), else a bad line with its line number and reason."""
    scan = Scan()
    if not path.exists():
        return scan
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            reason = None
            try:
                row = json.loads(raw, parse_constant=_refuse_constant)
            except UnicodeDecodeError:
                row, reason = None, "not UTF-8"
            except ValueError as exc:  # JSONDecodeError, NaN or Infinity
                row, reason = None, str(exc) if isinstance(exc, NonFinite) else "not JSON"
                reason = reason if raw.endswith(b"\n") else "torn last line"
            if reason is None:
                reason = f"not a JSON object ({type(row).__name__})" if not isinstance(row, dict) else None
            if reason is None and check is not None:
                reason = check(row)
            if reason is None:
                scan.rows.append(row)
            else:
                scan.bad.append(raw if raw.endswith(b"\n") else raw + b"\n")
                scan.reasons.append(f"line {number}: {reason}")
    return scan


def scan_trials(path: Path) -> Scan:
    """``trials.jsonl`` through the trial-row schema (``harness.record_schema.TrialRecord``)."""
    return scan_records(path, trial_problem)


def scan_steps(path: Path) -> Scan:
    """``steps.jsonl`` through the step-row schema (``harness.record_schema.StepRecord``)."""
    return scan_records(path, step_problem)


def read_trials(path: Path) -> list[dict]:
    """The valid trial rows of a ``trials.jsonl`` (bad lines skipped: ``corruption_notes`` says so)."""
    return scan_trials(path).rows


def read_steps(path: Path) -> list[dict]:
    """The valid step rows of a ``steps.jsonl`` (bad lines skipped: ``corruption_notes`` says so)."""
    return scan_steps(path).rows


def keep_aside(path: Path, bad: list[bytes], reasons: str = "") -> str:
    """Append ``bad`` lines to ``<path>.corrupt`` (fsynced); the one line that says so (and why: ``reasons``)."""
    aside = path.with_name(path.name + CORRUPT)
    with aside.open("ab") as handle:
        handle.writelines(bad)
        handle.flush()
        os.fsync(handle.fileno())
    what = "its trial runs again" if path.name == TRIALS else "not in the records"
    return (
        f"warning: {path.name}: {len(bad)} corrupt line{'s' if len(bad) != 1 else ''} ({what}) moved to "
        f"{aside} ({_count_lines(aside)} there in all)" + (f": {reasons}" if reasons else "")
    )


def corruption_notes(run_dirs: Iterable[Path], trial_ids: Iterable[str] | None = None) -> list[str]:
    """One warning line per records file of ``run_dirs`` with corrupt lines, kept aside or still in it, and one
    per damaged transcript (of ``trial_ids``, default all) (``report``, ``compare``, ``view``: they read, and
    leave the files as they are)."""
    notes = []
    for run in run_dirs:
        for name, scan_file in ((TRIALS, scan_trials), (STEPS, scan_steps)):
            path = Path(run) / name
            aside = path.with_name(name + CORRUPT)
            if aside.exists() and (kept := _count_lines(aside)):
                then = "such trials run again on resume" if name == TRIALS else "not in this report"
                notes.append(
                    f"warning: {aside}: {kept} corrupt line{'s' if kept != 1 else ''} of {name} kept aside "
                    f"by a rerun ({then})"
                )
            scan = scan_file(path)
            if scan.bad:
                notes.append(
                    f"warning: {path}: {len(scan.bad)} corrupt line{'s' if len(scan.bad) != 1 else ''}, skipped "
                    f"({scan.reason_text()}); rerunning the run moves them to {aside.name} (and reruns such trials)"
                )
        notes.extend(transcript_notes(run, trial_ids))
    return notes


def transcript_notes(run_dir: Path, trial_ids: Iterable[str] | None = None) -> list[str]:
    """One warning line per damaged transcript of ``run_dir`` (of ``trial_ids``, default all): see
    ``transcript_problem``."""
    files = transcript_files(Path(run_dir) / TRANSCRIPTS)
    wanted = files if trial_ids is None else {t: files[t] for t in trial_ids if t in files}
    notes = []
    for path in wanted.values():
        why = transcript_problem(path)
        if why:
            notes.append(f"warning: {path}: damaged transcript ({why}); only what decompresses of it is read")
    return notes


def transcript_problem(path: Path) -> str | None:
    """Why a committed transcript is damaged, or None: a gzip that does not decompress to its end (a corrupt
    or cut file), or a last line that is not a whole JSON line. Decompresses without parsing the events."""
    last = b""
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    last = (last + chunk)[-(1 << 16) :]
        else:
            last = path.read_bytes()[-(1 << 16) :]
    except EOFError:
        return "cut: the gzip stream ends early"
    except (OSError, zlib.error) as exc:
        return f"does not decompress: {exc}"
    tail = last.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    if tail and not last.endswith(b"\n"):
        return "cut: the last line is torn"
    try:
        json.loads(tail or b"{}")
    except ValueError:
        return "the last line is not JSON"
    return None


def _count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 16), b""))


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

    def sync(self) -> None:
        """Make every row written so far durable (fsync)."""
        with self._lock:
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._handle.close()


class Transcript:
    """The full event log of one trial (gzip), committed by ``commit`` (rename from ``.part``)."""

    def __init__(self, directory: Path, trial_id: str) -> None:
        self.final = directory / f"{trial_id}{TRANSCRIPT_SUFFIX}"
        self.part = directory / f"{trial_id}{TRANSCRIPT_SUFFIX}.part"
        self._old = directory / f"{trial_id}{OLD_TRANSCRIPT_SUFFIX}"  # an earlier, uncompressed one of this trial
        self._gzip = BackgroundGzip(self.part)
        self._pending: list[bytes] = []  # lines not yet handed to the compressor
        self._pending_bytes = 0
        self._refs: list[str] = []  # refs of the last request event: the next one is written as a delta
        self.request_tokens: list[int] = []  # tokens of each `request` event: the trial's token curve

    def event(self, event: str, **data: Any) -> None:
        """Append one event (a ``request``'s ``refs`` as ``keep`` / ``add`` against the previous request)."""
        if event == "trial_start":
            data.setdefault(VERSION_KEY, FORMAT_VERSION)
        if event == "request":
            # every request event carries its token count (harness.trial writes it): never None
            self.request_tokens.append(cast(int, data.get("tokens")))
            if "refs" in data:
                refs = list(data.pop("refs") or [])
                keep = _common_prefix(self._refs, refs)
                data["keep"], data["add"] = keep, refs[keep:]
                self._refs = refs
        self._write_line(dumps({"event": event, **data}))

    def message(self, ref: str, message: dict, body: str) -> None:
        """Append the ``message`` event of ``message`` given as ``body``, its JSON text with sorted keys (the
        ``MessageTable`` key), so that it is not serialised twice; the line is the one ``event`` would write
        (a body with NaN or Infinity, which ``dumps`` refuses, goes through ``event``)."""
        if "NaN" in body or "Infinity" in body:
            self.event("message", ref=ref, message=message)
            return
        self._write_line(
            _escaped(f'{{"event": "message", "message": {body}, "ref": {json.dumps(ref, ensure_ascii=False)}}}')
        )

    def _write_line(self, text: str) -> None:
        line = (text + "\n").encode("utf-8")
        self._pending.append(line)
        self._pending_bytes += len(line)
        if self._pending_bytes >= HANDOFF_BYTES:
            self._hand_off()

    def _hand_off(self) -> None:
        """Give the pending lines to the compressor (one write: deflate gives the same bytes however cut)."""
        if self._pending:
            self._gzip.write(b"".join(self._pending))
            self._pending, self._pending_bytes = [], 0

    def commit(self) -> None:
        """Close and publish the transcript (replacing an earlier uncompressed one of the trial)."""
        self._close()
        os.replace(self.part, self.final)
        if self._old.exists():
            self._old.unlink()

    def abandon(self) -> None:
        """Close without publishing."""
        self._close()

    def _close(self) -> None:
        try:
            self._hand_off()
        finally:
            self._gzip.close()


class BackgroundGzip:
    """A gzip file (no name, mtime 0, level 6) compressed and written by a background thread.

    Compression is the costliest part of logging a step; done beside the agent loop, it overlaps
    the model call (``zlib`` releases the GIL while it deflates). Writes keep their order (one
    worker). A write that fails is raised by the next ``write`` or by ``close``; once one failed,
    later writes are dropped. A file never closed stops its thread when it is garbage collected.
    """

    def __init__(self, path: Path) -> None:
        self._raw = path.open("wb")
        self._handle = gzip.GzipFile(filename="", mode="wb", fileobj=self._raw, compresslevel=6, mtime=0)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="transcript")
        self._failure: BaseException | None = None

    def write(self, data: bytes) -> None:
        """Queue ``data`` for compression (raises the failure of an earlier write)."""
        self._raise_failure()
        self._worker.submit(self._write_now, data)

    def close(self) -> None:
        """Wait for the queued writes, then close the file (raises a failed write's error)."""
        try:
            self._worker.shutdown(wait=True)
            self._raise_failure()
        finally:
            try:
                self._handle.close()
            finally:
                self._raw.close()

    def _write_now(self, data: bytes) -> None:
        if self._failure is not None:
            return
        try:
            self._handle.write(data)
        except BaseException as exc:  # kept for the agent loop's thread to raise
            self._failure = exc

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure


def _common_prefix(a: list[str], b: list[str]) -> int:
    """How many leading items ``a`` and ``b`` share."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    i = 0
    while a[i] == b[i]:
        i += 1
    return i


def transcript_path(run_dir: str | Path, trial_id: str) -> Path | None:
    """The transcript of ``trial_id`` in the run folder: ``.jsonl.gz``, else an older ``.jsonl``; None when neither."""
    directory = Path(run_dir) / TRANSCRIPTS
    for suffix in (TRANSCRIPT_SUFFIX, OLD_TRANSCRIPT_SUFFIX):
        path = directory / f"{trial_id}{suffix}"
        if path.exists():
            return path
    return None


def transcript_files(directory: Path) -> dict[str, Path]:
    """The committed transcripts of a ``transcripts/`` folder by trial id (``.jsonl.gz`` over ``.jsonl``)."""
    found: dict[str, Path] = {}
    directory = Path(directory)
    if not directory.is_dir():
        return found
    for path in sorted(directory.iterdir()):
        for suffix in (TRANSCRIPT_SUFFIX, OLD_TRANSCRIPT_SUFFIX):
            if path.name.endswith(suffix) and path.is_file():
                trial_id = path.name[: -len(suffix)]
                if suffix == TRANSCRIPT_SUFFIX or trial_id not in found:
                    found[trial_id] = path
                break
    return found


def read_transcript(source: str | Path, trial_id: str | None = None, only: Iterable[str] | None = None) -> list[dict]:
    """The events of one transcript, each ``request`` with its full ``refs`` (the one transcript reader).

    ``source`` is a run folder (with ``trial_id``) or a transcript file (``.jsonl.gz`` or an older
    ``.jsonl``). A missing transcript reads as ``[]``; a torn or truncated end (a crash) and lines
    that are not JSON objects are skipped. ``only``: keep just these event kinds (lines of other
    kinds are not parsed; ``request`` events are still followed, to expand the refs).
    """
    path = transcript_path(source, trial_id) if trial_id is not None else Path(source)
    if path is None or not path.exists():
        return []
    wanted = None if only is None else set(only)
    needles = None if wanted is None else [f'"event": "{kind}"'.encode() for kind in wanted | {"request"}]
    events: list[dict] = []
    refs: list[str] = []
    for raw in _transcript_lines(path):
        if needles is not None and not any(needle in raw for needle in needles):
            continue  # cheap filter: transcripts are mostly messages
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if event_problem(event) is not None:  # a damaged line: skipped (transcript_problem names a damaged file)
            continue
        if event.get("event") == "request":
            if "keep" in event or "add" in event:
                keep = event.pop("keep", 0) or 0
                event["refs"] = refs = refs[:keep] + list(event.pop("add", None) or [])
            else:
                refs = list(event.get("refs") or [])
        if wanted is None or event.get("event") in wanted:
            events.append(event)
    return events


def _transcript_lines(path: Path) -> Iterable[bytes]:
    """The non-empty lines of a transcript file, gzip or not; a truncated gzip ends at its last whole line."""
    if not path.name.endswith(".gz"):
        with path.open("rb") as handle:
            yield from (raw for raw in handle if raw.strip())
        return
    with gzip.open(path, "rb") as handle:
        pending = b""
        try:
            for raw in handle:
                if not raw.endswith(b"\n"):
                    pending = raw
                    continue
                if raw.strip():
                    yield raw
        except (EOFError, OSError, zlib.error):  # a .part cut by a crash
            return
        if pending.strip():
            yield pending


class RunWriter:
    """Writes one run folder; thread-safe; resumable."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / TRANSCRIPTS).mkdir(exist_ok=True)
        self.recovered: list[str] = []  # one line per records file whose corrupt lines were kept aside
        self.done = self._recover()
        self._trials = JsonlAppender(self.run_dir / TRIALS, fsync=True)
        self._steps = JsonlAppender(self.run_dir / STEPS)

    def _recover(self) -> set[str]:
        """Trial ids already recorded; drop leftovers of trials that never finished; keep bad lines aside.

        A trial row that does not validate (``harness.record_schema``) is not done: it goes to
        ``trials.jsonl.corrupt``, its step rows to ``steps.jsonl.corrupt`` and its transcript to
        ``<trial>.jsonl.gz.corrupt`` (so the rerun of the trial overwrites nothing), each said in one line.
        """
        trials_path = self.run_dir / TRIALS
        scan = scan_trials(trials_path)
        done = {row["trial_id"] for row in scan.rows}
        set_aside = _trial_ids_of(scan.bad) - done
        steps_path = self.run_dir / STEPS
        steps = scan_steps(steps_path) if steps_path.exists() else None
        moved = self._set_aside_leftovers(set_aside, set(steps.bad) if steps else set())
        if scan.bad:
            self.recovered.append(keep_aside(trials_path, scan.bad, scan.reason_text()) + moved)
        if trials_path.exists() and (scan.bad or _has_torn_line(trials_path)):
            rewrite(trials_path, scan.rows)
        if steps is not None:
            if steps.bad:
                self.recovered.append(keep_aside(steps_path, steps.bad, steps.reason_text()))
            kept = [row for row in steps.rows if row["trial_id"] in done]
            if steps.bad or len(kept) != len(steps.rows) or _has_torn_line(steps_path):
                rewrite(steps_path, kept)
        for part in (self.run_dir / TRANSCRIPTS).glob("*.part"):
            part.unlink()
        stores = self.run_dir / STORES
        if stores.is_dir():
            for store in stores.iterdir():
                if store.name not in done:
                    remove_store(store)
        return done

    def _set_aside_leftovers(self, trial_ids: set[str], bad_steps: set[bytes]) -> str:
        """Keep the step rows and transcripts of set-aside trial rows beside the records (``.corrupt``), so the
        rerun of those trials overwrites nothing; what moved, as the end of the trials line (or "").

        ``bad_steps`` (the step lines that do not validate) are left out: ``_recover`` keeps them aside itself,
        once."""
        if not trial_ids:
            return ""
        steps_path = self.run_dir / STEPS
        lines = []
        if steps_path.exists():
            with steps_path.open("rb") as handle:
                lines = [
                    raw
                    for raw in handle
                    if (raw if raw.endswith(b"\n") else raw + b"\n") not in bad_steps
                    and _trial_ids_of([raw]) & trial_ids
                ]
        if lines:
            aside = steps_path.with_name(STEPS + CORRUPT)
            with aside.open("ab") as handle:
                handle.writelines(raw if raw.endswith(b"\n") else raw + b"\n" for raw in lines)
                handle.flush()
                os.fsync(handle.fileno())
        moved = 0
        for trial_id in sorted(trial_ids):
            path = transcript_path(self.run_dir, trial_id)
            if path is not None:
                os.replace(path, path.with_name(path.name + CORRUPT))
                moved += 1
        return (
            f"; with their {len(lines)} step rows (to {STEPS}{CORRUPT}) and {moved} transcripts "
            f"(to <trial>{TRANSCRIPT_SUFFIX}{CORRUPT})"
        )

    def transcript(self, trial_id: str) -> Transcript:
        """Open the transcript of a trial."""
        return Transcript(self.run_dir / TRANSCRIPTS, trial_id)

    def step(self, row: dict) -> None:
        """Append a step row (flushed), with this harness's ``format_version``."""
        self._steps.write(stamped(row))

    def trial(self, row: dict) -> None:
        """Append a trial row (flushed and fsynced: the trial's commit point), once its steps are on disk, with
        this harness's ``format_version``."""
        self._steps.sync()
        self._trials.write(stamped(row))
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
        # a row without a trial_id looks up None and sorts last
        rank: dict[str | None, int] = {trial_id: index for index, trial_id in enumerate(order)}
        for name in (TRIALS, STEPS):
            path = self.run_dir / name
            rows = read_jsonl(path)
            ordered = sorted(rows, key=lambda row: rank.get(row.get("trial_id"), len(rank)))
            if ordered != rows:
                rewrite(path, ordered)


def _trial_ids_of(lines: list[bytes]) -> set[str]:
    """The ``trial_id`` strings that bad lines still name (those that decode as JSON objects)."""
    ids = set()
    for raw in lines:
        try:
            row = json.loads(raw)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("trial_id"), str) and row["trial_id"]:
            ids.add(row["trial_id"])
    return ids


def count_trials(target: Path | None) -> int:
    """Valid trial rows at or below ``target`` (a run or sweep folder; every ``trials.jsonl``)."""
    return sum(len(read_trials(path)) for path in trial_files(target))


def remove_store(path: Path) -> None:
    """Remove a trial's store (a folder, or whatever else sits at its path)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _has_torn_line(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() == 0:
            return False
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) != b"\n"


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` all at once: a temporary file beside it, fsynced, then renamed."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once: a temporary file beside it, fsynced, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def rewrite(path: Path, rows: Iterable[dict]) -> None:
    """Replace ``path`` with ``rows`` as JSON lines (``write_atomic``)."""
    write_atomic(path, "".join(dumps(row) + "\n" for row in rows))


def trial_files(target: Path | None) -> list[Path]:
    """The ``trials.jsonl`` of a run folder, or every one below a sweep folder (none when ``target`` is missing)."""
    if target is None or not Path(target).exists():
        return []
    root = Path(target)
    return [root / TRIALS] if (root / TRIALS).exists() else sorted(root.rglob(TRIALS))

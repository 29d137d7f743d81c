"""``run --retry-errors`` and ``--fail-on-error``: failed trials are not final, and a gate can see them.

``--retry-errors`` re-runs the trials of a run folder whose outcome is an error (``model_error`` by
default: a provider outage, a 500; ``--retry-errors=model_error,strategy_error`` adds strategy
errors) and keeps every other trial. Nothing is deleted: the set-aside rows, their step rows and
their transcripts move to ``retried/<n>/`` in the run folder (``n`` = 1, 2, ... per retry), as
``trials.set-aside.jsonl``, ``steps.set-aside.jsonl`` and ``transcripts/``, names that no reader
of runs or sweeps picks up, and the resumed run records the new attempts in their place. This is
inspect_ai's ``eval-retry`` for ctxbench's folders.

``--fail-on-error``: after the run, exit 1 when any trial at or below the run (or sweep) folder ended
in ``model_error`` or ``strategy_error``, with one line that counts them.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Iterable

from harness.records import (
    OLD_TRANSCRIPT_SUFFIX,
    STEPS,
    TRANSCRIPT_SUFFIX,
    TRANSCRIPTS,
    TRIALS,
    dumps,
    read_steps,
    read_trials,
    rewrite,
    trial_files,
    write_bytes_atomic,
)

ERROR_OUTCOMES = ("model_error", "strategy_error")
RETRY_FLAG = "--retry-errors"
FAIL_FLAG = "--fail-on-error"
RETRIED = "retried"
ASIDE_TRIALS, ASIDE_STEPS = "trials.set-aside.jsonl", "steps.set-aside.jsonl"  # not trials.jsonl: no reader globs them
STAGING = ".tmp"  # retried/<n>.tmp: a retry being staged (renamed to retried/<n> when complete)
PENDING = "PENDING"  # in retried/<n> until the run folder's records no longer hold what it set aside


def retry_outcomes(flag: str) -> tuple[str, ...]:
    """The outcomes that ``--retry-errors[=a,b]`` names (default ``model_error``); ``ValueError`` for others."""
    _, _, value = flag.partition("=")
    names = tuple(n.strip() for n in value.split(",") if n.strip()) or ("model_error",)
    unknown = [n for n in names if n not in ERROR_OUTCOMES]
    if unknown:
        raise ValueError(
            f"{RETRY_FLAG}={value}: {', '.join(unknown)} is not an error outcome (valid: {', '.join(ERROR_OUTCOMES)})"
        )
    return names


def set_aside_errors(run_dir: Path, outcomes: Iterable[str]) -> str:
    """Move the trials of ``run_dir`` that ended in ``outcomes`` to ``retried/<n>/``; say what moved, in one line.

    Crash-safe in three steps, each one atomic or idempotent: (1) the set-aside rows and hard links to their
    transcripts are staged in ``retried/<n>.tmp/`` (marked ``PENDING``) and renamed to ``retried/<n>/``;
    (2) ``trials.jsonl`` is rewritten without exactly those rows (``write_atomic``: the commit point);
    (3) ``steps.jsonl`` without their steps, their transcripts unlinked, the mark removed. A crash in (1)
    leaves the folder as it was (a stale ``.tmp`` is removed next time); after (1), the next
    ``--retry-errors`` finishes the pending retry first (``finish_pending``), so nothing is set aside twice.
    Rows that do not validate stay where they are (the resumed run keeps them aside, ``harness.records``).
    """
    outcomes = tuple(outcomes)
    run_dir = Path(run_dir)
    finish_pending(run_dir)
    rows = read_trials(run_dir / TRIALS)
    failed = [row for row in rows if row.get("outcome") in outcomes]
    if not failed:
        return f"{RETRY_FLAG}: no trial in {run_dir} ended in {' or '.join(outcomes)}; nothing to retry"
    aside = stage_aside(run_dir, failed)
    finish(run_dir, aside)
    counts = Counter(row.get("outcome") for row in failed)
    what = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
    return f"{RETRY_FLAG}: retrying {len(failed)} trials ({what}); their first records are in {aside}"


def stage_aside(run_dir: Path, failed: list[dict]) -> Path:
    """Step (1): ``retried/<n>/`` with the ``failed`` rows, their steps and their transcripts (hard links), and
    ``PENDING``, published by one rename; the records of ``run_dir`` are not touched."""
    ids = {row["trial_id"] for row in failed}
    final = next_aside_dir(run_dir)
    staging = final.with_name(final.name + STAGING)
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    rewrite(staging / ASIDE_TRIALS, failed)
    rewrite(staging / ASIDE_STEPS, [s for s in read_steps(run_dir / STEPS) if s["trial_id"] in ids])
    link_transcripts(run_dir / TRANSCRIPTS, staging / TRANSCRIPTS, ids)
    (staging / PENDING).write_text("", encoding="utf-8")
    os.replace(staging, final)
    return final


def finish(run_dir: Path, aside: Path) -> None:
    """Steps (2) and (3) for the retry staged in ``aside``: idempotent, so a rerun completes a crashed one."""
    staged = read_trials(aside / ASIDE_TRIALS)
    ids = {row["trial_id"] for row in staged}
    keep_lines_without(run_dir / TRIALS, {dumps(row) for row in staged})
    keep_lines_without(run_dir / STEPS, {dumps(row) for row in read_steps(aside / ASIDE_STEPS)})
    for trial_id in ids:
        for suffix in (TRANSCRIPT_SUFFIX, OLD_TRANSCRIPT_SUFFIX):
            here, there = run_dir / TRANSCRIPTS / f"{trial_id}{suffix}", aside / TRANSCRIPTS / f"{trial_id}{suffix}"
            if here.exists() and there.exists() and os.path.samefile(here, there):
                here.unlink()
    (aside / PENDING).unlink(missing_ok=True)


def finish_pending(run_dir: Path) -> None:
    """Complete every retry that a crash left pending, and remove staging folders that were never published."""
    retried = run_dir / RETRIED
    if not retried.is_dir():
        return
    for folder in sorted(retried.iterdir()):
        if folder.name.endswith(STAGING):
            shutil.rmtree(folder)
        elif (folder / PENDING).exists():
            finish(run_dir, folder)


def next_aside_dir(run_dir: Path) -> Path:
    """``retried/<n>`` for the first ``n`` not yet used (not created)."""
    n = 1
    while (run_dir / RETRIED / str(n)).exists():
        n += 1
    return run_dir / RETRIED / str(n)


def link_transcripts(source: Path, target: Path, trial_ids: set) -> None:
    """Hard-link (else copy) the transcripts of ``trial_ids`` from ``source`` into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    for trial_id in trial_ids:
        for suffix in (TRANSCRIPT_SUFFIX, OLD_TRANSCRIPT_SUFFIX):  # gzip, or an older uncompressed one
            path = source / f"{trial_id}{suffix}"
            if path.exists():
                try:
                    os.link(path, target / path.name)
                except OSError:  # a file system without hard links
                    shutil.copy2(path, target / path.name)


def keep_lines_without(path: Path, rows: set[str]) -> None:
    """Rewrite ``path`` (``write_atomic``) without the lines that hold one of ``rows`` (as ``dumps`` writes them);
    every other line stays as it was, bytes that are not UTF-8 too. Nothing to remove: the file is not touched."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        lines = handle.readlines()
    kept = [raw for raw in lines if _as_written(raw) not in rows]
    if len(kept) != len(lines):
        write_bytes_atomic(path, b"".join(kept))


def _as_written(raw: bytes) -> str | None:
    """The line as ``dumps`` writes its row (None for a line that is not a JSON object)."""
    try:
        row = json.loads(raw)
        return dumps(row) if isinstance(row, dict) else None
    except ValueError:  # not JSON, not UTF-8, or NaN that dumps refuses
        return None


def error_counts(target: Path | None) -> Counter:
    """Trials at or below ``target`` (a run or sweep folder) per error outcome."""
    counts: Counter = Counter()
    for path in trial_files(target):
        counts.update(row["outcome"] for row in read_trials(path) if row["outcome"] in ERROR_OUTCOMES)
    return counts


def error_line(counts: Counter) -> str:
    """The one line ``--fail-on-error`` prints when ``counts`` is not empty."""
    what = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
    return (
        f"{FAIL_FLAG}: {sum(counts.values())} trials ended in an error ({what}); "
        f"rerun with {RETRY_FLAG} once the cause is fixed"
    )

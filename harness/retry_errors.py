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
from collections import Counter
from pathlib import Path
from typing import Iterable

from harness.records import (
    OLD_TRANSCRIPT_SUFFIX,
    STEPS,
    TRANSCRIPT_SUFFIX,
    TRANSCRIPTS,
    TRIALS,
    read_jsonl,
    rewrite,
    trial_files,
    write_atomic,
)

ERROR_OUTCOMES = ("model_error", "strategy_error")
RETRY_FLAG = "--retry-errors"
FAIL_FLAG = "--fail-on-error"
RETRIED = "retried"
ASIDE_TRIALS, ASIDE_STEPS = "trials.set-aside.jsonl", "steps.set-aside.jsonl"  # not trials.jsonl: no reader globs them


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
    """Move the trials of ``run_dir`` that ended in ``outcomes`` to ``retried/<n>/``; say what moved, in one line."""
    outcomes = tuple(outcomes)
    trials_path = Path(run_dir) / TRIALS
    rows = read_jsonl(trials_path) if trials_path.exists() else []
    failed = [row for row in rows if row.get("outcome") in outcomes]
    if not failed:
        return f"{RETRY_FLAG}: no trial in {run_dir} ended in {' or '.join(outcomes)}; nothing to retry"
    ids = {row.get("trial_id") for row in failed}
    aside = next_aside_dir(Path(run_dir))
    steps_path = Path(run_dir) / STEPS
    steps = read_jsonl(steps_path) if steps_path.exists() else []
    rewrite(aside / ASIDE_TRIALS, failed)
    rewrite(aside / ASIDE_STEPS, [s for s in steps if s.get("trial_id") in ids])
    move_transcripts(Path(run_dir) / TRANSCRIPTS, aside / TRANSCRIPTS, ids)
    keep_lines_without(steps_path, ids)  # after the copies: nothing is lost
    keep_lines_without(trials_path, ids)
    counts = Counter(row.get("outcome") for row in failed)
    what = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
    return f"{RETRY_FLAG}: retrying {len(failed)} trials ({what}); their first records are in {aside}"


def next_aside_dir(run_dir: Path) -> Path:
    """``retried/<n>`` for the first ``n`` not yet used."""
    n = 1
    while (run_dir / RETRIED / str(n)).exists():
        n += 1
    path = run_dir / RETRIED / str(n)
    path.mkdir(parents=True)
    return path


def move_transcripts(source: Path, target: Path, trial_ids: set) -> None:
    """Move the transcripts of ``trial_ids`` from ``source`` to ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    for trial_id in trial_ids:
        for suffix in (TRANSCRIPT_SUFFIX, OLD_TRANSCRIPT_SUFFIX):  # gzip, or an older uncompressed one
            path = source / f"{trial_id}{suffix}"
            if path.exists():
                os.replace(path, target / path.name)


def keep_lines_without(path: Path, trial_ids: set) -> None:
    """Rewrite ``path`` without the rows of ``trial_ids``; every other line stays as it was, unreadable ones too."""
    if not path.exists():
        return
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    write_atomic(path, "".join(line for line in lines if trial_id_of(line) not in trial_ids))


def trial_id_of(line: str) -> str | None:
    """The ``trial_id`` of one JSON line (``None`` for a line that is not a row)."""
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row.get("trial_id") if isinstance(row, dict) else None


def error_counts(target: Path | None) -> Counter:
    """Trials at or below ``target`` (a run or sweep folder) per error outcome."""
    counts: Counter = Counter()
    for path in trial_files(target):
        counts.update(row.get("outcome") for row in read_jsonl(path) if row.get("outcome") in ERROR_OUTCOMES)
    return counts


def error_line(counts: Counter) -> str:
    """The one line ``--fail-on-error`` prints when ``counts`` is not empty."""
    what = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
    return (
        f"{FAIL_FLAG}: {sum(counts.values())} trials ended in an error ({what}); "
        f"rerun with {RETRY_FLAG} once the cause is fixed"
    )

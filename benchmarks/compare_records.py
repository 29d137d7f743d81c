"""Are two runs' records the same, apart from timestamps, wall times and chosen new columns?

    python benchmarks/compare_records.py OLD_DIR NEW_DIR [--new-columns over_budget_steps,max_budget_ratio]
                                                        [--ignore-columns cost,from_cache]

OLD_DIR and NEW_DIR are run or sweep folders with the same layout (e.g. one preset run
before and after a refactor). Every ``trials.jsonl``, ``steps.jsonl`` and transcript is
compared row by row and key by key, ignoring ``started_at``, ``wall_s`` and ``latency_s``
and, in the new records only, the keys named by ``--new-columns`` (columns a change added), and on
both sides the keys named by ``--ignore-columns`` (columns a change is meant to alter, such as
``cost`` and ``from_cache`` in a rerun served from the response cache).
Prints one line per file that differs (with the first differing key) and a closing count;
exits 1 when anything differs. This is how a refactor of the loop proves that records
stay byte-identical.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness.records import TRANSCRIPTS, read_transcript, transcript_files  # noqa: E402

VOLATILE = {"started_at", "wall_s", "latency_s"}


def rows(path: Path) -> list[dict]:
    """The JSON lines of ``path`` (a transcript through ``read_transcript``: gzip or not, full ``refs``)."""
    if path.parent.name == TRANSCRIPTS:
        return read_transcript(path)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def first_difference(
    old: list[dict], new: list[dict], added: set[str], ignored: frozenset[str] = frozenset()
) -> str | None:
    """Where two row lists first differ (``None`` when they agree), ignoring ``ignored`` keys on both sides."""
    if len(old) != len(new):
        return f"{len(old)} rows vs {len(new)}"
    for index, (a, b) in enumerate(zip(old, new, strict=False)):
        b = {k: v for k, v in b.items() if k not in added or k in a}
        for key in sorted(set(a) | set(b)):
            if key in VOLATILE or key in ignored:
                continue
            if a.get(key) != b.get(key):
                return f"row {index}: {key}: {str(a.get(key))[:80]!r} vs {str(b.get(key))[:80]!r}"
    return None


def record_files(root: Path) -> dict[Path, Path]:
    """Every records file below ``root``: its name for comparison (a transcript without its suffix, so a
    gzip one compares with an older uncompressed one) -> its path relative to ``root``."""
    names = ("trials.jsonl", "steps.jsonl")
    found = {p.relative_to(root): p.relative_to(root) for p in root.rglob("*.jsonl") if p.name in names}
    for folder in root.rglob(TRANSCRIPTS):
        for trial_id, path in transcript_files(folder).items():
            found[(folder / trial_id).relative_to(root)] = path.relative_to(root)
    return dict(sorted(found.items()))


def main(argv: list[str] | None = None) -> int:
    """Compare the records of two folders; exit 1 when they differ."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--new-columns", default="", help="comma-separated keys the new records may add")
    parser.add_argument("--ignore-columns", default="", help="comma-separated keys not compared on either side")
    args = parser.parse_args(argv)
    added = {k for k in args.new_columns.split(",") if k}
    ignored = frozenset(k for k in args.ignore_columns.split(",") if k)
    old_files, new_files = record_files(args.old), record_files(args.new)
    differing = 0
    for rel in sorted(set(old_files) | set(new_files)):
        if rel not in old_files or rel not in new_files:
            print(f"{rel}: only in {'new' if rel in new_files else 'old'}")
            differing += 1
            continue
        where = first_difference(rows(args.old / old_files[rel]), rows(args.new / new_files[rel]), added, ignored)
        if where:
            print(f"{rel}: {where}")
            differing += 1
    print(f"{len(old_files)} files compared, {differing} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())

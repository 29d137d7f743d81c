"""Bytes per trial of a run folder, per file kind (issue 23: the main job's records at most 100 KB per trial).

    python benchmarks/records_size.py                      # runs the main job (defaults, 70 trials) in a temp folder
    python benchmarks/records_size.py suite=smoke trials=1 # any run overrides: a smaller slice
    python benchmarks/records_size.py --dir RUN_FOLDER     # measure a folder already written (e.g. an older run)

It runs ``python -m harness run OVERRIDES progress=false`` into a temporary folder (the main job is the
defaults: suite=default, model=scripted, strategy=none), then prints, per file kind (trials.jsonl,
steps.jsonl, transcripts, plots, the rest), the bytes in all and per trial (``du -b`` style: file
sizes), and the total per trial. A ``view*`` file or folder in the run folder is left out (it is
not a record). Transcripts also show their size uncompressed, read back through ``read_transcript``'s
file layer.
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.records import TRANSCRIPTS, TRIALS, read_jsonl  # noqa: E402


def kind_of(path: Path, run_dir: Path) -> str | None:
    """The file kind of ``path`` in the run folder (None: not counted)."""
    top = path.relative_to(run_dir).parts[0]
    if top.startswith("view"):
        return None
    if top in (TRANSCRIPTS, "plots", "stores", "retried"):
        return top
    return top if top.endswith((".jsonl", ".csv", ".json")) else "other"


def sizes(run_dir: Path) -> dict[str, int]:
    """Bytes per file kind."""
    out: dict[str, int] = {}
    for path in run_dir.rglob("*"):
        if path.is_file() and not path.is_symlink() and (kind := kind_of(path, run_dir)):
            out[kind] = out.get(kind, 0) + path.stat().st_size
    return out


def uncompressed_transcripts(run_dir: Path) -> int:
    """Bytes of the transcripts once decompressed."""
    total = 0
    for path in (run_dir / TRANSCRIPTS).iterdir():
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as handle:
                total += sum(len(chunk) for chunk in iter(lambda: handle.read(1 << 20), b""))
        elif path.name.endswith(".jsonl"):
            total += path.stat().st_size
    return total


def report(run_dir: Path) -> None:
    """Print the table of one run folder."""
    trials = len(read_jsonl(run_dir / TRIALS))
    if not trials:
        sys.exit(f"{run_dir}: no trials")
    by_kind = sizes(run_dir)
    total = sum(by_kind.values())
    print(f"{run_dir}: {trials} trials")
    print(f"{'kind':<16}{'bytes':>14}{'per trial':>12}")
    for kind, size in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        print(f"{kind:<16}{size:>14,}{size / trials:>12,.0f}")
    print(f"{'total':<16}{total:>14,}{total / trials:>12,.0f}")
    raw = uncompressed_transcripts(run_dir)
    if raw and by_kind.get(TRANSCRIPTS):
        print(
            f"transcripts uncompressed: {raw:,} bytes ({raw / trials:,.0f} per trial; "
            f"{raw / by_kind[TRANSCRIPTS]:.1f}x what is on disk)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, help="measure this run folder instead of running one")
    parser.add_argument("overrides", nargs="*", help="run overrides (default: none, the main job)")
    args = parser.parse_args(argv)
    if args.dir:
        report(args.dir)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "harness", "run", *args.overrides, "progress=false", f"hydra.run.dir={run_dir}"],
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        print(f"ran `python -m harness run {' '.join(args.overrides)}` in {time.perf_counter() - start:.1f} s")
        report(run_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())

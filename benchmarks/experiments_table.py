"""Turn the experiment presets' sweep folders into markdown tables next to the source chapters' published figures.

    python -m harness run -m experiment=review44            # writes results/experiments/review44/
    python benchmarks/experiments_table.py review44          # prints the table
    python benchmarks/experiments_table.py --update docs/experiments.md   # rewrites every generated block
    python benchmarks/experiments_table.py --run --update docs/experiments.md   # runs every preset first
    python benchmarks/experiments_table.py --update README.md --update strategies/README.md
    python benchmarks/experiments_table.py --run --check docs/experiments.md    # exit 1 if the tables are stale

A generated block in a markdown file sits between ``<!-- table:NAME -->`` and ``<!-- /table:NAME -->``;
``--update`` replaces what is between them and nothing else (benchmarks/experiments/doc_blocks.py). NAME is a
table of benchmarks/experiments/registry.py: a preset's table, its verdict (``NAME_verdict``: published figure |
ours | reproduced / partly / not | reason, judged against configs/claims/<preset>.yaml by
benchmarks/experiments/claims.py), another table derived from a preset's sweep, a computed demo (no run needed) or
``quickstart`` (the console output of the README's main job). Numbers come from the trial rows
(``harness.analysis.load_trials``); the published figures come from configs/claims/. ``--run`` runs each preset's
sweep in this process (benchmarks/experiments/runner.py: the same configs and folder names as
``python -m harness run -m experiment=NAME``) into ``--results``; ``--check`` compares the generated blocks with a
committed file, apart from wall-time columns, and exits 1 when they differ (tests/test_docs_*.py do the same, one
file per doc).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from experiments.claims import verdict_table
from experiments.common import RESULTS, ROOT
from experiments.doc_blocks import BLOCK, block_names, mask_wall_times, render, stale_blocks, update
from experiments.registry import DERIVED, TABLES, source_of
from experiments.runner import PRESETS, run_all, run_for, run_preset, run_quickstart, sweep_points
from experiments.strategy_zoo import zoo_before_after

__all__ = [
    "BLOCK",
    "DERIVED",
    "PRESETS",
    "RESULTS",
    "ROOT",
    "TABLES",
    "block_names",
    "main",
    "mask_wall_times",
    "render",
    "run_all",
    "run_for",
    "run_preset",
    "run_quickstart",
    "source_of",
    "stale_blocks",
    "sweep_points",
    "update",
    "verdict_table",
]


def parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help=f"tables to print ({', '.join(TABLES)}); default all")
    p.add_argument("--results", type=Path, default=RESULTS, help="folder holding the presets' sweep folders")
    p.add_argument("--update", type=Path, action="append", help="rewrite the generated blocks of this markdown file")
    p.add_argument("--check", type=Path, action="append", help="exit 1 if this file's generated blocks are stale")
    p.add_argument("--run", action="store_true", help="run every preset into --results first")
    p.add_argument(
        "--before",
        type=Path,
        help="with strategy_zoo: a folder of an older strategy_zoo sweep to "
        "compare with (success, tokens, rank before and after)",
    )
    return p


def check(paths: list[Path], results: Path) -> int:
    """Print which generated blocks of ``paths`` are stale; 1 if any."""
    stale = [f"{path}: {name}" for path in paths for name in stale_blocks(path, results)]
    print("stale: " + "; ".join(stale) if stale else "every generated table is current")
    return 1 if stale else 0


def main(argv: list[str] | None = None) -> int:
    """Run, check, update or print the tables as the options say."""
    p = parser()
    args = p.parse_args(argv)
    if args.run:
        run_all(args.results)
    if args.check:
        return check(args.check, args.results)
    if args.update:
        for path in args.update:
            print(f"{path}: updated", ", ".join(update(path, args.results)))
        return 0
    if args.before:
        print(zoo_before_after(args.before, args.results))
        return 0
    for name in args.names or list(TABLES):
        if name not in TABLES:
            p.error(f"unknown table {name!r} (valid: {', '.join(TABLES)})")
        print(f"## {name}\n\n{TABLES[name](args.results)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

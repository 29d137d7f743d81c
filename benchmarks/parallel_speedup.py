"""Parallel speed-up with an injected model latency of 0.2 s per call.

Runs the same trials with 1 and with 8 workers and prints the speed-up (target: >= 6x).
Also checks that the records are identical whatever the concurrency.

    python benchmarks/parallel_speedup.py [--trials 16] [--latency 0.2]
"""

from __future__ import annotations

import argparse

from _common import timed_run

VOLATILE = ("wall_s", "started_at", "run")


def strip(rows: list[dict]) -> list[dict]:
    return sorted(({k: v for k, v in r.items() if k not in VOLATILE} for r in rows), key=lambda r: r["trial_id"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    common = ("suite=smoke", f"trials={args.trials}", f"latency_s={args.latency}")
    serial, rows1 = timed_run(*common, "workers=1")
    parallel, rows8 = timed_run(*common, "workers=8")
    calls = sum(r["steps"] for r in rows1)
    print(f"{len(rows1)} trials, {calls} model calls x {args.latency} s injected latency")
    print(
        f"workers=1: {serial:.2f} s   workers=8: {parallel:.2f} s   speed-up: {serial / parallel:.1f}x (target >= 6x)"
    )
    print("records identical across concurrency:", strip(rows1) == strip(rows8))


if __name__ == "__main__":
    main()

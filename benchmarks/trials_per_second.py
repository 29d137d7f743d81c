"""Trials per second on the smoke suite with the reference agent (whole run, records included).

python benchmarks/trials_per_second.py [--trials 20]
"""

from __future__ import annotations

import argparse

from _common import timed_run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    for strategy in ("none", "headtail"):
        seconds, rows = timed_run("suite=smoke", f"strategy={strategy}", "budget=2k", f"trials={args.trials}")
        steps = sum(r["steps"] for r in rows)
        print(
            f"strategy={strategy:<9} {len(rows)} trials in {seconds:.2f} s: {len(rows) / seconds:.1f} trials/s, "
            f"{steps / seconds:.0f} steps/s (includes summary.csv and plots)"
        )


if __name__ == "__main__":
    main()

"""Write ``study.csv``: a SYNTHETIC per-instance results table, shaped like a published study's.

The shape is that of the per-instance tables of studies comparing context-management strategies
on SWE-bench Verified (500 instances; one row per instance and strategy; whether it was resolved,
what it cost): three strategies, ``raw_agent`` (no management), ``observation_masking`` and
``llm_summary``. The numbers are made up here, from a fixed seed, with a latent difficulty per
instance shared by the three strategies (so that results are paired, as real ones are); they are
not any study's results. Rerunning the script writes the same bytes.

    python examples/imported_study/make_study.py [--out examples/imported_study/study.csv]
"""

from __future__ import annotations

import argparse
import csv
import math
import random
from pathlib import Path

SEED = 20250826
INSTANCES = 500
REPOS = ("astropy", "django", "matplotlib", "pylint", "pytest", "requests", "scikit-learn", "sphinx", "sympy", "xarray")
# (strategy, shift of the success threshold, cost multiplier, extra cost per instance in $)
STRATEGIES = (
    ("raw_agent", 0.00, 1.00, 0.0),
    ("observation_masking", 0.02, 0.48, 0.0),
    ("llm_summary", -0.01, 0.50, 0.03),
)
PRICE_PER_MTOK = 1.25  # $ per million input tokens (cost is mostly input)
FIELDS = ("instance_id", "strategy", "resolved", "cost_usd", "input_tokens", "turns")


def instance_ids(rng: random.Random) -> list[str]:
    """500 distinct ids in SWE-bench's ``owner__repo-number`` form (made up)."""
    ids: set[str] = set()
    while len(ids) < INSTANCES:
        repo = rng.choice(REPOS)
        ids.add(f"{repo}__{repo}-{rng.randint(1000, 29999)}")
    return sorted(ids)


def rows(seed: int = SEED) -> list[dict]:
    """Every (instance, strategy) row, deterministic for a seed."""
    rng = random.Random(seed)
    out = []
    for instance in instance_ids(rng):
        difficulty = rng.random()  # shared by the three strategies: pairs are correlated
        base_cost = math.exp(rng.gauss(math.log(0.9), 0.6))  # $ of the unmanaged agent on this instance
        turns = max(8, int(rng.gauss(55, 20)))
        for name, shift, multiplier, extra in STRATEGIES:
            noise = rng.gauss(0, 0.08)  # per-strategy luck: makes discordant pairs
            resolved = difficulty + noise < 0.53 + shift
            cost = base_cost * multiplier * math.exp(rng.gauss(0, 0.15)) + extra
            out.append(
                {
                    "instance_id": instance,
                    "strategy": name,
                    "resolved": str(resolved).lower(),
                    "cost_usd": f"{cost:.4f}",
                    "input_tokens": int(cost / PRICE_PER_MTOK * 1e6),
                    "turns": max(5, turns + int(rng.gauss(0, 6))),
                }
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).with_name("study.csv")))
    args = parser.parse_args()
    with open(args.out, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows())
    print(f"wrote {args.out} ({INSTANCES} instances x {len(STRATEGIES)} strategies, synthetic)")


if __name__ == "__main__":
    main()

"""Which strategies fail where ``none`` succeeds: family x strategy x budget success (issue 13 §2).

    python benchmarks/discrimination.py [--family NAME ...] [--instances 5] [--budgets 8k,25k]
                                        [--profile realistic] [--trials 1] [--suite default]

Runs every strategy of the zoo (``experiment=strategy_zoo``'s list) on each family at the suite's
size and prints, per family and budget, the successes of each strategy and the strategies whose
success rate is below ``none``'s. A family discriminates when at least two strategies fail where
``none`` succeeds. Reference agent (scripted, not an LLM). The committed table of the default
suite is generated from the strategy_zoo preset (strategies/README.md, block ``discrimination``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from _common import compose, suite_knobs  # noqa: E402  (puts the repository on sys.path)

ZOO = [
    "none",
    "sliding_window",
    "headtail",
    "clear_tool_results",
    "summarize",
    "layered",
    "offload",
    "adaptive_window",
    "status_bar",
    "notes",
    "isolate",
]
FAMILIES = [
    "invoice_audit",
    "code_review",
    "brand_report",
    "people_tracker",
    "call_budget",
    "failure_memory",
    "callback_search",
]


def run_cell(family: str, strategy: str, budget: str, args: argparse.Namespace, out: Path) -> list[dict]:
    """Trial rows of one (family, strategy, budget) cell."""
    from harness.runner import execute

    cfg = compose(
        f"suite={args.suite}",
        f"suite.instances={args.instances}",
        f"task={family}",
        *suite_knobs(args.suite, family),
        f"strategy={strategy}",
        f"budget={budget}",
        f"trials={args.trials}",
        f"model.profile={args.profile}",
        "progress=false",
        "plots=false",
    )
    execute(cfg, out, echo=lambda _: None)
    return [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]


def row(family: str, budget: str, cells: dict[str, list[dict]]) -> str:
    """One table row: successes per strategy, then the strategies below ``none``."""
    rate = {s: sum(r["success"] for r in rows) / max(1, len(rows)) for s, rows in cells.items()}
    below = [s for s in cells if s != "none" and rate[s] < rate["none"]]
    counts = [f"{sum(r['success'] for r in rows)}/{len(rows)}" for rows in cells.values()]
    return f"| {family} | {budget} | " + " | ".join(counts) + f" | {len(below)}: {', '.join(below) or '-'} |"


def main(argv: list[str] | None = None) -> int:
    """Print the discrimination table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append", help="a family (repeatable); default all")
    parser.add_argument("--strategies", default=",".join(ZOO))
    parser.add_argument("--instances", type=int, default=5)
    parser.add_argument("--budgets", default="8k,25k")
    parser.add_argument("--profile", default="realistic")
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--suite", default="default")
    args = parser.parse_args(argv)
    strategies = args.strategies.split(",")
    print(
        f"## discrimination: suite {args.suite}, {args.instances} instances x {args.trials} trials, profile "
        f"{args.profile} (reference agent, not an LLM)\n"
    )
    print("| family | budget | " + " | ".join(f"`{s}`" for s in strategies) + " | strategies below `none` |")
    print("|---|---|" + "---|" * len(strategies) + "---|")
    with tempfile.TemporaryDirectory() as tmp:
        for family in args.family or FAMILIES:
            for budget in args.budgets.split(","):
                cells = {s: run_cell(family, s, budget, args, Path(tmp) / f"{family}-{s}-{budget}") for s in strategies}
                print(row(family, budget, cells), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

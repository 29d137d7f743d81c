"""Which strategies fail where ``none`` succeeds: family x strategy x budget success (issues 13 §2 and 34).

    python benchmarks/discrimination.py [--family NAME ...] [--instances 5] [--budgets 8k,25k]
                                        [--strategies a,b,... | --strategies issue34]
                                        [--profile realistic] [--trials 1] [--suite default] [--workers 1]

Runs every strategy of the zoo (``experiment=strategy_zoo``'s list; ``--strategies issue34``: issue 34's
eight, ``ISSUE_34``) on each family at the suite's size and prints, per family and budget, the successes of
each strategy, the strategies whose success rate is below ``none``'s (issue 13: a family discriminates when
at least two strategies fail where ``none`` succeeds) and the strategies at least 20 points below the best
strategy of that family and budget. Then issue 34's target: the families where, at some budget, two or more
strategies are at least 20 points below the family's best, naming them; "target met" when at least four
families qualify. Reference agent (scripted, not an LLM). The committed table of the default suite is
generated from the strategy_zoo preset (strategies/README.md, block ``discrimination``).
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
ISSUE_34 = ["none", "sliding_window", "headtail", "clear_tool_results", "summarize", "layered", "offload", "notes"]
FAMILIES = [
    "invoice_audit",
    "code_review",
    "brand_report",
    "people_tracker",
    "call_budget",
    "failure_memory",
    "callback_search",
    "late_question",
    "one_shot_queue",
    "latest_value",
]
GAP = 0.20  # issue 34: a strategy at least this far (20 points of success rate) below the family's best
QUALIFYING = 4  # issue 34: families with two or more such strategies, for "target met"


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
        f"workers={args.workers}",
        "progress=false",
        "plots=false",
    )
    execute(cfg, out, echo=lambda _: None)
    return [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]


def rates(cells: dict[str, list[dict]]) -> dict[str, float]:
    """Success rate per strategy."""
    return {s: sum(r["success"] for r in rows) / max(1, len(rows)) for s, rows in cells.items()}


def far_below_best(cells: dict[str, list[dict]]) -> list[str]:
    """The strategies whose success rate is at least ``GAP`` below the best strategy's (issue 34)."""
    rate = rates(cells)
    best = max(rate.values(), default=0.0)
    return [s for s in cells if best - rate[s] >= GAP - 1e-9]


def row(family: str, budget: str, cells: dict[str, list[dict]]) -> str:
    """One table row: successes per strategy, the strategies below ``none``, those 20 points below the best."""
    rate = rates(cells)
    below = [s for s in cells if s != "none" and "none" in rate and rate[s] < rate["none"]]
    far = far_below_best(cells)
    counts = [f"{sum(r['success'] for r in rows)}/{len(rows)}" for rows in cells.values()]
    return (
        f"| {family} | {budget} | "
        + " | ".join(counts)
        + f" | {len(below)}: {', '.join(below) or '-'} | {len(far)}: {', '.join(far) or '-'} |"
    )


def target(far: dict[str, dict[str, list[str]]], best: dict[str, dict[str, str]]) -> list[str]:
    """Issue 34's target lines from family -> budget -> the strategies 20 points below the best (and the best)."""
    qualifying = {f: {b: s for b, s in by_budget.items() if len(s) >= 2} for f, by_budget in far.items()}
    qualifying = {f: by_budget for f, by_budget in qualifying.items() if by_budget}
    verdict = "target met" if len(qualifying) >= QUALIFYING else "target not met"
    lines = [
        f"issue 34 target: {len(qualifying)} of {len(far)} families have two or more strategies at least "
        f"{GAP * 100:.0f} points below the family's best strategy at some budget (target: at least {QUALIFYING}): "
        f"{verdict}"
    ]
    for family, by_budget in far.items():
        named = "; ".join(f"{b}: {', '.join(s) or '-'} (best {best[family][b]})" for b, s in by_budget.items())
        lines.append(f"- {family}: {'qualifies' if family in qualifying else 'does not qualify'}; {named}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the discrimination table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append", help="a family (repeatable); default all")
    parser.add_argument("--strategies", default=",".join(ZOO), help="comma-separated, or issue34 (ISSUE_34)")
    parser.add_argument("--instances", type=int, default=5)
    parser.add_argument("--budgets", default="8k,25k")
    parser.add_argument("--profile", default="realistic")
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--suite", default="default")
    parser.add_argument("--workers", type=int, default=1, help="trials in parallel (records are the same)")
    args = parser.parse_args(argv)
    strategies = ISSUE_34 if args.strategies == "issue34" else args.strategies.split(",")
    print(
        f"## discrimination: suite {args.suite}, {args.instances} instances x {args.trials} trials, profile "
        f"{args.profile} (reference agent, not an LLM)\n"
    )
    print(
        "| family | budget | "
        + " | ".join(f"`{s}`" for s in strategies)
        + f" | strategies below `none` | {GAP * 100:.0f}+ points below the best |"
    )
    print("|---|---|" + "---|" * len(strategies) + "---|---|")
    far: dict[str, dict[str, list[str]]] = {}
    best: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for family in args.family or FAMILIES:
            for budget in args.budgets.split(","):
                cells = {s: run_cell(family, s, budget, args, Path(tmp) / f"{family}-{s}-{budget}") for s in strategies}
                print(row(family, budget, cells), flush=True)
                rate = rates(cells)
                top = max(rate.values(), default=0.0)
                far.setdefault(family, {})[budget] = far_below_best(cells)
                best.setdefault(family, {})[budget] = f"{', '.join(s for s in cells if rate[s] == top)} {top:.0%}"
    print()
    print("\n".join(target(far, best)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Do fixed-token triggers fire at long size? Compactions per family of ``clear_tool_results`` and ``summarize``.

    python benchmarks/thresholds_fire.py [--suite long] [--family NAME ...] [--instances 1]
                                         [--trigger 60k] [--threshold 100k] [--profile realistic]

Issue 34: at ``suite=long`` every family must grow past the triggers that practitioners set in tokens, so
that ``clear_tool_results`` with ``strategy.trigger=60k`` and ``summarize`` with ``strategy.threshold=100k``
compact at least once in every family. Runs both on every family of the suite (budget 1M and a model
context window of 10M, so that neither the budget nor the window cuts a trial: only the trigger acts) with
the reference agent and prints per family and strategy: trials, agent steps, peak request tokens, compactions
(the trial row's ``compactions``: the ``compaction`` strategy events, one per batch cleared or summary
written) and successes. Target: at least one compaction in every trial of every family under both
strategies; exit code 0 when met, 1 when not. Reference agent (scripted, not an LLM).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from _common import compose, suite_knobs  # noqa: E402  (puts the repository on sys.path)


def strategies(args: argparse.Namespace) -> dict[str, list[str]]:
    """Label -> strategy overrides of the two strategies under test."""
    return {
        f"clear_tool_results trigger={args.trigger}": [
            "strategy=clear_tool_results",
            f"strategy.trigger={args.trigger}",
        ],
        f"summarize threshold={args.threshold}": ["strategy=summarize", f"strategy.threshold={args.threshold}"],
    }


def run(overrides: list[str], args: argparse.Namespace, out: Path, family: str | None = None) -> list[dict]:
    """Trial rows of one strategy on the suite (or on ``family`` alone, at the suite's size)."""
    from harness.runner import execute

    only = [f"task={family}", *suite_knobs(args.suite, family)] if family else []
    cfg = compose(
        f"suite={args.suite}",
        f"suite.instances={args.instances}",
        *only,
        *overrides,
        "budget=1M",
        "trials=1",
        f"model.profile={args.profile}",
        "model.context_window=10000000",
        f"workers={args.workers}",
        "progress=false",
        "plots=false",
    )
    execute(cfg, out, echo=lambda _: None)
    return [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]


def table(rows_by_strategy: dict[str, list[dict]]) -> tuple[str, list[str]]:
    """The table (family, strategy, trials, steps, peak request, compactions, successes) and the cells that
    did not fire (a family and strategy with a trial of no compaction)."""
    lines = [
        "| family | strategy | trials | steps | peak request tokens | compactions | success | fired |",
        "|---|---|---|---|---|---|---|---|",
    ]
    silent = []
    families = sorted({r["family"] for rows in rows_by_strategy.values() for r in rows})
    for family in families:
        for label, rows in rows_by_strategy.items():
            f = [r for r in rows if r["family"] == family]
            fired = all(r["compactions"] >= 1 for r in f)
            if not fired:
                silent.append(f"{family} ({label})")
            steps = "/".join(str(r["steps"]) for r in f)
            peak = "/".join(f"{r['peak_context']:,}" for r in f)
            compactions = "/".join(str(r["compactions"]) for r in f)
            success = f"{sum(bool(r['success']) for r in f)}/{len(f)}"
            lines.append(
                f"| {family} | {label} | {len(f)} | {steps} | {peak} | {compactions} | {success} | "
                f"{'yes' if fired else 'NO'} |"
            )
    return "\n".join(lines), silent


def main(argv: list[str] | None = None) -> int:
    """Print the table and the target; 0 when every family compacts under both strategies, else 1."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="long")
    parser.add_argument("--family", action="append", help="a family of the suite (repeatable); default all")
    parser.add_argument("--instances", type=int, default=1)
    parser.add_argument("--trigger", default="60k", help="clear_tool_results' strategy.trigger")
    parser.add_argument("--threshold", default="100k", help="summarize's strategy.threshold")
    parser.add_argument("--profile", default="realistic")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    results: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, overrides) in enumerate(strategies(args).items()):
            if args.family:
                results[label] = [
                    row for family in args.family for row in run(overrides, args, Path(tmp) / f"{i}-{family}", family)
                ]
            else:
                results[label] = run(overrides, args, Path(tmp) / str(i))
    print(
        f"## thresholds fire: suite {args.suite}, {args.instances} instance(s) x 1 trial, budget 1M, context window "
        f"10M, profile {args.profile} (reference agent, not an LLM)\n"
    )
    text, silent = table(results)
    print(text)
    families = sorted({r["family"] for rows in results.values() for r in rows})
    print(
        "\nsteps, peak request tokens and compactions per trial (instance), '/'-separated; a compaction is a "
        "`compaction` strategy event (the trial row's `compactions`)."
    )
    goal = "target (at least one compaction in every family, both strategies)"
    if silent:
        print(f"{goal}: NOT met; no compaction in {', '.join(silent)}")
        return 1
    print(f"{goal}: met in all {len(families)} families")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

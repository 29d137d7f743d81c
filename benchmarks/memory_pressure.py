"""How much memory the tasks demand of an agent that batches: history per family, both profiles.

    python benchmarks/memory_pressure.py [--suite default|long] [--instances 2]

Runs strategy ``none`` (budget 1M, so nothing is cut) on every family of the suite with the
reference agent under ``perfect`` (one call per step), ``realistic`` (batches up to 8 calls whose
arguments it knows) and ``greedy`` (every such call in one turn, up to the task's own
``max_calls_per_turn``), and prints per family: agent steps, peak request, final history, the
largest growth of the history in one round and its share of the final history (a task whose
information arrives in one round gives a strategy nothing to manage). Issue 13's targets, read
off the output: with the batching agents, history past 40K at default size and past 120K at
long size, across many rounds (largest round a small share of the final history). The profiles'
early-submit draw is off (``early_submit=0``): the table measures what the task demands, not an agent
that stops early.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from _common import compose, suite_knobs  # noqa: E402  (puts the repository on sys.path)


def run(suite: str, profile: str, instances: int, out: Path, family: str | None = None) -> list[dict]:
    """Trial rows of ``none`` on ``suite`` (or its ``family`` alone) under ``profile``; rows gain
    ``max_round_growth``."""
    from harness.runner import execute

    only = [f"task={family}", *suite_knobs(suite, family)] if family else []
    cfg = compose(
        f"suite={suite}",
        f"suite.instances={instances}",
        "strategy=none",
        "budget=1M",
        "trials=1",
        f"model.profile={profile}",
        "progress=false",
        "model.context_window=10000000",
        "model.profile_params.early_submit=0",
        *only,
    )
    execute(cfg, out, echo=lambda _: None)
    steps = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    rows = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    for row in rows:
        history = [s["history_tokens"] for s in steps if s["trial_id"] == row["trial_id"] and s["kind"] == "agent"]
        row["max_round_growth"] = max((b - a for a, b in zip(history, history[1:], strict=False)), default=0)
    return rows


def mean(rows: list[dict], key: str) -> float:
    """The mean of ``key`` over ``rows``."""
    return sum(r[key] for r in rows) / len(rows)


def table(rows_by_profile: dict[str, list[dict]]) -> str:
    """Per family and profile: steps, peak request, final history, largest one-round growth (means)."""
    header = "| family | profile | steps | peak request | final history | largest one-round growth | its share |"
    lines = [header, "|---|---|---|---|---|---|---|"]
    families = sorted({r["family"] for rows in rows_by_profile.values() for r in rows})
    for family in families:
        for profile, rows in rows_by_profile.items():
            f = [r for r in rows if r["family"] == family]
            lines.append(
                f"| {family} | {profile} | {mean(f, 'steps'):.0f} | {mean(f, 'peak_context'):,.0f} | "
                f"{mean(f, 'final_history_tokens'):,.0f} | {mean(f, 'max_round_growth'):,.0f} | "
                f"{mean(f, 'max_round_growth') / max(1.0, mean(f, 'final_history_tokens')):.0%} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the memory-pressure table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="default")
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument(
        "--profiles", default="perfect,realistic,greedy", help="reference-agent profiles, comma-separated"
    )
    parser.add_argument("--family", help="one family alone (task=NAME), at the suite's size")
    args = parser.parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for profile in args.profiles.split(","):
            results[profile] = run(args.suite, profile, args.instances, Path(tmp) / profile, args.family)
    print(
        f"## strategy none, budget 1M, suite {args.suite} ({args.instances} instances; reference agent, not an LLM)\n"
    )
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

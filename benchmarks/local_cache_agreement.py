"""Reported vs simulated prefix cache on the real local model (Qwen2.5-Coder-0.5B on llama-server).

Runs the smoke suite twice through ``python -m harness run model=local``: ``strategy=none``
and a strategy that rewrites history (``clear_tool_results`` if this checkout has it, else
``headtail``), then prints per step the engine's reported cached tokens (``timings.cache_n``)
next to the harness's simulated figure (``cache_profile=llamacpp``), and an agreement summary.

The two figures use different tokenizers (Qwen's vs cl100k), so the comparison is made on
hit rates (cached / prompt) as well as on raw counts.

    .venv/bin/python benchmarks/local_cache_agreement.py                 # none vs the default other
    .venv/bin/python benchmarks/local_cache_agreement.py headtail --budget 1.5k --max-steps 6

Needs the local extra: pip install -e ".[local]". Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.records import read_jsonl  # noqa: E402


def default_other() -> str:
    return "clear_tool_results" if (ROOT / "configs" / "strategy" / "clear_tool_results.yaml").exists() else "headtail"


def run(strategy: str, args: argparse.Namespace, out: Path) -> tuple[list[dict], dict, float]:
    overrides = [
        "model=local",
        f"model.variant={args.variant}",
        "suite=smoke",
        "trials=1",
        f"strategy={strategy}",
        f"budget={args.budget}",
        f"max_steps={args.max_steps}",
        "cache_profile=llamacpp",
        "progress=false",
        f"hydra.run.dir={out}",
        *args.overrides,
    ]
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "harness", "run", *overrides], cwd=ROOT, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"run failed ({strategy}): {result.stderr.strip()[-2000:]}")
    return read_jsonl(out / "steps.jsonl"), read_jsonl(out / "trials.jsonl")[0], wall


def rate(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def report(strategy: str, steps: list[dict], trial: dict, wall: float) -> dict:
    print(f"\n== strategy={strategy}  outcome={trial['outcome']}  steps={trial['steps']}  wall={wall:.0f}s")
    print(
        f"{'step':>4} {'req_tok':>8} {'prompt':>7} {'reported':>9} {'simulated':>9} {'rep_rate':>8} {'sim_rate':>8} "
        f"{'lost':>6}  break"
    )
    for s in steps:
        if s["kind"] != "agent":
            continue
        print(
            f"{s['step']:>4} {s['request_tokens']:>8} {s['prompt_tokens']:>7} {s['cached_tokens']:>9} "
            f"{s['sim_cached_tokens']:>9} {rate(s['cached_tokens'], s['prompt_tokens']):>8.2f} "
            f"{rate(s['sim_cached_tokens'], s['request_tokens']):>8.2f} {s['cache_lost_tokens']:>6}  "
            f"{s['cache_break'] or ''}"
        )
    agent = [s for s in steps if s["kind"] == "agent"]
    later = agent[1:]  # the first request has nothing to hit
    diffs = [
        abs(rate(s["cached_tokens"], s["prompt_tokens"]) - rate(s["sim_cached_tokens"], s["request_tokens"]))
        for s in later
    ]
    hit_agree = [(s["cached_tokens"] > 0) == (s["sim_cached_tokens"] > 0) for s in later]
    summary = {
        "strategy": strategy,
        "steps": len(agent),
        "sources": sorted({s["cached_source"] for s in agent}),
        "reported_cached": sum(s["cached_tokens"] for s in agent),
        "simulated_cached": sum(s["sim_cached_tokens"] for s in agent),
        "reported_hit_rate": rate(sum(s["cached_tokens"] for s in agent), sum(s["prompt_tokens"] for s in agent)),
        "simulated_hit_rate": rate(sum(s["sim_cached_tokens"] for s in agent), sum(s["request_tokens"] for s in agent)),
        "mean_abs_rate_diff": statistics.fmean(diffs) if diffs else 0.0,
        "hit_agreement": statistics.fmean(hit_agree) if hit_agree else 1.0,
        "breaks": sum(1 for s in agent if s["cache_break"]),
    }
    print(
        f"   totals: reported cached {summary['reported_cached']:,} of {sum(s['prompt_tokens'] for s in agent):,} "
        f"prompt tokens ({summary['reported_hit_rate']:.1%}); simulated {summary['simulated_cached']:,} of "
        f"{sum(s['request_tokens'] for s in agent):,} ({summary['simulated_hit_rate']:.1%}); "
        f"sources {summary['sources']}"
    )
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("other", nargs="?", default=default_other(), help="the strategy compared with none")
    parser.add_argument("--budget", default="1.5k", help="token budget (small, so that the other strategy acts)")
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument("--variant", default="0.5b")
    parser.add_argument("--keep", help="folder for the two runs (default: a temporary folder)")
    parser.add_argument("overrides", nargs="*", help="extra key=value overrides for both runs")
    args = parser.parse_args()
    base = Path(args.keep or tempfile.mkdtemp(prefix="ctxbench-cache-agreement-"))
    print(f"local model {args.variant} on the smoke suite; runs in {base}")
    summaries = []
    for strategy in ("none", args.other):
        steps, trial, wall = run(strategy, args, base / strategy)
        summaries.append(report(strategy, steps, trial, wall))
    print("\n== agreement (steps after the first; rates = cached / prompt, each in its own tokenizer)")
    print(f"{'strategy':<20} {'rep_rate':>8} {'sim_rate':>8} {'mean|diff|':>10} {'hit/miss agree':>14} {'breaks':>6}")
    for s in summaries:
        print(
            f"{s['strategy']:<20} {s['reported_hit_rate']:>8.1%} {s['simulated_hit_rate']:>8.1%} "
            f"{s['mean_abs_rate_diff']:>10.3f} {s['hit_agreement']:>14.0%} {s['breaks']:>6}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

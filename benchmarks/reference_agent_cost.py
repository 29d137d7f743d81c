"""The reference agent's own cost per step as a family grows (issue 23): CPU seconds of its ``complete()`` calls.

    python benchmarks/reference_agent_cost.py [--family NAME ...] [--sizes 1,4,10]
        [--profile realistic] [--max-steps 600]

Runs strategy ``none`` (nothing is cut: an unbounded budget and window) on one instance of every
family at 1x, 4x and 10x its default size (``SIZES``: the family's size knobs scaled, clamped to
their documented ranges and made up by another knob where one range ends), times the CPU of the
scripted model's ``complete()`` calls alone (the policy, its profile and its attention model; not
the harness, its token counts or its records) and prints per family and size: agent steps, the
final history (tokens, and its ratio to 1x: the size actually reached), CPU ms per step, and the
10x/1x ratio of the per-step cost, beside the ratio of the input a step brings (final history over
steps: what a step must at least read; larger results and a longer ledger at 10x). Target (read off
the output): a per-step ratio of at most 1.5 for every family.
A trial stops at ``--max-steps`` (marked ``*``): under ``realistic`` a history of millions of tokens
makes the attention model miss about half of every file (``cap``), and ``code_review`` then re-reads
its files until the step limit. Each size runs once: a second run in one process would find the
policies' text caches (``reference_agent/kit/incremental.py``) warm. The figures move by about 20-40% between
runs on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from _common import compose  # noqa: E402  (puts the repository on sys.path)

FAMILIES = (
    "invoice_audit",
    "brand_report",
    "call_budget",
    "callback_search",
    "code_review",
    "failure_memory",
    "people_tracker",
)
# the task knobs of each family at 1x (configs/task/<family>.yaml), 4x and 10x; where a knob's range ends
# (code_review's 163 files, call_budget's 99 merchants, people_tracker's 18 people, failure_memory's 200 tickets,
# callback_search's 100 functions per file) another size knob makes up what it can: the history column says how
# far each family really grew
SIZES: dict[str, dict[int, dict[str, int]]] = {
    "invoice_audit": {
        1: {},
        4: {"pages": 120, "duplicates": 24, "max_distance": 48},
        10: {"pages": 300, "duplicates": 60, "max_distance": 120},
    },
    "brand_report": {1: {}, 4: {"pages": 160}, 10: {"pages": 400}},
    "call_budget": {1: {}, 4: {"merchants": 96}, 10: {"merchants": 99, "noise": 56}},
    "callback_search": {
        1: {},
        4: {"files": 480, "functions_per_file": 100},
        10: {"files": 1200, "functions_per_file": 100, "grep_cap": 600},
    },
    "code_review": {1: {}, 4: {"files": 163, "bugs": 24}, 10: {"files": 163, "bugs": 60}},
    "failure_memory": {
        1: {},
        4: {"tickets": 88, "rows": 360},
        10: {"tickets": 200, "ticket_messages": 35, "rows": 900},
    },
    "people_tracker": {
        1: {},
        4: {"people": 18, "roundups": 5, "noise": 30},
        10: {"people": 18, "roundups": 6, "noise": 60},
    },
}


class Meter:
    """CPU seconds and calls of the scripted sessions' ``complete()`` (patched on the class for one run)."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self.calls = 0

    def __enter__(self) -> "Meter":
        from reference_agent.scripted import ScriptedSession

        self.original = ScriptedSession.complete
        meter, original = self, self.original

        def complete(session, messages, tools):
            start = time.process_time()
            try:
                return original(session, messages, tools)
            finally:
                meter.cpu += time.process_time() - start
                meter.calls += 1

        ScriptedSession.complete = complete
        return self

    def __exit__(self, *exc) -> None:
        from reference_agent.scripted import ScriptedSession

        ScriptedSession.complete = self.original


def measure(family: str, scale: int, profile: str, seed: int = 0, max_steps: int = 600) -> dict:
    """One trial of ``family`` at ``scale`` under ``none``: steps, final history, model CPU per step."""
    from harness.runner import execute

    knobs = [f"task.{key}={value}" for key, value in SIZES[family][scale].items()]
    cfg = compose(
        f"task={family}",
        *knobs,
        "suite.instances=1",
        f"seed={seed}",
        "strategy=none",
        "budget=100M",
        "trials=1",
        f"model.profile={profile}",
        "model.context_window=100000000",
        f"max_steps={max_steps}",
        "progress=false",
        "plots=false",
    )
    with tempfile.TemporaryDirectory() as tmp, Meter() as meter:
        out = Path(tmp) / "run"
        execute(cfg, out, echo=lambda _: None)
        row = json.loads((out / "trials.jsonl").read_text().splitlines()[0])
    return {
        "steps": row["steps"],
        "history": row["final_history_tokens"],
        "success": row["success"],
        "limit": row["outcome"] == "step_limit",
        "cpu": meter.cpu,
        "calls": meter.calls,
        "per_step": meter.cpu / max(1, meter.calls),
    }


def main(argv: list[str] | None = None) -> int:
    """Print the per-step cost table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append", choices=FAMILIES, help="only this family (repeatable)")
    parser.add_argument("--sizes", default="1,4,10", help="scales to run, of those in SIZES (default 1,4,10)")
    parser.add_argument("--profile", default="realistic", help="reference-agent profile (default realistic)")
    parser.add_argument("--max-steps", type=int, default=600, help="step limit of each trial (default 600)")
    args = parser.parse_args(argv)
    scales = [int(s) for s in args.sizes.split(",")]
    print(f"reference agent ({args.profile}), strategy none: CPU of its complete() calls per step")
    last = f"{scales[-1]}x/{scales[0]}x"
    print(
        "| family | "
        + " | ".join(f"{s}x steps / history / ms per step" for s in scales)
        + (f" | {last} per step | {last} input per step |" if len(scales) > 1 else " |")
    )
    print("|---|" + "---|" * (len(scales) + 2 * (len(scales) > 1)))
    for family in args.family or FAMILIES:
        results = {s: measure(family, s, args.profile, max_steps=args.max_steps) for s in scales}
        base = results[scales[0]]
        cells = [
            f"{r['steps']}{'*' if r['limit'] else ''} / {r['history'] / 1000:,.0f}K "
            f"({r['history'] / max(1, base['history']):.1f}x) / "
            f"{r['per_step'] * 1000:.2f}"
            for r in results.values()
        ]
        top = results[scales[-1]]
        ratio = top["per_step"] / max(1e-9, base["per_step"])
        growth = (top["history"] / max(1, top["steps"])) / max(1e-9, base["history"] / max(1, base["steps"]))
        print(
            f"| {family} | " + " | ".join(cells) + (f" | {ratio:.2f} | {growth:.2f} |" if len(scales) > 1 else " |"),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Harness overhead per step as the history grows from 1K to 200K tokens.

A synthetic task returns ~1,000-token tool results and an instant model keeps calling it,
under a strategy (``--strategy none|headtail|clear_tool_results --budget 25k``),
so the history grows by ~1K tokens a step. The overhead of a step is the time between
two model calls (projection, validation, counting, records, tool execution). Because
token counts are memoized per message, it must stay flat as the history grows.
The last line is the part of it the loop's in-place mutation check takes (``History.first_change``,
one comparison of the history with its frozen copies per step; harness/agent_loop.py).

    python benchmarks/step_overhead.py [--steps 220] [--strategy headtail --budget 25k]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (puts the repo on sys.path)

from harness.history import History
from harness.trial import TrialSettings, run_trial
from harness.models.base import Completion, Usage
from harness.records import RunWriter
from harness.budget import parse_budget
from strategies.clear_tool_results import ClearToolResults
from strategies.headtail import HeadTail
from strategies.none import NoManagement
from tasks.base import Grade, TaskInstance, ToolResult, tool_schema

STRATEGIES = {"none": NoManagement, "headtail": HeadTail, "clear_tool_results": ClearToolResults}

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


class GrowingTask(TaskInstance):
    """Every `read(n)` returns a distinct ~1,000-token text."""

    family = "synthetic"
    id = "synthetic-s0"
    seed = 0
    system_prompt = "You read chunks."
    user_prompt = "Read chunks until told to stop."
    tools = [tool_schema("read", "Read chunk n.", {"n": {"type": "integer"}})]
    answer_schema = {"type": "object", "properties": {}}

    def call(self, name, args):
        n = args["n"]
        text = " ".join(f"{WORDS[(n + i) % len(WORDS)]}{n}-{i}" for i in range(330))
        return ToolResult(text, resource=f"chunk:{n}")

    def grade(self, answer):
        return Grade(True, 1.0)

    def reference_policy(self):  # pragma: no cover - not used
        raise NotImplementedError


class InstantModel:
    """Calls read(step) forever and notes when each call arrives."""

    name = "instant"
    context_window = 10**9
    is_reference = False

    def __init__(self):
        self.calls: list[tuple[float, int]] = []

    def complete(self, messages, tools):
        self.calls.append((time.perf_counter(), len(messages)))
        n = len(self.calls)
        message = {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": f"c{n}", "type": "function", "function": {"name": "read", "arguments": f'{{"n": {n}}}'}}
            ],
        }
        return Completion(message, Usage(prompt_tokens=None, cached_tokens=None, output_tokens=None))


def time_mutation_checks() -> list[tuple[int, float]]:
    """Time every ``History.first_change`` call from now on: ``(messages, seconds)`` per call."""
    checks: list[tuple[int, float]] = []
    check = History.first_change

    def timed(history: History) -> str | None:
        start = time.perf_counter()
        change = check(history)
        checks.append((len(history.messages), time.perf_counter() - start))
        return change

    History.first_change = timed  # type: ignore[method-assign,assignment]
    return checks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=220)
    parser.add_argument("--strategy", default="none", help="none, headtail or clear_tool_results")
    parser.add_argument("--budget", default="1G", help="token budget for the strategy (e.g. 25k)")
    args = parser.parse_args()
    model = InstantModel()
    checks = time_mutation_checks()
    with tempfile.TemporaryDirectory() as tmp:
        writer = RunWriter(Path(tmp))
        strategy = STRATEGIES[args.strategy]()
        settings = TrialSettings(
            budget=parse_budget(args.budget.replace("G", "000M")),
            max_steps=args.steps,
            strategy_name=args.strategy,
            strategy_params={},
            model_name="instant",
        )
        run_trial(
            trial_id="bench",
            trial_index=0,
            instance=GrowingTask(),
            strategy=strategy,
            model=model,
            summarizer=None,
            settings=settings,
            writer=writer,
        )
        writer.close()
        from harness.records import read_jsonl

        steps = read_jsonl(Path(tmp) / "steps.jsonl")
    tokens = [s["history_tokens"] for s in steps]  # the full history, whatever the strategy sends
    gaps = [(b[0] - a[0]) * 1000 for a, b in zip(model.calls, model.calls[1:], strict=False)]
    print(f"{'history tokens':>15} | {'overhead per step (ms, median of 10 steps)':>45}")
    for target in (1_000, 10_000, 50_000, 100_000, 150_000, 200_000):
        index = next((i for i, t in enumerate(tokens) if t >= target), None)
        if index is None or index + 10 > len(gaps):
            continue
        window = gaps[max(index - 5, 0) : index + 5]
        print(f"{tokens[index]:>15,} | {statistics.median(window):>45.3f}")
    first, last = statistics.median(gaps[5:25]), statistics.median(gaps[-20:])
    print(
        f"\nstrategy {args.strategy}, budget {args.budget}: {len(steps)} steps, history {tokens[-1]:,} tokens, "
        f"last request {steps[-1]['request_tokens']:,} tokens; "
        f"median overhead early {first:.3f} ms, late {last:.3f} ms (ratio {last / first:.2f})"
    )
    early_check = statistics.median(seconds for _, seconds in checks[5:25]) * 1e6
    late_check = statistics.median(seconds for _, seconds in checks[-20:]) * 1e6
    print(
        f"mutation check (History.first_change, {len(checks)} calls): median early {early_check:.1f} us, "
        f"late {late_check:.1f} us at {checks[-1][0]:,} messages"
    )


if __name__ == "__main__":
    main()

"""Per-step overhead of ctxbench's loop and of inspect_ai's ``react`` loop, side by side, on one trajectory.

The trajectory is step_overhead.py's: an instant model calls ``read(step)`` and every call returns a
distinct ~1,000-token text, so the history grows by ~1K tokens a step to 200K+. The overhead of a step
is the time between the model returning and the model being called again (the model's own time is
left out on both sides): projection, validation, counting, records and the tool call for ctxbench;
the agent loop, message bookkeeping, transcript events and the tool call for inspect. inspect runs
inside ``inspect_ai.eval`` on its ``mockllm`` model (offline: tokens are counted with ctxbench's
counter via ``use_ctxbench_tokens``, nothing is downloaded). ctxbench's side runs first, in this
process, before inspect_ai is imported (the script checks it).

    python benchmarks/inspect_overhead.py [--steps 220] [--strategy none|headtail|clear_tool_results --budget 25k]

With ``--strategy`` other than ``none``, ctxbench runs the strategy in its loop and inspect runs it
through ``CtxbenchCompaction`` (harness/integrations/inspect.py). Needs ``pip install -e ".[inspect]"``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (puts the repo on sys.path)
from step_overhead import STRATEGIES, WORDS, GrowingTask

from harness.budget import parse_budget
from harness.trial import TrialSettings, run_trial
from harness.models.base import Completion, Usage
from harness.records import RunWriter, read_jsonl

TARGETS = (1_000, 10_000, 50_000, 100_000, 150_000, 200_000)


class TimedModel:
    """Calls ``read(n)`` forever; notes when each call starts and ends."""

    name = "instant"
    context_window = 10**9
    is_reference = False

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []

    def complete(self, messages, tools):
        start = time.perf_counter()
        n = len(self.spans) + 1
        message = {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": f"c{n}", "type": "function", "function": {"name": "read", "arguments": f'{{"n": {n}}}'}}
            ],
        }
        self.spans.append((start, time.perf_counter()))
        return Completion(message, Usage(prompt_tokens=None, cached_tokens=None, output_tokens=None))


def gaps_ms(spans: list[tuple[float, float]]) -> list[float]:
    """Milliseconds from the end of one model call to the start of the next."""
    return [(b[0] - a[1]) * 1000 for a, b in zip(spans, spans[1:], strict=False)]


def run_ctxbench(steps: int, strategy: str, budget: int) -> tuple[list[float], list[int]]:
    """ctxbench's loop: the per-step gaps and the history tokens at each step."""
    model = TimedModel()
    with tempfile.TemporaryDirectory() as tmp:
        writer = RunWriter(Path(tmp))
        settings = TrialSettings(
            budget=budget, max_steps=steps, strategy_name=strategy, strategy_params={}, model_name="instant"
        )
        run_trial(
            trial_id="bench",
            trial_index=0,
            instance=GrowingTask(),
            strategy=STRATEGIES[strategy](),
            model=model,
            summarizer=None,
            settings=settings,
            writer=writer,
        )
        writer.close()
        history = [s["history_tokens"] for s in read_jsonl(Path(tmp) / "steps.jsonl")]
    return gaps_ms(model.spans), history


def run_inspect(steps: int, strategy: str, budget: int) -> list[float]:
    """inspect's react loop on mockllm over the same trajectory: the per-step gaps."""
    from inspect_ai import Task, eval as inspect_eval
    from inspect_ai.agent import as_solver, react
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.tool import tool

    from harness.integrations.inspect import CtxbenchCompaction, request_tokens, use_ctxbench_tokens

    spans: list[tuple[float, float]] = []

    @tool
    def read():
        async def execute(n: int) -> str:
            """Read chunk n.

            Args:
                n: the chunk.
            """
            return " ".join(f"{WORDS[(n + i) % len(WORDS)]}{n}-{i}" for i in range(330))

        return execute

    def outputs(input, tools, tool_choice, config):
        start = time.perf_counter()
        n = len(spans) + 1
        output = ModelOutput.for_tool_call("mockllm/model", "read", {"n": n}, tool_call_id=f"c{n}", content="")
        tokens = request_tokens(input, tools) if strategy != "none" else 1  # the provider's usage, for the trigger
        output.usage = ModelUsage(input_tokens=tokens, output_tokens=1, total_tokens=tokens + 1)
        spans.append((start, time.perf_counter()))
        return output

    model = use_ctxbench_tokens(get_model("mockllm/model", custom_outputs=outputs))
    compaction = CtxbenchCompaction(STRATEGIES[strategy](), budget=budget) if strategy != "none" else None
    agent = react(prompt="You read chunks.", tools=[read()], model=model, compaction=compaction)
    task = Task(
        dataset=[Sample(input="Read chunks until told to stop.")], solver=as_solver(agent), message_limit=2 * steps + 1
    )
    with tempfile.TemporaryDirectory() as tmp:
        inspect_eval(task, model=model, log_dir=tmp, display="none", score=False)
    return gaps_ms(spans)


def window(gaps: list[float], index: int) -> float | None:
    """The median gap of the ten steps around ``index`` (None past the end)."""
    if index + 5 > len(gaps):
        return None
    return statistics.median(gaps[max(index - 5, 0) : index + 5])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=220)
    parser.add_argument("--strategy", default="none", choices=sorted(STRATEGIES))
    parser.add_argument("--budget", default="1G", help="token budget for the strategy (e.g. 25k)")
    args = parser.parse_args()
    budget = parse_budget(args.budget.replace("G", "000M"))
    ours, history = run_ctxbench(args.steps, args.strategy, budget)
    assert "inspect_ai" not in sys.modules, "ctxbench's own run imported inspect_ai"
    theirs = run_inspect(args.steps, args.strategy, budget)
    print(
        f"strategy {args.strategy}, budget {args.budget}, {args.steps} steps; overhead per step in ms "
        "(median of the 10 steps around that history size; the model's own time excluded)"
    )
    print(f"{'history tokens':>15} | {'ctxbench loop':>14} | {'inspect react':>14} | {'ratio':>6}")
    for target in TARGETS:
        index = next((i for i, t in enumerate(history) if t >= target), None)
        if index is None:
            continue
        a, b = window(ours, index), window(theirs, index)
        if a is None or b is None:
            continue
        print(f"{history[index]:>15,} | {a:>14.3f} | {b:>14.3f} | {b / a:>5.1f}x")
    print(
        f"\nmedian over all steps: ctxbench {statistics.median(ours):.3f} ms, inspect react "
        f"{statistics.median(theirs):.3f} ms ({len(ours) + 1} and {len(theirs) + 1} model calls)"
    )


if __name__ == "__main__":
    main()

"""Tool-call ids that repeat across turns (some servers number every reply's calls call_0, call_1...).

A strategy that freezes a tool result must freeze THAT result (its place in the history),
never a later result that happens to reuse its id; ``status_bar`` in append mode must never
land between a call and its results.
"""

from __future__ import annotations

import json

import pytest

from harness.conversation import validate_projection
from harness.records import read_jsonl
from harness.runner import execute
from strategies.adaptive_window import AdaptiveWindow
from strategies.clear_tool_results import ClearToolResults
from strategies.layered import Layered
from strategies.offload import Offload
from strategies.status_bar import StatusBar
from tests.helpers import SYSTEM, TASK, FakeContext, compose, frozen

ROUND_SIZES = (2, 3, 2, 1, 3, 2, 2)  # calls per reply: [call_0, call_1], [call_0, call_1, call_2], ...


def repeated_ids_history(sizes: tuple[int, ...] = ROUND_SIZES, words: int = 150) -> tuple[list[dict], list[int]]:
    """A history whose replies all number their calls from call_0; and the end of every round."""
    messages, ends, page = [dict(SYSTEM), dict(TASK)], [], 0
    for turn, size in enumerate(sizes):
        calls = []
        for i in range(size):
            page += 1
            calls.append(
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": "read_page", "arguments": json.dumps({"page": page})},
                }
            )
        messages.append({"role": "assistant", "content": f"turn {turn}", "tool_calls": calls})
        for call in calls:
            p = json.loads(call["function"]["arguments"])["page"]
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "_tool": "read_page",
                    "_args": {"page": p},
                    "_error": False,
                    "_resource": f"page:{p}",
                    "_step": turn + 1,
                    "content": f"PAGE {p} " + " ".join(f"w{p}_{k}" for k in range(words)),
                }
            )
        ends.append(len(messages))
    return messages, ends


class EchoContext(FakeContext):
    """A context whose summarizer names the page of the (last) message it summarized."""

    def summarize(self, messages: list[dict], instructions: str = "") -> str:
        self.summaries.append(messages)
        return "summary of " + " ".join(str(messages[-1].get("content", "")).split()[:2])


def run_steps(strategy, budget: int = 1_500) -> list[tuple[list[dict], list[dict]]]:
    """Feed the growing history round by round, as the loop does; ``(history, output)`` per step."""
    history, ends = repeated_ids_history()
    strategy.bind(EchoContext(budget))
    steps = []
    for end in ends:
        prefix = history[:end]
        before = frozen(prefix)
        out = strategy.prepare(list(prefix))
        assert prefix == before, "the history was mutated"
        validate_projection(out, prefix[0])
        steps.append((prefix, out))
    return steps


def page_of(message: dict) -> int:
    return message["_args"]["page"]


def newest_round(messages: list[dict]) -> list[dict]:
    start = max(i for i, m in enumerate(messages) if m.get("role") == "assistant")
    return messages[start + 1 :]


STRATEGIES = {
    "clear_tool_results": lambda: ClearToolResults(keep=3),
    "layered": lambda: Layered(keep_tool_results=3, keep_recent_rounds=6),
    "offload": lambda: Offload(threshold=50, keep_recent=3),
    "adaptive_window": lambda: AdaptiveWindow(ratio=0.5),
}


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_the_newest_results_stay_verbatim_when_ids_repeat(name):
    for prefix, out in run_steps(STRATEGIES[name]()):
        assert [m["content"] for m in newest_round(out)] == [m["content"] for m in newest_round(prefix)], name


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_every_frozen_result_describes_its_own_call(name):
    strategy = STRATEGIES[name]()
    changed = 0
    for prefix, out in run_steps(strategy):
        results = [m for m in out if m.get("role") == "tool"]
        originals = [m for m in prefix if m.get("role") == "tool"][-len(results) :]
        for shown, original in zip(results, originals, strict=False):
            if shown["content"] == original["content"]:
                continue
            changed += 1
            page = page_of(original)
            assert page_of(shown) == page
            if name == "adaptive_window":
                assert shown["content"] == f"[COMPRESSED] summary of PAGE {page}"
            else:
                assert f'"page": {page}' in shown["content"]
            if name == "offload":
                memory_id = shown["content"].split("id=")[1].split(" ")[0]
                assert strategy.call("read_memory", {"id": memory_id}) == original["content"]
    assert changed, f"{name} never compacted: the test does not exercise it"


@pytest.mark.parametrize("base", [None, {"_target_": "strategies.clear_tool_results.ClearToolResults", "keep": 1}])
def test_status_bar_append_never_splits_a_round_when_ids_repeat(base):
    steps = run_steps(StatusBar(mode="append", base=base), budget=1_200)
    out = steps[-1][1]
    assert sum(1 for m in out if m.get("_status_bar")) == len(ROUND_SIZES), "every status message is kept"


@pytest.mark.parametrize(
    "strategy",
    [
        ("strategy=status_bar", "strategy.mode=append"),
        (
            "strategy=status_bar",
            "strategy.mode=append",
            "+strategy.base._target_=strategies.clear_tool_results.ClearToolResults",
        ),
        ("strategy=clear_tool_results", "strategy.keep=1"),
        ("strategy=offload", "strategy.threshold=50", "strategy.keep_recent=1"),
    ],
)
def test_a_server_that_repeats_ids_runs_to_submit(tmp_path, strategy):
    overrides = (
        "suite=smoke",
        "task=invoice_audit",
        "task.pages=4",
        "task.invoices_per_page=5",
        "task.duplicates=2",
        "task.max_distance=3",
        "trials=1",
        "progress=false",
        "plots=false",
        "budget=2k",
        "model._target_=tests.fake_models.ScriptModel",
        "~model.profile",
        "~model.profile_params",
        "+model.script=repeated_ids",
    )
    execute(compose(*overrides, *strategy), tmp_path, echo=lambda _: None)
    rows = read_jsonl(tmp_path / "trials.jsonl")
    assert [(r["outcome"], r["error"]) for r in rows] == [("submitted", None)]

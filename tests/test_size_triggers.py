"""Size triggers (strategies/triggers.py): declared by each strategy, measured and evaluated in one place.

A trigger fires strictly above its resolved threshold, at the boundary each strategy used when it measured
the request itself; and no strategy module measures a request (``count_tokens``, ``request_overhead``) or
resolves a threshold inside ``prepare``: it declares a ``SizeTrigger`` and asks ``over_trigger``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from strategies.adaptive_window import AdaptiveWindow
from strategies.clear_tool_results import ClearToolResults
from strategies.layered import Layered
from strategies.server_side import ServerClearToolUses, ServerCompaction
from strategies.summarize import Summarize
from strategies.triggers import AT_BUDGET, SizeTrigger

STRATEGIES = Path(__file__).resolve().parents[1] / "strategies"
MEASURING = {"count_tokens", "request_overhead"}
"""Calls that measure a request: only strategies/triggers.py makes them."""
NOT_IN_PREPARE = MEASURING | {"resolve_tokens"}
"""What no ``prepare`` calls: it asks ``over_trigger``/``request_tokens`` and declares its threshold instead."""


class SizedContext:
    """A strategy context whose messages weigh ``size`` tokens and whose requests pay ``overhead`` more."""

    def __init__(self, budget: int, size: int, overhead: int = 37) -> None:
        self.budget = budget
        self.size = size
        self.overhead = overhead

    def count_tokens(self, messages: list[dict]) -> int:
        return self.size

    def request_overhead(self) -> int:
        return self.overhead


def over(strategy, budget: int, request: int) -> bool:
    """Whether ``strategy`` would act on a request of ``request`` tokens (tool schemas and primer included)."""
    strategy.bind(SizedContext(budget, request - 37))
    return strategy.over_trigger([])


@pytest.mark.parametrize("budget", [2_000, 8_000, 25_000, 128_000, 7_919])
def test_a_fraction_fires_just_above_the_fraction_of_the_budget_rounded_down(budget):
    boundary = int(0.8 * budget)  # what resolve_tokens gave summarize and clear_tool_results
    trigger = SizeTrigger(0.8)
    assert trigger.tokens(budget) == boundary
    assert not trigger.fires(boundary, budget) and trigger.fires(boundary + 1, budget)
    assert not over(Summarize(threshold=0.8), budget, boundary) and over(Summarize(threshold=0.8), budget, boundary + 1)
    assert not over(ClearToolResults(trigger=0.8), budget, boundary)
    assert over(ClearToolResults(trigger=0.8), budget, boundary + 1)


@pytest.mark.parametrize("ratio", [0.1, 0.29, 0.3, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0])
@pytest.mark.parametrize("budget", [100, 2_000, 7_919, 8_000, 25_000, 128_000])
def test_adaptive_window_fires_where_its_float_comparison_did(ratio, budget):
    """adaptive_window compared ``request <= ratio * budget`` in floats: same integers fire."""
    strategy = AdaptiveWindow(ratio=ratio)
    for request in range(int(ratio * budget) - 2, int(ratio * budget) + 3):
        assert over(strategy, budget, request) == (not request <= ratio * budget), request


@pytest.mark.parametrize("threshold", [5_000, "5k", "5_000", 5_000.0])
def test_a_token_count_fires_above_it_whatever_the_budget(threshold):
    for budget in (2_000, 8_000, 25_000):
        trigger = SizeTrigger(threshold)
        assert trigger.tokens(budget) == 5_000
        assert not trigger.fires(5_000, budget) and trigger.fires(5_001, budget)
        assert not over(Summarize(threshold=threshold), budget, 5_000)
        assert over(Summarize(threshold=threshold), budget, 5_001)


def test_the_default_trigger_fires_above_the_budget():
    for trigger in (AT_BUDGET, SizeTrigger(None), SizeTrigger(1.0)):
        assert not trigger.fires(8_000, 8_000) and trigger.fires(8_001, 8_000)
    assert not over(Layered(), 8_000, 8_000) and over(Layered(), 8_000, 8_001)
    assert not over(ClearToolResults(), 8_000, 8_000) and over(ClearToolResults(), 8_000, 8_001)


def test_server_side_strategies_send_their_declared_trigger():
    for strategy, expected in ((ServerClearToolUses(trigger=0.5), 4_000), (ServerCompaction(trigger="3k"), 3_000)):
        strategy.bind(SizedContext(8_000, 0))
        (edit,) = strategy.edits()
        assert edit["trigger"] == {"type": "input_tokens", "value": expected}


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Summarize(threshold="lots"), "summarize: threshold: invalid budget"),
        (lambda: ClearToolResults(trigger=0), "clear_tool_results: trigger: invalid budget"),
        (lambda: ServerCompaction(trigger=-1), "server_compaction: trigger: invalid budget"),
        (lambda: AdaptiveWindow(ratio=1.5), "adaptive_window: ratio must be in (0, 1]"),
    ],
)
def test_a_bad_threshold_fails_at_construction_with_the_parameter_named(build, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build()


def called_names(node: ast.AST) -> set[str]:
    """Names of the functions and methods called anywhere inside ``node`` (``self.ctx.count_tokens(...)``
    gives ``count_tokens``)."""
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            if isinstance(func, ast.Attribute):
                names.add(func.attr)
            elif isinstance(func, ast.Name):
                names.add(func.id)
    return names


def measuring_calls(source: str) -> list[str]:
    """``where: name`` for every request measurement in a module, and every counter or threshold call in a
    ``prepare``."""
    found = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            banned = NOT_IN_PREPARE if node.name == "prepare" else MEASURING
            found += [f"{node.name}: {name}" for name in sorted(called_names(node) & banned)]
    return found


def test_the_checker_catches_a_prepare_that_measures_the_request_itself():
    source = (
        "class Mine:\n"
        "    def prepare(self, messages):\n"
        "        if self.ctx.count_tokens(messages) + self.ctx.request_overhead() > resolve_tokens(0.8, 1, 'x'):\n"
        "            return []\n"
        "        return messages\n"
        "    def _size(self, messages):\n"
        "        return self.ctx.count_tokens(messages)\n"
    )
    assert measuring_calls(source) == [
        "prepare: count_tokens",
        "prepare: request_overhead",
        "prepare: resolve_tokens",
        "_size: count_tokens",
    ]
    assert measuring_calls("class Mine:\n    def prepare(self, messages):\n        return self.over_trigger(m)\n") == []


def test_no_strategy_measures_the_request_itself():
    """Only strategies/triggers.py counts a request; a ``prepare`` asks ``over_trigger`` or ``request_tokens``."""
    modules = sorted(p for p in STRATEGIES.glob("*.py") if p.name != "triggers.py")
    assert len(modules) > 10
    offenders = {p.name: found for p in modules if (found := measuring_calls(p.read_text(encoding="utf-8")))}
    assert offenders == {}, f"declare a SizeTrigger and use strategies/triggers.py instead: {offenders}"

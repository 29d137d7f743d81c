"""Property-based conformance of every strategy config in ``configs/strategy/*.yaml`` (hypothesis).

The checks are harness/strategy_conformance.py's, the same code ``python -m harness check strategy=`` runs:
each config is built as ``harness.runner.build`` builds it and bound to its ``CheckContext`` (a real
``TokenCounter``, a deterministic summarizer and sub-agent). Random valid histories (hypothesis draws the
spec that ``build_history`` turns into messages: parallel calls in any order, error results, huge results,
extra user turns, replies without a call, ids that repeat across turns, odd Unicode) are fed as growing
prefixes, round by round, as the loop does. For every step (``step_failures``): the input is not mutated, the
output is a valid conversation, a rewritten tool result still speaks of its own call only (each result names
its page), two fresh instances give equal outputs, nothing raises, and a ``hard`` ``budget_guarantee`` holds
whenever the head, the newest round and ``NOTE_ALLOWANCE`` fit. The strategies' tools get random, hostile
arguments: a result or a short ``ToolError``, never an exception (``tool_failure``).

Deterministic profile: ``derandomize=True`` and a bounded number of examples per config.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import strategy_conformance as sc
from harness.runner import build
from strategies.base import BaseStrategy, budget_guarantee, guarantee_text

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs" / "strategy"
CONFIGS = {path.stem: yaml.safe_load(path.read_text()) for path in sorted(CONFIG_DIR.glob("*.yaml"))}
VARIANTS = {  # parameter settings with a code path of their own
    "status_bar-append": {**CONFIGS["status_bar"], "mode": "append"},
    "status_bar-append-clear": {
        **CONFIGS["status_bar"],
        "mode": "append",
        "base": {"_target_": "strategies.clear_tool_results.ClearToolResults", "keep": 1},
    },
    "status_bar-replace-headtail": {**CONFIGS["status_bar"], "base": {"_target_": "strategies.headtail.HeadTail"}},
    "layered-summarize": {**CONFIGS["layered"], "summarize": True},
    "adaptive_window-all": {**CONFIGS["adaptive_window"], "keep_last_round": False},
    "sliding_window-max": {**CONFIGS["sliding_window"], "max_messages": 5},
    "clear_tool_results-trigger": {**CONFIGS["clear_tool_results"], "trigger": 0.5, "keep": 1, "clear_at_least": 50},
    "offload-small": {**CONFIGS["offload"], "threshold": 30, "keep_recent": 0},
    "notes-default": {k: v for k, v in CONFIGS["notes"].items() if k != "base"},
    "select_tools-rank-only": {**CONFIGS["select_tools"], "max_tools": 0, "keep_recent_rounds": 0},
    "pitfall_json_keys-arguments": {**CONFIGS["pitfall_json_keys"], "targets": ["arguments"]},
    "context_aware_compression-all": {**CONFIGS["context_aware_compression"], "min_tokens": 0, "keep_recent_rounds": 1},
}
SPECS = {**CONFIGS, **VARIANTS}
EXAMPLES = 40  # per config: the whole file runs in about 10 s on one core
STORES = tempfile.TemporaryDirectory(prefix="ctxbench-fuzz-")  # every context's store, removed at exit
TEXT_CACHE: dict[str, int] = {}  # token counts shared by every context (as the runner shares them in a run)
ODD = st.lists(st.sampled_from(sc.ODD_PIECES), max_size=6).map("".join)


def fresh(name: str, budget: int) -> Any:
    """A strategy built from its config and bound as the loop binds it (``strategy_conformance.fresh``)."""
    return sc.fresh(lambda: build(SPECS[name], f"strategy {name}"), budget, Path(STORES.name), TEXT_CACHE)


# ---------------------------------------------------------------- random histories

RESULT = st.fixed_dictionaries(
    {
        "words": st.sampled_from(sc.WORDS),  # 1500 words: a huge result against these budgets
        "error": st.booleans(),
        "odd": ODD,
    }
)
ROUND = st.one_of(
    st.fixed_dictionaries(
        {
            "kind": st.just("calls"),
            "text": ODD,
            "results": st.lists(RESULT, min_size=1, max_size=4),
            "shuffle": st.booleans(),
            "todo": st.booleans(),
        }
    ),
    st.fixed_dictionaries({"kind": st.just("user"), "text": ODD}),
    st.fixed_dictionaries({"kind": st.just("no_call"), "text": ODD}),
)
HISTORY = st.fixed_dictionaries(
    {
        "rounds": st.lists(ROUND, min_size=1, max_size=sc.MAX_ROUNDS),
        "repeat_ids": st.booleans(),
        "budget": st.sampled_from(sc.BUDGETS),
    }
)


# ---------------------------------------------------------------- the properties


def check_step(name: str, strategy: Any, twin: Any, prefix: list[dict], hashes: dict[int, str]) -> None:
    """One loop step: ``prepare`` on ``prefix`` and every property of its output (``step_failures``)."""
    failures = sc.step_failures(strategy, twin, prefix, own_results=True, hashes=hashes)
    assert not failures, f"{name}: " + "; ".join(f"{f.check}: {f.reason}" for f in failures)


FUZZ = settings(
    derandomize=True,
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_strategy_conforms_on_random_histories(name):
    @FUZZ
    @given(spec=HISTORY)
    def conforms(spec: dict) -> None:
        history, ends = sc.build_history(spec)
        strategy, twin = fresh(name, spec["budget"]), fresh(name, spec["budget"])
        hashes: dict[int, str] = {}  # each message's hash from the step it was first seen
        for end in ends:  # growing prefixes of one history, as the loop feeds them
            check_step(name, strategy, twin, history[:end], hashes)

    conforms()


HOSTILE = st.one_of(
    st.none(),
    st.integers(),
    st.booleans(),
    st.lists(st.integers(), max_size=3),
    st.text(max_size=30),
    st.sampled_from(["\ud800", "mem-" + "0" * 100_000, "x" * 100_000, "../../etc/passwd", "", "mem-0001", " \n "]),
)


@pytest.mark.parametrize("name", sorted(n for n in SPECS if fresh(n, 1_000).tools()))
def test_strategy_tools_answer_hostile_arguments_with_a_short_tool_error(name):
    strategy = fresh(name, 1_000)
    tools = [t["function"]["name"] for t in strategy.tools()]

    @FUZZ
    @given(
        tool=st.sampled_from(tools),
        args=st.dictionaries(st.sampled_from(["id", "text", "task", "x"]), HOSTILE, max_size=3),
    )
    def answers(tool: str, args: dict) -> None:
        failure = sc.tool_failure(strategy, tool, args)
        assert failure is None, f"{name}: {failure.reason}"

    answers()


README = Path(__file__).resolve().parents[1] / "strategies" / "README.md"


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_strategy_documents_its_budget_guarantee(name):
    strategy = fresh(name, 1_000)
    declared = [k for k in type(strategy).__mro__ if k is not BaseStrategy and "budget_guarantee" in vars(k)]
    assert declared, f"{name} does not declare a budget_guarantee"
    row = next(
        line
        for line in README.read_text().splitlines()
        if line.startswith("| `") and f"`{name}`" in line.split(" | ")[0]
    )
    last_cell = row.rstrip(" |").rsplit(" | ", 1)[-1]
    level, _, exception = guarantee_text(strategy).partition(" unless ")
    stated = f"**{level}** unless {exception}" if exception else f"**{level}**"
    assert stated in last_cell, f"strategies/README.md must state {stated!r}: {row[:80]}"


def test_a_hard_guarantee_states_when_it_can_be_exceeded():
    hard = {name: fresh(name, 1_000) for name in sorted(SPECS) if budget_guarantee(fresh(name, 1_000)) == "hard"}
    assert hard, "no strategy declares a hard guarantee"
    for name, strategy in hard.items():
        assert guarantee_text(strategy).startswith("hard unless "), f"{name}: {guarantee_text(strategy)!r}"


REWRITES_EVERY_STEP = {  # deliberate anti-patterns that re-serialize messages every step (nothing is cut)
    "pitfall_flatten",
    "pitfall_json_keys",
    "pitfall_json_keys-arguments",
    "pitfall_user_config",
    "pitfall_timestamp",
}


def cut_messages(previous: list[dict], current: list[dict], history: list[dict]) -> list[dict]:
    """History messages the previous request showed verbatim that this request no longer shows."""
    return [m for m in history[1:] if m in previous and m not in current]


@pytest.mark.parametrize("name", sorted(set(SPECS) - REWRITES_EVERY_STEP))
def test_every_cut_is_logged_as_a_compaction(name):
    @FUZZ
    @given(spec=HISTORY)
    def logged(spec: dict) -> None:
        history, ends = sc.build_history(spec)
        strategy = fresh(name, spec["budget"])
        previous: list[dict] = []
        for end in ends:
            seen = len(strategy.ctx.events)
            current = strategy.prepare(list(history[:end]))
            events = [event for event, _ in strategy.ctx.events[seen:]]
            if cut_messages(previous, current, history[:end]):
                assert "compaction" in events, f"{name} cut messages at a step that logged {events}"
            previous = current

    logged()

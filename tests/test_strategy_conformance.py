"""Property-based conformance of every strategy config in ``configs/strategy/*.yaml`` (hypothesis).

Each config is built as ``harness.runner.build`` builds it and bound to a small fake context
(a real ``TokenCounter``, a deterministic summarizer and sub-agent). Random valid histories
(parallel calls in any order, error results, huge results, extra user turns, replies without
a call, ids that repeat across turns, odd Unicode) are fed as growing prefixes, round by
round, as the loop does. For every step: the input is not mutated, the output is a valid
conversation, a rewritten tool result still speaks of its own call only (each result names
its page), two fresh instances give equal outputs, nothing raises, and a ``hard``
``budget_guarantee`` holds whenever the head, the newest round and ``NOTE_ALLOWANCE`` fit. The strategies'
tools get random, hostile arguments: a result or a short ``ToolError``, never an exception.

Deterministic profile: ``derandomize=True`` and a bounded number of examples per config.
"""

from __future__ import annotations

import copy
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.conversation import check_tool_order, check_tool_subset, split_head, split_rounds, validate_projection
from harness.runner import build
from tests.helpers import FakeContext
from harness.tokens import TokenCounter
from strategies.base import NOTE_ALLOWANCE, BaseStrategy, ToolError, budget_guarantee, guarantee_text

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
TASK_TOOL = {
    "type": "function",
    "function": {
        "name": "read_page",
        "description": "Read a page.",
        "parameters": {"type": "object", "properties": {}},
    },
}
SUBMIT_TOOL = {
    "type": "function",
    "function": {
        "name": "submit",
        "description": "Submit your final answer.",
        "parameters": {"type": "object", "properties": {}},
    },
}
STORES = tempfile.TemporaryDirectory(prefix="ctxbench-fuzz-")  # every context's store, removed at exit
TEXT_CACHE: dict[str, int] = {}  # token counts shared by every context (as the runner shares them in a run)
ODD = st.lists(st.sampled_from(["a", " ", "\n", '"', "\\", "中", "\ud800", "\udfff", "- [ ] x"]), max_size=6).map(
    "".join
)


class FuzzContext(FakeContext):
    """``FakeContext`` with a shared token cache, a cleaned-up store, a summary naming its pages and a sub-agent."""

    def __init__(self, budget: int) -> None:
        super().__init__(budget, counter=TokenCounter(TEXT_CACHE), store=Path(tempfile.mkdtemp(dir=STORES.name)))

    def summarize(self, messages: list[dict], instructions: str = "") -> str:
        pages = [m["_args"]["page"] for m in messages if m.get("role") == "tool" and "_args" in m]
        return f"Key findings: {len(messages)} messages read, pages {pages}."

    def run_subagent(self, task: str, max_steps: int = 60, strategy: Any = None, budget: int | None = None) -> str:
        return f"conclusion on {task[:20]}"


def fresh(name: str, budget: int) -> Any:
    """A strategy built from its config and bound as the loop binds it (tools known to the context)."""
    strategy = build(SPECS[name], f"strategy {name}")
    ctx = FuzzContext(budget)
    if hasattr(strategy, "bind"):
        strategy.bind(ctx)
    ctx.tools = [TASK_TOOL, *(strategy.tools() if hasattr(strategy, "tools") else [])]
    return strategy


# ---------------------------------------------------------------- random histories

RESULT = st.fixed_dictionaries(
    {
        "words": st.sampled_from([0, 3, 40, 300, 1500]),  # 1500 words: a huge result against these budgets
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
        "rounds": st.lists(ROUND, min_size=1, max_size=9),
        "repeat_ids": st.booleans(),
        "budget": st.sampled_from([400, 1_500, 5_000]),
    }
)


def build_history(spec: dict) -> tuple[list[dict], list[int]]:
    """The history a loop would have built, and the lengths at which it calls ``prepare``."""
    messages = [{"role": "system", "content": "You are a fuzz agent."}, {"role": "user", "content": "Do the task."}]
    ends, serial = [len(messages)], 0
    for turn, round_ in enumerate(spec["rounds"]):
        if round_["kind"] == "user":
            messages.append({"role": "user", "content": f"Also check item {turn}. {round_['text']}"})
        elif round_["kind"] == "no_call":
            messages.append({"role": "assistant", "content": f"thinking {round_['text']}", "_step": turn + 1})
            messages.append({"role": "user", "content": "Your reply contained no tool call.", "_nudge": True})
        else:
            calls, results = [], []
            for i, result in enumerate(round_["results"]):
                serial += 1
                call_id = f"call_{i}" if spec["repeat_ids"] else f"call_{serial}"
                args = {"page": serial, "q": result["odd"]}
                calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "read_page", "arguments": json.dumps(args)},
                    }
                )
                body = " ".join(f"w{serial}_{k}" for k in range(result["words"]))
                content = ("ERROR: no such page " if result["error"] else f"page {serial} {result['odd']} ") + body
                results.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "content": content,
                        "_step": turn + 1,
                        "_tool": "read_page",
                        "_args": args,
                        "_error": result["error"],
                        "_resource": None if result["error"] else f"page:{serial}",
                    }
                )
            todo = "\n- [x] read\n- [ ] submit" if round_["todo"] else ""
            messages.append(
                {
                    "role": "assistant",
                    "content": f"step {turn} {round_['text']}{todo}",
                    "tool_calls": calls,
                    "_step": turn + 1,
                }
            )
            messages.extend(reversed(results) if round_["shuffle"] else results)
        ends.append(len(messages))
    return messages, ends


# ---------------------------------------------------------------- the properties

PAGE = re.compile(r"page\D{0,4}(\d+)")


def result_keys(messages: list[dict]) -> dict[tuple, dict]:
    """``(id of the round's assistant message, tool_call_id) -> tool result``: a result's identity in a list."""
    keys, assistant = {}, None
    for message in messages:
        if message.get("role") == "assistant":
            assistant = message
        elif message.get("role") == "tool":
            keys[(id(assistant), message.get("tool_call_id"))] = message
    return keys


def check_results_stay_their_own(name: str, out: list[dict], prefix: list[dict]) -> None:
    """A tool result a strategy rewrote (placeholder, preview, summary) still speaks of its own call only.

    Every result of the histories names its page (``page N`` in the text, ``{"page": N}`` in the
    arguments), so a replacement that quotes another page belongs to another result.
    """
    originals = result_keys(prefix)
    for key, shown in result_keys(out).items():
        original = originals.get(key)
        if original is None or shown["content"] == original["content"]:
            continue
        assert {k: v for k, v in shown.items() if k != "content"} == {
            k: v for k, v in original.items() if k != "content"
        }, f"{name} swapped a result's keys"
        pages = {int(n) for n in PAGE.findall(str(shown["content"]))}
        assert pages <= {original["_args"]["page"]}, f"{name} shows pages {pages} for page {original['_args']['page']}"


def fits_hard_condition(strategy: Any, prefix: list[dict]) -> bool:
    """Whether the head, the newest round and a one-line note fit the budget (where ``hard`` must hold)."""
    ctx = strategy.ctx
    head, body = split_head(prefix)
    newest = split_rounds(body)[-1] if body else []
    return ctx.count_tokens([*head, *newest]) + NOTE_ALLOWANCE + ctx.request_overhead() <= ctx.budget


def check_step(name: str, strategy: Any, twin: Any, prefix: list[dict]) -> None:
    """One loop step: ``prepare`` on ``prefix`` and every property of its output."""
    before = copy.deepcopy(prefix)
    out = strategy.prepare(list(prefix))
    assert prefix == before, f"{name} mutated its input"
    check_results_stay_their_own(name, out, prefix)
    validate_projection(out, prefix[0], allow_system_rewrite=bool(getattr(strategy, "rewrites_system", False)))
    ordered = strategy.order_tools(list(strategy.ctx.tools))  # None: the order is left alone
    if ordered is not None:
        check_tool_order(ordered, strategy.ctx.tools)
    offered = [*strategy.ctx.tools, SUBMIT_TOOL]  # the loop's tools end with submit
    exposed = strategy.expose_tools(list(offered))  # None: every tool is offered
    if exposed is not None:
        check_tool_subset(exposed, offered)
    assert twin.prepare(list(prefix)) == out, f"{name} is not deterministic"
    if budget_guarantee(strategy) == "hard" and fits_hard_condition(strategy, prefix):
        tokens = strategy.ctx.count_tokens(out) + strategy.ctx.request_overhead()
        assert tokens <= strategy.ctx.budget, f"{name} (hard) sent {tokens} tokens over a {strategy.ctx.budget} budget"


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
        history, ends = build_history(spec)
        strategy, twin = fresh(name, spec["budget"]), fresh(name, spec["budget"])
        for end in ends:  # growing prefixes of one history, as the loop feeds them
            check_step(name, strategy, twin, history[:end])

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
        try:
            result = strategy.call(tool, args)
        except ToolError as exc:
            assert len(str(exc)) <= 300, f"{name}.{tool}: a {len(str(exc)):,}-character error"
        else:
            assert isinstance(result, str)

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
        history, ends = build_history(spec)
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

"""The conformance checks of a strategy, on random and recorded histories (``python -m harness check strategy=``).

A strategy is given as ``make``, a function that returns a fresh, unbound strategy object (anything with
``prepare``; ``full_strategy`` adapts it). ``fresh`` binds one to a ``CheckContext`` (real token counting, a
store folder, a canned summarizer and sub-agent) as the loop binds it. Histories are fed as growing prefixes,
as the loop feeds them, and every step is checked (``step_failures``):

* ``runs``: ``prepare`` returns a list and raises nothing;
* ``no_mutation``: the input's messages hash the same before and after ``prepare``;
* ``projection``: the output is a valid conversation (``validate_projection``), ``order_tools`` a permutation,
  ``expose_tools`` a subset that keeps ``submit``;
* ``own_results`` (random histories only, where each result names its page): a rewritten tool result still
  speaks of its own call;
* ``deterministic``: a twin (a second fresh instance fed the same prefixes) returns equal outputs;
* ``budget``: a ``hard`` ``budget_guarantee`` holds wherever the head, the newest round and ``NOTE_ALLOWANCE``
  fit the budget.

Besides the steps: ``tool_failure`` (a strategy tool called with hostile arguments answers a string or a short
``ToolError``), ``hook_failures`` (``server_options`` and ``observe_server_edits``, when declared) and
``outputs_digest`` (a hash of every output, which harness/check.py compares with another process's).

Random histories come from a ``spec`` (``random_spec(rng)``: seeded, no hypothesis needed; the in-repo tests
draw the same shape with hypothesis) that ``build_history`` turns into messages. Recorded histories are real
trials' messages shipped in ``harness/conformance_histories/`` (``recorded_histories``). A failure is a
``Failure``: the check it broke and one line saying where and why.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, cast

from harness.contracts import (
    BUDGET_GUARANTEES,
    NOTE_ALLOWANCE,
    BaseStrategy,
    FullStrategy,
    ToolError,
    full_strategy,
    tool_name,
)
from harness.conversation import (
    InvalidConversation,
    check_tool_order,
    check_tool_subset,
    split_head,
    split_rounds,
    validate_projection,
)
from harness.tokens import CountsTokens, TokenCounter
from harness.trial import submit_tool

HISTORIES_DIR = Path(__file__).resolve().parent / "conformance_histories"
RECORDED_BUDGET = 4_000
"""The budget a recorded history is checked at (unless ``budget=`` says another)."""
BUDGETS = (400, 1_500, 5_000)
"""The budgets random histories draw from: a huge result (1,500 words) is over each."""
WORDS = (0, 3, 40, 300, 1500)
ODD_PIECES = ("a", " ", "\n", '"', "\\", "中", "\ud800", "\udfff", "- [ ] x")
MAX_ROUNDS = 9
MAX_ERROR_CHARS = 300
"""The longest ``ToolError`` message a strategy tool may answer (a result the model reads)."""
TASK_TOOL = {
    "type": "function",
    "function": {
        "name": "read_page",
        "description": "Read a page.",
        "parameters": {"type": "object", "properties": {}},
    },
}
SUBMIT_TOOL = submit_tool({"type": "object", "properties": {}})
"""The ``submit`` tool the loop offers last (harness/trial.py), with an empty answer schema."""
SERVER_EDITS: list[dict[str, Any]] = [
    {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2, "cleared_input_tokens": 1_200},
    {"type": "compact_20260112", "summary": "Key findings: pages 1-3 read."},
]
"""Edits as a server reports them, handed to a declared ``observe_server_edits``."""
PAGE = re.compile(r"page\D{0,4}(\d+)")

Maker = Callable[[], Any]


@dataclass(frozen=True)
class Failure:
    """A broken check: which one (``check``) and one line saying where and why."""

    check: str
    reason: str


class CheckContext(CountsTokens):
    """The ``StrategyContext`` of the checks: real token counting, a store folder, recorded events, a summary
    that names the pages it read and a sub-agent that answers at once."""

    def __init__(self, budget: int, store: Path, text_cache: dict[str, int] | None = None) -> None:
        self.budget = budget
        self.counter = TokenCounter(text_cache)
        self.tools: list[dict] = []
        self.store = store
        self.events: list[tuple[str, dict]] = []

    def summarize(self, messages: list[dict], instructions: str = "") -> str:
        """A summary naming the pages of the results it read (so ``own_results`` can tell them apart)."""
        pages = [m["_args"]["page"] for m in messages if m.get("role") == "tool" and "page" in (m.get("_args") or {})]
        return f"Key findings: {len(messages)} messages read, pages {pages}."

    def run_subagent(self, task: str, max_steps: int = 60, strategy: Any = None, budget: int | None = None) -> str:
        """A sub-agent's conclusion, at once."""
        return f"conclusion on {task[:20]}"

    def log(self, event: str, **data: Any) -> None:
        """Keep the strategy's event."""
        self.events.append((event, data))


def fresh(make: Maker, budget: int, stores: Path, text_cache: dict[str, int] | None = None) -> FullStrategy:
    """A new strategy from ``make``, bound as the loop binds it (its store under ``stores``, its tools known)."""
    strategy = full_strategy(make())
    ctx = CheckContext(budget, Path(tempfile.mkdtemp(dir=stores)), text_cache)
    strategy.bind(ctx)
    ctx.tools = [TASK_TOOL, *strategy.tools()]
    return strategy


def context(strategy: FullStrategy) -> CheckContext:
    """The ``CheckContext`` ``fresh`` bound the strategy to."""
    return cast(CheckContext, cast(BaseStrategy, strategy).ctx)


# ---------------------------------------------------------------- histories


def odd_text(rng: random.Random) -> str:
    """Up to six odd pieces: quotes, backslashes, lone surrogates, a checklist line."""
    return "".join(rng.choice(ODD_PIECES) for _ in range(rng.randint(0, 6)))


def random_round(rng: random.Random) -> dict:
    """One round of a spec: tool calls with their results, an extra user turn, or a reply without a call."""
    kind = rng.choice(("calls", "calls", "user", "no_call"))
    if kind != "calls":
        return {"kind": kind, "text": odd_text(rng)}
    results = [
        {"words": rng.choice(WORDS), "error": rng.random() < 0.5, "odd": odd_text(rng)}
        for _ in range(rng.randint(1, 4))
    ]
    return {
        "kind": "calls",
        "text": odd_text(rng),
        "results": results,
        "shuffle": rng.random() < 0.5,
        "todo": rng.random() < 0.5,
    }


def random_spec(rng: random.Random) -> dict:
    """A history's spec (``build_history``), drawn from ``rng``: seeded, so the same seed gives the same one."""
    return {
        "rounds": [random_round(rng) for _ in range(rng.randint(1, MAX_ROUNDS))],
        "repeat_ids": rng.random() < 0.5,
        "budget": rng.choice(BUDGETS),
    }


def build_history(spec: dict) -> tuple[list[dict], list[int]]:
    """The history a loop would have built from ``spec``, and the lengths at which it calls ``prepare``.

    Parallel calls whose results come in any order, error results, huge results, extra user turns, replies
    without a call, ids that repeat across turns, odd Unicode; every result names its page.
    """
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a fuzz agent."},
        {"role": "user", "content": "Do the task."},
    ]
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
                calls.append(page_call(call_id, serial, result["odd"]))
                results.append(page_result(call_id, serial, result, turn + 1))
            todo = "\n- [x] read\n- [ ] submit" if round_["todo"] else ""
            content = f"step {turn} {round_['text']}{todo}"
            messages.append({"role": "assistant", "content": content, "tool_calls": calls, "_step": turn + 1})
            messages.extend(reversed(results) if round_["shuffle"] else results)
        ends.append(len(messages))
    return messages, ends


def page_call(call_id: str, page: int, odd: str) -> dict:
    """A ``read_page`` call for ``page``."""
    arguments = json.dumps({"page": page, "q": odd})
    return {"id": call_id, "type": "function", "function": {"name": "read_page", "arguments": arguments}}


def page_result(call_id: str, page: int, result: dict, step: int) -> dict:
    """The tool result of ``page_call``: ``page N`` and ``result["words"]`` words, or an error naming the page."""
    body = " ".join(f"w{page}_{k}" for k in range(result["words"]))
    content = ("ERROR: no such page " if result["error"] else f"page {page} {result['odd']} ") + body
    return {
        "role": "tool",
        "tool_call_id": call_id,
        "content": content,
        "_step": step,
        "_tool": "read_page",
        "_args": {"page": page, "q": result["odd"]},
        "_error": result["error"],
        "_resource": None if result["error"] else f"page:{page}",
    }


def recorded_histories() -> list[tuple[str, list[dict]]]:
    """The recorded histories shipped with the harness: ``(name, messages)``, each a real trial's history."""
    return [
        (path.stem, json.loads(path.read_text(encoding="utf-8"))["messages"])
        for path in sorted(HISTORIES_DIR.glob("*.json"))
    ]


def loop_ends(messages: list[dict]) -> list[int]:
    """The lengths at which a loop calls ``prepare`` on ``messages``: before each model reply, and at the end."""
    ends = [i for i, m in enumerate(messages) if m.get("role") == "assistant" and i >= 2]
    if messages and messages[-1].get("role") != "assistant":
        ends.append(len(messages))
    return ends


# ---------------------------------------------------------------- the checks of one step


def digest(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON (sorted keys; what JSON cannot hold as its ``repr``)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=True, default=repr)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def step_failures(
    strategy: FullStrategy, twin: FullStrategy, prefix: list[dict], own_results: bool, hashes: dict[int, str]
) -> list[Failure]:
    """``prepare`` on ``prefix`` (by ``strategy`` and its ``twin``) and every check of the step's output.

    ``hashes`` (``id`` of a message -> its digest, one dict per history) keeps each message's hash from the
    step it was first seen, so a message is hashed once before and once after every ``prepare``.
    """
    before = [hashes.get(id(m)) or hashes.setdefault(id(m), digest(m)) for m in prefix]
    try:
        out = strategy.prepare(list(prefix))
    except Exception as exc:
        return [Failure("runs", f"prepare raised {type(exc).__name__}: {one_line(exc)}")]
    if not isinstance(out, list):
        return [Failure("runs", f"prepare returned a {type(out).__name__}, not a list of messages")]
    failures = []
    changed = [i for i, (m, d) in enumerate(zip(prefix, before, strict=True)) if digest(m) != d]
    if changed:
        failures.append(Failure("no_mutation", f"prepare mutated its input (message {changed[0]} changed)"))
    failures += projection_failures(strategy, out, prefix)
    if own_results:
        failures += own_result_failures(out, prefix)
    failures += twin_failures(twin, prefix, out)
    failures += budget_failures(strategy, prefix, out)
    return failures


def one_line(exc: BaseException, limit: int = 160) -> str:
    """An exception's message on one line, cut at ``limit`` characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def projection_failures(strategy: FullStrategy, out: list[dict], prefix: list[dict]) -> list[Failure]:
    """The output is a valid conversation; ``order_tools`` reorders and ``expose_tools`` keeps ``submit``."""
    try:
        validate_projection(out, prefix[0], allow_system_rewrite=bool(getattr(strategy, "rewrites_system", False)))
        tools = list(context(strategy).tools)
        ordered = strategy.order_tools(list(tools))
        if ordered is not None:
            check_tool_order(ordered, tools)
        offered = [*tools, SUBMIT_TOOL]  # the loop's tools end with submit
        exposed = strategy.expose_tools(list(offered))
        if exposed is not None:
            check_tool_subset(exposed, offered)
    except InvalidConversation as exc:
        return [Failure("projection", f"not a valid projection: {one_line(exc)}")]
    except Exception as exc:
        return [Failure("projection", f"a tool hook raised {type(exc).__name__}: {one_line(exc)}")]
    return []


def result_keys(messages: list[dict]) -> dict[tuple, dict]:
    """``(id of the round's assistant message, tool_call_id) -> tool result``: a result's identity in a list."""
    keys, assistant = {}, None
    for message in messages:
        if message.get("role") == "assistant":
            assistant = message
        elif message.get("role") == "tool":
            keys[(id(assistant), message.get("tool_call_id"))] = message
    return keys


def own_result_failures(out: list[dict], prefix: list[dict]) -> list[Failure]:
    """A tool result the strategy rewrote (placeholder, preview, summary) keeps its keys and names no other page."""
    originals = result_keys(prefix)
    for key, shown in result_keys(out).items():
        original = originals.get(key)
        if original is None or shown.get("content") == original["content"]:
            continue
        if {k: v for k, v in shown.items() if k != "content"} != {k: v for k, v in original.items() if k != "content"}:
            return [Failure("own_results", f"a rewritten result of {key[1]} changed keys besides its content")]
        pages = {int(n) for n in PAGE.findall(str(shown.get("content")))}
        if not pages <= {original["_args"]["page"]}:
            return [Failure("own_results", f"the result for page {original['_args']['page']} shows pages {pages}")]
    return []


def twin_failures(twin: FullStrategy, prefix: list[dict], out: list[dict]) -> list[Failure]:
    """A second fresh instance, fed the same prefixes, returns the same output."""
    try:
        again = twin.prepare(list(prefix))
    except Exception as exc:
        return [Failure("deterministic", f"a second instance raised {type(exc).__name__}: {one_line(exc)}")]
    if again != out:
        return [Failure("deterministic", "two fresh instances returned different outputs for the same input")]
    return []


def fits_hard_condition(strategy: FullStrategy, prefix: list[dict]) -> bool:
    """Whether the head, the newest round and a one-line note fit the budget (where ``hard`` must hold)."""
    ctx = context(strategy)
    head, body = split_head(prefix)
    newest = split_rounds(body)[-1] if body else []
    return ctx.count_tokens([*head, *newest]) + NOTE_ALLOWANCE + ctx.request_overhead() <= ctx.budget


def budget_failures(strategy: FullStrategy, prefix: list[dict], out: list[dict]) -> list[Failure]:
    """A ``hard`` guarantee: the request fits the budget wherever ``fits_hard_condition`` holds."""
    level = getattr(strategy, "budget_guarantee", "none")
    if level not in BUDGET_GUARANTEES:
        return [Failure("budget", f"budget_guarantee={level!r} is not one of {', '.join(BUDGET_GUARANTEES)}")]
    if level != "hard" or not fits_hard_condition(strategy, prefix):
        return []
    ctx = context(strategy)
    tokens = ctx.count_tokens(out) + ctx.request_overhead()
    if tokens > ctx.budget:
        return [Failure("budget", f"declares hard but sent {tokens:,} tokens over a {ctx.budget:,}-token budget")]
    return []


# ---------------------------------------------------------------- whole histories, tools and hooks


def history_failures(
    make: Maker, messages: list[dict], ends: list[int], budget: int, stores: Path, own_results: bool
) -> Iterator[Failure]:
    """Every step of one history (its growing prefixes ``messages[:end]``), by a fresh strategy and its twin;
    a step whose ``prepare`` raised ends the history."""
    strategy, twin = fresh(make, budget, stores), fresh(make, budget, stores)
    hashes: dict[int, str] = {}
    for end in ends:
        failures = step_failures(strategy, twin, messages[:end], own_results, hashes)
        yield from failures
        if any(f.check == "runs" for f in failures):
            return


def outputs_digest(make: Maker, histories: list[tuple[list[dict], list[int], int]], stores: Path) -> str:
    """A hash of every output of a fresh strategy over ``histories`` (messages, loop ends, budget)."""
    outputs = []
    for messages, ends, budget in histories:
        strategy = fresh(make, budget, stores)
        outputs.append([strategy.prepare(list(messages[:end])) for end in ends])
    return digest(outputs)


HOSTILE_VALUES: tuple[Any, ...] = (
    None,
    0,
    -1,
    2**70,
    True,
    [1, 2],
    {"a": 1},
    "",
    " \n ",
    "\ud800",
    "../../etc/passwd",
    "mem-0001",
    "mem-" + "0" * 100_000,
    "x" * 100_000,
)
HOSTILE_KEYS = ("id", "text", "task", "x", "query", "name")


def hostile_args(rng: random.Random) -> dict:
    """Up to three argument names with hostile values: wrong types, huge strings, lone surrogates, paths."""
    return {rng.choice(HOSTILE_KEYS): rng.choice(HOSTILE_VALUES) for _ in range(rng.randint(0, 3))}


def tool_failure(strategy: FullStrategy, tool: str, args: dict) -> Failure | None:
    """A strategy tool called with ``args`` answers a string or a ``ToolError`` of at most ``MAX_ERROR_CHARS``."""
    try:
        result = strategy.call(tool, args)
    except ToolError as exc:
        if len(str(exc)) > MAX_ERROR_CHARS:
            return Failure("tools", f"{tool} answered a {len(str(exc)):,}-character ToolError")
        return None
    except Exception as exc:
        return Failure("tools", f"{tool}({short_args(args)}) raised {type(exc).__name__}: {one_line(exc, 80)}")
    if not isinstance(result, str):
        return Failure("tools", f"{tool} returned a {type(result).__name__}, not a string")
    return None


def short_args(args: dict) -> str:
    """Arguments as ``key=value`` with values cut at 20 characters."""
    return ", ".join(f"{k}={repr(v)[:20]}" for k, v in args.items())


def tool_names(strategy: FullStrategy) -> list[str]:
    """The names of the strategy's own tools."""
    return [tool_name(t) for t in strategy.tools()]


def declared_hooks(strategy: FullStrategy) -> list[str]:
    """The hooks the strategy has of its own (not ``BaseStrategy``'s defaults), among those the checks call."""
    names = ("order_tools", "expose_tools", "server_options", "observe_server_edits")
    own = getattr(strategy, "own", None)  # an adapted object: the hooks it has
    if isinstance(own, dict):
        return [n for n in names if n in own]
    return [n for n in names if getattr(type(strategy), n, None) is not getattr(BaseStrategy, n)]


def hook_failures(strategy: FullStrategy) -> list[Failure]:
    """``server_options`` returns the same JSON object twice; ``observe_server_edits`` takes ``SERVER_EDITS``."""
    hooks = declared_hooks(strategy)
    try:
        if "server_options" in hooks:
            options = strategy.server_options()
            if not isinstance(options, dict):
                return [Failure("hooks", f"server_options returned a {type(options).__name__}, not a dict")]
            json.dumps(options)
            if strategy.server_options() != options:
                return [Failure("hooks", "server_options returned different options on two calls")]
        if "observe_server_edits" in hooks:
            strategy.observe_server_edits([dict(edit) for edit in SERVER_EDITS])
    except Exception as exc:
        return [Failure("hooks", f"a hook raised {type(exc).__name__}: {one_line(exc)}")]
    return []


# ---------------------------------------------------------------- the whole suite

TOOL_CALLS = 50
"""Hostile calls per strategy tool."""


@dataclass(frozen=True)
class CheckedHistory:
    """A history the suite feeds: its name, messages, the loop's ends, its budget, and whether results name pages."""

    name: str
    messages: list[dict]
    ends: list[int]
    budget: int
    own_results: bool


def checked_histories(random_count: int, budget: int | None) -> list[CheckedHistory]:
    """``random_count`` random histories (seeds 0, 1, ...) and the recorded ones; ``budget`` overrides theirs."""
    histories = []
    for seed in range(random_count):
        spec = random_spec(random.Random(seed))
        messages, ends = build_history(spec)
        histories.append(CheckedHistory(f"random history {seed}", messages, ends, budget or spec["budget"], True))
    for name, messages in recorded_histories():
        histories.append(
            CheckedHistory(f"recorded {name}", messages, loop_ends(messages), budget or RECORDED_BUDGET, False)
        )
    return histories


def suite_failures(make: Maker, histories: list[CheckedHistory], stores: Path, seed: int = 0) -> Iterator[Failure]:
    """Every check but the other process's: each history's steps, the tools (hostile arguments), the hooks."""
    for history in histories:
        for failure in history_failures(
            make, history.messages, history.ends, history.budget, stores, history.own_results
        ):
            yield Failure(failure.check, f"{history.name}: {failure.reason}")
    strategy = fresh(make, BUDGETS[1], stores)
    rng = random.Random(seed)
    for tool in tool_names(strategy):
        for _ in range(TOOL_CALLS):
            refused = tool_failure(strategy, tool, hostile_args(rng))
            if refused is not None:
                yield refused
                break
    yield from hook_failures(strategy)

"""Deliberately bad strategies: source 002 experiment 2-3 and 常见误区 (cache anti-patterns).

They exist to be measured (``experiment=cache_pitfalls``), not used. Each one is a real
mistake people make; each is deterministic, so a run is reproducible:

* ``TimestampedSystem``: a "current time" line at the head of the system prompt that changes
  every step (the timestamp story). The first token of the request differs every call, so a
  prefix cache never hits. Needs the harness's ``rewrites_system`` opt-in (below).
* ``FrequencyOrderedTools``: the tool list re-sorted by how often each tool was used so far
  ("smarter"). The tool schemas come before the messages, so from the first moved tool on
  nothing is cached. Uses the optional ``order_tools(tools) -> tools`` hook.
* ``LastRounds``: a sliding window of the last ``rounds`` rounds (the seed's "窗口 10 轮"):
  the prefix moves every round once full, the task statement slides out, key results slide
  out and the agent repeats calls.
* ``FlattenedTranscript``: the whole conversation flattened into ONE user message of
  ``USER: ... / ASSISTANT: ... / TOOL: ...`` text (the most destructive: off the training
  format, tool results mixed into user text, the agent loses track of what it did).
* ``UserConfigAtFront``: the user's live account state (calls left, balance) written into the
  front of the context, at the head of the task message, new every step (source 002 exp 2-3
  "动态用户配置": "每次把剩余调用次数、账户余额塞进上下文前部"; the fix is a status message
  at the end, ``status_bar``). Everything after the system message is new every call.
* ``ShuffledJsonKeys``: the history's JSON (tool-call arguments, JSON tool results) serialized
  again for every request with the keys in another order, as a framework that keeps parsed
  objects and serializes them with unordered maps does (source 004: "很多语言的 JSON 序列化不保证键的
  顺序,同样的对象两次序列化出来不一样,缓存也会悄悄失效"; source 002). The order is seeded by
  ``seed``, the task, the step and the message's position: a run is reproducible.
* ``ToolChurn``: a helper tool loaded and another unloaded between turns (source 004 三、"按场景
  动态加载和卸载工具 ... 工具定义通常放在上下文最前面,一改就让整个缓存失效"). The agent never
  needs the helpers, so only the cache changes. Uses the ``expose_tools`` hook.

Harness extensions make some of them expressible (documented in strategies/base.py):
``rewrites_system = True`` lets a strategy change the leading system message (it must still be a
system message; the trial row records ``rewrites_system``), ``order_tools`` is
applied to the tool list before every agent call (it must return a permutation), and
``expose_tools`` chooses the tools offered at each call (a subset that keeps ``submit``).
"""

from __future__ import annotations

import hashlib
import json
import random
from datetime import datetime, timedelta
from typing import Any

from harness.conversation import iter_calls, split_head, split_rounds
from strategies._common import call_index, tool_identity
from strategies.base import BaseStrategy, ToolError


class TimestampedSystem(BaseStrategy):
    """Prefix the system prompt with a timestamp that changes every step (anti-pattern).

    Parameters:
        start: the simulated clock's start (ISO format); the clock is simulated so that runs
            are reproducible.
        seconds_per_step: simulated seconds between two model calls.
    """

    rewrites_system = True
    budget_guarantee = "none"

    def __init__(self, start: str = "2025-07-01T09:00:00", seconds_per_step: float = 7.0) -> None:
        self.start = datetime.fromisoformat(start)
        self.seconds_per_step = float(seconds_per_step)

    def timestamp(self, messages: list[dict]) -> str:
        """The simulated time of this step (one step per assistant message so far)."""
        step = sum(1 for m in messages if m.get("role") == "assistant")
        return (self.start + timedelta(seconds=step * self.seconds_per_step)).isoformat(timespec="seconds")

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The whole history with a new system message whose first line is the current time."""
        system = dict(messages[0])
        system["content"] = f"Current time: {self.timestamp(messages)}\n\n{system.get('content') or ''}"
        return [system, *messages[1:]]


class FrequencyOrderedTools(BaseStrategy):
    """Send the whole history but re-sort the tools by use so far, most used first (anti-pattern).

    Ties keep the task's order (a stable sort), so the first steps look like the baseline.
    """

    budget_guarantee = "none"

    def __init__(self) -> None:
        self.uses: dict[str, int] = {}

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The history unchanged; counts the tool calls for ``order_tools``."""
        uses: dict[str, int] = {}
        for message in messages:
            for _, name, _ in iter_calls(message):
                uses[name] = uses.get(name, 0) + 1
        self.uses = uses
        return list(messages)

    def order_tools(self, tools: list[dict]) -> list[dict]:
        """The tools, most used first (stable)."""
        return sorted(tools, key=lambda t: -self.uses.get(t.get("function", {}).get("name", ""), 0))


class LastRounds(BaseStrategy):
    """The system message plus the last ``rounds`` whole rounds; the task statement is not kept (anti-pattern).

    Parameters:
        rounds: rounds kept (an assistant message with its tool results is one round).
    """

    budget_guarantee = "none"

    def __init__(self, rounds: int = 10) -> None:
        if int(rounds) < 1:
            raise ValueError("pitfall_window: rounds must be at least 1")
        self.rounds = int(rounds)
        self._dropped = 0

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Cut to the last rounds (whole rounds, so every call keeps its results)."""
        system, rest = messages[0], messages[1:]
        rounds = split_rounds(rest)
        kept = rounds[-self.rounds :]
        dropped = len(rounds) - len(kept)
        if dropped and dropped != self._dropped:  # each move of the window is a cut
            self.ctx.log("compaction", method="pitfall_window", kept_rounds=len(kept), dropped_rounds=dropped)
        self._dropped = dropped
        return [system, *[m for r in kept for m in r]]


class FlattenedTranscript(BaseStrategy):
    """The system message plus ONE user message holding the whole conversation as text (anti-pattern).

    Format, one block per message: ``USER: ...``, ``ASSISTANT: ...`` (with a
    ``[called name {json args}]`` line per tool call) and ``TOOL (name): ...``.
    """

    budget_guarantee = "none"

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Flatten everything after the system message."""
        index = call_index(messages)
        blocks: list[str] = []
        for message in messages[1:]:
            role = message.get("role")
            content = str(message.get("content") or "")
            if role == "tool":
                name, _ = tool_identity(message, index)
                blocks.append(f"TOOL ({name}): {content}")
            elif role == "assistant":
                calls = [
                    f"[called {name} {json.dumps(_args(raw), sort_keys=True, ensure_ascii=False)}]"
                    for _, name, raw in iter_calls(message)
                ]
                blocks.append("ASSISTANT: " + "\n".join([content, *calls]).strip())
            else:
                blocks.append(f"USER: {content}")
        return [messages[0], {"role": "user", "content": "\n\n".join(blocks)}]


def _args(raw) -> object:
    if isinstance(raw, dict):
        return raw
    try:
        return json.loads(raw or "{}")
    except (TypeError, json.JSONDecodeError):
        return raw


def _steps(messages: list[dict]) -> int:
    """The agent's replies so far (the step about to be prepared is this plus one)."""
    return sum(1 for m in messages if m.get("role") == "assistant")


class UserConfigAtFront(BaseStrategy):
    """Write the user's live account state at the head of the task message, new every step (anti-pattern).

    The line reads ``[account] tool calls left: N of LIMIT; balance: $B`` (N = ``call_limit`` minus
    the tool calls so far; B = ``balance`` minus ``cost_per_step`` per reply so far), then a blank
    line, then the task. The system message stays byte-identical; the task message right after it
    changes every step, so a prefix cache serves the tool schemas and the system prompt only.

    Parameters:
        call_limit: the account's tool-call allowance shown (default 150).
        balance: the balance at the start, in USD (default 50.0).
        cost_per_step: what each model call takes from the balance, in USD (default 0.37).
    """

    budget_guarantee = "none"

    def __init__(self, call_limit: int = 150, balance: float = 50.0, cost_per_step: float = 0.37) -> None:
        self.call_limit = int(call_limit)
        self.balance = float(balance)
        self.cost_per_step = float(cost_per_step)

    def account_line(self, messages: list[dict]) -> str:
        """The state line of this step (computed from the history, so it is reproducible)."""
        calls = sum(1 for m in messages for _ in iter_calls(m))
        balance = self.balance - self.cost_per_step * _steps(messages)
        return (
            f"[account] tool calls left: {max(0, self.call_limit - calls)} of {self.call_limit}; "
            f"balance: ${balance:.2f}"
        )

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The whole history with the account line heading the task message."""
        head, body = split_head(messages)
        if len(head) < 2:  # no task message to head: the history unchanged
            return list(messages)
        task = {**head[1], "content": f"{self.account_line(messages)}\n\n{head[1].get('content') or ''}"}
        return [head[0], task, *body]


def shuffled(value: Any, rng: random.Random) -> Any:
    """``value`` with the keys of every JSON object in it in a random order (lists keep theirs)."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: shuffled(value[k], rng) for k in keys}
    if isinstance(value, list):
        return [shuffled(v, rng) for v in value]
    return value


def _json_object(text: Any) -> dict | None:
    """``text`` parsed when it is a JSON object with keys to reorder somewhere (two in one object), else None."""
    if not isinstance(text, str) or not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) and _has_order(value) else None


def _has_order(value: Any) -> bool:
    if isinstance(value, dict):
        return len(value) > 1 or any(_has_order(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_order(v) for v in value)
    return False


class ShuffledJsonKeys(BaseStrategy):
    """Serialize the history's JSON again for every request, keys in a seeded random order (anti-pattern).

    Tool-call arguments and tool results that are JSON objects with keys to reorder are written
    with ``json.dumps(..., ensure_ascii=False)`` from a copy whose keys are shuffled (nested objects
    too). Everything else is sent unchanged. The order of one message at one step comes from
    ``random.Random`` seeded with a SHA-256 of ``seed``, the task text, the step and the message's
    position, so the same trial gives the same requests.

    Parameters:
        seed: the seed of the key orders (default 0).
        targets: what is re-serialized: ``arguments`` (tool-call arguments) and/or ``results``
            (JSON tool results); default both.
    """

    budget_guarantee = "none"
    TARGETS = ("arguments", "results")

    def __init__(self, seed: int = 0, targets: list[str] | tuple[str, ...] = TARGETS) -> None:
        self.seed = int(seed)
        self.targets = tuple(str(t) for t in targets)
        unknown = set(self.targets) - set(self.TARGETS)
        if unknown:
            raise ValueError(f"pitfall_json_keys: unknown targets {sorted(unknown)} (valid: {', '.join(self.TARGETS)})")

    def rng(self, task: str, step: int, position: int) -> random.Random:
        """The generator of one message's key order at one step."""
        digest = hashlib.sha256(f"{self.seed}|{task}|{step}|{position}".encode("utf-8", "surrogatepass")).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The history with its JSON re-serialized in this step's key orders."""
        head, _ = split_head(messages)
        task, step = str(head[-1].get("content") or ""), _steps(messages)
        return [self._reserialize(m, self.rng(task, step, i)) for i, m in enumerate(messages)]

    def _reserialize(self, message: dict, rng: random.Random) -> dict:
        role = message.get("role")
        if role == "assistant" and "arguments" in self.targets and message.get("tool_calls"):
            calls = [self._call(call, rng) for call in message["tool_calls"]]
            if any(new is not old for new, old in zip(calls, message["tool_calls"], strict=False)):
                return {**message, "tool_calls": calls}
        elif role == "tool" and "results" in self.targets:
            value = _json_object(message.get("content"))
            if value is not None:
                return {**message, "content": json.dumps(shuffled(value, rng), ensure_ascii=False)}
        return message

    @staticmethod
    def _call(call: dict, rng: random.Random) -> dict:
        function = call.get("function") or {}
        value = _json_object(function.get("arguments"))
        if value is None:
            return call
        return {**call, "function": {**function, "arguments": json.dumps(shuffled(value, rng), ensure_ascii=False)}}


HELPER_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_current_time",
            "description": "Current date and time (UTC).",
            "parameters": {"type": "object", "properties": {}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "convert_currency",
            "description": "Convert an amount between currencies.",
            "parameters": {
                "type": "object",
                "properties": {"amount": {"type": "number"}, "from": {"type": "string"}, "to": {"type": "string"}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "calculate",
            "description": "Evaluate an arithmetic expression.",
            "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}},
        },
    },
]


class ToolChurn(BaseStrategy):
    """Load one helper tool and unload the previous one between turns (anti-pattern).

    The strategy owns ``helpers`` helper tools (``get_current_time``, ``convert_currency``,
    ``calculate``; at most three) and offers one of them per step, in turn: the tool list changes
    at every call and repeats every ``helpers`` calls. The helpers sit after the task's tools, so
    the change is inside the cached prefix's tool schemas, before every message. The history is
    sent unchanged. A call to a helper answers that it does nothing here (the reference agent
    never calls them).

    Parameters:
        helpers: how many helper tools rotate (1-3, default 3).
    """

    budget_guarantee = "none"

    def __init__(self, helpers: int = 3) -> None:
        if not 1 <= int(helpers) <= len(HELPER_TOOLS):
            raise ValueError(f"pitfall_tool_churn: helpers must be 1-{len(HELPER_TOOLS)}")
        self.helpers = HELPER_TOOLS[: int(helpers)]
        self.step = 0

    def tools(self) -> list[dict]:
        """Every helper (the harness knows them all; ``expose_tools`` offers one per step)."""
        return [json.loads(json.dumps(t)) for t in self.helpers]

    def call(self, name: str, args: dict) -> str:
        """Helpers do nothing in this experiment."""
        if name not in {t["function"]["name"] for t in self.helpers}:
            raise ToolError(f"unknown tool {name!r}")
        return f"{name} is a placeholder loaded by pitfall_tool_churn; it returns nothing useful."

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The history unchanged; notes the step for ``expose_tools``."""
        self.step = _steps(messages)
        return list(messages)

    def expose_tools(self, tools: list[dict]) -> list[dict]:
        """The task's tools, ``submit`` and this step's helper only."""
        helper_names = [t["function"]["name"] for t in self.helpers]
        loaded = helper_names[self.step % len(helper_names)]
        return [
            t
            for t in tools
            if t.get("function", {}).get("name") not in helper_names or t.get("function", {}).get("name") == loaded
        ]

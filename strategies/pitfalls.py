"""Deliberately bad strategies: seed 002 experiment 2-3 and 常见误区 (cache anti-patterns).

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

Two harness extensions make the first two expressible (documented in strategies/base.py):
``rewrites_system = True`` lets a strategy change the leading system message (it must still
be a system message; the trial row records ``rewrites_system``), and ``order_tools`` is
applied to the tool list before every agent call (it must return a permutation).
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta

from harness.conversation import iter_calls, split_rounds
from strategies._common import call_index, tool_identity
from strategies.base import BaseStrategy


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

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Cut to the last rounds (whole rounds, so every call keeps its results)."""
        system, rest = messages[0], messages[1:]
        rounds = split_rounds(rest)
        kept = rounds[-self.rounds:]
        if len(kept) < len(rounds):
            self.ctx.log("window", kept_rounds=len(kept), dropped_rounds=len(rounds) - len(kept))
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
                calls = [f"[called {name} {json.dumps(_args(raw), sort_keys=True, ensure_ascii=False)}]"
                         for _, name, raw in iter_calls(message)]
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

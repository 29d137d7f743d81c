"""Helpers shared by the compaction strategies: tool-call look-up, thresholds, frozen clearing.

Nothing here is a strategy. ``ToolResultClearer`` is tier 1 of seed 004 (clear old tool
results, keep a recovery hint) and is used by both ``clear_tool_results`` and ``layered``.
"""
from __future__ import annotations

import json
from typing import Any

from harness.budget import parse_budget
from harness.conversation import parse_arguments


def resolve_tokens(value: Any, budget: int, what: str) -> int:
    """A token threshold: ``None`` = the budget, a float in (0, 1] = that fraction of it, else tokens (``25k`` works)."""
    if value is None:
        return budget
    if isinstance(value, float) and 0 < value <= 1:
        return max(1, int(value * budget))
    try:
        return parse_budget(value)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None


def check_threshold(value: Any, what: str) -> None:
    """Fail at construction time on a threshold that ``resolve_tokens`` would reject."""
    if value is not None:
        resolve_tokens(value, 1_000, what)


def call_index(messages: list[dict]) -> dict[str, tuple[str, dict]]:
    """``tool_call_id -> (tool name, arguments)`` for every visible call.

    Reads OpenAI-style calls (``{"id", "function": {"name", "arguments"}}``) and the
    flat form seed 004's demo uses (``{"id", "name"}``).
    """
    index: dict[str, tuple[str, dict]] = {}
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            name = function.get("name") or call.get("name") or "tool"
            try:
                args = parse_arguments(function.get("arguments", call.get("arguments")))
            except ValueError:
                args = {}
            index[call.get("id", "")] = (name, args)
    return index


def tool_identity(message: dict, index: dict[str, tuple[str, dict]]) -> tuple[str, dict]:
    """The name and arguments of the call a tool result answers (private keys first)."""
    found = index.get(message.get("tool_call_id", ""), ("tool", {}))
    name = message.get("_tool") or found[0]
    args = message.get("_args") if isinstance(message.get("_args"), dict) else found[1]
    return name, args


def args_text(args: dict) -> str:
    """Canonical, byte-stable JSON of a call's arguments (sorted keys)."""
    return json.dumps(args, sort_keys=True, ensure_ascii=False)


def is_error(message: dict) -> bool:
    """Whether a tool result is a failure (the loop's ``_error`` flag). Failures are never compacted."""
    return bool(message.get("_error"))


CLEARED = "[cleared: {name} {args} returned {tokens:,} tokens; call it again if you need it]"


class ToolResultClearer:
    """Tier 1: replace old tool results by a one-line placeholder, a batch at a time, frozen.

    Each placeholder is written once, keyed by ``tool_call_id``, and reused byte for byte
    on every later step, so the prefix cache breaks once per batch and never again for
    that message. Error results and results of ``exclude_tools`` are never cleared; the
    ``keep`` most recent tool results (of any kind) are never cleared.
    """

    def __init__(self, keep: int = 3, exclude_tools: list[str] | tuple[str, ...] = (), clear_at_least: int = 0,
                 template: str = CLEARED) -> None:
        if keep < 0:
            raise ValueError("keep must be at least 0")
        if clear_at_least < 0:
            raise ValueError("clear_at_least must be at least 0")
        self.keep = int(keep)
        self.exclude_tools = set(exclude_tools or ())
        self.clear_at_least = int(clear_at_least)
        self.template = template
        self.placeholders: dict[str, str] = {}
        self._copies: dict[str, tuple[dict, dict]] = {}
        self._last_skip = 0

    def _copy(self, message: dict) -> dict:
        call_id = message["tool_call_id"]
        cached = self._copies.get(call_id)
        if cached is not None and cached[0] is message:
            return cached[1]
        copy = {**message, "content": self.placeholders[call_id]}
        self._copies[call_id] = (message, copy)
        return copy

    def apply(self, messages: list[dict]) -> list[dict]:
        """``messages`` with every already-cleared tool result replaced by its frozen placeholder."""
        if not self.placeholders:
            return list(messages)
        return [self._copy(m) if m.get("role") == "tool" and m.get("tool_call_id") in self.placeholders else m
                for m in messages]

    def candidates(self, messages: list[dict]) -> list[dict]:
        """Tool results that a new batch would clear (oldest first)."""
        tools = [m for m in messages if m.get("role") == "tool"]
        older = tools[: max(0, len(tools) - self.keep)]
        return [m for m in older if m.get("tool_call_id") not in self.placeholders
                and not is_error(m) and m.get("_tool", "") not in self.exclude_tools]

    def clear_batch(self, messages: list[dict], ctx: Any, method: str) -> list[dict]:
        """Clear every candidate in one batch (if it frees at least ``clear_at_least`` tokens); log it."""
        index = call_index(messages)
        batch: dict[str, str] = {}
        freed = 0
        for message in self.candidates(messages):
            name, args = tool_identity(message, index)
            if name in self.exclude_tools:
                continue
            before = ctx.count_message(message)
            text = self.template.format(name=name, args=args_text(args), tokens=before)
            freed += before - ctx.count_message({**message, "content": text})
            batch[message["tool_call_id"]] = text
        if not batch or freed < max(1, self.clear_at_least):
            if batch and len(batch) != self._last_skip:  # logged once per candidate count, not every step
                self._last_skip = len(batch)
                ctx.log("clear_skipped", method=method, would_clear=len(batch), would_free=freed,
                        clear_at_least=self.clear_at_least)
            return list(messages)
        self.placeholders.update(batch)
        ctx.log("compaction", method=method, tier="clear_tool_results", cleared=len(batch), tokens_freed=freed,
                total_cleared=len(self.placeholders))
        return self.apply(messages)

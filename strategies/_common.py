"""Helpers shared by the compaction strategies: tool-call look-up, thresholds, frozen clearing.

Nothing here is a strategy. ``ToolResultClearer`` is tier 1 of source 004 (clear old tool
results, keep a recovery hint) and is used by both ``clear_tool_results`` and ``layered``.
"""

from __future__ import annotations

import json
from typing import Any

from harness.budget import parse_budget
from harness.conversation import last_assistant_index, parse_arguments


def resolve_tokens(value: Any, budget: int, what: str) -> int:
    """A token threshold: ``None`` = the budget, a float in (0, 1] = that fraction of it, else tokens
    (``25k`` works)."""
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


def describe_call(call: dict) -> tuple[str, dict]:
    """The name and parsed arguments of one ``tool_calls`` entry.

    Reads OpenAI-style calls (``{"id", "function": {"name", "arguments"}}``) and the
    flat form source 004's demo uses (``{"id", "name"}``); unparseable arguments read as ``{}``.
    """
    function = call.get("function") or {}
    name = function.get("name") or call.get("name") or "tool"
    try:
        args = parse_arguments(function.get("arguments", call.get("arguments")))
    except ValueError:
        args = {}
    return name, args


def call_index(messages: list[dict]) -> dict[str, tuple[str, dict]]:
    """``tool_call_id -> (tool name, arguments)`` for every visible call (the latest call wins).

    Ids are not unique across turns (some servers number the calls of every reply
    ``call_0``, ``call_1``...); to find the call a given result answers use ``result_calls``.
    """
    index: dict[str, tuple[str, dict]] = {}
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            index[call.get("id", "")] = describe_call(call)
    return index


def result_calls(messages: list[dict]) -> dict[int, dict]:
    """``position of a tool result -> the tool_calls entry it answers``, looked up in its own round.

    A result answers a call of the latest assistant message before it, so a call id that
    repeats in a later turn never mixes two rounds up.
    """
    found: dict[int, dict] = {}
    current: dict[str, dict] = {}
    for position, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            current = {call.get("id", ""): call for call in message.get("tool_calls") or []}
        elif role == "tool":
            call = current.get(message.get("tool_call_id", ""))
            if call is not None:
                found[position] = call
    return found


def result_identity(message: dict, call: dict | None) -> tuple[str, dict]:
    """The name and arguments of the call a tool result answers: its private keys first, then ``call``."""
    found = describe_call(call) if call is not None else ("tool", {})
    return _private_identity(message, found)


def tool_identity(message: dict, index: dict[str, tuple[str, dict]]) -> tuple[str, dict]:
    """The name and arguments of the call a tool result answers (private keys first), by id.

    By id alone: prefer ``result_identity`` with ``result_calls`` when ids may repeat.
    """
    found = index.get(message.get("tool_call_id", ""), ("tool", {}))
    return _private_identity(message, found)


def _private_identity(message: dict, found: tuple[str, dict]) -> tuple[str, dict]:
    """A tool result's private ``_tool`` and ``_args`` keys where set, else the name and arguments in ``found``."""
    name = message.get("_tool") or found[0]
    private_args = message.get("_args")
    args = private_args if isinstance(private_args, dict) else found[1]
    return name, args


ResultKey = tuple[int, str]


def result_key(position: int, message: dict) -> ResultKey:
    """What a strategy freezes a tool result by: its position in the append-only history and its call id.

    The id alone is not enough (ids repeat across turns on some servers), and the position
    alone would silently apply to another message if a caller passed a different history.
    """
    return (position, str(message.get("tool_call_id", "")))


def apply_frozen(
    messages: list[dict], frozen: dict[ResultKey, str], copies: dict[ResultKey, tuple[dict, dict]], start: int = 0
) -> list[dict]:
    """``messages`` with every tool result whose key is in ``frozen`` replaced by its frozen text (a new list).

    ``messages`` is the history or a slice of it; ``start`` is the history position of its first message.
    The replaced copies are memoized in ``copies`` (keyed like ``frozen``, holding the original and its
    copy), so the same history gives byte-identical requests step after step (the prefix cache keeps
    hitting) and no result is copied twice.
    """
    if not frozen:
        return list(messages)
    out = []
    for offset, message in enumerate(messages):
        key = result_key(start + offset, message) if message.get("role") == "tool" else None
        if key in frozen:
            cached = copies.get(key)
            if cached is None or cached[0] is not message:
                cached = (message, {**message, "content": frozen[key]})
                copies[key] = cached
            message = cached[1]
        out.append(message)
    return out


def args_text(args: dict) -> str:
    """Canonical, byte-stable JSON of a call's arguments (sorted keys)."""
    return json.dumps(args, sort_keys=True, ensure_ascii=False)


def clip(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to about ``limit`` characters, for error messages that quote a hostile argument.

    ``repr`` escapes lone surrogates and control characters, so the text is always printable.
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def unicode_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored as UTF-8 (a lone surrogate, with its position), or ``None``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"it holds a lone surrogate ({text[exc.start]!r} at position {exc.start}), which is not valid Unicode"
    return None


def is_error(message: dict) -> bool:
    """Whether a tool result is a failure (the loop's ``_error`` flag). Failures are never compacted."""
    return bool(message.get("_error"))


CLEARED = "[cleared: {name} {args} returned {tokens:,} tokens; call it again if you need it]"


class ToolResultClearer:
    """Tier 1: replace old tool results by a one-line placeholder, a batch at a time, frozen.

    Each placeholder is written once, keyed by the result's position in the history and its
    ``tool_call_id`` (``result_key``: ids repeat across turns on some servers), and reused byte
    for byte on every later step, so the prefix cache breaks once per batch and never again
    for that message. Error results and results of ``exclude_tools`` are never cleared; the
    ``keep`` most recent tool results (of any kind) are never cleared, nor the results of the
    newest round, which the agent has not seen yet.

    ``messages`` is the append-only history or a slice of it; ``start`` is the history
    position of the slice's first message.
    """

    def __init__(
        self,
        keep: int = 3,
        exclude_tools: list[str] | tuple[str, ...] = (),
        clear_at_least: int = 0,
        template: str = CLEARED,
    ) -> None:
        if keep < 0:
            raise ValueError("keep must be at least 0")
        if clear_at_least < 0:
            raise ValueError("clear_at_least must be at least 0")
        self.keep = int(keep)
        self.exclude_tools = set(exclude_tools or ())
        self.clear_at_least = int(clear_at_least)
        self.template = template
        self.placeholders: dict[ResultKey, str] = {}
        self._copies: dict[ResultKey, tuple[dict, dict]] = {}
        self._last_skip = 0

    def apply(self, messages: list[dict], start: int = 0) -> list[dict]:
        """``messages`` with every already-cleared tool result replaced by its frozen placeholder."""
        return apply_frozen(messages, self.placeholders, self._copies, start)

    def candidates(self, messages: list[dict], start: int = 0) -> list[tuple[int, dict]]:
        """``(offset, tool result)`` that a new batch would clear (oldest first)."""
        tools = [(offset, m) for offset, m in enumerate(messages) if m.get("role") == "tool"]
        older = tools[: max(0, len(tools) - self.keep)]
        unseen = set(unseen_results(messages))  # a round of parallel calls can outnumber ``keep``
        return [
            (offset, m)
            for offset, m in older
            if result_key(start + offset, m) not in self.placeholders
            and offset not in unseen
            and not is_error(m)
            and m.get("_tool", "") not in self.exclude_tools
        ]

    def clear_batch(self, messages: list[dict], ctx: Any, method: str, start: int = 0) -> list[dict]:
        """Clear every candidate in one batch (if it frees at least ``clear_at_least`` tokens); log it."""
        calls = result_calls(messages)
        batch: dict[ResultKey, str] = {}
        freed = 0
        for offset, message in self.candidates(messages, start):
            name, args = result_identity(message, calls.get(offset))
            if name in self.exclude_tools:
                continue
            before = ctx.count_message(message)
            text = self.template.format(name=name, args=args_text(args), tokens=before)
            freed += before - ctx.count_message({**message, "content": text})
            batch[result_key(start + offset, message)] = text
        if not batch or freed < max(1, self.clear_at_least):
            if batch and len(batch) != self._last_skip:  # logged once per candidate count, not every step
                self._last_skip = len(batch)
                ctx.log(
                    "clear_skipped",
                    method=method,
                    would_clear=len(batch),
                    would_free=freed,
                    clear_at_least=self.clear_at_least,
                )
            return list(messages)
        self.placeholders.update(batch)
        ctx.log(
            "compaction",
            method=method,
            tier="clear_tool_results",
            cleared=len(batch),
            tokens_freed=freed,
            total_cleared=len(self.placeholders),
        )
        return self.apply(messages, start)


def unseen_results(messages: list[dict]) -> list[int]:
    """Positions of the tool results after the last assistant message: the agent has not seen them yet.

    With parallel calls one round can hold more results than a strategy's ``keep``; clearing or
    offloading any of them would take away what the agent never read.
    """
    start = last_assistant_index(messages)
    if start is None:
        return []
    return [i for i in range(start + 1, len(messages)) if messages[i].get("role") == "tool"]

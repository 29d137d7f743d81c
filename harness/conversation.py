"""Conversation helpers: validation of projections, rounds, private keys, rendering.

Messages are OpenAI Chat Completions dicts. Keys beginning with ``_`` are private to
the harness (``_error``, ``_step``, ...) and are dropped before a request is sent.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable, Iterator


class InvalidConversation(ValueError):
    """A projection that no chat API would accept; the message says what is wrong."""


def tool_call_ids(message: dict) -> list[str]:
    """The ids of an assistant message's tool calls (empty for other messages)."""
    return [call["id"] for call in message.get("tool_calls") or []]


def validate_projection(request: list[dict], system: dict, allow_system_rewrite: bool = False, start: int = 0) -> None:
    """Check that ``request`` is a conversation a chat API accepts.

    Rules: the leading system message is ``system`` unchanged (with
    ``allow_system_rewrite``, for strategies that declare ``rewrites_system``: any leading
    system message); every assistant
    ``tool_calls`` entry is answered by a tool message right after it (parallel calls
    in any order); no tool message without its call; the last message is not an
    assistant message. Raises ``InvalidConversation`` naming the first violation.

    ``start`` > 0 says that ``request[:start]`` is a projection already validated (the loop
    passes it when a request extends the previous one), so only the rest is checked: the
    per-step cost then grows with the new messages, not with the history.
    """
    if not request:
        raise InvalidConversation("the projection is empty")
    if start:
        pass
    elif allow_system_rewrite:
        if request[0].get("role") != "system":
            raise InvalidConversation("the leading system message was removed")
    elif request[0] is not system and request[0] != system:
        raise InvalidConversation("the leading system message was changed or removed")
    pending: set[str] = set()
    for index in range(start, len(request)):
        message = request[index]
        role = message.get("role")
        if role not in {"system", "user", "assistant", "tool"}:
            raise InvalidConversation(f"message {index} has an unknown role {role!r}")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                raise InvalidConversation(f"message {index} is a tool result for {call_id!r} with no matching call")
            pending.discard(call_id)
            continue
        if pending:
            raise InvalidConversation(
                f"message {index} ({role}) arrives before tool results for {sorted(pending)} were given"
            )
        if role == "system" and index > 0:
            raise InvalidConversation(f"message {index} is a second system message")
        if role == "assistant":
            ids = tool_call_ids(message)
            if len(set(ids)) != len(ids):
                raise InvalidConversation(f"message {index} repeats a tool call id")
            pending = set(ids)
    if pending:
        raise InvalidConversation(f"tool calls {sorted(pending)} have no results")
    if request[-1].get("role") == "assistant":
        raise InvalidConversation("the projection ends with an assistant message")


def check_tool_order(ordered: list[dict], tools: list[dict]) -> None:
    """Check that ``ordered`` (a strategy's ``order_tools`` result) is a permutation of ``tools``."""
    key = lambda t: json.dumps(t, sort_keys=True, default=str)  # noqa: E731
    if len(ordered) != len(tools) or sorted(map(key, ordered)) != sorted(map(key, tools)):
        raise InvalidConversation("order_tools must return the same tools, reordered (none added, dropped or changed)")


def check_tool_subset(exposed: list[dict], tools: list[dict], final: str = "submit") -> None:
    """Check that ``exposed`` (a strategy's ``expose_tools`` result) is a subset of ``tools`` that keeps the
    loop's ``final`` tool (``submit``; a sub-agent's ``report``)."""
    key = lambda t: json.dumps(t, sort_keys=True, default=str)  # noqa: E731
    known = {key(t) for t in tools}
    keys = [key(t) for t in exposed]
    if len(set(keys)) != len(keys) or not set(keys) <= known:
        raise InvalidConversation(
            "expose_tools must return some of the tools, unchanged and once each (none added or changed)"
        )
    if not any(t.get("function", {}).get("name") == final for t in exposed):
        raise InvalidConversation(f"expose_tools must keep the {final} tool")


def split_head(messages: list[dict]) -> tuple[list[dict], list[dict]]:
    """Split off the head: the system message and the first user message (the task)."""
    head_len = 1
    if len(messages) > 1 and messages[1].get("role") == "user":
        head_len = 2
    return messages[:head_len], messages[head_len:]


def split_rounds(messages: list[dict]) -> list[list[dict]]:
    """Group messages into rounds: an assistant message with its tool results, or a lone message.

    Tool messages always stay with the assistant message that called them, so a round is
    the unit a strategy may keep or drop without breaking the pairing.
    """
    rounds: list[list[dict]] = []
    for message in messages:
        if message.get("role") == "tool" and rounds and rounds[-1][0].get("role") == "assistant":
            rounds[-1].append(message)
        else:
            rounds.append([message])
    return rounds


def drop_orphans(messages: list[dict]) -> list[dict]:
    """Repair a cut conversation: drop tool results whose call is gone and calls whose results are gone."""
    answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    called: set[str] = set()
    kept: list[dict] = []
    for message in messages:
        if message.get("role") == "assistant" and message.get("tool_calls"):
            ids = tool_call_ids(message)
            if not all(i in answered for i in ids):
                continue
            called.update(ids)
        elif message.get("role") == "tool" and message.get("tool_call_id") not in called:
            continue
        kept.append(message)
    return kept


def last_assistant_index(messages: list[dict]) -> int | None:
    """Position of the last assistant message (``None`` when there is none): where the newest round starts."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "assistant":
            return index
    return None


def strip_private(message: dict) -> dict:
    """A copy of ``message`` without the harness's private ``_`` keys."""
    if not any(key.startswith("_") for key in message):
        return message
    return {key: value for key, value in message.items() if not key.startswith("_")}


def _no_constant(name: str) -> Any:
    """``json.loads`` accepts NaN and Infinity, which JSON does not allow (and no record can hold)."""
    raise ValueError(f"arguments hold {name}, which JSON does not allow")


def _finite_float(text: str) -> float:
    """A JSON number as a float; one too large for a float (``1e400``, which ``json.loads`` reads as
    infinity) is refused like Infinity itself: no record can hold it."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"arguments hold the number {text[:40]}, too large for a float")
    return value


def parse_arguments(raw: str | dict | None) -> dict:
    """Parse a tool call's JSON arguments; raises ``ValueError`` with a readable reason.

    Lone surrogates (``"\\ud800"`` in the JSON) come back escaped as text (see ``escape_surrogates``).
    """
    if isinstance(raw, dict):
        try:
            json.dumps(raw, allow_nan=False, default=str)
            return escape_surrogates(raw)
        except RecursionError:
            raise ValueError("arguments are nested too deeply") from None
        except ValueError:
            raise ValueError("arguments hold NaN or Infinity, which JSON does not allow") from None
    if raw is None or raw == "":
        return {}
    if not isinstance(raw, str):
        raise ValueError(f"arguments must be a JSON object or its text, not {type(raw).__name__}")
    try:
        value = json.loads(raw, parse_constant=_no_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not valid JSON ({exc.msg} at position {exc.pos})") from None
    except RecursionError:
        raise ValueError("arguments are nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError("arguments must be a JSON object")
    return escape_surrogates(value) if "\\u" in raw or not raw.isascii() else value


def escape_text(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``\\ud800``): no API or file accepts one."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def escape_surrogates(value: Any) -> Any:
    """``value`` (JSON-like) with every string, keys included, passed through ``escape_text``."""
    if isinstance(value, str):
        return value if value.isascii() else escape_text(value)
    if isinstance(value, dict):
        return {escape_surrogates(k): escape_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [escape_surrogates(v) for v in value]
    return value


def reply_problem(message: dict) -> str | None:
    """Why an assistant reply's tool calls cannot be run as they are (``None`` when they can).

    A call must be an object with a non-empty string id and a string name, and no two calls of one
    reply may share an id: the results could not be told apart, and no chat API accepts them.
    """
    calls = message.get("tool_calls")
    if not calls:
        return None
    if not isinstance(calls, list):
        return "tool_calls must be a list of calls"
    seen: set[str] = set()
    for index, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
            return f"tool call {index} is not an object with a function"
        call_id, name = call.get("id"), call["function"].get("name")
        if not isinstance(call_id, str) or not call_id:
            return f"tool call {index} has no id"
        if not isinstance(name, str) or not name:
            return f"tool call {index} has no tool name"
        if call_id in seen:
            return f"two tool calls share the id {call_id!r}; each call needs its own id"
        seen.add(call_id)
    return None


def iter_calls(message: dict) -> Iterator[tuple[str, str, str]]:
    """Yield ``(id, name, raw_arguments)`` for each tool call of an assistant message."""
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        yield call.get("id", ""), function.get("name", ""), function.get("arguments", "")


def render_history(messages: Iterable[dict]) -> str:
    """Render messages as plain text for a summarizer, one block per message.

    Format (relied on by the reference policies): ``[user]: ...``, ``[assistant]: ...``,
    ``[tool_call] name {json args}`` and ``[tool name]: result``.
    """
    names: dict[str, str] = {}
    lines: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "system":
            continue
        if role == "tool":
            name = names.get(message.get("tool_call_id", ""), "tool")
            lines.append(f"[tool {name}]: {message.get('content') or ''}")
            continue
        if message.get("content"):
            lines.append(f"[{role}]: {message['content']}")
        for call_id, name, raw in iter_calls(message):
            names[call_id] = name
            lines.append(f"[tool_call] {name} {raw}")
    return "\n".join(lines)

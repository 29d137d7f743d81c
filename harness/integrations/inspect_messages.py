"""inspect_ai messages <-> ctxbench message dicts, with stable ids (needs the ``inspect`` extra).

Every inspect message maps to one fixed dict (OpenAI Chat Completions shape, what ctxbench's
strategies read) and back:

- system / user: ``{"role", "content"}`` (``content`` is the message's text);
- assistant: ``{"role", "content"}`` plus ``tool_calls`` (``id``, ``type``, ``function.name``,
  ``function.arguments`` as ``arguments_text``) when it calls tools;
- tool: ``{"role": "tool", "tool_call_id", "content"}`` plus the private keys ctxbench's loop
  sets and strategies read: ``_tool`` (the function), ``_args`` (the arguments of the call it
  answers, from the assistant message before it) and ``_error`` (inspect's ``error`` is set).
  An error result without text reads ``ERROR: <message>``.

A dict that comes back unchanged (the same object) maps back to the very inspect message it
came from (same id, images and reasoning included). A dict a strategy made (a placeholder, a
note, a summary) becomes a new inspect message whose id is derived from its content
(``ctxbench-<hash>``), so the same projection gives the same ids, step after step.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo

from harness.conversation import parse_arguments, strip_private

ID_PREFIX = "ctxbench-"
ERROR_PREFIX = "ERROR: "


def arguments_text(arguments: dict) -> str:
    """A call's arguments as the JSON text a chat API carries (key order kept, UTF-8 as is)."""
    return json.dumps(arguments, ensure_ascii=False)


def _text(message: ChatMessage) -> str:
    return message.content if isinstance(message.content, str) else message.text


def _call_dicts(message: ChatMessageAssistant) -> list[dict]:
    return [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.function, "arguments": arguments_text(call.arguments)},
        }
        for call in message.tool_calls or []
    ]


def to_dict(message: ChatMessage, calls: dict[str, tuple[str, dict]] | None = None) -> dict:
    """The ctxbench dict of one inspect message; ``calls`` maps a call id to (name, arguments) for tool results."""
    if isinstance(message, ChatMessageAssistant):
        out: dict[str, Any] = {"role": "assistant", "content": _text(message)}
        if message.tool_calls:
            out["tool_calls"] = _call_dicts(message)
        return out
    if isinstance(message, ChatMessageTool):
        name, args = (calls or {}).get(message.tool_call_id or "", (message.function or "tool", {}))
        content = _text(message)
        if message.error is not None and not content:
            content = ERROR_PREFIX + message.error.message
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": content,
            "_tool": message.function or name,
            "_args": args,
            "_error": message.error is not None,
        }
    return {"role": message.role, "content": _text(message)}


def calls_of(message: ChatMessage) -> dict[str, tuple[str, dict]]:
    """``call id -> (function, arguments)`` of an assistant message (empty for others)."""
    if not isinstance(message, ChatMessageAssistant):
        return {}
    return {call.id: (call.function, dict(call.arguments)) for call in message.tool_calls or []}


def to_dicts(messages: list[ChatMessage]) -> list[dict]:
    """Dicts of a list of inspect messages, tool results knowing their calls (fresh dicts each call)."""
    calls: dict[str, tuple[str, dict]] = {}
    out = []
    for message in messages:
        calls.update(calls_of(message))
        out.append(to_dict(message, calls))
    return out


def derived_id(message: dict, occurrence: int = 0) -> str:
    """A stable id for a dict a strategy made: a hash of what is sent, its tool identity and its occurrence."""
    key = json.dumps(
        [strip_private(message), message.get("_tool"), message.get("_error"), occurrence],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return ID_PREFIX + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def from_dict(message: dict, message_id: str) -> ChatMessage:
    """A new inspect message for a dict (a strategy's placeholder, note or summary)."""
    role, content = message.get("role"), str(message.get("content") or "")
    if role == "system":
        return ChatMessageSystem(id=message_id, content=content)
    if role == "user":
        return ChatMessageUser(id=message_id, content=content)
    if role == "assistant":
        calls = [
            ToolCall(
                id=c.get("id", ""),
                function=(c.get("function") or {}).get("name", ""),
                arguments=_arguments((c.get("function") or {}).get("arguments")),
            )
            for c in message.get("tool_calls") or []
        ]
        return ChatMessageAssistant(id=message_id, content=content, tool_calls=calls or None)
    if role == "tool":
        error = ToolCallError("unknown", content) if message.get("_error") else None
        return ChatMessageTool(
            id=message_id,
            content=content,
            tool_call_id=message.get("tool_call_id"),
            function=message.get("_tool"),
            error=error,
        )
    raise ValueError(f"cannot map a message with role {role!r} to inspect_ai")


def _arguments(raw: Any) -> dict:
    try:
        return parse_arguments(raw)
    except ValueError:
        return {}


def tool_dicts(tools: list[ToolInfo]) -> list[dict]:
    """inspect tool definitions as the OpenAI schemas ctxbench counts (the layout inspect counts too)."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters.model_dump(exclude_none=True),
            },
        }
        for t in tools
    ]


class MessageHistory:
    """The full, append-only history the adapter keeps, and the mapping of projections back to inspect.

    ``absorb`` appends the messages of inspect's view that are new (by id); messages the adapter
    made itself (placeholders it emitted) and messages already known are skipped, so inspect's
    compacted view plus its new messages becomes the full history again.
    """

    def __init__(self) -> None:
        self.dicts: list[dict] = []
        self._inspect: dict[int, tuple[dict, ChatMessage]] = {}  # id(dict) -> (dict, its inspect message)
        self._known: set[str] = set()  # ids of history messages
        self._emitted: dict[str, ChatMessage] = {}  # derived id -> the message made for it
        self._calls: dict[str, tuple[str, dict]] = {}

    def absorb(self, messages: list[ChatMessage]) -> int:
        """Append the messages not seen before; returns how many were new."""
        new = 0
        for message in messages:
            if message.id in self._known or message.id in self._emitted:
                continue
            self._calls.update(calls_of(message))
            converted = to_dict(message, self._calls)
            self.dicts.append(converted)
            self._inspect[id(converted)] = (converted, message)
            self._known.add(str(message.id))
            new += 1
        return new

    def to_inspect(self, projection: list[dict]) -> list[ChatMessage]:
        """The inspect messages of a projection: originals for unchanged dicts, stable new ones for the rest."""
        out: list[ChatMessage] = []
        seen: dict[str, int] = {}
        for message in projection:
            entry = self._inspect.get(id(message))
            if entry is not None and entry[0] is message:
                out.append(entry[1])
                continue
            base = derived_id(message)
            occurrence = seen.get(base, 0)
            seen[base] = occurrence + 1
            message_id = derived_id(message, occurrence) if occurrence else base
            made = self._emitted.get(message_id)
            if made is None:
                made = self._emitted[message_id] = from_dict(message, message_id)
            out.append(made)
        return out

"""The harness's OpenAI-format conversation <-> Anthropic's Messages format (pure data, no SDK).

OpenAI format (what the loop and the strategies hold) to Messages format (what the Anthropic
API and ``llama-server``'s ``/v1/messages`` read):

- leading ``system`` messages become the top-level ``system`` text blocks;
- a ``user`` message becomes a user turn of one text block (list content: one block per part);
- an ``assistant`` message becomes an assistant turn: its ``server_blocks`` first (blocks the
  server sent that are neither text nor tool use, such as a ``compaction`` or ``thinking``
  block, kept verbatim because the server needs them back), then its text (when not empty),
  then one ``tool_use`` block per tool call (``id``, ``name``, ``input`` = the decoded
  arguments; arguments that are not a JSON object travel as ``{"__arguments__": raw}``);
- consecutive ``tool`` messages become ONE user turn of ``tool_result`` blocks (parallel tool
  use: every result of a turn in the next user message), with ``is_error`` when the result is
  a failure: an explicit ``is_error: true`` on the message, the loop's private ``_error``, or
  content starting with ``ERROR`` (the harness's convention for every error result);
- a user message after tool results stays its own user turn (the API joins consecutive turns
  of one role), so the way back can tell them apart;
- tools: ``{"type": "function", "function": {name, description, parameters}}`` becomes
  ``{name, description, input_schema}``.

``from_messages`` is the inverse. The round trip is exact for every conversation in canonical
form, which is what the loop and the strategies produce: string contents, tool-call
arguments as ``json.dumps(..., ensure_ascii=False)`` of an object (or any string that is not
a JSON object), no ``is_error`` key unless an error's text does not start with ``ERROR``;
``canonical`` maps any conversation to that form (tests/test_anthropic_backend.py checks the
round trip with hypothesis).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

RAW_ARGUMENTS = "__arguments__"
ERROR_PREFIX = "ERROR"
EMPTY_SCHEMA = {"type": "object", "properties": {}}


@dataclass
class MessagesRequest:
    """The parts of a Messages API request: ``system`` blocks, ``messages`` and ``tools``."""

    system: list[dict] = field(default_factory=list)
    messages: list[dict] = field(default_factory=list)
    tools: list[dict] = field(default_factory=list)


def text_blocks(content: Any) -> list[dict]:
    """Text blocks of an OpenAI ``content`` (a string, ``None`` or a list of text parts)."""
    if content is None:
        return []
    if isinstance(content, list):
        return [
            {"type": "text", "text": str(part.get("text", "")) if isinstance(part, dict) else str(part)}
            for part in content
        ]
    return [{"type": "text", "text": str(content)}]


def _not_json(name: str) -> Any:
    raise ValueError(name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def tool_input(arguments: Any) -> dict:
    """A tool call's ``arguments`` (JSON text) as a ``tool_use`` input object.

    Arguments that decode to no JSON object travel as their text (``{"__arguments__": raw}``): so do ones
    that hold what no request may carry (NaN, Infinity, a number too large for a float, a lone surrogate,
    nesting deeper than Python's recursion limit), which the SDK would refuse to send.
    """
    if isinstance(arguments, dict):
        return arguments
    try:
        value = (
            json.loads(arguments, parse_constant=_not_json, parse_float=_finite)
            if isinstance(arguments, str) and arguments.strip()
            else {}
        )
        if isinstance(value, dict) and ("\\u" in arguments or not arguments.isascii()):
            json.dumps(value, ensure_ascii=False).encode("utf-8")  # a lone surrogate ("\\ud800") cannot be sent
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict) and RAW_ARGUMENTS not in value:
        return value
    return {RAW_ARGUMENTS: "" if arguments is None else str(arguments)}


def tool_arguments(value: Any) -> str:
    """A ``tool_use`` input as the harness's JSON-text arguments (the inverse of ``tool_input``)."""
    if isinstance(value, dict) and set(value) == {RAW_ARGUMENTS} and isinstance(value[RAW_ARGUMENTS], str):
        return value[RAW_ARGUMENTS]
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def is_error_result(message: dict) -> bool:
    """Whether a tool message reports a failure (see the module docstring)."""
    if "is_error" in message:
        return bool(message["is_error"])
    if message.get("_error"):
        return True
    content = message.get("content")
    return isinstance(content, str) and content.startswith(ERROR_PREFIX)


def assistant_blocks(message: dict) -> list[dict]:
    """The content blocks of an assistant turn."""
    blocks = [dict(b) for b in message.get("server_blocks") or []]
    text = message.get("content")
    if text:
        blocks.extend(text_blocks(text))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id") or "",
                "name": function.get("name") or "",
                "input": tool_input(function.get("arguments")),
            }
        )
    if not blocks:
        blocks = [{"type": "text", "text": text if isinstance(text, str) else ""}]
    return blocks


def tool_result_block(message: dict) -> dict:
    """One ``tool_result`` block for a ``tool`` message."""
    content = message.get("content")
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": message.get("tool_call_id") or "",
        "content": content if isinstance(content, str) else json.dumps(content, ensure_ascii=False),
    }
    if is_error_result(message):
        block["is_error"] = True
    return block


def convert_tools(tools: list[dict] | None) -> list[dict]:
    """OpenAI function tools as Messages tools."""
    out = []
    for tool in tools or []:
        function = tool.get("function") or tool
        converted = {"name": function.get("name") or ""}
        if function.get("description") is not None:
            converted["description"] = function["description"]
        converted["input_schema"] = function.get("parameters") or dict(EMPTY_SCHEMA)
        out.append(converted)
    return out


def to_messages(messages: list[dict], tools: list[dict] | None = None) -> MessagesRequest:
    """An OpenAI-format request as a ``MessagesRequest`` (see the module docstring)."""
    request = MessagesRequest(tools=convert_tools(tools))
    index = 0
    while index < len(messages) and messages[index].get("role") == "system":
        request.system.extend(text_blocks(messages[index].get("content")))
        index += 1
    for message in messages[index:]:
        role = message.get("role")
        if role == "tool":
            previous = request.messages[-1] if request.messages else None
            if previous is not None and previous["role"] == "user" and previous.get("_results"):
                previous["content"].append(tool_result_block(message))
            else:
                request.messages.append({"role": "user", "content": [tool_result_block(message)], "_results": True})
        elif role == "assistant":
            request.messages.append({"role": "assistant", "content": assistant_blocks(message)})
        else:  # user, and a system message after the first turn (the API has no mid-conversation system)
            request.messages.append(
                {"role": "user", "content": text_blocks(message.get("content")) or [{"type": "text", "text": ""}]}
            )
    for turn in request.messages:
        turn.pop("_results", None)
    return request


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _text_of(blocks: list[dict]) -> str:
    return "\n\n".join(_text(b.get("text")) for b in blocks if b.get("type") == "text")


def reply_message(blocks: list[dict]) -> dict:
    """An assistant turn's blocks as an OpenAI-format assistant message."""
    message: dict[str, Any] = {"role": "assistant", "content": _text_of(blocks)}
    calls = [
        {
            "id": b.get("id") or "",
            "type": "function",
            "function": {"name": b.get("name") or "", "arguments": tool_arguments(b.get("input"))},
        }
        for b in blocks
        if b.get("type") == "tool_use"
    ]
    if calls:
        message["tool_calls"] = calls
    kept = [dict(b) for b in blocks if b.get("type") not in ("text", "tool_use")]
    if kept:
        message["server_blocks"] = kept
    return message


def _result_message(block: dict) -> dict:
    content = block.get("content")
    if isinstance(content, list):
        content = _text_of(content)
    message = {"role": "tool", "tool_call_id": block.get("tool_use_id") or "", "content": content or ""}
    if block.get("is_error") and not message["content"].startswith(ERROR_PREFIX):
        message["is_error"] = True
    return message


def _user_messages(content: Any) -> list[dict]:
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    results = [_result_message(b) for b in content if b.get("type") == "tool_result"]
    texts = [b for b in content if b.get("type") == "text"]
    if texts:
        results.append(
            {
                "role": "user",
                "content": _text_of(texts)
                if len(texts) == 1
                else [{"type": "text", "text": b.get("text", "")} for b in texts],
            }
        )
    return results


def from_messages(request: MessagesRequest) -> tuple[list[dict], list[dict]]:
    """A ``MessagesRequest`` back in OpenAI format: ``(messages, tools)``."""
    messages: list[dict] = []
    if request.system:
        messages.append(
            {
                "role": "system",
                "content": _text_of(request.system)
                if len(request.system) == 1
                else [{"type": "text", "text": b.get("text", "")} for b in request.system],
            }
        )
    for turn in request.messages:
        if turn.get("role") == "assistant":
            content: Any = turn.get("content")  # a string or a list of blocks, as the Messages API sends it
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
            messages.append(reply_message(blocks))
        else:
            messages.extend(_user_messages(turn.get("content")))
    tools = []
    for tool in request.tools:
        function: dict[str, Any] = {"name": tool.get("name", "")}
        if "description" in tool:
            function["description"] = tool["description"]
        function["parameters"] = tool.get("input_schema") or dict(EMPTY_SCHEMA)
        tools.append({"type": "function", "function": function})
    return messages, tools


def canonical(messages: list[dict]) -> list[dict]:
    """``messages`` in the canonical form whose round trip is exact (see the module docstring)."""
    out = []
    for message in messages:
        message = {k: v for k, v in message.items() if not k.startswith("_") or k == "_error"}
        if message.get("role") == "assistant":
            message["content"] = message.get("content") or ""
            if message.get("tool_calls"):
                message["tool_calls"] = [
                    {
                        "id": c.get("id") or "",
                        "type": "function",
                        "function": {
                            "name": (c.get("function") or {}).get("name") or "",
                            "arguments": tool_arguments(tool_input((c.get("function") or {}).get("arguments"))),
                        },
                    }
                    for c in message["tool_calls"]
                ]
            else:
                message.pop("tool_calls", None)
            if not message.get("server_blocks"):
                message.pop("server_blocks", None)
        if message.get("role") == "tool":
            error = is_error_result(message)
            message.pop("is_error", None)
            message.pop("_error", None)
            if error and not str(message.get("content", "")).startswith(ERROR_PREFIX):
                message["is_error"] = True
        message.pop("_error", None)
        out.append(message)
    return out

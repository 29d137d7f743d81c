"""One agent's append-only history: ``History``, and the reply as the history keeps it (``sendable_reply``).

Every message the agent loop appends goes through ``History.append`` (lone surrogates in its
text escaped: ``escape_text``; its tokens counted). The loop's own messages carry the private
keys strategies and the viewer read (harness/README.md): the model's reply (``_step``, and
``_parse_error``, ``_rejected_tool_calls`` for calls that cannot be run), the nudge after a reply
without a tool call (``_nudge``) and each tool result (``_tool``, ``_args``, ``_error``,
``_resource``).

The history also keeps a copy of every message as it was appended (``frozen_copy``) to catch
in-place edits by a strategy (``History.first_change``, which the loop runs after every
``prepare``; see ``harness.agent_loop``). The copy shares the message's strings, numbers and
other leaves and copies its dicts and lists ``FROZEN_DEPTH`` levels deep (a tool call's
``function`` and a result's ``_args`` included), so a check is one C-level ``==`` of two lists
whose values are mostly the same objects (about 0.25 us a message on the reference machine:
benchmarks/step_overhead.py prints it). What it catches: a key of
a message set to an unequal value, added or removed, the same inside its nested dicts and lists
down to ``FROZEN_DEPTH`` levels (e.g. ``tool_calls[0]["function"]["arguments"]``), and messages
removed from or replaced in the history list. What it does not: an edit that leaves an equal
value, an edit deeper than ``FROZEN_DEPTH`` levels, an edit inside an object that is not a dict or
a list (a ``_resource`` of another type), and messages appended to the list (the harness's own
appends outside ``History.append`` are taken as they come).
"""

from __future__ import annotations

import json
from typing import Any

from harness.contracts import tool_name
from harness.conversation import escape_text, reply_problem
from harness.models.toolparse import parse_error_message
from harness.tokens import TokenCounter
from harness.tool_runner import CallResult

FROZEN_DEPTH = 4
"""How many levels of a message's nested dicts and lists its frozen copy copies (deeper ones are shared)."""


class History:
    """The messages of one agent's run (``messages``, append-only) and their size in tokens (``tokens``)."""

    def __init__(self, messages: list[dict], counter: TokenCounter) -> None:
        self.messages, self.counter = messages, counter
        self.tokens = 0  # what ``append`` counted (the main agent adds its opening messages: ``Trial.start``)
        self.frozen: list[Any] = []  # each message as it was appended (``frozen_copy``), for ``first_change``

    def append(self, message: dict) -> None:
        """Append one message and count it (lone surrogates in its text escaped: ``escape_text``)."""
        content = message.get("content")
        if isinstance(content, str) and not content.isascii():
            message["content"] = escape_text(content)
        self.messages.append(message)
        self.freeze_new()
        self.tokens += self.counter.message(message)

    def freeze_new(self) -> None:
        """Keep a frozen copy of each message not copied yet (those appended to ``messages`` directly too)."""
        frozen = self.frozen
        for message in self.messages[len(frozen) :]:
            frozen.append(frozen_copy(message))

    def first_change(self) -> str | None:
        """How the first message edited in place since it was appended differs from its frozen copy, e.g.
        ``message 12 (tool) changed its content`` (``None`` when every message is as appended).

        One C-level list comparison on the common path (the module docstring says what it catches);
        the messages appended since the last call are copied after it.
        """
        messages, frozen = self.messages, self.frozen
        known = messages if len(messages) == len(frozen) else messages[: len(frozen)]
        if not differs(known, frozen):
            self.freeze_new()
            return None
        for index, (message, copy) in enumerate(zip(known, frozen, strict=False)):
            if differs(message, copy):
                return f"message {index} ({message_role(message)}) {message_change(message, copy)}"
        return f"{len(frozen) - len(known)} of its {len(frozen)} messages were removed"

    def append_reply(self, message: dict, step: int) -> dict:
        """Append the model's reply, made sendable first (``sendable_reply``); the reply as appended."""
        reply = sendable_reply(message)
        reply["_step"] = step
        self.append(reply)
        return reply

    def append_nudge(self, reply: dict, step: int, tools: list[dict], no_tool_call: str) -> None:
        """After a reply without a tool call, tell the model why: its parse error (with the names of ``tools``, the
        step's), or ``no_tool_call``."""
        parse_error = reply.get("_parse_error")
        names = [tool_name(t) for t in tools if t.get("function")]
        content = parse_error_message(parse_error, names) if parse_error else no_tool_call
        self.append({"role": "user", "content": content, "_step": step, "_nudge": True})

    def append_result(self, call_id: str, name: str, args: dict, result: CallResult, step: int, resource: Any) -> dict:
        """Append a tool result with the private keys strategies read (``resource``: what ``_resource`` keeps);
        the message as appended."""
        message = {
            "role": "tool",
            "tool_call_id": call_id,
            "content": result.content,
            "_step": step,
            "_tool": name,
            "_args": args,
            "_error": result.is_error,
            "_resource": resource,
        }
        self.append(message)
        return message


def sendable_reply(message: dict) -> dict:
    """The model's reply as the history keeps it: an assistant message that can be sent back as it is.

    Lone surrogates in its calls' names and arguments are escaped (``escape_text``; its text is escaped by
    ``History.append``, as every message's is).
    Tool calls that cannot be run as they are (``reply_problem``: shared or missing ids, no name)
    are set aside under ``_rejected_tool_calls``, and the problem becomes the reply's
    ``_parse_error``, which the model is told at the next step, as for an unreadable call.
    """
    reply = dict(message)
    reply["role"] = "assistant"
    problem = reply_problem(reply)
    if problem is not None:
        reply["_rejected_tool_calls"] = reply.pop("tool_calls")
        reply["_parse_error"] = problem
        reply["content"] = reply.get("content") or ""
    elif reply.get("tool_calls"):
        reply["tool_calls"] = [escaped_call(call) for call in reply["tool_calls"]]
    return reply


def escaped_call(call: dict) -> dict:
    """A tool call with its arguments as JSON text and lone surrogates escaped (the same call when it has both).

    A backend may hand over the arguments already decoded (an object): they are written back as
    text, which is what the history holds and what ``parse_arguments`` reads.
    """
    function = call["function"]
    arguments, name = function.get("arguments"), function["name"]
    if isinstance(arguments, str) and arguments.isascii() and name.isascii():
        return call
    if arguments is None:
        arguments = ""
    elif not isinstance(arguments, str):
        try:
            arguments = json.dumps(arguments, ensure_ascii=False, default=str)
        except (ValueError, RecursionError):
            arguments = "<arguments that cannot be written as JSON>"
    return {**call, "function": {**function, "name": escape_text(name), "arguments": escape_text(arguments)}}


def frozen_copy(value: Any, depth: int = FROZEN_DEPTH) -> Any:
    """``value`` with its dicts and lists copied ``depth`` levels deep and everything else shared (module
    docstring)."""
    if depth <= 0:
        return value
    if isinstance(value, dict):
        return {key: frozen_copy(item, depth - 1) for key, item in value.items()}
    if isinstance(value, list):
        return [frozen_copy(item, depth - 1) for item in value]
    return value


def differs(value: Any, copy: Any) -> bool:
    """Whether ``value`` is not equal to its frozen ``copy`` (a comparison that raises counts as a difference)."""
    try:
        return bool(value != copy)
    except Exception:  # a value put in its place whose ``!=`` raises (an array) or recurses too deeply
        return True


def message_role(message: Any) -> str:
    """A message's role for an error message (its type when it is not a dict)."""
    if isinstance(message, dict):
        return str(message.get("role"))[:40]
    return f"a {type(message).__name__}, not a message"


def message_change(message: Any, copy: dict) -> str:
    """What differs between ``message`` and its frozen ``copy``: the keys it changed, lost and gained."""
    if not isinstance(message, dict):
        return "was replaced"
    parts = []
    changed = [key for key in copy if key in message and differs(message[key], copy[key])]
    lost = [key for key in copy if key not in message]
    gained = [key for key in message if key not in copy]
    for what, keys in (("changed its", changed), ("lost its", lost), ("gained", gained)):
        if keys:
            parts.append(f"{what} {', '.join(str(key)[:40] for key in keys[:5])}")
    return "; ".join(parts) or "changed"

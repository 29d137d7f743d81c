"""One agent's append-only history: ``History``, and the reply as the history keeps it (``sendable_reply``).

Every message the agent loop appends goes through ``History.append`` (lone surrogates in its
text escaped: ``escape_text``; its tokens counted). The loop's own messages carry the private
keys strategies and the viewer read (harness/README.md): the model's reply (``_step``, and
``_parse_error``, ``_rejected_tool_calls`` for calls that cannot be run), the nudge after a reply
without a tool call (``_nudge``) and each tool result (``_tool``, ``_args``, ``_error``,
``_resource``).
"""

from __future__ import annotations

import json
from typing import Any

from harness.contracts import tool_name
from harness.conversation import escape_text, reply_problem
from harness.models.toolparse import parse_error_message
from harness.tokens import TokenCounter
from harness.tool_runner import CallResult


class History:
    """The messages of one agent's run (``messages``, append-only) and their size in tokens (``tokens``)."""

    def __init__(self, messages: list[dict], counter: TokenCounter) -> None:
        self.messages, self.counter = messages, counter
        self.tokens = 0  # what ``append`` counted (the main agent adds its opening messages: ``Trial.start``)

    def append(self, message: dict) -> None:
        """Append one message and count it (lone surrogates in its text escaped: ``escape_text``)."""
        content = message.get("content")
        if isinstance(content, str) and not content.isascii():
            message["content"] = escape_text(content)
        self.messages.append(message)
        self.tokens += self.counter.message(message)

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

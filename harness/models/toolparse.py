"""Tool calls written as text, for small local models whose server does not parse them.

Recognized, in this order:

- ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` tags (Qwen / Hermes);
- fenced blocks (```json ... ``` or bare ```) holding such an object or a list of them;
- bare JSON objects with ``name`` and ``arguments`` anywhere in the text.

Several objects (one per line, as small models write parallel calls) are several calls;
a reply cut off at ``max_tokens`` keeps its complete calls.

``{"function": {"name": ..., "arguments": ...}}`` and ``parameters`` instead of
``arguments`` are accepted too. A reply that tried to call a tool but could not be
read gets an error string the loop sends back to the model so it can correct itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
# possessive quantifiers: a fence opened by a long run of blanks and never closed is scanned once, not once per blank
FENCE = re.compile(r"```[ \t]*+([A-Za-z0-9_-]*+)[ \t]*+\n?(.*?)```", re.DOTALL)
EXAMPLE = '<tool_call>{"name": NAME, "arguments": {ARGUMENTS}}</tool_call>'


@dataclass
class Parsed:
    """What was found in a text: calls as ``(name, arguments_json)``, leftover prose, an error."""

    calls: list[tuple[str, str]] = field(default_factory=list)
    text: str = ""
    error: str | None = None


def _as_call(obj: object) -> tuple[str, str] | None:
    if not isinstance(obj, dict):
        return None
    call: dict[Any, Any] = obj
    if isinstance(call.get("function"), dict) and "name" in call["function"]:
        call = call["function"]
    name = call.get("name")
    if not isinstance(name, str) or not name:
        return None
    args = call.get("arguments", call.get("parameters", {}))
    if isinstance(args, str):
        try:
            decoded = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return name, args  # the loop reports the bad JSON back to the model
        args = decoded
    if args is None:
        args = {}
    return name, json.dumps(args, ensure_ascii=False)


def _calls_in(value: object) -> list[tuple[str, str]] | None:
    """Calls in a decoded JSON value (an object or a list of objects); ``None`` if it holds none."""
    items = value if isinstance(value, list) else [value]
    calls = [_as_call(item) for item in items]
    if not calls or any(c is None for c in calls):
        return None
    return calls  # type: ignore[return-value]


def _decode(text: str) -> object:
    return json.loads(text)


WINDOW = 1 << 10  # characters decoded at a time from each "{" of free text (see _decode_at)
CUT_SLACK = 16  # a failure this close to a window's end may be the window's doing (a number or literal cut)
MAX_FAILURES = 10_000  # braces of free text tried that start no JSON value; past them the rest is not searched
WORK = (4, 1 << 24)  # the search stops after decoding 4 * len(text) + 16M characters, all tries together
OBJECT_START = re.compile(r'\{\s*+["}]')  # what a JSON object can start with


def _decode_at(decoder: json.JSONDecoder, text: str, start: int, work: list[int]) -> tuple[object, int]:
    """``decoder.raw_decode(text, start)``, with a failure costing the candidate's length, not the text's.

    A ``JSONDecodeError`` counts the lines before its position, so trying each of the n braces of a long
    text against the whole text takes n * len(text) (a reply of a million ``{`` took minutes). The value is
    decoded from a window after ``start`` instead; only a failure the window may have caused (an unterminated
    string, or one at the window's end) is tried again on a window four times as large. ``work[0]`` is what
    is left of the characters the search may still decode (nested values left open make each try read to
    the end); this call spends from it.
    """
    size = WINDOW
    while True:
        window = text[start : start + size]
        work[0] -= len(window)
        try:
            value, end = decoder.raw_decode(window)
            return value, start + end
        except json.JSONDecodeError as exc:
            whole = start + size >= len(text)
            if (
                whole
                or work[0] <= 0
                or not (exc.msg.startswith("Unterminated string") or exc.pos >= len(window) - CUT_SLACK)
            ):
                raise
        size *= 4


def _bare_objects(text: str) -> list[tuple[int, int, object]]:
    """Top-level JSON values that start with ``{`` in free text: ``(start, end, value)``."""
    decoder = json.JSONDecoder()
    found: list[tuple[int, int, object]] = []
    index = failures = 0
    work = [WORK[0] * len(text) + WORK[1]]
    while failures < MAX_FAILURES and work[0] > 0:
        match = OBJECT_START.search(text, index)
        if match is None:
            return found
        start = match.start()
        try:
            value, end = _decode_at(decoder, text, start, work)
        except json.JSONDecodeError:
            index = start + 1
            failures += 1
            continue
        found.append((start, end, value))
        index = end
    return found


def _object_calls(body: str) -> list[tuple[str, str]]:
    """Calls in a block of consecutive JSON objects (a reply cut off mid-object keeps the complete ones)."""
    calls = []
    for _, _, value in _bare_objects(body):
        found = _calls_in(value)
        if found is None:
            return []
        calls.extend(found)
    return calls


def parse_text_tool_calls(text: str) -> Parsed:
    """Find tool calls written in ``text``; see the module docstring.

    Text that cannot be decoded at all (JSON nested deeper than Python's recursion limit, an integer of more
    than 4300 digits) is a parse error the model is told, like any other unreadable call.
    """
    try:
        return _parse(text)
    except RecursionError:
        return Parsed(text=text, error="the tool call is nested too deeply to read")
    except ValueError as exc:  # not a JSONDecodeError (those are handled where they arise): a number Python refuses
        return Parsed(text=text, error=f"the tool call could not be read ({str(exc)[:120]})")


def _parse(text: str) -> Parsed:
    if not text or not text.strip():
        return Parsed(text=text or "")
    tags = list(TAG.finditer(text))
    if tags:
        calls: list[tuple[str, str]] = []
        for match in tags:
            body = match.group(1).strip()
            body = FENCE.sub(lambda m: m.group(2), body).strip()
            try:
                found = _calls_in(_decode(body))
            except json.JSONDecodeError as exc:
                return Parsed(
                    text=text, error=f"the JSON inside <tool_call> is invalid ({exc.msg} at position {exc.pos})"
                )
            if found is None:
                return Parsed(text=text, error='a <tool_call> must hold a JSON object with "name" and "arguments"')
            calls.extend(found)
        return Parsed(calls=calls, text=TAG.sub("", text).strip())
    fences = list(FENCE.finditer(text))
    fence_errors = []
    calls = []
    used: list[tuple[int, int]] = []
    for match in fences:
        lang, body = match.group(1).lower(), match.group(2).strip()
        if lang not in ("", "json", "tool_call", "tool_code", "javascript"):
            continue
        try:
            found = _calls_in(_decode(body))
        except json.JSONDecodeError as exc:
            lines = _object_calls(body)  # several calls, one JSON object after the other
            if lines:
                calls.extend(lines)
                used.append(match.span())
            elif lang == "json" or body.startswith(("{", "[")):
                fence_errors.append(f"the ```json block is not valid JSON ({exc.msg} at position {exc.pos})")
            continue
        if found is None:
            if lang == "json":
                fence_errors.append('the JSON object needs "name" (a tool name) and "arguments" (an object)')
            continue
        calls.extend(found)
        used.append(match.span())
    if calls:
        leftover = text
        for start, end in reversed(used):
            leftover = leftover[:start] + leftover[end:]
        return Parsed(calls=calls, text=leftover.strip())
    spans = [(start, end, found) for start, end, value in _bare_objects(text) if (found := _calls_in(value))]
    if spans:
        leftover = text
        for start, end, _ in reversed(spans):
            leftover = leftover[:start] + leftover[end:]
        return Parsed(calls=[c for _, _, found in spans for c in found], text=leftover.strip())
    if fence_errors:
        return Parsed(text=text, error=fence_errors[0])
    if '"name"' in text and ('"arguments"' in text or '"parameters"' in text):
        return Parsed(text=text, error="the tool call is not valid JSON")
    return Parsed(text=text)


def parse_error_message(error: str, tool_names: list[str] | None = None) -> str:
    """What the model is told when its reply looked like a tool call but could not be read."""
    names = f" where NAME is one of: {', '.join(tool_names)}" if tool_names else ""
    return (
        f"Your reply could not be read as a tool call: {error}. Call a tool with the tool-calling interface, "
        f"or write exactly one call as {EXAMPLE}{names}."
    )

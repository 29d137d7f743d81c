"""Helpers for reference policies: reading the visible request, writing replies and summaries.

A reference policy must act only on what the prepared request shows. These helpers
pair the visible tool calls with their visible results, collect the free text (task,
notes, summaries) and format the seed's four-part summary template.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable

from harness.conversation import iter_calls, last_assistant_index, parse_arguments
from harness.summarizer import SUMMARY_HEADINGS
from reference_agent.kit.incremental import TextMemo
from strategies.status_bar import RESOURCES_HEADING, STATUS_HEADER
from tasks.base import RATE_LIMITED
from tasks.kit.messages import texts, tool_texts


@dataclass(frozen=True)
class Exchange:
    """A visible tool call and its visible result (``result`` is ``None`` when not shown)."""

    name: str
    args: dict
    result: str | None
    is_error: bool


def make_call(name: str, _repeat: int = 0, **args: Any) -> dict:
    """A tool call dict (the scripted model assigns its id). ``_repeat`` numbers identical calls to a consuming
    tool (``pop_ticket`` twice claims two tickets), so a batch keeps them apart (``call_identity``); the
    scripted model drops the mark."""
    call = {"type": "function", "function": {"name": name, "arguments": json.dumps(args, sort_keys=True)}}
    if _repeat:
        call["repeat"] = _repeat
    return call


def reply(content: str, *calls: dict) -> dict:
    """An assistant message with optional tool calls."""
    message: dict = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def submit(content: str, **answer: Any) -> dict:
    """An assistant message that submits ``answer``."""
    return reply(content, make_call("submit", **answer))


ERROR_PREFIX = "ERROR"
REPORT_PREFIX = "Sub-agent report"  # how a family's sub-agent conclusion starts (strategy isolate)
_OFFLOADED = re.compile(r"\[offloaded to memory: id=(mem-\d+) \| (\w+) (\{.*?\}) \| (?:resource (\S+) \| )?")


def exchanges(messages: Iterable[dict]) -> list[Exchange]:
    """Every visible tool call with its visible result, in order.

    A step's hooks ask this of one request several times, and each request usually extends the one before:
    the exchanges of the latest request are kept (per thread), a request that starts with its messages only
    reads the new ones, and each call's arguments are parsed once per text.
    """
    if not isinstance(messages, list):
        return _exchanges(list(messages)).found
    recent = getattr(_LATEST, "exchanges", [])  # a few: a policy also asks about the newest round alone
    found = next((e for e in map(lambda kept: kept.extended(messages), recent) if e is not None), None)
    found = found or _exchanges(messages)
    _LATEST.exchanges = [found, *(kept for kept in recent if kept is not found)][:4]
    return list(found.found)


_LATEST = threading.local()


def _arguments(raw: str) -> dict:
    try:
        return parse_arguments(raw)
    except ValueError:
        return {}


_ARGUMENTS = TextMemo(_arguments, size=100_000)  # shared: never mutate an Exchange's args


def _call_arguments(raw: Any) -> dict:
    if isinstance(raw, str):
        return _ARGUMENTS(raw)
    try:
        return parse_arguments(raw)
    except ValueError:
        return {}


class _Exchanges:
    """The exchanges of one request, with what it takes to extend them to a request that adds messages.

    Never changed once built (``extended`` builds another), so a kept one can be shared."""

    def __init__(
        self,
        messages: list[dict],
        results: dict[str, dict],
        calls: list[tuple[str, str, dict]],
        found: list[Exchange],
        where: dict[str, tuple[int, ...]],
    ) -> None:
        self.messages, self.results, self.calls, self.found, self.where = list(messages), results, calls, found, where

    def extended(self, messages: list[dict]) -> "_Exchanges | None":
        """The exchanges of ``messages`` if they start with this request's messages (else ``None``), reading only
        the new ones; with a ``read_memory`` call in view everything is read again (a read-back changes earlier
        results)."""
        done = len(self.messages)
        if len(messages) < done or messages[:done] != self.messages:
            return None
        if len(messages) == done:
            return self
        new = messages[done:]
        if any(name == "read_memory" for _, name, _ in self.calls) or any(
            name == "read_memory" for m in new if m.get("role") == "assistant" for _, name, _ in iter_calls(m)
        ):
            return None
        results, calls, found, where = dict(self.results), list(self.calls), list(self.found), dict(self.where)
        touched: set[int] = set()
        for message in new:
            if message.get("role") == "tool":
                call_id = message.get("tool_call_id", "")
                results[call_id] = message
                touched.update(where.get(call_id, ()))
            elif message.get("role") == "assistant":
                for call_id, name, raw in iter_calls(message):
                    where[call_id] = where.get(call_id, ()) + (len(calls),)
                    calls.append((call_id, name, _call_arguments(raw)))
        found.extend([None] * (len(calls) - len(found)))  # type: ignore[list-item]
        for index in sorted(touched) + list(range(len(self.found), len(calls))):
            call_id, name, args = calls[index]
            result = results.get(call_id)
            content = None if result is None else str(result.get("content") or "")
            found[index] = Exchange(name, args, content, bool(content and content.startswith(ERROR_PREFIX)))
        return _Exchanges(messages, results, calls, found, where)


def _exchanges(messages: list[dict]) -> _Exchanges:
    results: dict[str, dict] = {}
    for message in messages:
        if message.get("role") == "tool":
            results[message.get("tool_call_id", "")] = message
    calls: list[tuple[str, dict, str | None]] = []
    ids: list[tuple[str, str, dict]] = []
    where: dict[str, tuple[int, ...]] = {}
    recovered: dict[str, str] = {}  # memory id -> text brought back by a visible read_memory (strategy offload)
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for call_id, name, raw in iter_calls(message):
            args = _call_arguments(raw)
            result = results.get(call_id)
            content = None if result is None else str(result.get("content") or "")
            where[call_id] = where.get(call_id, ()) + (len(ids),)
            ids.append((call_id, name, args))
            calls.append((name, args, content))
            if name == "read_memory" and content is not None and not content.startswith(ERROR_PREFIX):
                recovered[str(args.get("id"))] = content
    found: list[Exchange] = []
    for name, args, content in calls:
        if content is not None and recovered:
            offloaded = _OFFLOADED.match(content)
            if offloaded and offloaded.group(1) in recovered:
                content = recovered[offloaded.group(1)]  # the agent read it back: the call's result is known again
        found.append(Exchange(name, args, content, bool(content and content.startswith(ERROR_PREFIX))))
    return _Exchanges(messages, results, ids, found, where)


def next_page(messages: Iterable[dict], tool: str, covered: set[int], total: int | None) -> tuple[str, int] | None:
    """The next move of an agent that pages through ``tool(page=...)`` in order.

    ``("reread", p)``: page ``p`` was read (its call is visible) but neither its content nor
    a note on it is (``covered``), so it is read again; ``("read", p)``: the next page after
    the furthest one known; ``None``: every page up to ``total`` is covered.
    """
    called = {e.args.get("page") for e in exchanges(messages) if e.name == tool}
    called = {p for p in called if isinstance(p, int) and not isinstance(p, bool)}
    lost = sorted(called - covered)
    if lost:
        return "reread", lost[0]
    frontier = max(covered | called, default=0)
    if total is None or frontier < total:
        return "read", frontier + 1
    return None


DELEGATION_FAILED = "A sub-agent failed; I do the rest of the work in this context without delegating."


def delegation_failed(messages: Iterable[dict]) -> bool:
    """Whether a visible ``delegate`` result is not a sub-agent report (the sub-agent failed or stopped),
    or the agent's own note that one failed (``DELEGATION_FAILED``, restated in its replies).

    The delegating policies then stop delegating and do the rest in their own context,
    instead of handing the same sub-task to another sub-agent that would fail the same way.
    """
    messages = list(messages)
    if any(DELEGATION_FAILED in t for t in texts(messages, ("assistant",))):
        return True
    return any(
        e.name == "delegate" and e.result is not None and not e.result.startswith(REPORT_PREFIX)
        for e in exchanges(messages)
    )


def latest_results(messages: list[dict]) -> list[str]:
    """Contents of the tool results that answer the last assistant message (the newest observation).

    Strategies may append messages after them (``status_bar``'s status message, ``notes``'
    notes block), so the newest observation is not always the last message: a policy that
    notes what it just received reads it here, never from ``messages[-1]``. Empty before the
    agent's first action. Under ``notes`` it includes the ``write_note`` result.
    """
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "assistant":
            return [str(m.get("content") or "") for m in messages[index + 1 :] if m.get("role") == "tool"]
    return []


_TOOL_CALL_LINE = re.compile(r"^\[tool_call\] (\w+)", re.M)
_TOOL_RESULT_ERROR = re.compile(r"^\[tool (\w+)\]: (ERROR[^\n]*)", re.M)


def tools_used(history_text: str) -> Counter:
    """Tool names and call counts in a rendered history (``[tool_call] name ...`` lines)."""
    return Counter(_TOOL_CALL_LINE.findall(history_text))


def failed_attempts(history_text: str) -> list[str]:
    """One line per error result in a rendered history, with the tool's name."""
    return [f"{name}: {line[:160]}" for name, line in _TOOL_RESULT_ERROR.findall(history_text)]


def format_summary(findings: list[str], tools: Counter | list[str], failed: list[str], progress: list[str]) -> str:
    """The seed's four-part summary: key findings / tools used / failed attempts / progress."""
    if isinstance(tools, Counter):
        tool_lines = [f"{name} ({count} calls)" for name, count in sorted(tools.items())]
    else:
        tool_lines = list(tools)
    parts = []
    for heading, items in zip(SUMMARY_HEADINGS, (findings, tool_lines, failed, progress), strict=False):
        parts.append(f"{heading}:\n" + "\n".join(f"- {item}" for item in (items or ["none"])))
    return "\n".join(parts)


def ranges(numbers: Iterable[int]) -> str:
    """Compress integers to ``1-4, 7, 9-10``."""
    values = sorted(set(numbers))
    if not values:
        return "none"
    spans: list[str] = []
    start = prev = values[0]
    for value in values[1:] + [None]:  # type: ignore[list-item]
        if value is not None and value == prev + 1:
            prev = value
            continue
        spans.append(str(start) if start == prev else f"{start}-{prev}")
        if value is not None:
            start = prev = value
    return ", ".join(spans)


def parse_ranges(text: str) -> set[int]:
    """Inverse of ``ranges``."""
    numbers: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part or part == "none":
            continue
        if "-" in part:
            low, high = part.split("-", 1)
            if low.strip().isdigit() and high.strip().isdigit():
                numbers.update(range(int(low), int(high) + 1))
        elif part.isdigit():
            numbers.add(int(part))
    return numbers


_NOTES_BLOCK = "[notes]"


class StrategyToolUse:
    """Wraps a family's reference policy so it uses strategy tools the way a competent agent would.

    * ``read_memory`` (offload): a read the policy wants to repeat (a call with a resource),
      whose result is visible as an offloaded placeholder, becomes ``read_memory(id)``
      instead; repeating an action (no resource) stays a new action.
    * ``write_note`` (notes): the new lines of the policy's own note (its reply content)
      are also saved with ``write_note``, alongside its action.
    * ``delegate`` (isolate): a policy with ``delegate_plan(messages) -> str | None`` hands
      the next self-contained sub-task to a sub-agent; the family's
      ``subagent_policy(task)`` runs it and finishes with ``report(conclusion)``.

    Family policies need no change; everything is decided from the visible request.
    """

    def __init__(self, policy: Any) -> None:
        self.policy = policy

    def summarize(self, history_text: str) -> str:
        """Delegate to the family policy."""
        return self.policy.summarize(history_text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.policy, name)

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """The family policy's action, adapted to the strategy tools on offer."""
        available = {t.get("function", {}).get("name") for t in tools}
        planner = getattr(self.policy, "delegate_plan", None)
        if "delegate" in available and callable(planner):
            task = planner(messages)
            if task:
                return reply(
                    f"Delegating a self-contained sub-task to a sub-agent:\n{task}", make_call("delegate", task=task)
                )
        message = dict(self.policy.act(messages, tools))
        if "delegate" in available and callable(planner) and delegation_failed(messages):
            message["content"] = f"{DELEGATION_FAILED}\n{message.get('content') or ''}".rstrip()
        calls = list(message.get("tool_calls") or [])
        if "read_memory" in available and calls:
            offloaded = {}
            for text in tool_texts(messages):
                for memory_id, tool, raw, resource in _OFFLOADED.findall(text):
                    if not resource:  # an action (a phone call), not a read: repeating it is a new action
                        continue
                    try:
                        offloaded[(tool, json.dumps(json.loads(raw), sort_keys=True))] = memory_id
                    except json.JSONDecodeError:
                        continue
            for index, call in enumerate(calls):
                function = call.get("function", {})
                try:
                    key = (
                        function.get("name"),
                        json.dumps(json.loads(function.get("arguments") or "{}"), sort_keys=True),
                    )
                except json.JSONDecodeError:
                    continue
                if key in offloaded and key[0] not in getattr(self.policy, "consuming_tools", ()):
                    calls[index] = make_call("read_memory", id=offloaded[key])
        if (
            "write_note" in available
            and calls
            and not any(c.get("function", {}).get("name") == "submit" for c in calls)
        ):
            visible_notes = "\n".join(t for t in texts(messages, ("user",)) if t.startswith(_NOTES_BLOCK))
            new_lines = [
                line
                for line in str(message.get("content") or "").splitlines()
                if line.strip() and line.strip() not in visible_notes
            ]
            if new_lines:
                calls.append(make_call("write_note", text="\n".join(new_lines)))
        if calls:
            message["tool_calls"] = calls
        return message


_STATUS_RESOURCE_LINE = re.compile(r"^(\S+): (.+) (\d+)(?:/(\d+))?$")


def status_counts(messages: Iterable[dict]) -> dict[str, dict[str, tuple[int, int | None]]] | None:
    """Per-resource call counts from the latest visible status bar (strategy ``status_bar``).

    Returns ``{tool: {resource: (count, limit or None)}}`` read from the last visible user
    message that starts with the status header, or ``None`` when no status bar is visible
    (the policy must then count from what it sees). Format: strategies/README.md.
    """
    latest = None
    for message in messages:
        if is_status_message(message):
            latest = message["content"]
    if latest is None:
        return None
    counts: dict[str, dict[str, tuple[int, int | None]]] = {}
    lines = latest.splitlines()
    if RESOURCES_HEADING not in lines:
        return counts
    for line in lines[lines.index(RESOURCES_HEADING) + 1 :]:
        match = _STATUS_RESOURCE_LINE.match(line)
        if not match:
            break
        tool, resource, count, limit = match.groups()
        counts.setdefault(tool, {})[resource] = (int(count), int(limit) if limit else None)
    return counts


def is_status_message(message: dict) -> bool:
    """Whether ``message`` is a status bar injected by the ``status_bar`` strategy (not the user)."""
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and content.startswith(STATUS_HEADER)


def status_calls(messages: Iterable[dict], tool: str, resource: str) -> int | None:
    """Calls of ``tool`` on ``resource`` so far per the latest visible status bar (``None``: no status bar)."""
    counts = status_counts(messages)
    if counts is None:
        return None
    return counts.get(tool, {}).get(resource, (0, None))[0]


# ---------------------------------------------------------------------------------------------
# Batched turns (profile ``realistic``): parallel calls, and results the task did not execute.
# Helpers for a family policy's optional ``parallel_calls`` hook (reference_agent/profiles.py) and for
# rounds that hold several results, some of which a task may have rejected as rate limited. Under
# the ``perfect`` profile no round holds more than one call and no result is rate limited.
# ---------------------------------------------------------------------------------------------


def is_rate_limited(text: str | None) -> bool:
    """Whether a tool result says its call was rate limited: not executed, to be made again later.

    Such a call is neither a failure of the approach (never note it as a broken tool) nor a
    placed call (never count it against a per-resource limit).
    """
    return text is not None and text.startswith(RATE_LIMITED)


def latest_exchanges(messages: list[dict]) -> list[Exchange]:
    """The calls of the last assistant message with their visible results (the newest round)."""
    start = last_assistant_index(messages)
    return [] if start is None else exchanges(messages[start:])


def rate_limited_calls(messages: list[dict]) -> list[Exchange]:
    """The calls of the newest round whose results say they were rate limited, in order."""
    return [e for e in latest_exchanges(messages) if is_rate_limited(e.result)]


def call_key(name: str, args: dict) -> tuple[str, str]:
    """A call's identity: its tool name and its arguments as canonical JSON (as ``make_call`` writes them)."""
    return name, json.dumps(args, sort_keys=True)


def deferred_calls(messages: Iterable[dict]) -> set[tuple[str, str]]:
    """``call_key`` of every visible call whose newest visible result is a rate limit: not done, to re-issue.

    A later visible result of the same call that is not a rate limit (it was re-issued and
    done) takes it off the set; a call whose result is not visible says nothing either way.
    """
    limited: set[tuple[str, str]] = set()
    for exchange in exchanges(messages):
        if exchange.result is None:
            continue
        key = call_key(exchange.name, exchange.args)
        if is_rate_limited(exchange.result):
            limited.add(key)
        else:
            limited.discard(key)
    return limited


def deferred_args(messages: Iterable[dict], tool: str, arg: str) -> set:
    """The values of argument ``arg`` of the visible ``tool`` calls that are rate limited and not yet done."""
    return {json.loads(args).get(arg) for name, args in deferred_calls(messages) if name == tool}


def rate_limited_notes(messages: list[dict]) -> list[str]:
    """One note per call of the newest round that was rate limited (none when nothing was)."""
    return [
        f"Not done (rate limited): {e.name} {json.dumps(e.args, sort_keys=True)}; I will issue it again."
        for e in rate_limited_calls(messages)
    ]


def rate_limit_note(messages: list[dict]) -> str:
    """One line naming the calls of the newest round that were rate limited ('' when none were)."""
    limited = rate_limited_calls(messages)
    if not limited:
        return ""
    calls = ", ".join(f"{e.name}({', '.join(f'{k}={v}' for k, v in sorted(e.args.items()))})" for e in limited)
    return f"Rate limited, not done; issuing again: {calls}"


def real_failures(history_text: str) -> list[str]:
    """``failed_attempts`` without rate-limited calls: those were not attempts of the tool, only deferred."""
    return [line for line in failed_attempts(history_text) if RATE_LIMITED not in line]


def _page_number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def pending_pages(messages: Iterable[dict], tool: str, covered: set[int], total: int | None) -> list[tuple[str, int]]:
    """Every page an agent paging through ``tool(page=...)`` knows it still has to fetch, lowest first.

    ``("reread", p)``: read, but neither its content nor a note on it is visible (``covered``);
    ``("retry", p)``: its visible calls were all rate limited (never done); ``("read", p)``:
    a page after the furthest one known, up to ``total`` (only the next one when ``total`` is
    unknown). Without rate-limited results the first entry is ``next_page``'s move.
    """
    calls = [e for e in exchanges(messages) if e.name == tool and _page_number(e.args.get("page")) is not None]
    done = {e.args["page"] for e in calls if not is_rate_limited(e.result)}
    retry = {e.args["page"] for e in calls if is_rate_limited(e.result)} - done - covered
    lost = done - covered
    frontier = max(covered | done, default=0)
    last = frontier + 1 if total is None else total
    plan = {p: "reread" for p in lost}
    plan.update({p: "retry" for p in retry})
    for page in range(frontier + 1, last + 1):
        plan.setdefault(page, "read")
    return [(plan[p], p) for p in sorted(plan)]


def call_identity(call: dict) -> tuple[str, str, int]:
    """A tool call's identity: its name, its arguments text and its ``repeat`` mark (``make_call``): two identical
    calls are one, unless they are marked as repeats of a consuming call."""
    function = call.get("function") or {}
    return str(function.get("name")), str(function.get("arguments")), int(call.get("repeat") or 0)


def other_calls(calls: Iterable[dict], first: dict) -> list[dict]:
    """``calls`` without ``first`` and without repeats, in order (what ``parallel_calls`` returns)."""
    seen, kept = {call_identity(first)}, []
    for call in calls:
        if call_identity(call) not in seen:
            seen.add(call_identity(call))
            kept.append(call)
    return kept

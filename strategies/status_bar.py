"""``status_bar``: a state message computed by code, appended last as a user message (source 002 §2.6).

The model trusts a status bar almost unconditionally, so it is computed by CODE from the
full history, never by a model (source 002 §2.6, 维护要点 1). It is appended as the last
message, in the user slot next to the generation position; the system message is not
touched. Format (parsed by ``reference_agent.policy_kit.status_counts``; documented in
strategies/README.md)::

    [status bar] computed by the harness from the full history; not a message from the user
    steps used: 7 of 150
    calls per tool: get_invoice_page 7 (1 failed), submit 0
    calls per resource:
    get_invoice_page: page:1 1
    call_merchant: acme 3/3
    todo (from your latest notes):
    - [x] read pages 1-7
    - [ ] submit

``calls per resource`` has one line per (tool, resource): ``tool: resource count`` or
``count/limit`` when ``limits`` names the tool. The resource is the result's
``_resource`` (what a read fetched) or, when the task gave none, the call's arguments
as ``key=value``. Failed calls count as calls. The todo block repeats the checkbox lines
(``- [ ] ...``, ``- [x] ...``) of the latest assistant message that has any.

Two modes (source 002 §2.6.4): ``replace`` keeps only the latest status message (the
cache breaks from the previous one's position, about one round, every step);
``append`` keeps every step's status message where it was injected, never rewritten
(cache-friendly, like Claude Code's <system-reminder>; stale copies cost tokens). The
strategy remembers the appended messages and re-inserts the same objects after the
same anchor message each step.

It may wrap another strategy (``base``): the base projects the history first, with the
budget reduced by the status messages' tokens; status messages whose anchor the base
removed are dropped with it. No model call.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Literal

from harness.conversation import iter_calls
from strategies._common import result_calls, result_identity
from strategies.base import WrappingStrategy

STATUS_HEADER = "[status bar]"
STATUS_FIRST_LINE = STATUS_HEADER + " computed by the harness from the full history; not a message from the user"
RESOURCES_HEADING = "calls per resource:"
TODO_LINE = re.compile(r"^\s*[-*] \[( |x|X|~|-)\] .+$", re.M)


def resource_of(message: dict, args: dict, keys: list[str] | None = None) -> str:
    """The resource key shown for a tool result: ``_resource``, or ``key=value`` of its arguments
    (only the ``keys`` arguments when given, e.g. ``merchant`` for ``call_merchant``)."""
    if message.get("_resource") is not None:
        return str(message["_resource"])
    names = sorted(args) if keys is None else [k for k in keys if k in args]
    return ", ".join(f"{k}={args[k]}" for k in names) or "-"


class StatusBar(WrappingStrategy):
    """Append a code-computed status message as the last user message.

    Parameters:
        mode: ``replace`` (default; only the latest status message) or ``append`` (every
            step's status message stays where it was injected).
        base: a strategy to wrap (an object or a ``_target_`` spec); default none (the
            whole history, as ``none``).
        limits: ``{tool: n}`` shown as ``count/n`` per resource (e.g. ``{call_merchant: 3}``).
        max_steps: shown as ``steps used: k of max_steps`` (default none: ``steps used: k``).
        todo: repeat the checkbox lines of the latest notes (default true).
        resource_args: ``{tool: [arg, ...]}``: the arguments that name the resource of a tool
            whose results carry none (e.g. ``{call_merchant: [merchant]}``, so that calls with
            different offers count against one merchant); default: all arguments.
    """

    def __init__(
        self,
        mode: Literal["replace", "append"] = "replace",
        base: Any = None,
        limits: dict | None = None,
        max_steps: int | None = None,
        todo: bool = True,
        resource_args: dict | None = None,
    ) -> None:
        if mode not in ("replace", "append"):
            raise ValueError(f"status_bar: mode must be 'replace' or 'append', got {mode!r}")
        self.mode = mode
        self.base = self.build_base(base, "status_bar")
        self.limits = {str(k): int(v) for k, v in (limits or {}).items()}
        self.max_steps = max_steps
        self.todo = bool(todo)
        self.resource_args = {
            str(k): [str(a) for a in ([v] if isinstance(v, str) else v)] for k, v in (resource_args or {}).items()
        }
        self.injected: list[tuple[tuple, dict, dict]] = []  # append mode: (anchor key, status message, anchor owner)

    def status(self, messages: list[dict]) -> str:
        """The status text for this history (pure function of ``messages`` and the parameters)."""
        calls = result_calls(messages)
        steps = sum(1 for m in messages if m.get("role") == "assistant")
        per_tool: Counter = Counter()
        failed: Counter = Counter()
        per_resource: dict[tuple[str, str], int] = {}
        for position, message in enumerate(messages):
            if message.get("role") != "tool":
                continue
            name, args = result_identity(message, calls.get(position))
            per_tool[name] += 1
            failed[name] += bool(message.get("_error"))
            key = (name, resource_of(message, args, self.resource_args.get(name)))
            per_resource[key] = per_resource.get(key, 0) + 1
        called = {name for m in messages for _, name, _ in iter_calls(m)}
        for name in called:
            per_tool.setdefault(name, 0)
        lines = [STATUS_FIRST_LINE, f"steps used: {steps}" + (f" of {self.max_steps}" if self.max_steps else "")]
        tool_items = [f"{n} {c}" + (f" ({failed[n]} failed)" if failed[n] else "") for n, c in sorted(per_tool.items())]
        lines.append("calls per tool: " + (", ".join(tool_items) or "none"))
        lines.append(RESOURCES_HEADING)
        for (name, resource), count in sorted(per_resource.items(), key=lambda kv: (kv[0][0], _natural(kv[0][1]))):
            limit = self.limits.get(name)
            lines.append(f"{name}: {resource} {count}" + (f"/{limit}" if limit is not None else ""))
        if self.todo:
            for message in reversed(messages):
                if message.get("role") != "assistant":
                    continue
                items = [match.group(0).strip() for match in TODO_LINE.finditer(str(message.get("content") or ""))]
                if items:
                    lines += ["todo (from your latest notes):", *items]
                    break
        return "\n".join(lines)

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The base's projection (or the history), earlier status messages re-inserted, the new one last."""
        new = {"role": "user", "content": self.status(messages), "_status_bar": True}
        if self.base is not None:
            remembered = self.injected if self.mode == "append" else []
            self.reserve(self.ctx.count_message(new) + sum(self.ctx.count_message(m) for _, m, _ in remembered))
        projection = self.base_prepare(messages)
        if self.mode == "replace":
            return [*projection, new]
        by_anchor = {key: message for key, message, _ in self.injected}
        out: list[dict] = []
        for message, key in zip(projection, _anchor_keys(projection), strict=False):
            out.append(message)
            status = by_anchor.get(key)
            if status is not None:
                out.append(status)
        anchor, owner = _last_anchor(messages)
        self.injected.append((anchor, new, owner))
        out.append(new)
        return out


def _anchor_keys(messages: list[dict]) -> list[tuple]:
    """For each message, a key that finds the same history message in a projection.

    A tool result is keyed by its round's assistant message (by identity) and its call id:
    a base may copy a result (a placeholder) but keeps the assistant message, and the id
    alone repeats across turns on some servers. Any other message is keyed by identity.
    """
    keys: list[tuple] = []
    assistant: dict | None = None
    for message in messages:
        if message.get("role") == "assistant":
            assistant = message
        if message.get("role") == "tool":
            keys.append(("tool", id(assistant), message.get("tool_call_id")))
        else:
            keys.append(("obj", id(message)))
    return keys


def _last_anchor(messages: list[dict]) -> tuple[tuple, dict]:
    """The anchor key of the history's last message, and the object the key's ``id`` refers to.

    The object is kept with the status message so that the ``id`` cannot be reused.
    """
    last = messages[-1]
    if last.get("role") != "tool":
        return ("obj", id(last)), last
    owner = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
    return ("tool", id(owner), last.get("tool_call_id")), owner or last


def _natural(text: str) -> tuple:
    """Sort ``page:2`` before ``page:10``."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))

"""``model=relay``: put any external agent, or a person, in the loop through files.

Each request of a trial is written to the relay folder as ``TRIAL/NNNN.request.json`` (the
OpenAI-style ``messages`` and ``tools``, exactly what an API backend would send) and as
``TRIAL/NNNN.request.txt`` (a plain-text rendering of the same request, with the reply format at
its end). The relay then waits for ``TRIAL/NNNN.reply.json`` and turns it into the assistant
message, so the records are the same OpenAI-style records as every other backend's. A reply is

    {"content": "text of the turn", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]}

(``arguments`` may also be a JSON string; an OpenAI ``choices[0].message`` is accepted as well).
A reply file that is not such JSON goes back to the model as an error, like a malformed API reply.
No reply within ``timeout`` seconds is a ``ModelError`` (the trial's outcome ``model_error``).

Decisions, written down here:

- One folder per trial (``{instance id}-t{trial}``), requests numbered from 1. A sub-agent of a
  trial gets ``{instance id}-t{trial}-sub{run}``.
- Resuming: when a request file already holds exactly this request and its reply exists, the reply
  is used again without waiting (a rerun after a crash does not ask twice). A request file that
  holds a *different* request is a ``ModelError``: the folder belongs to another conversation.
- Token counts are the harness's own (tiktoken), as for the reference agent: a relay reports none.
- Writers should write the reply to a temporary name and rename it; a reply that is not yet
  complete JSON is read again for ``settle_s`` seconds before it counts as malformed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from harness.models.base import Completion, ModelError, Usage

REPLY_FORMAT = (
    "Write your reply as JSON to {reply}:\n"
    '{{"content": "your text for this turn", "tool_calls": [{{"name": "TOOL", "arguments": {{...}}}}]}}\n'
    'Omit "tool_calls" (or leave it empty) to reply with text only. Call several tools in one turn by listing them.'
)


def render_request(messages: list[dict], tools: list[dict], reply_path: str) -> str:
    """A plain-text rendering of one request: the tools, every message in order, then the reply format."""
    lines = ["# Tools", ""]
    for tool in tools:
        function = tool.get("function") or {}
        lines.append(f"- {function.get('name')}: {function.get('description', '')}")
        lines.append(f"  parameters: {json.dumps(function.get('parameters') or {}, ensure_ascii=False)}")
    lines += ["", "# Conversation", ""]
    for message in messages:
        lines.extend(_render_message(message))
        lines.append("")
    lines += ["# Your turn", "", REPLY_FORMAT.format(reply=reply_path)]
    return "\n".join(lines) + "\n"


def _render_message(message: dict) -> list[str]:
    """One message as text: a role header (with the tool call id of a result), its content, its calls."""
    role = message.get("role", "?")
    header = f"## {role}" + (f" (result of {message.get('tool_call_id')})" if role == "tool" else "")
    lines = [header, str(message.get("content") or "")]
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        lines.append(f"[tool call {call.get('id')}] {function.get('name')}({function.get('arguments')})")
    return lines


def parse_reply(text: str) -> dict:
    """The assistant message of a reply file; a reply that cannot be read carries a ``_parse_error``."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        return _unreadable(f"the reply is not JSON ({exc})")
    if isinstance(data, dict) and isinstance(data.get("choices"), list) and data["choices"]:
        data = data["choices"][0].get("message") or {}
    if not isinstance(data, dict):
        return _unreadable("the reply must be a JSON object with content and tool_calls")
    content = data.get("content")
    message: dict[str, Any] = {"role": "assistant", "content": content if isinstance(content, str) else ""}
    calls = data.get("tool_calls") or []
    if not isinstance(calls, list):
        return _unreadable("tool_calls must be a list")
    converted = [_call(call) for call in calls]
    if any(call is None for call in converted):
        return {**message, "_parse_error": "each tool call needs a name and arguments"}
    if converted:
        message["tool_calls"] = converted
    return message


def _call(call: Any) -> dict | None:
    """One reply tool call as an OpenAI tool call (``None`` when it has no name)."""
    if not isinstance(call, dict):
        return None
    nested = call.get("function")
    function: dict = nested if isinstance(nested, dict) else call
    name = function.get("name")
    if not isinstance(name, str) or not name:
        return None
    arguments = function.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def _unreadable(why: str) -> dict:
    return {"role": "assistant", "content": "", "_parse_error": why}


class RelayModel:
    """Factory of per-trial relay sessions (see the module docstring).

    Parameters:
        name: the label recorded in every row (default ``relay``).
        folder: where the trial folders go (default ``results/relay``).
        timeout: seconds to wait for one reply before the call fails.
        poll_s: seconds between looks for the reply file.
        settle_s: how long an incomplete reply file is read again before it counts as malformed.
        context_window: the window a request may not exceed (tokens).
    """

    is_reference = False

    def __init__(
        self,
        name: str = "relay",
        folder: str = "results/relay",
        timeout: float = 3600.0,
        poll_s: float = 0.2,
        settle_s: float = 2.0,
        context_window: int = 131_072,
    ) -> None:
        self.name = name
        self.folder = Path(folder)
        self.timeout = float(timeout)
        self.poll_s = float(poll_s)
        self.settle_s = float(settle_s)
        self.context_window = int(context_window)

    def for_trial(self, instance: Any, trial: int = 0) -> "RelaySession":
        """The session of one trial: its own numbered folder of requests and replies."""
        return RelaySession(self, self.folder / f"{instance.id}-t{trial}")

    def for_subtask(self, instance: Any, task: str, trial: int = 0, run: int = 1) -> "RelaySession":
        """A sub-agent's session, in a folder of its own beside its trial's."""
        return RelaySession(self, self.folder / f"{instance.id}-t{trial}-sub{run}")

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        """A relay needs a trial folder: use ``for_trial``."""
        raise ModelError("the relay model needs a trial: use for_trial(instance, trial)")


class RelaySession:
    """One trial's conversation through files: request N is written, reply N is awaited."""

    is_reference = False

    def __init__(self, model: RelayModel, folder: Path) -> None:
        self.name = model.name
        self.context_window = model.context_window
        self.model = model
        self.folder = folder
        self.count = 0

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        """Write the request, wait for its reply (or reuse the recorded one), return it."""
        self.count += 1
        stem = self.folder / f"{self.count:04d}"
        request = json.dumps({"messages": messages, "tools": tools}, ensure_ascii=False, sort_keys=True, indent=1)
        reply_path = stem.with_suffix(".reply.json")
        self.write_request(stem, request, messages, tools, reply_path)
        started = time.monotonic()
        text = self.wait_for(reply_path)
        message = self.read(reply_path, text)
        for index, call in enumerate(message.get("tool_calls") or []):
            call["id"] = f"call_{self.count}_{index}"  # request number and place: unique in the trial
        return Completion(message=message, usage=Usage(tokens_source="tiktoken"), latency_s=time.monotonic() - started)

    def write_request(self, stem: Path, request: str, messages: list[dict], tools: list[dict], reply: Path) -> None:
        """Write request N (JSON and text); an existing different request N means a foreign folder."""
        path = stem.with_suffix(".request.json")
        if path.exists():
            if path.read_text(encoding="utf-8") != request:
                raise ModelError(f"relay: {path} holds a different request (another conversation's folder)")
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        stem.with_suffix(".request.txt").write_text(render_request(messages, tools, str(reply)), encoding="utf-8")
        temporary = path.with_suffix(".tmp")
        temporary.write_text(request, encoding="utf-8")
        temporary.replace(path)

    def wait_for(self, reply: Path) -> str:
        """The reply file's text, once it exists (``ModelError`` after the timeout)."""
        deadline = time.monotonic() + self.model.timeout
        while not reply.exists():
            if time.monotonic() > deadline:
                raise ModelError(f"relay: no reply at {reply} within {self.model.timeout:g}s")
            time.sleep(self.model.poll_s)
        return reply.read_text(encoding="utf-8", errors="replace")

    def read(self, reply: Path, text: str) -> dict:
        """Parse the reply, reading an incomplete file again for ``settle_s`` before it counts as malformed."""
        deadline = time.monotonic() + self.model.settle_s
        message = parse_reply(text)
        while "_parse_error" in message and not message.get("tool_calls") and time.monotonic() < deadline:
            time.sleep(self.model.poll_s)
            message = parse_reply(reply.read_text(encoding="utf-8", errors="replace"))
        return message

"""``model=relay``: put any external agent, or a person, in the loop through files (relay protocol 2).

Each request of a trial is written to the relay folder as ``TRIAL/NNNN.request.json`` (the
OpenAI-style ``messages`` and ``tools``, exactly what an API backend would send) and as a plain-text
rendering of the same request, with the reply format at its end, cut into numbered parts of at most
20,000 characters: ``TRIAL/NNNN.request.part-01-of-07.txt`` ... (harness/models/relay_files.py). Each
part ends with a random key piece; the pieces joined in order are the request's **nonce**. The relay
then waits for ``TRIAL/NNNN.reply.json`` and turns it into the assistant message, so the records are
the same OpenAI-style records as every other backend's. A reply is

    {"seen": "<nonce>", "content": "text of the turn",
     "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]}

(``arguments`` may also be a JSON string; an OpenAI ``choices[0].message`` with ``seen`` beside
``choices`` is accepted as well).

Decisions, written down here:

- **Only a reply that proves the whole request was read reaches the trial.** A reply file that is not
  JSON, lacks the nonce, is a symbolic link, is older than its request (it was there before) or is
  over ``max_reply_bytes`` is set aside as ``NNNN.reply.rejected-K.json``; ``NNNN.rejected.txt``
  says why, the run folder's log (ctxbench.log) gets a warning, and the relay waits for a new reply.
  A rejection belongs to the recording method, not the model: the transcript never shows it.
- A reply that carries the nonce but whose tool calls are malformed goes back to the model as an error,
  like a malformed API reply.
- No accepted reply within ``timeout`` seconds of the request is a ``ModelError`` (outcome ``model_error``).
- One folder per trial (``{instance id}-t{trial}``), requests numbered from 1. A sub-agent of a
  trial gets ``{instance id}-t{trial}-sub{run}``.
- Resuming: when a request file already holds exactly this request, its parts and nonce stand and a
  reply already accepted is accepted again without waiting (a rerun after a crash does not ask twice). A
  request file that holds a *different* request is a ``ModelError``: the folder belongs to another
  conversation.
- The relay never follows a symbolic link it did not make: it writes through temporary files it
  created exclusively and renames them, and opens replies with ``O_NOFOLLOW``.
- Token counts are the harness's own (tiktoken), as for the reference agent: a relay reports none.
- Writers should write the reply to a temporary name and rename it; a reply that is not yet
  complete JSON is read again for ``settle_s`` seconds before it is rejected.
- ``relay_protocol`` (2) is part of the config, so every run folder's ``identity.json`` records the
  recording method; protocol 1 (one whole request file, no nonce) is retired.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from harness.models.base import Completion, ModelError, Usage
from harness.models.relay_files import (
    MAX_REPLY_BYTES,
    PROTOCOL,
    nonce_of,
    read_capped,
    render_parts,
    request_nonce,
    reply_problem,
    safe_folder,
    write_exclusive,
)

log = logging.getLogger(__name__)

REPLY_FORMAT = (
    "Write your reply as JSON to {reply} (write it to a temporary name in the same folder, then rename it):\n"
    '{{"seen": "KEY", "content": "your text for this turn", '
    '"tool_calls": [{{"name": "TOOL", "arguments": {{...}}}}]}}\n'
    "KEY is the key pieces at the ends of this request's parts, joined in order without spaces. "
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
        settle_s: how long an incomplete reply file is read again before it is rejected.
        context_window: the window a request may not exceed (tokens).
        max_reply_bytes: a larger reply file is rejected unread.
        relay_protocol: the recording method's version, recorded in identity.json; only 2 is served.
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
        max_reply_bytes: int = MAX_REPLY_BYTES,
        relay_protocol: int = PROTOCOL,
    ) -> None:
        if relay_protocol != PROTOCOL:
            raise ValueError(f"relay_protocol {relay_protocol} is not served (only {PROTOCOL}: parts and a nonce)")
        self.name = name
        self.folder = Path(folder)
        self.timeout = float(timeout)
        self.poll_s = float(poll_s)
        self.settle_s = float(settle_s)
        self.context_window = int(context_window)
        self.max_reply_bytes = int(max_reply_bytes)
        self.relay_protocol = PROTOCOL

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
    """One trial's conversation through files: request N is written in parts, reply N is awaited and checked."""

    is_reference = False

    def __init__(self, model: RelayModel, folder: Path) -> None:
        self.name = model.name
        self.context_window = model.context_window
        self.model = model
        self.folder = folder
        self.count = 0

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        """Write the request, wait for a reply that carries its nonce (or reuse the recorded one), return it."""
        self.count += 1
        stem = self.folder / f"{self.count:04d}"
        request = json.dumps({"messages": messages, "tools": tools}, ensure_ascii=False, sort_keys=True, indent=1)
        reply_path = stem.with_suffix(".reply.json")
        nonce, written_ns = self.write_request(stem, request, messages, tools, reply_path)
        started = time.monotonic()
        message = self.await_reply(reply_path, nonce, written_ns)
        for index, call in enumerate(message.get("tool_calls") or []):
            call["id"] = f"call_{self.count}_{index}"  # request number and place: unique in the trial
        return Completion(message=message, usage=Usage(tokens_source="tiktoken"), latency_s=time.monotonic() - started)

    def write_request(
        self, stem: Path, request: str, messages: list[dict], tools: list[dict], reply: Path
    ) -> tuple[str, int]:
        """Write request N (its parts, then its JSON); (its nonce, when it was written in ns).

        A request file that already holds exactly this request is a rerun: its parts and nonce stand. One that
        holds a different request means a foreign folder (``ModelError``)."""
        path = stem.with_suffix(".request.json")
        try:
            safe_folder(self.folder)
        except ValueError as exc:
            raise ModelError(str(exc)) from None
        if os.path.lexists(path):
            if path.is_symlink() or read_capped(path, 1 << 31).decode("utf-8", "replace") != request:
                raise ModelError(f"relay: {path} holds a different request (another conversation's folder)")
            return request_nonce(path), path.lstat().st_mtime_ns
        parts = render_parts(render_request(messages, tools, str(reply)), self.count, reply.name)
        for name, text in parts:
            write_exclusive(self.folder / name, text)
        write_exclusive(path, request)
        return nonce_of([text for _, text in parts]), path.lstat().st_mtime_ns

    def await_reply(self, reply: Path, nonce: str, written_ns: int) -> dict:
        """The first reply file that may be read and carries ``nonce``; every other one is set aside and logged."""
        deadline = time.monotonic() + self.model.timeout
        rejected = 0
        while True:
            if not os.path.lexists(reply):
                if time.monotonic() > deadline:
                    raise ModelError(
                        f"relay: no reply at {reply} within {self.model.timeout:g}s"
                        + (f" ({rejected} rejected)" if rejected else "")
                    )
                time.sleep(self.model.poll_s)
                continue
            problem = reply_problem(reply, written_ns, self.model.max_reply_bytes)
            if problem is None:
                message, problem = self.accept(self.settled_text(reply), nonce)
                if message is not None:
                    return message
            rejected += 1
            self.reject(reply, rejected, problem or "unreadable")

    def settled_text(self, reply: Path) -> str:
        """The reply's text; text that is not yet complete JSON is read again for ``settle_s``."""
        deadline = time.monotonic() + self.model.settle_s
        while True:
            text = read_capped(reply, self.model.max_reply_bytes).decode("utf-8", errors="replace")
            if _is_json(text) or time.monotonic() >= deadline:
                return text
            time.sleep(self.model.poll_s)

    def accept(self, text: str, nonce: str) -> tuple[dict | None, str | None]:
        """(the assistant message, None) for a reply carrying the nonce; (None, why) for one that may not pass."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            return None, f"the reply is not JSON ({exc})"
        if not isinstance(data, dict):
            return None, "the reply must be a JSON object"
        seen = data.get("seen")
        if seen != nonce:
            what = 'has no "seen"' if seen is None else f'has "seen": {str(seen)[:80]!r}, not the request\'s nonce'
            return None, f"the reply {what} (the key pieces at the ends of the request's parts, joined in order)"
        return parse_reply(text), None

    def reject(self, reply: Path, index: int, problem: str) -> None:
        """Set a refused reply aside (``NNNN.reply.rejected-K.json``) and say why in ``NNNN.rejected.txt``."""
        aside = reply.with_name(reply.name.replace(".reply.json", f".reply.rejected-{index}.json"))
        os.replace(reply, aside)
        log_path = reply.with_name(reply.name.replace(".reply.json", ".rejected.txt"))
        previous = read_capped(log_path, 1 << 20).decode("utf-8", "replace") if log_path.is_file() else ""
        line = (
            f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {reply.name} set aside as {aside.name}: {problem}; write a new reply"
        )
        write_exclusive(log_path, previous + line + "\n")
        log.warning("relay: %s rejected: %s", reply, problem)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True

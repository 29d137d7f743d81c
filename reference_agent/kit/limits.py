"""Reading the per-turn tool-call limit a task's prompt states (``tasks.kit.limits.limit_sentence``).

A policy that read the limit sends at most that many calls per turn, as a client of a
rate-limited API does (``within_limit``); the profiles cap their batches by it (``prompt_limit``).
"""

from __future__ import annotations

import threading

from reference_agent.kit.incremental import TextMemo
from tasks.kit.limits import DOCUMENTED_LIMIT


def documented_limit(text: str) -> int | None:
    """The per-turn limit a prompt states with ``limit_sentence`` (``None`` when it states none)."""
    return _documented_limit(text)


def _search_limit(text: str) -> int | None:
    match = DOCUMENTED_LIMIT.search(text)
    return int(match.group(1)) if match else None


_documented_limit = TextMemo(_search_limit)  # every step reads every visible message: each text is searched once


def prompt_limit(messages: list[dict], roles: tuple[str, ...] = ("system", "user", "assistant")) -> int | None:
    """The per-turn limit stated by the visible system or user messages (the task's prompt), if any.

    Every step asks this of a request that usually extends the previous one: the answer for the previous
    request is kept (per thread), and when it extends it only the new messages are read."""
    kept = getattr(_LATEST, "limit", None)
    start, found = 0, None
    if kept is not None and kept[0] == roles and len(messages) >= len(kept[1]) and messages[: len(kept[1])] == kept[1]:
        start, found = len(kept[1]), kept[2]
    if found is None:
        for message in messages[start:]:
            if message.get("role") in roles:
                found = documented_limit(str(message.get("content") or ""))
                if found is not None:
                    break
    _LATEST.limit = (roles, list(messages), found)
    return found


_LATEST = threading.local()


def within_limit(messages: list[dict], more: list[dict]) -> list[dict]:
    """``more`` (the calls a policy adds to its own next call) cut so that the turn keeps to the documented limit.

    A policy that read the limit in its prompt sends at most that many calls per turn, its own first
    call included, as a client of a rate-limited API does; without a stated limit ``more`` is unchanged.
    """
    limit = prompt_limit(messages)
    return list(more) if limit is None else list(more)[: max(0, limit - 1)]

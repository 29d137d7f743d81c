"""Reading the visible messages of a request: their text, by role (a task's checks read what an agent shows)."""

from __future__ import annotations

from typing import Iterable


def texts(messages: Iterable[dict], roles: tuple[str, ...] = ("user", "assistant")) -> list[str]:
    """The string contents of visible messages of the given roles."""
    return [str(m.get("content") or "") for m in messages if m.get("role") in roles and m.get("content")]


def tool_texts(messages: Iterable[dict]) -> list[str]:
    """The contents of visible tool results."""
    return texts(messages, roles=("tool",))

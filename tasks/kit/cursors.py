"""Cursor pagination: each page's result names the cursor of the next page.

Real list APIs (Stripe, Slack, GitHub's GraphQL, most feeds) hand out an opaque ``next_cursor``
with every page, so a client reads a long listing one round at a time: it cannot ask for page
7 before page 6 has told it where page 7 starts. A family that lists through ``CursorPages``
therefore keeps its information arriving over many rounds even for an agent that batches
every independent call.

Cursors are deterministic (a hash of the instance's namespace and the page number), opaque to
the agent, and distinct across instances. The first page is read with an empty cursor.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache

CURSOR_PATTERN = r"cur_[0-9a-f]{10}"
NEXT_CURSOR = re.compile(rf"next_cursor: ({CURSOR_PATTERN}|none)")
END_OF_RESULTS = "next_cursor: none (end of results)"


@dataclass(frozen=True)
class CursorPages:
    """The cursors of a listing of ``pages`` pages, unique to ``namespace`` (an instance id and listing name)."""

    namespace: str
    pages: int

    def cursor_for(self, page: int) -> str:
        """The opaque cursor that reads ``page`` (1-based); page 1 is also read with ``""``."""
        return _cursor(self.namespace, page)

    def page_for(self, cursor: object) -> int | None:
        """The page a cursor reads (``""`` or ``None``: page 1), or ``None`` for a cursor this listing never gave."""
        if cursor in ("", None):
            return 1
        if not isinstance(cursor, str):
            return None
        return _index(self.namespace, self.pages).get(cursor.strip())

    def footer(self, page: int) -> str:
        """The last line of ``page``: the next page's cursor, or the end of the listing."""
        if page >= self.pages:
            return END_OF_RESULTS
        return f"next_cursor: {self.cursor_for(page + 1)} (page {page + 1} of {self.pages})"

    def bad_cursor_message(self, cursor: object) -> str:
        """The error result of a cursor this listing never gave."""
        return (
            f"ERROR: unknown cursor {cursor!r}; start with an empty cursor and pass the next_cursor each page ends with"
        )


def _cursor(namespace: str, page: int) -> str:
    digest = hashlib.sha256(f"{namespace}:{page}".encode()).hexdigest()
    return f"cur_{digest[:10]}"


@lru_cache(maxsize=256)
def _index(namespace: str, pages: int) -> dict[str, int]:
    """cursor -> page of a listing, built once per listing (not on every call; treat it as read-only)."""
    return {_cursor(namespace, page): page for page in range(1, pages + 1)}


def next_cursor(text: str) -> str | None:
    """The cursor a page result names for the next page (``None`` at the end or when none is named)."""
    match = NEXT_CURSOR.search(text)
    if match is None or match.group(1) == "none":
        return None
    return match.group(1)

"""Serving a cursor-paginated listing (``kit.cursors``): which page a call asks for, and its text.

A family's listing tool takes ``cursor`` (empty for the first page); ``page_for_call``
turns the call's arguments into a page number or the error result a real API would give;
``page_items`` slices the listing; ``with_footer`` ends a rendered page with the
``next_cursor`` line that names the next page.
"""

from __future__ import annotations

from typing import Sequence, TypeVar

from tasks.base import ToolResult
from tasks.kit.cursors import CursorPages

T = TypeVar("T")


def page_for_call(
    listing: CursorPages, args: dict, arg: str = "cursor", others: tuple[str, ...] = ()
) -> int | ToolResult:
    """The page that ``args[arg]`` reads (absent or empty: page 1), or an error result for a bad cursor or
    an argument the tool does not take (``others``: its other arguments; a ``page`` number is not one)."""
    unknown = sorted(set(args) - {arg, *others})
    if unknown:
        return ToolResult(
            f"ERROR: unknown argument(s) {', '.join(unknown)}; this listing is read by cursor: pass "
            f'{arg}="" for the first page, then the next_cursor each page ends with',
            is_error=True,
        )
    cursor = args.get(arg, "")
    page = listing.page_for(cursor)
    if page is None:
        return ToolResult(listing.bad_cursor_message(cursor), is_error=True)
    return page


def page_items(items: Sequence[T], page: int, per_page: int) -> list[T]:
    """The items shown on ``page`` (1-based) of ``per_page`` each."""
    start = (page - 1) * per_page
    return list(items[start : start + per_page])


def page_count(items: int, per_page: int) -> int:
    """Pages needed for ``items`` items, at least one (an empty listing still has its first page)."""
    return max(1, -(-items // per_page))


def with_footer(lines: list[str], listing: CursorPages, page: int) -> str:
    """The page's text: its lines, then the line naming the next page's cursor (or the end)."""
    return "\n".join(lines + [listing.footer(page)])

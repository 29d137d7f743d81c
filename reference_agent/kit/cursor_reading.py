"""How a reference policy reads a cursor-paginated listing (``kit.cursors``) from what it can see.

An agent knows the cursor of a page only from the footer of the page before it
(``next_cursor: cur_... (page k of N)``), wherever that line is still visible: in the
page's result, or copied into its own notes or a summary. From the visible calls and
those footers it plans its next reads:

* ``reread``: a page it read (the call is visible) whose content and notes are gone;
* ``retry``: a page whose visible call came back as an error (rate limited) and was never done;
* ``read``: the page after the furthest one it knows;
* ``walk``: the cursor of the page it needs is nowhere in view, so it reads again the
  furthest earlier page whose cursor it knows, to get that page's footer (in the worst
  case the first page, with an empty cursor): the honest cost of losing a cursor.

Pages whose calls and notes vanished without a trace are not planned (the agent moves on
from the latest page it can see), as with numbered pages (``policy_kit.pending_pages``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from reference_agent.policy_kit import exchanges, make_call, other_calls
from tasks.kit.cursors import CURSOR_PATTERN

FOOTER = re.compile(rf"next_cursor: ({CURSOR_PATTERN}) \(page (\d+) of (\d+)\)")


@dataclass(frozen=True)
class CursorMove:
    """One planned read: ``kind`` (read, reread, retry or walk), the page and the cursor that reads it."""

    kind: str
    page: int
    cursor: str

    def call(self, tool: str, **more: object) -> dict:
        """The tool call that makes this read (``more``: the listing's other arguments)."""
        return make_call(tool, cursor=self.cursor, **more)


def known_cursors(texts: Iterable[str]) -> tuple[dict[int, str], int | None]:
    """Every page cursor named by a visible footer (page 1's is ``""``) and the page count, if seen."""
    cursors: dict[int, str] = {1: ""}
    total = None
    for text in texts:
        for cursor, page, of in FOOTER.findall(text):
            cursors[int(page)] = cursor
            total = int(of)
    return cursors, total


def cursor_of(args: dict, arg: str = "cursor") -> str | None:
    """The cursor a call passed (``""`` when empty or absent), or ``None`` for a non-string."""
    value = args.get(arg, "")
    if value is None:
        return ""
    return value.strip() if isinstance(value, str) else None


def plan_reads(
    messages: list[dict],
    tool: str,
    covered: set[int],
    cursors: dict[int, str],
    total: int | None,
    same_listing: dict | None = None,
) -> list[CursorMove]:
    """The reads an agent paging through ``tool(cursor=...)`` knows it still has to make, lowest page first.

    ``covered``: pages whose content or notes are visible; ``cursors``: ``known_cursors``;
    ``total``: the page count when known (``None``: read on until a page says it is the
    last). ``same_listing``: other arguments a call must carry to belong to this listing.
    """
    page_of = {cursor: page for page, cursor in cursors.items()}
    done: set[int] = set()
    failed: set[int] = set()
    for exchange in exchanges(messages):
        if exchange.name != tool or any(exchange.args.get(k) != v for k, v in (same_listing or {}).items()):
            continue
        page = page_of.get(cursor_of(exchange.args))
        if page is None:
            continue
        (failed if exchange.is_error else done).add(page)
    wanted = {page: "reread" for page in done - covered}
    wanted.update({page: "retry" for page in failed - done - covered})
    frontier = max(covered | done, default=0)
    if total is None or frontier < total:
        wanted.setdefault(frontier + 1, "read")
    moves = [CursorMove(kind, page, cursors[page]) for page, kind in sorted(wanted.items()) if page in cursors]
    blocked = [page for page in wanted if page not in cursors]
    if blocked and not moves:
        back = max(page for page in cursors if page < min(blocked))
        moves.append(CursorMove("walk", back, cursors[back]))
    return moves


def footer_line(text: str) -> str | None:
    """The ``next_cursor: ...`` line of a page result (``None`` when it has none)."""
    match = re.search(r"^next_cursor: [^\n]*$", text, re.M)
    return match.group(0) if match else None


def onward(cursors: dict[int, str], total: int | None, last: int) -> str:
    """The ``; next_cursor: ...`` a sub-agent's report ends with, so the next range can start there ("" if unknown)."""
    after = cursors.get(last + 1)
    return f"; next_cursor: {after} (page {last + 1} of {total})" if after and total else ""


class RangeReader:
    """What a sub-agent that reads pages ``start..last`` of one cursor listing and then reports does the same
    way in every family: it batches the other reads of its range whose cursors are in view, and never submits.

    The family's sub-policy sets ``listing`` (the listing tool) and implements ``_range(messages)``, whose
    last item is the list of planned ``CursorMove``s (``None`` without a task)."""

    listing: str

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The other reads of the range whose cursors are in view."""
        state = self._range(messages)
        return [] if state is None else other_calls((m.call(self.listing) for m in state[-1]), first)

    def early_answer(self, messages: list[dict]) -> dict | None:
        """None: a sub-agent reports its range; it never submits the task's answer."""
        return None

    def _range(self, messages: list[dict]):
        raise NotImplementedError

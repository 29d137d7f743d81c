"""The tool of ``latest_value``: ``read_updates(cursor)``, the channel's history read page by page.

Like a chat API's history endpoint (Slack's ``conversations.history``), pages come by cursor: an empty
cursor reads the first page and every page ends with the cursor of the next, so the pages arrive one round
at a time however many calls an agent batches. The channel is live and keeps a limited history: once the
reader has reached page ``p``, pages before ``p - retention`` are archived and a read of them is an error
result (the prompt does not say so; the error does).
"""

from __future__ import annotations

from tasks.base import ToolResult, tool_schema
from tasks.kit.cursors import CursorPages
from tasks.kit.pages import page_for_call, with_footer
from tasks.latest_value.world import Message, render_message

TOOL = "read_updates"
CHANNEL = "#spring-consolidation"


def tool_schemas() -> list[dict]:
    """The schema of ``read_updates``."""
    return [
        tool_schema(
            TOOL,
            f"Read one page of the {CHANNEL} channel history, oldest first. Pass an empty cursor for the first "
            "page; every page ends with the next_cursor to pass for the page after it.",
            {"cursor": {"type": "string", "description": '"" for the first page, else a next_cursor'}},
        )
    ]


def page_range(messages: list[Message], page: int) -> tuple[int, int]:
    """The first and last message numbers of ``page``."""
    ids = [m.id for m in messages if m.page == page]
    return ids[0], ids[-1]


def render_page(messages: list[Message], listing: CursorPages, page: int) -> str:
    """One page: its header (page and message numbers), the messages, the next cursor."""
    first, last = page_range(messages, page)
    lines = [f"=== {CHANNEL} · page {page} of {listing.pages} · messages #{first}-#{last} ==="]
    for message in messages:
        if message.page == page:
            lines += [render_message(message), ""]
    return with_footer(lines, listing, page)


def archived_message(messages: list[Message], page: int, retention: int) -> str:
    """The error result of a page that the channel no longer serves."""
    first, last = page_range(messages, page)
    return (
        f"ERROR: page {page} (messages #{first}-#{last}) has been archived: the channel keeps only the "
        f"{retention} pages before the newest page you have reached; older messages can no longer be read."
    )


class ChannelReader:
    """The channel as one trial's reader meets it: pages by cursor, the oldest archived as the reader moves on."""

    def __init__(self, messages: list[Message], listing: CursorPages, retention: int) -> None:
        self.messages = messages
        self.listing = listing
        self.retention = retention
        self.furthest = 0

    def call(self, name: str, args: dict) -> ToolResult:
        """``read_updates(cursor)``: the page the cursor names, an archived page's error, or a bad call's error."""
        if name != TOOL:
            return ToolResult(f"ERROR: unknown tool {name!r}; available: {TOOL}", is_error=True)
        page = page_for_call(self.listing, args)
        if isinstance(page, ToolResult):
            return page
        if page < self.furthest - self.retention:
            return ToolResult(archived_message(self.messages, page, self.retention), is_error=True)
        self.furthest = max(self.furthest, page)
        return ToolResult(render_page(self.messages, self.listing, page), resource=f"page:{page}")

"""The tools of ``brand_report``: ``get_posts(cursor)`` and ``search_posts(brand, cursor)``, cursor-paginated.

Like a real social-listening API, the feed (sorted by relevance, not by date) and each
brand's search results are read page by page: an empty cursor reads the first page and
every page ends with the cursor of the next (``next_cursor: cur_... (page k of N)``), so
an agent cannot fetch page 7 before page 6 has named it, however many calls it batches.
"""

from __future__ import annotations

import re

from tasks.base import ToolResult, tool_schema
from tasks.brand_report.world import Item
from tasks.kit.cursors import CursorPages
from tasks.kit.pages import page_count, page_for_call, page_items, with_footer

TAGS = [
    "#review",
    "#unboxing",
    "#gadgets",
    "#deals",
    "#mustbuy",
    "#fail",
    "#homelife",
    "#tech",
    "#honestreview",
    "#shopping",
    "#weekend",
    "#lifehack",
]
DEVICES = ["iPhone", "Android", "Web", "iPad", "HarmonyOS"]
FEED, SEARCH = "get_posts", "search_posts"


def tool_schemas() -> list[dict]:
    """The schemas of ``get_posts`` and ``search_posts``."""
    cursor = {"type": "string", "description": '"" for the first page, else the next_cursor a page ended with'}
    return [
        tool_schema(
            FEED,
            "Fetch one page of the monitoring feed. Pass an empty cursor for the first page; every "
            "page ends with the next_cursor to pass for the page after it.",
            {"cursor": cursor},
        ),
        tool_schema(
            SEARCH,
            "Fetch one page of the posts that mention a brand (any of its names), by cursor like get_posts.",
            {"brand": {"type": "string", "description": "one of the three brand names"}, "cursor": cursor},
        ),
    ]


def name_pattern(brand: str, aliases: list[str]) -> re.Pattern:
    """Matches the brand's name or any nickname as a whole word, in any case."""
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in [brand] + list(aliases)) + r")\b", re.I)


def render_page(title: str, items: list[Item], per_page: int, listing: CursorPages, page: int) -> str:
    """One page of a listing as the monitor prints it (navigation, the items, the next cursor)."""
    shown = page_items(items, page, per_page)
    first = (page - 1) * per_page
    lines = [
        f"SocialPulse Monitor · Workspace: PR weekly · {title} · page {page} of {listing.pages} · sorted by relevance",
        "Home | Dashboards | Feeds | Alerts | Reports | Settings            signed in as pr-team@agency.example",
        "Filters: platforms=all · language=any · date=any   [Export CSV] [Share] [Create alert]",
        "-" * 72,
    ]
    for item in shown:
        lines += _item_lines(item)
    lines += [
        "-" * 72,
        f"Showing items {first + 1}-{first + len(shown)} of {len(items)}",
        "Trending: #springsale #kitchenhacks #unboxing #618 · Saved searches: 4 · Alerts: 2 new",
        "\u00a9 2026 SocialPulse · Privacy · Terms · Status · Data retention: 180 days",
    ]
    return with_footer(lines, listing, page)


def _item_lines(item: Item) -> list[str]:
    if item.kind == "ad":
        return [
            f"[Sponsored] @{item.author} · {item.platform} · promoted",
            f"  {item.text}",
            f"  \u2665 {item.likes} · Learn more \u203a",
            "",
        ]
    tags = " ".join(TAGS[(item.id >> s) % len(TAGS)] for s in (0, 3, 6))
    return [
        f"Post #{item.id} · {item.platform} · @{item.author} · {item.when}",
        f"  \u21bb {item.text}" if item.kind == "repost" else f"  {item.text}",
        f"  {tags} · via {DEVICES[item.id % len(DEVICES)]}",
        f"  \u2665 {item.likes} · comments {item.likes // 7} · shares {item.likes // 11}",
        "",
    ]


class FeedTools:
    """The feed and the per-brand searches of one instance, each its own cursor listing."""

    def __init__(
        self,
        instance_id: str,
        category: str,
        brands: list[tuple[str, list[str]]],
        items: list[Item],
        per_page: int,
        pages: int,
    ) -> None:
        self.category, self.brands, self.items, self.per_page = category, brands, items, per_page
        self.feed = CursorPages(f"{instance_id}:feed", pages)
        self.hits = {b: [i for i in items if name_pattern(b, a).search(i.text)] for b, a in brands}
        self.searches = {
            b: CursorPages(f"{instance_id}:search:{b}", page_count(len(hits), per_page))
            for b, hits in self.hits.items()
        }

    def call(self, name: str, args: dict) -> ToolResult:
        """``get_posts(cursor)`` and ``search_posts(brand, cursor)``."""
        if name == FEED:
            page = page_for_call(self.feed, args)
            if isinstance(page, ToolResult):
                return page
            text = render_page(f"Feed: {self.category} brands", self.items, self.per_page, self.feed, page)
            return ToolResult(text, resource=f"page:{page}")
        if name == SEARCH:
            return self._search(args)
        return ToolResult(f"ERROR: unknown tool {name!r}; available: {FEED}, {SEARCH}", is_error=True)

    def _search(self, args: dict) -> ToolResult:
        brand = args.get("brand")
        names = {b.lower(): b for b, _ in self.brands}
        if not isinstance(brand, str) or brand.strip().lower() not in names:
            return ToolResult(
                f"ERROR: brand must be one of {', '.join(b for b, _ in self.brands)}, got {brand!r}", is_error=True
            )
        canonical = names[brand.strip().lower()]
        listing = self.searches[canonical]
        page = page_for_call(listing, args, others=("brand",))
        if isinstance(page, ToolResult):
            return page
        text = render_page(f"Search: {canonical}", self.hits[canonical], self.per_page, listing, page)
        return ToolResult(text, resource=f"search:{canonical}:{page}")

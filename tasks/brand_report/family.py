"""The ``brand_report`` family and its instances: last week's negative mentions of three brands
(source 000's 舆情 agent).

A social-listening feed (``tools.py``: ``get_posts(cursor)``, sorted by relevance, not by
date, cursor-paginated) holds posts about three brands of one product category, from
several weeks, on several platforms (``world.py``: posts, reposts, ads and their rules).
``search_posts(brand, cursor)`` lists the items that name a brand, paginated the same way.

The task prompt states the rule ONCE, at the start: count only last week, with the
explicit window ``YYYY-MM-DD`` to ``YYYY-MM-DD``. Answer: ``submit(counts={"Brand": n, ...})``
keyed by the brand names of the prompt: the number of original (non-sponsored, non-repost)
posts dated inside the window in which a sentence naming the brand is negative; a post
negative about two brands counts for both. Grade (``grade.py``): success = all three exact.
"""

from __future__ import annotations

import random

from tasks.base import Grade, KnobError, TaskFamily, TaskInstance, ToolResult
from tasks.brand_report.grade import grade_counts
from tasks.brand_report.tools import FeedTools, tool_schemas
from tasks.brand_report.world import Feed, generate_feed, negative_counts


class BrandReport(TaskFamily):
    """Family generator. Knobs: ``pages`` (feed pages), ``posts_per_page`` (items per page),
    ``weeks`` (weeks of posts before the window), ``notes_window`` (whether the reference agent's notes
    restate the window's dates; ``False``: they say "last week", so the window lives only in the task
    statement, as a constraint stated once that a model does not carry forward; source 003's constraint
    forgetting, preset ``context_growth``)."""

    name = "brand_report"

    def __init__(self, pages: int = 40, posts_per_page: int = 16, weeks: int = 4, notes_window: bool = True) -> None:
        if not isinstance(notes_window, bool):
            raise KnobError(f"task knob notes_window={notes_window!r} must be true or false")
        self.notes_window = notes_window
        self.pages = self.check_knob("pages", pages, 1, 1000)
        self.posts_per_page = self.check_knob("posts_per_page", posts_per_page, 4, 200)
        self.weeks = self.check_knob("weeks", weeks, 1, 52)

    def generate(self, seed: int) -> "BrandReportInstance":
        """Generate the feed for ``seed``."""
        rng = random.Random(f"brand_report:{seed}")
        edges = random.Random(f"brand_report:{seed}:edges")  # its own stream: unpinned feeds stay as they were
        feed = generate_feed(rng, self.pages, self.posts_per_page, self.weeks, edges)
        return BrandReportInstance(self, seed, feed)


class BrandReportInstance(TaskInstance):
    """One generated feed."""

    family = BrandReport.name

    def __init__(self, family: BrandReport, seed: int, feed: Feed) -> None:
        self.seed = seed
        self.id = f"brand_report-p{family.pages}{'' if family.notes_window else '-terse'}-s{seed}"
        self.notes_window = family.notes_window
        self.pages = family.pages
        self.per_page = family.posts_per_page
        self.category = feed.category
        self.brands = feed.brands
        self.start, self.end, self.today = feed.start, feed.end, feed.today
        self.items = feed.items
        self.truth = negative_counts(self.items, [b for b, _ in self.brands], self.start, self.end)
        self.feed_tools = FeedTools(self.id, self.category, self.brands, self.items, self.per_page, self.pages)
        vocabulary = "; ".join(f"{b} ({', '.join(a)})" for b, a in self.brands)
        self.system_prompt = (
            "You are a social-listening analyst agent for a PR team. You work only through the tools you are "
            "given. The numbers go into a client report: count exactly, by the stated rules. When you are done, "
            "call submit."
        )
        self.user_prompt = (
            f"Today is {self.today.isoformat()}. Prepare the weekly negative-mention count for three {self.category} "
            f"brands. The brands and the names people use for them: {vocabulary}. "
            f"Count only last week: posts dated from {self.start.isoformat()} to {self.end.isoformat()}, both days "
            "included. The feed is sorted by relevance, not by date; get_posts reads it one page at a time: pass an "
            "empty cursor for the first page, then the next_cursor each page ends with, until a page says it is the "
            "last (search_posts(brand, cursor) lists the posts that name one brand, the same way). A negative "
            "mention is an original post with a negative sentence about the brand; a post negative about two brands "
            "counts for both. Sponsored posts and reposts are not mentions. The feed can show the same post again on a "
            "later page (same post id): count each post once. Submit with "
            'submit(counts={"<brand>": n, ...}) using the three brand names above.'
        )
        self.tools = tool_schemas()
        self.answer_schema = {
            "type": "object",
            "properties": {
                "counts": {
                    "type": "object",
                    "description": "brand name -> negative mentions last week",
                    "additionalProperties": {"type": "integer"},
                }
            },
            "required": ["counts"],
        }

    def call(self, name: str, args: dict) -> ToolResult:
        """``get_posts(cursor)`` and ``search_posts(brand, cursor)``."""
        return self.feed_tools.call(name, args)

    def grade(self, answer: dict) -> Grade:
        """All three exact for success; mean per-brand closeness for the score."""
        return grade_counts(answer, self.truth)

    def answer_key(self) -> dict:
        """Every brand's true count of negative mentions (what ``grade_counts`` compares with)."""
        return {"counts": dict(self.truth)}

    def data_fingerprint(self) -> list:
        """The brands, the window and every item."""
        return [self.brands, self.start.isoformat(), self.end.isoformat(), [vars(i) for i in self.items]]

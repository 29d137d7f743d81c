"""The tools of ``people_tracker``: a web search and a page reader, and the instance that serves them."""

from __future__ import annotations

import re

from tasks.base import Grade, TaskInstance, ToolResult, tool_schema
from tasks.kit.limits import limit_sentence
from tasks.people_tracker.grade import grade_moves
from tasks.people_tracker.world import BROWSER_CALLS, FILLER, Move, Page


class PeopleTrackerInstance(TaskInstance):
    """One generated set of people and pages."""

    family = "people_tracker"

    def __init__(self, people: int, seed: int, names: list[str], moves: list[Move], pages: list[Page]) -> None:
        self.seed = seed
        self.id = f"people_tracker-n{people}-s{seed}"
        self.names = names
        self.moves = moves
        self.pages = {p.url: p for p in pages}
        self.max_calls_per_turn = BROWSER_CALLS
        self.system_prompt = (
            "You are a research agent that tracks executive moves for an investor newsletter. You work only "
            'through the tools you are given. Every fact needs its month and company: "X left" is useless, '
            '"X left A in May 2024 to join B" is a fact. When you are done, call submit.'
        )
        self.user_prompt = (
            f"Track these people: {'; '.join(names)}. For each one, find every employer change since 2018: the "
            "month (YYYY-MM) and the company they joined. Use search(query) and open_page(url). Beware of people "
            "with similar names (a different first or last name is a different person) and of rumours that were "
            "denied (a move that the company or the person denied did not happen, even where another page "
            "reports it). Submit every move with "
            'submit(moves=[{"person": full name, "month": "YYYY-MM", "company": company joined}, ...]). '
            + limit_sentence(BROWSER_CALLS, "search or open_page calls")
        )
        self.tools = [
            tool_schema(
                "search",
                "Web search. Returns titles, URLs and snippets.",
                {"query": {"type": "string", "description": "search terms"}},
            ),
            tool_schema(
                "open_page",
                "Open a web page by URL and return its text.",
                {"url": {"type": "string", "description": "a URL from the search results"}},
            ),
        ]
        self.answer_schema = {
            "type": "object",
            "properties": {
                "moves": {
                    "type": "array",
                    "description": "one entry per employer change",
                    "items": {
                        "type": "object",
                        "properties": {
                            "person": {"type": "string"},
                            "month": {"type": "string"},
                            "company": {"type": "string"},
                        },
                        "required": ["person", "month", "company"],
                    },
                }
            },
            "required": ["moves"],
        }

    def call(self, name: str, args: dict) -> ToolResult:
        """``search(query)`` and ``open_page(url)``."""
        if name == "search":
            query = args.get("query")
            if not isinstance(query, str) or not query.strip():
                return ToolResult("ERROR: search needs a non-empty query string", is_error=True)
            words = {w for w in re.findall(r"[a-z]+", query.lower()) if len(w) > 1}
            scored = []
            for page in self.pages.values():
                tokens = {t for n in page.names for t in n.lower().split()} | set(
                    re.findall(r"[a-z]+", page.title.lower())
                )
                score = len(words & tokens)
                if score:
                    scored.append((-score, page.url, page))
            scored.sort()
            lines = [
                f'Search results for "{query.strip()}" · about {len(scored) * 1370:,} results (0.41 s)',
                "Ad · SpotCompute — GPU hours from $0.39 · spotcompute.example",
                "",
            ]
            for _, url, page in scored[:20]:
                snippet = re.sub(
                    r"\s+", " ", next((p for p in page.body.split("\n\n") if p.startswith(tuple(FILLER))), "")
                )
                lines += [page.title, f"  {url}", f"  {snippet[:150]}", ""]
            if not scored:
                lines.append("No results. Try different keywords.")
            lines.append(
                "People also ask: Who left OpenAI in 2024? · Which labs are hiring? · What is a chief scientist?"
            )
            return ToolResult("\n".join(lines), resource=f"search:{' '.join(sorted(words))}")
        if name == "open_page":
            url = args.get("url")
            if not isinstance(url, str) or not url.strip():
                return ToolResult("ERROR: open_page needs a url string from the search results", is_error=True)
            page = self.pages.get(url.strip())
            if page is None:
                return ToolResult(
                    f"ERROR: 404 Not Found: {url!r} (use a URL exactly as the search results show it)", is_error=True
                )
            return ToolResult(f'<page url="{page.url}">\n{page.body}\n</page>', resource=page.url)
        return ToolResult(f"ERROR: unknown tool {name!r}; available: search, open_page", is_error=True)

    def grade(self, answer: dict) -> Grade:
        """Exact set of (person, month, company) for success; F1 for the score (``grade.grade_moves``)."""
        return grade_moves(answer, self.moves)

    def answer_key(self) -> dict:
        """Every true employer change (what ``grade_moves`` compares with)."""
        return {"moves": [{"person": m.person, "month": m.month, "company": m.to} for m in self.moves]}

    def data_fingerprint(self) -> list:
        """The people, their moves and every page."""
        return [self.names, [vars(m) for m in self.moves], [vars(p) for p in self.pages.values()]]

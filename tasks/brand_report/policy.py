"""``brand_report``: count last week's negative mentions of three brands (seed 000's 舆情 agent).

A social-listening feed (``get_posts(page)``, sorted by relevance, not by date) holds posts
about three brands of one product category, from several weeks, on several platforms.
Each post has an id, platform, author, date and text; people call the brands by their
names or by nicknames. Noise: portal navigation, sponsored posts (ads, which may sound
negative), reposts that quote another post (not new mentions), posts that mention two
brands (one sentence each, possibly with opposite sentiment), sentences with negative
words that mention no brand. ``search_posts(brand, page)`` returns the posts that mention a
brand (by any of its names), paginated the same way.

The task prompt states the rule ONCE, at the start: count only last week, with the
explicit window ``YYYY-MM-DD`` to ``YYYY-MM-DD``. Every edge of the window matters: any
window one day off (either end moved either way, or the whole window moved) gives different
counts (``pin_window_boundaries`` re-dates older negative posts onto the decisive days where
the random feed did not already do it; a feed too small to have such posts may stay unpinned).

Answer: ``submit(counts={"Brand": n, ...})`` keyed by the brand names of the prompt: the
number of original (non-sponsored, non-repost) posts dated inside the window in which a
sentence naming the brand is negative. A post that is negative about two brands counts
for both. Grade: success = all three exact; score = the mean over brands of
``max(0, 1 - |given - true| / max(true, 1))`` (so counting every week, or mixing the
brands up, fails and scores low).

Reference policy: reads every page in order; after each page it writes
``Tally pN (window A..B): Brand n, ...`` and recites
``Running totals (window A..B) after pages R of N: ...``. It knows the brand names and
nicknames from the prompt and the window from the prompt or from its own notes or a
summary that restates it; if none of these is visible (the task was cut and the notes
are gone) it counts every date, says so in its notes, and fails as an LLM that lost the
constraint would. A page whose call is visible but whose content and tally are gone is
read again; otherwise it moves on from the latest visible running totals. Batching (profile
``realistic``): ``parallel_calls`` offers the other feed pages up to the known count; a
rate-limited page is requested again (tasks/README.md).

Reference summary (lossy, documented): keeps the window, the running totals and the pages
done; drops the per-page tallies and every post.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from datetime import date, timedelta

from tasks.base import Grade, TaskFamily, TaskInstance, ToolResult, tool_schema
from tasks.policy_kit import (failed_attempts, format_summary, latest_results, make_call, other_calls, parse_ranges,
                              pending_pages, ranges, rate_limit_note, reply, submit, texts, tool_texts, tools_used)

CATEGORIES = [
    ("air fryers", [("Lumora", ["Lumo", "LMR"]), ("Brightwave", ["BW", "Bwave"]), ("Kestrel", ["KST", "Kes"]),
                    ("Ovenix", ["Ovnx", "OVX"])]),
    ("robot vacuums", [("Dustra", ["Dusty", "DST"]), ("Sweepio", ["Swp", "Sweepy"]), ("Tidybot", ["Tidy", "TDB"]),
                       ("Vacuma", ["Vac", "VCM"])]),
    ("wireless earbuds", [("Sonaro", ["Sona", "SNR"]), ("Auralis", ["Aura", "ARL"]), ("Beatnik", ["Beat", "BNK"]),
                          ("Pulsewave", ["Pulse", "PWV"])]),
]
NEGATIVE = [
    "stopped working after {n} days", "broke down the second week", "is the worst purchase I made this year",
    "support ignored my ticket for {n} days", "overheated and smelled like burning plastic",
    "refund still not processed after {n} weeks", "never buying again", "app keeps crashing on login",
    "is a total waste of money", "arrived damaged and the replacement is faulty too",
]
POSITIVE = [
    "works perfectly, zero complaints", "is honestly great value", "exceeded my expectations",
    "battery lasts forever", "customer service sorted my question in minutes", "is my favourite gadget this month",
    "feels premium for the price", "setup took two minutes",
]
NEUTRAL = [
    "arrived today, will report back", "is on sale at the mall this weekend", "released a new colour",
    "vs the others: which one should I get?", "had a pop-up store downtown", "updated its firmware again",
]
FILLER = [
    "Delivery came on Tuesday.", "Anyone else?", "Long week honestly.", "The weather has been terrible all week.",
    "My neighbour's dog is the worst at 6am.", "Posting from the train.", "Thread below.", "Not sponsored btw.",
]
AD_LINES = [
    "Tired of gadgets that break after a week? {brand} is built to last. 30% off with code SPRING.",
    "{brand} official store: free shipping, 2-year warranty. Don't settle for the worst.",
    "Flash sale! {brand} bundles from $49. Limited stock.",
]
TAGS = ["#review", "#unboxing", "#gadgets", "#deals", "#mustbuy", "#fail", "#homelife", "#tech", "#honestreview",
        "#shopping", "#weekend", "#lifehack"]
DEVICES = ["iPhone", "Android", "Web", "iPad", "HarmonyOS"]
PLATFORMS = ["Weibo", "Tieba", "RedNote", "Douyin", "Zhihu", "Bilibili"]
HANDLES = ["ovenlover", "techtina", "mr_gadget", "kitchenqueen", "daily_deals", "dad_reviews", "nightowl", "li_wei",
           "xiaoyu", "budget_buyer", "unboxer", "hometech", "sam_k", "moonlight", "quietcoder", "annie_z"]

POST_ID = re.compile(r"^Post #(\d+) · (\w+) · @\S+ · (\d{4}-\d{2}-\d{2}) \d{2}:\d{2}$", re.M)
PAGE_HEADER = re.compile(r"SocialPulse Monitor · .* · page (\d+) of (\d+)")
WINDOW_PROMPT = re.compile(r"dated from (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})")
WINDOW_NOTE = re.compile(r"window (\d{4}-\d{2}-\d{2})\.\.(\d{4}-\d{2}-\d{2})")
BRANDS_PROMPT = re.compile(r"The brands and the names people use for them: ([^\n]*?)\.(?: |$)", re.M)
TALLY = re.compile(r"Tally p(\d+) \((?:window [\d.-]+|all dates)\): ([^\n]*)")
RUNNING = re.compile(r"Running totals \((?:window [\d.-]+|all dates)\) after pages ([\d,\- none]+) of (\d+): ([^\n]*)")
COUNT_ITEM = re.compile(r"([A-Z][\w\- ]*?) (\d+)(?:,|$)")


@dataclass(frozen=True)
class Item:
    """One feed item: an original post, a repost or an ad."""

    kind: str  # post | repost | ad
    id: int
    platform: str
    author: str
    when: str  # YYYY-MM-DD HH:MM
    text: str
    negative: tuple[str, ...]  # brands this original post is negative about
    likes: int


class BrandReport(TaskFamily):
    """Family generator. Knobs: ``pages`` (feed pages), ``posts_per_page`` (items per page),
    ``weeks`` (weeks of posts before the window)."""

    name = "brand_report"

    def __init__(self, pages: int = 40, posts_per_page: int = 16, weeks: int = 4) -> None:
        self.pages = self.check_knob("pages", pages, 1, 1000)
        self.posts_per_page = self.check_knob("posts_per_page", posts_per_page, 4, 200)
        self.weeks = self.check_knob("weeks", weeks, 1, 52)

    def generate(self, seed: int) -> "BrandReportInstance":
        """Generate the feed for ``seed``."""
        rng = random.Random(f"brand_report:{seed}")
        category, pool = rng.choice(CATEGORIES)
        brands = rng.sample(pool, 3)
        today = date(2026, 1, 5) + timedelta(weeks=rng.randrange(40))  # a Monday
        start, end = today - timedelta(days=7), today - timedelta(days=1)
        first = start - timedelta(weeks=self.weeks)
        span = (today - first).days + 1
        ids = rng.sample(range(100000, 999999), self.pages * self.posts_per_page)
        items: list[Item] = []
        originals: list[Item] = []
        for n in range(self.pages * self.posts_per_page):
            day = first + timedelta(days=rng.randrange(span))
            when = f"{day.isoformat()} {rng.randrange(24):02d}:{rng.randrange(60):02d}"
            platform, author = rng.choice(PLATFORMS), f"{rng.choice(HANDLES)}{rng.randrange(10, 999)}"
            roll = rng.random()
            if roll < 0.08:
                brand = rng.choice(brands)[0]
                items.append(Item("ad", ids[n], platform, f"{brand.lower().replace(' ', '')}_official", when,
                                  rng.choice(AD_LINES).format(brand=brand), (), rng.randrange(5000)))
                continue
            if roll < 0.18 and originals:
                source = rng.choice(originals)
                items.append(Item("repost", ids[n], platform, author, when,
                                  f"reposted #{source.id} from @{source.author}: \u201c{source.text}\u201d",
                                  (), rng.randrange(50)))
                continue
            mentioned = rng.sample(brands, 2 if rng.random() < 0.18 else 1)
            sentences, negative = [], []
            if rng.random() < 0.4:
                sentences.append(rng.choice(FILLER))
            for brand, aliases in mentioned:
                name = rng.choice([brand, brand] + aliases)
                mood = rng.choices(["neg", "pos", "neu"], [0.38, 0.34, 0.28])[0]
                bank = {"neg": NEGATIVE, "pos": POSITIVE, "neu": NEUTRAL}[mood]
                clause = rng.choice(bank).format(n=rng.randint(2, 9))
                sentences.append(f"{name} {clause}.")
                if mood == "neg":
                    negative.append(brand)
            if rng.random() < 0.3:
                sentences.append(rng.choice(FILLER))
            post = Item("post", ids[n], platform, author, when, " ".join(sentences), tuple(negative), rng.randrange(900))
            items.append(post)
            originals.append(post)
        edges = random.Random(f"brand_report:{seed}:edges")  # its own stream: unpinned feeds stay as they were
        items = pin_window_boundaries(items, [b for b, _ in brands], start, end, edges)
        return BrandReportInstance(self, seed, category, brands, start, end, today, items)


def negative_counts(items: list[Item], brands: list[str], start: date, end: date) -> dict[str, int]:
    """Per brand, the original posts dated from ``start`` to ``end`` (both included) negative about it."""
    low, high = start.isoformat(), end.isoformat()
    return {b: sum(1 for i in items if i.kind == "post" and b in i.negative and low <= i.when[:10] <= high)
            for b in brands}


def shifted_windows(start: date, end: date) -> dict[str, tuple[date, date]]:
    """The windows one day off ``start..end``: either end moved either way, or the whole window moved."""
    day = timedelta(days=1)
    return {"start-1": (start - day, end), "start+1": (start + day, end), "end-1": (start, end - day),
            "end+1": (start, end + day), "both-1": (start - day, end - day), "both+1": (start + day, end + day)}


def pin_window_boundaries(items: list[Item], brands: list[str], start: date, end: date,
                          rng: random.Random) -> list[Item]:
    """``items`` with, where needed, older negative posts re-dated onto the days at the window's edges so
    that every window one day off gives different counts (ignoring or misreading the window fails).

    A shifted window that gives the same counts is repaired on the day that decides it: the day
    before the window (``start-1``, ``both-1``), its first day (``start+1``), its last day
    (``end-1``) or the day after it (``end+1``, ``both+1``). The donors are original posts with
    a negative sentence dated before the day before the window; an instance that needs no repair
    is unchanged. With too few donors (tiny feeds) it stops repairing.
    """
    day = timedelta(days=1)
    decisive = {"start-1": start - day, "both-1": start - day, "start+1": start, "end-1": end,
                "end+1": end + day, "both+1": end + day}
    items = list(items)
    before = (start - day).isoformat()
    donors = [n for n, i in enumerate(items) if i.kind == "post" and i.negative and i.when[:10] < before]
    rng.shuffle(donors)
    while donors:
        truth = negative_counts(items, brands, start, end)
        same = [name for name, (a, b) in shifted_windows(start, end).items()
                if negative_counts(items, brands, a, b) == truth]
        if not same:
            break
        n = donors.pop()
        items[n] = replace(items[n], when=decisive[same[0]].isoformat() + items[n].when[10:])
    return items


class BrandReportInstance(TaskInstance):
    """One generated feed."""

    family = BrandReport.name

    def __init__(self, family: BrandReport, seed: int, category: str, brands: list, start: date, end: date,
                 today: date, items: list[Item]) -> None:
        self.seed = seed
        self.id = f"brand_report-p{family.pages}-s{seed}"
        self.pages = family.pages
        self.per_page = family.posts_per_page
        self.category = category
        self.brands = [(b, list(a)) for b, a in brands]
        self.start, self.end, self.today = start, end, today
        self.items = items
        self.truth = negative_counts(items, [b for b, _ in self.brands], start, end)
        vocabulary = "; ".join(f"{b} ({', '.join(a)})" for b, a in self.brands)
        self.system_prompt = (
            "You are a social-listening analyst agent for a PR team. You work only through the tools you are "
            "given. The numbers go into a client report: count exactly, by the stated rules. When you are done, "
            "call submit."
        )
        self.user_prompt = (
            f"Today is {today.isoformat()}. Prepare the weekly negative-mention count for three {category} brands. "
            f"The brands and the names people use for them: {vocabulary}. "
            f"Count only last week: posts dated from {start.isoformat()} to {end.isoformat()}, both days included. "
            f"The feed has {self.pages} pages (get_posts, pages 1 to {self.pages}, sorted by relevance, not by date; "
            "search_posts(brand, page) filters by brand). A negative mention is an original post with a negative "
            "sentence about the brand; a post negative about two brands counts for both. Sponsored posts and "
            "reposts are not mentions. Submit with submit(counts={\"<brand>\": n, ...}) using the three brand "
            "names above."
        )
        self.tools = [
            tool_schema("get_posts", "Fetch one page of the monitoring feed.",
                        {"page": {"type": "integer", "description": f"1..{self.pages}"}}),
            tool_schema("search_posts", "Fetch one page of the posts that mention a brand (any of its names).",
                        {"brand": {"type": "string", "description": "one of the three brand names"},
                         "page": {"type": "integer", "description": "1-based page"}}),
        ]
        self.answer_schema = {
            "type": "object",
            "properties": {"counts": {"type": "object", "description": "brand name -> negative mentions last week",
                                      "additionalProperties": {"type": "integer"}}},
            "required": ["counts"],
        }

    def _render(self, title: str, page: int, total: int, items: list[Item], first_index: int, count: int) -> str:
        lines = [
            f"SocialPulse Monitor · Workspace: PR weekly · {title} · page {page} of {total} · sorted by relevance",
            "Home | Dashboards | Feeds | Alerts | Reports | Settings            signed in as pr-team@agency.example",
            "Filters: platforms=all · language=any · date=any   [Export CSV] [Share] [Create alert]",
            "-" * 72,
        ]
        for item in items:
            if item.kind == "ad":
                lines += [f"[Sponsored] @{item.author} · {item.platform} · promoted", f"  {item.text}",
                          f"  \u2665 {item.likes} · Learn more \u203a", ""]
                continue
            lines += [f"Post #{item.id} · {item.platform} · @{item.author} · {item.when}"]
            lines += [f"  \u21bb {item.text}" if item.kind == "repost" else f"  {item.text}"]
            tags = " ".join(TAGS[(item.id >> s) % len(TAGS)] for s in (0, 3, 6))
            lines += [f"  {tags} · via {DEVICES[item.id % len(DEVICES)]}",
                      f"  \u2665 {item.likes} · comments {item.likes // 7} · shares {item.likes // 11}", ""]
        lines += ["-" * 72,
                  f"Showing items {first_index + 1}-{first_index + len(items)} of {count} · Next page \u203a",
                  "Trending: #springsale #kitchenhacks #unboxing #618 · Saved searches: 4 · Alerts: 2 new",
                  "\u00a9 2026 SocialPulse · Privacy · Terms · Status · Data retention: 180 days"]
        return "\n".join(lines)

    def call(self, name: str, args: dict) -> ToolResult:
        """``get_posts(page)`` and ``search_posts(brand, page)``."""
        if name == "get_posts":
            page = _int(args.get("page"))
            if page is None or not 1 <= page <= self.pages:
                return ToolResult(f"ERROR: page must be an integer from 1 to {self.pages}, got {args.get('page')!r}",
                                  is_error=True)
            start = (page - 1) * self.per_page
            text = self._render(f"Feed: {self.category} brands", page, self.pages,
                                self.items[start:start + self.per_page], start, len(self.items))
            return ToolResult(text, resource=f"page:{page}")
        if name == "search_posts":
            brand = args.get("brand")
            names = {b.lower(): (b, a) for b, a in self.brands}
            if not isinstance(brand, str) or brand.strip().lower() not in names:
                return ToolResult(f"ERROR: brand must be one of {', '.join(b for b, _ in self.brands)}, got {brand!r}",
                                  is_error=True)
            canonical, aliases = names[brand.strip().lower()]
            pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in [canonical] + aliases) + r")\b", re.I)
            hits = [i for i in self.items if pattern.search(i.text)]
            pages = max(1, -(-len(hits) // self.per_page))
            page = _int(args.get("page", 1))
            if page is None or not 1 <= page <= pages:
                return ToolResult(f"ERROR: page must be an integer from 1 to {pages} for {canonical}, got "
                                  f"{args.get('page')!r}", is_error=True)
            start = (page - 1) * self.per_page
            text = self._render(f"Search: {canonical}", page, pages, hits[start:start + self.per_page], start, len(hits))
            return ToolResult(text, resource=f"search:{canonical}:{page}")
        return ToolResult(f"ERROR: unknown tool {name!r}; available: get_posts, search_posts", is_error=True)

    def grade(self, answer: dict) -> Grade:
        """All three exact for success; mean per-brand closeness for the score."""
        raw = answer.get("counts") if isinstance(answer, dict) else None
        given: dict[str, int] = {}
        if isinstance(raw, dict):
            lookup = {b.lower(): b for b in self.truth}
            for key, value in raw.items():
                brand = lookup.get(str(key).strip().lower())
                number = _int(value)
                if brand is not None and number is not None:
                    given[brand] = number
        closeness = {b: (max(0.0, 1 - abs(given[b] - t) / max(t, 1)) if b in given else 0.0)
                     for b, t in self.truth.items()}
        exact = [b for b, t in self.truth.items() if given.get(b) == t]
        return Grade(len(exact) == len(self.truth), round(sum(closeness.values()) / len(closeness), 4),
                     {"expected": dict(self.truth), "given": given, "exact": exact})

    def reference_policy(self) -> "BrandPolicy":
        """The careful page-by-page analyst."""
        return BrandPolicy()

    def data_fingerprint(self) -> list:
        """The brands, the window and every item."""
        return [self.brands, self.start.isoformat(), self.end.isoformat(), [vars(i) for i in self.items]]


def _int(value) -> int | None:
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def tally_page(text: str, vocabulary: dict[str, list[str]], window: tuple[str, str] | None) -> dict[str, int]:
    """Negative mentions per brand on one feed page, as a careful analyst reads it."""
    counts = {b: 0 for b in vocabulary}
    patterns = {b: re.compile(r"\b(" + "|".join(re.escape(n) for n in [b] + a) + r")\b", re.I)
                for b, a in vocabulary.items()}
    negative_cues = [re.compile(re.escape(c.split("{")[0].strip())) for c in NEGATIVE]
    blocks = text.split("\nPost #")[1:]
    for block in blocks:
        head, _, rest = block.partition("\n")
        match = re.match(r"\d+ · \w+ · @\S+ · (\d{4}-\d{2}-\d{2})", head)
        body = rest.split("\n")[0].strip()
        if not match or body.startswith("\u21bb"):
            continue
        if window and not window[0] <= match.group(1) <= window[1]:
            continue
        for sentence in re.split(r"(?<=[.?!])\s+", body):
            for brand, pattern in patterns.items():
                if pattern.search(sentence) and any(c.search(sentence) for c in negative_cues):
                    counts[brand] += 1
    return counts


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{b} {n}" for b, n in counts.items())


class BrandPolicy:
    """Reference policy for ``brand_report`` (see the module docstring)."""

    def _knowledge(self, tool_outputs: list[str], notes: list[str]):
        vocabulary: dict[str, list[str]] = {}
        window = None
        total = None
        for text in notes:
            match = BRANDS_PROMPT.search(text)
            if match:
                for part in match.group(1).split(";"):
                    m = re.match(r"\s*(.+?) \(([^)]*)\)", part)
                    if m:
                        vocabulary[m.group(1)] = [a.strip() for a in m.group(2).split(",")]
            match = WINDOW_PROMPT.search(text)
            if match:
                window = (match.group(1), match.group(2))
            match = re.search(r"The feed has (\d+) pages", text)
            if match:
                total = int(match.group(1))
        for text in notes:
            if window is None:
                match = WINDOW_NOTE.search(text)
                if match:
                    window = (match.group(1), match.group(2))
        tallies: dict[int, dict[str, int]] = {}
        running: tuple[set[int], dict[str, int]] = (set(), {})
        for text in notes:
            for page, items in TALLY.findall(text):
                tallies[int(page)] = {b.strip(): int(n) for b, n in COUNT_ITEM.findall(items)}
            for pages, of, items in RUNNING.findall(text):
                covered = parse_ranges(pages)
                total = int(of)
                if len(covered) >= len(running[0]):
                    running = (covered, {b.strip(): int(n) for b, n in COUNT_ITEM.findall(items)})
        for b in running[1]:
            vocabulary.setdefault(b, [])
        content_pages: set[int] = set()
        for text in tool_outputs:
            header = PAGE_HEADER.search(text)
            if not header or "Feed:" not in text.split("\n", 1)[0]:
                continue
            page = int(header.group(1))
            total = int(header.group(2))
            content_pages.add(page)
            tallies[page] = tally_page(text, vocabulary, window)
        return vocabulary, window, total, tallies, running, content_pages

    def _totals(self, vocabulary, tallies, running) -> tuple[set[int], dict[str, int]]:
        covered, counts = set(running[0]), {b: running[1].get(b, 0) for b in vocabulary}
        for page, tally in tallies.items():
            if page in covered:
                continue
            covered.add(page)
            for b, n in tally.items():
                counts[b] = counts.get(b, 0) + n
        return covered, counts

    def _state(self, messages: list[dict]):
        """What the visible messages say: knowledge, pages counted, totals and the pages still to fetch."""
        vocabulary, window, total, tallies, running, content_pages = self._knowledge(tool_texts(messages), texts(messages))
        covered, counts = self._totals(vocabulary, tallies, running)
        return window, total, tallies, covered, counts, pending_pages(messages, "get_posts", covered, total)

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Read the next page, re-read a lost one, re-issue a rate-limited one, or submit."""
        window, total, tallies, covered, counts, plan = self._state(messages)
        scope = f"window {window[0]}..{window[1]}" if window else "all dates"
        lines = []
        for text in latest_results(messages):  # the newest results, even with a status bar or notes after them
            header = PAGE_HEADER.search(text)
            if header and int(header.group(1)) in tallies:
                page = int(header.group(1))
                lines.append(f"Tally p{page} ({scope}): {_counts_text(tallies[page])}")
        limited = rate_limit_note(messages)
        if limited:
            lines.append(limited)
        if window is None:
            lines.append("I cannot see a date window in the task or my notes; counting posts of every date.")
        lines.append(f"Running totals ({scope}) after pages {ranges(covered)} of {total or '?'}: {_counts_text(counts)}")
        note = "\n".join(lines)
        move = plan[0] if plan else None
        if move and move[0] == "reread":
            return reply(note + f"\nPage {move[1]} is no longer in view and I have no tally of it; reading it again.",
                         make_call("get_posts", page=move[1]))
        if move:
            return reply(note, make_call("get_posts", page=move[1]))
        return submit(note + "\nAll pages counted; submitting.", counts=counts)

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """Every other feed page still to fetch (lost, rate limited, or not read yet up to the known page count).

        The page count comes from the prompt or a page header; while it is unknown only the
        next page is known to exist, so nothing is added.
        """
        plan = self._state(messages)[-1]
        return other_calls((make_call("get_posts", page=p) for _, p in plan), first)

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The running totals over the pages counted so far, or None before any page was counted."""
        _, _, _, covered, counts, _ = self._state(messages)
        return {"counts": counts} if covered else None

    def summarize(self, history_text: str) -> str:
        """Keep the window, the running totals and the pages done; drop per-page tallies and posts."""
        blocks = ["[" + b for b in history_text.split("\n[")]
        outputs = [b.split("]: ", 1)[1] for b in blocks if b.startswith("[tool ") and "]: " in b]
        vocabulary, window, total, tallies, running, _ = self._knowledge(outputs, [history_text])
        covered, counts = self._totals(vocabulary, tallies, running)
        scope = f"window {window[0]}..{window[1]}" if window else "all dates"
        findings = [f"count only last week: window {window[0]}..{window[1]}" if window else "no date window seen",
                    f"Running totals ({scope}) after pages {ranges(covered)} of {total or '?'}: {_counts_text(counts)}"]
        remaining = sorted(set(range(1, (total or 0) + 1)) - covered)
        progress = [f"pages counted: {ranges(covered)} of {total or '?'}", f"remaining pages: {ranges(remaining)}"]
        return format_summary(findings, tools_used(history_text), failed_attempts(history_text), progress)

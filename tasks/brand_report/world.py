"""The generated social feed of ``brand_report``: posts, reposts and ads about three brands.

Templates, and the rule each obeys (tasks/README.md, "brand_report"; tested in
tests/test_brand_report.py):

* original post: one sentence per brand it mentions (one brand, or two), each negative,
  positive or neutral on its own, named by the brand's name or one of the nicknames the
  prompt lists; optional filler sentences before and after that name no brand (some sound
  negative: "The weather has been terrible all week."). A post is a negative mention of a
  brand exactly when the sentence naming that brand is negative;
* repost: a quote of an earlier original post (``reposted #id from @author: "..."``), with
  no sentence of its own: never a mention, whatever it quotes and whenever it is dated;
* sponsored post (ad): a brand's own promotion, marked ``[Sponsored]``; its negative-sounding
  lines never criticise the brand it promotes; never a mention;
* no phrase of the sentence banks contains a brand's name or nickname, of any category,
  so a name in a post is always a mention of that brand; no rumour template exists;
* dates: the window is last week, Monday to Sunday; posts range from ``weeks`` weeks before
  it to today (the Monday after). Every edge of the window matters: any window one day off
  (either end moved either way, or the whole window moved) gives different counts
  (``pin_window_boundaries`` re-dates older negative posts onto the decisive days where the
  random feed did not already do it; a feed too small to have such posts may stay unpinned);
* no author posts the same text twice (a cross-post would read as one mention or two);
* re-surfaced post: the relevance-sorted feed shows some posts again on a later page (as
  trending feeds do), identical: same id, author, date and text. Counted once (the prompt
  says so): half of them are negative mentions inside the window, at least a third of the
  feed apart where the feed allows, so counting them twice fails, and telling them apart
  needs the ids noted far back.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import date, timedelta

CATEGORIES = [
    (
        "air fryers",
        [
            ("Lumora", ["Lumo", "LMR"]),
            ("Brightwave", ["BW", "Bwave"]),
            ("Kestrel", ["KST", "Kes"]),
            ("Ovenix", ["Ovnx", "OVX"]),
        ],
    ),
    (
        "robot vacuums",
        [
            ("Dustra", ["Dusty", "DST"]),
            ("Sweepio", ["Swp", "Sweepy"]),
            ("Tidybot", ["Tidy", "TDB"]),
            ("Vacuma", ["Vac", "VCM"]),
        ],
    ),
    (
        "wireless earbuds",
        [
            ("Sonaro", ["Sona", "SNR"]),
            ("Auralis", ["Aura", "ARL"]),
            ("Beatnik", ["Beat", "BNK"]),
            ("Pulsewave", ["Pulse", "PWV"]),
        ],
    ),
]
NEGATIVE = [
    "stopped working after {n} days",
    "broke down the second week",
    "is the worst purchase I made this year",
    "support ignored my ticket for {n} days",
    "overheated and smelled like burning plastic",
    "refund still not processed after {n} weeks",
    "never buying again",
    "app keeps crashing on login",
    "is a total waste of money",
    "arrived damaged and the replacement is faulty too",
]
POSITIVE = [
    "works perfectly, zero complaints",
    "is honestly great value",
    "exceeded my expectations",
    "battery lasts forever",
    "customer service sorted my question in minutes",
    "is my favourite gadget this month",
    "feels premium for the price",
    "setup took two minutes",
]
NEUTRAL = [
    "arrived today, will report back",
    "is on sale at the mall this weekend",
    "released a new colour",
    "vs the others: which one should I get?",
    "had a pop-up store downtown",
    "got a firmware update today",
]
FILLER = [
    "Delivery came on Tuesday.",
    "Anyone else?",
    "Long week honestly.",
    "The weather has been terrible all week.",
    "My neighbour's dog is the worst at 6am.",
    "Posting from the train.",
    "Thread below.",
    "Not sponsored btw.",
]
AD_LINES = [
    "Tired of gadgets that break after a week? {brand} is built to last. 30% off with code SPRING.",
    "{brand} official store: free shipping, 2-year warranty. Don't settle for the worst.",
    "Flash sale! {brand} bundles from $49. Limited stock.",
]
PLATFORMS = ["Weibo", "Tieba", "RedNote", "Douyin", "Zhihu", "Bilibili"]
HANDLES = [
    "ovenlover",
    "techtina",
    "mr_gadget",
    "kitchenqueen",
    "daily_deals",
    "dad_reviews",
    "nightowl",
    "li_wei",
    "xiaoyu",
    "budget_buyer",
    "unboxer",
    "hometech",
    "sam_k",
    "moonlight",
    "quietcoder",
    "annie_z",
]


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
    mentioned: tuple[str, ...] = ()  # brands an original post names (canonical names)


@dataclass(frozen=True)
class Feed:
    """One generated feed: the category, the three brands with their nicknames, the window and the items."""

    category: str
    brands: list[tuple[str, list[str]]]
    start: date
    end: date
    today: date
    items: list[Item]


def _post(rng: random.Random, brands: list, item_id: int, platform: str, author: str, when: str) -> Item:
    mentioned = rng.sample(brands, 2 if rng.random() < 0.18 else 1)
    sentences, negative = [], []
    if rng.random() < 0.4:
        sentences.append(rng.choice(FILLER))
    for brand, aliases in mentioned:
        name = rng.choice([brand, brand] + aliases)
        mood = rng.choices(["neg", "pos", "neu"], [0.38, 0.34, 0.28])[0]
        bank = {"neg": NEGATIVE, "pos": POSITIVE, "neu": NEUTRAL}[mood]
        sentences.append(f"{name} {rng.choice(bank).format(n=rng.randint(2, 9))}.")
        if mood == "neg":
            negative.append(brand)
    if rng.random() < 0.3:
        sentences.append(rng.choice(FILLER))
    return Item(
        "post",
        item_id,
        platform,
        author,
        when,
        " ".join(sentences),
        tuple(negative),
        rng.randrange(900),
        tuple(b for b, _ in mentioned),
    )


def resurfaced_count(pages: int) -> int:
    """How many posts the feed shows twice: one per 8 pages, at least one."""
    return max(1, pages // 8)


def generate_feed(rng: random.Random, pages: int, per_page: int, weeks: int, edges: random.Random) -> Feed:
    """The feed of ``pages`` x ``per_page`` items over ``weeks`` weeks before last week, last week and today."""
    category, pool = rng.choice(CATEGORIES)
    brands = rng.sample(pool, 3)
    today = date(2026, 1, 5) + timedelta(weeks=rng.randrange(40))  # a Monday
    start, end = today - timedelta(days=7), today - timedelta(days=1)
    first = start - timedelta(weeks=weeks)
    span = (today - first).days + 1
    repeats = min(resurfaced_count(pages), pages * per_page // 4)
    ids = rng.sample(range(100000, 999999), pages * per_page)
    items: list[Item] = []
    originals: list[Item] = []
    written: set[tuple[str, str]] = set()  # (author, text): nobody posts the same text twice
    for n in range(pages * per_page - 2 * repeats):
        day = first + timedelta(days=rng.randrange(span))
        when = f"{day.isoformat()} {rng.randrange(24):02d}:{rng.randrange(60):02d}"
        platform, author = rng.choice(PLATFORMS), f"{rng.choice(HANDLES)}{rng.randrange(10, 999)}"
        roll = rng.random()
        if roll < 0.08:
            brand = rng.choice(brands)[0]
            items.append(
                Item(
                    "ad",
                    ids[n],
                    platform,
                    f"{brand.lower().replace(' ', '')}_official",
                    when,
                    rng.choice(AD_LINES).format(brand=brand),
                    (),
                    rng.randrange(5000),
                )
            )
            continue
        if roll < 0.18 and originals:
            source = rng.choice(originals)
            items.append(
                Item(
                    "repost",
                    ids[n],
                    platform,
                    author,
                    when,
                    f"reposted #{source.id} from @{source.author}: \u201c{source.text}\u201d",
                    (),
                    rng.randrange(50),
                )
            )
            continue
        post = _post(rng, brands, ids[n], platform, author, when)
        while (post.author, post.text) in written:
            post = _post(rng, brands, ids[n], platform, f"{rng.choice(HANDLES)}{rng.randrange(10, 999)}", when)
        written.add((post.author, post.text))
        items.append(post)
        originals.append(post)
    items = pin_window_boundaries(items, [b for b, _ in brands], start, end, edges)
    items = resurface(items, repeats, start, end, per_page, edges)
    return Feed(category, [(b, list(a)) for b, a in brands], start, end, today, items)


def resurface(items: list[Item], repeats: int, start: date, end: date, per_page: int, rng: random.Random) -> list[Item]:
    """``items`` with ``repeats`` in-window negative posts and ``repeats`` other original posts shown again,
    each on a page at least a third of the feed after its first showing (or as far as the feed allows)."""
    items = list(items)
    low, high = start.isoformat(), end.isoformat()
    counted = [i for i in items if i.kind == "post" and i.negative and low <= i.when[:10] <= high]
    others = [i for i in items if i.kind == "post" and i not in counted]
    chosen = rng.sample(counted, min(repeats, len(counted))) + rng.sample(others, min(repeats, len(others)))
    pages = -(-(len(items) + len(chosen)) // per_page)
    for post in chosen:
        first_page = items.index(post) // per_page
        page = min(pages - 1, first_page + max(1, pages // 3) + rng.randrange(max(1, pages // 3)))
        position = min(len(items), page * per_page + rng.randrange(per_page))
        items.insert(max(position, items.index(post) + 1), post)
    return items


def negative_counts(items: list[Item], brands: list[str], start: date, end: date) -> dict[str, int]:
    """Per brand, the original posts dated from ``start`` to ``end`` (both included) negative about it,
    each post once (a re-surfaced post is the same post)."""
    low, high = start.isoformat(), end.isoformat()
    posts = {i.id: i for i in items if i.kind == "post"}.values()
    return {b: sum(1 for i in posts if b in i.negative and low <= i.when[:10] <= high) for b in brands}


def shifted_windows(start: date, end: date) -> dict[str, tuple[date, date]]:
    """The windows one day off ``start..end``: either end moved either way, or the whole window moved."""
    day = timedelta(days=1)
    return {
        "start-1": (start - day, end),
        "start+1": (start + day, end),
        "end-1": (start, end - day),
        "end+1": (start, end + day),
        "both-1": (start - day, end - day),
        "both+1": (start + day, end + day),
    }


def pin_window_boundaries(
    items: list[Item], brands: list[str], start: date, end: date, rng: random.Random
) -> list[Item]:
    """``items`` with, where needed, older negative posts re-dated onto the days at the window's edges so
    that every window one day off gives different counts (ignoring or misreading the window fails).

    A shifted window that gives the same counts is repaired on the day that decides it: the day
    before the window (``start-1``, ``both-1``), its first day (``start+1``), its last day
    (``end-1``) or the day after it (``end+1``, ``both+1``). The donors are original posts with
    a negative sentence dated before the day before the window; an instance that needs no repair
    is unchanged. With too few donors (tiny feeds) it stops repairing.
    """
    day = timedelta(days=1)
    decisive = {
        "start-1": start - day,
        "both-1": start - day,
        "start+1": start,
        "end-1": end,
        "end+1": end + day,
        "both+1": end + day,
    }
    items = list(items)
    before = (start - day).isoformat()
    donors = [n for n, i in enumerate(items) if i.kind == "post" and i.negative and i.when[:10] < before]
    rng.shuffle(donors)
    while donors:
        truth = negative_counts(items, brands, start, end)
        same = [
            name
            for name, (a, b) in shifted_windows(start, end).items()
            if negative_counts(items, brands, a, b) == truth
        ]
        if not same:
            break
        n = donors.pop()
        items[n] = replace(items[n], when=decisive[same[0]].isoformat() + items[n].when[10:])
    return items

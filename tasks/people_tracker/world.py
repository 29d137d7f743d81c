"""The world of ``people_tracker``: people, their employer moves and the web pages about them.

Every template and the rule that makes it correct in its own context is in tasks/README.md (people_tracker).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Protocol

FIRST = [
    "Dana",
    "Ilya",
    "Mira",
    "Tomas",
    "Priya",
    "Kenji",
    "Sofia",
    "Marcus",
    "Lena",
    "Arjun",
    "Chloe",
    "Viktor",
    "Nadia",
    "Oren",
    "Hana",
    "Felix",
    "Ines",
    "Rafael",
    "Yuki",
    "Greta",
]
LAST = [
    "Whitfield",
    "Sutskov",
    "Okafor",
    "Lindqvist",
    "Raman",
    "Takeda",
    "Moretti",
    "Brennan",
    "Kovac",
    "Haddad",
    "Duarte",
    "Nakamura",
    "Ferreira",
    "Volkov",
    "Achebe",
    "Larsen",
    "Castillo",
    "Weiss",
    "Mbeki",
    "Novak",
]
COMPANIES = [
    "Orbital Labs",
    "Nimbus AI",
    "Helix Robotics",
    "Quanta Systems",
    "Ember Compute",
    "Polaris Research",
    "Vector Dynamics",
    "Lattice AI",
    "Cobalt Cloud",
    "Meridian Health AI",
    "Atlas Foundry",
    "Sable Security",
    "Northstar Capital",
    "Kite Mobility",
    "Prism Analytics",
    "Harbor Biotech",
]
ROLES = [
    "chief scientist",
    "head of research",
    "VP of engineering",
    "chief technology officer",
    "research director",
    "head of safety",
    "principal engineer",
    "chief operating officer",
]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
BROWSER_CALLS = 4  # the search and browsing API's documented calls per turn: ``max_calls_per_turn``
SITES = ["technews.example", "bizwire.example", "aiinsider.example", "dailyledger.example", "whoswho.example"]

# Fact sentences (the policy's parser mirrors these).
MOVE_TEMPLATES = [
    "{name} left {frm} in {when} to join {to} as {role}.",
    "In {when}, {name} moved from {frm} to {to}, where the new role is {role}.",
    "{to} announced in {when} that it had hired {name}, formerly of {frm}, as {role}.",
]
DENIAL = (
    "Reports in {when} that {name} had left {frm} to join {to} were false: {to} denied that it had hired "
    "{name}, and {name} never joined {to}."
)
DENIAL_PATTERN = re.compile(
    r"that (?P<name>[A-Z][a-z]+ [A-Z][a-z]+) had left [A-Z][\w ]+? to join (?P<to>[A-Z][\w ]+?) "
    r"were false: (?P=to) denied"
)
SPOKE = "{name} spoke at the {event} in {when} about scaling research teams."
MOVE_PATTERNS = [
    re.compile(
        r"(?P<name>[A-Z][a-z]+ [A-Z][a-z]+) left (?P<frm>[A-Z][\w ]+?) in (?P<when>[A-Z][a-z]+ \d{4}) "
        r"to join (?P<to>[A-Z][\w ]+?) as "
    ),
    re.compile(
        r"In (?P<when>[A-Z][a-z]+ \d{4}), (?P<name>[A-Z][a-z]+ [A-Z][a-z]+) moved from (?P<frm>[A-Z][\w ]+?) "
        r"to (?P<to>[A-Z][\w ]+?), where"
    ),
    re.compile(
        r"(?P<to>[A-Z][\w ]+?) announced in (?P<when>[A-Z][a-z]+ \d{4}) "
        r"that it had hired (?P<name>[A-Z][a-z]+ [A-Z][a-z]+), formerly of"
    ),
]
NOISE = [
    (
        "We use cookies to improve your experience. By continuing you accept our cookie policy. "
        "[Accept all] [Manage preferences]"
    ),
    "Home · World · Business · Technology · Markets · Opinion · Video · Podcasts · Newsletters · Subscribe",
    "ADVERTISEMENT — Upgrade your cloud bill: save 40% on GPU hours with SpotCompute. Terms apply.",
    "Related: The ten most influential labs of the decade · Why compute is the new oil · Inside the talent wars",
    "Sign up for The Briefing: the five stories you need every morning, free in your inbox. [Email address] [Sign up]",
    (
        "Trending now: Chip export rules tighten again · Startups race to hire safety researchers · "
        "Is the AI bubble deflating?"
    ),
    "Share this article: X · LinkedIn · Facebook · Email · Copy link        Reading time: 6 min",
    "Comments (214) — Sort by: Top | Newest. Community guidelines apply. Log in to join the discussion.",
    "© 2026 Example Media Group. All rights reserved. About · Careers · Contact · Privacy · Accessibility · Sitemap",
    "Market snapshot: NDX +0.8% · SOX +1.4% · BTC −0.6% · 10Y 4.12% · Data delayed 15 minutes.",
    "ADVERTISEMENT — Meet Nova, the laptop built for builders. Preorder today and get a free dock.",
    "Editor's picks: A day in the life of a data-centre technician · The quiet return of symbolic AI",
]
FILLER = [
    (
        "The industry has seen an unusual number of senior departures this year, "
        "with labs competing for a small pool of people."
    ),
    "Analysts say compensation packages for top researchers now routinely include multi-year equity grants.",
    "Neither company commented on the financial terms of the arrangement.",
    "Colleagues describe a hands-on leader who still reviews code and papers personally.",
    "The move comes as several labs reorganise their research divisions around product teams.",
    "Recruiters told us the market for senior talent remains tight despite the broader slowdown.",
    "Earlier in the career came a doctorate in machine learning and a stint in academia.",
    "The team reportedly grew from twelve to more than eighty people within two years.",
]
HEADLINES = [
    "{c} raises ${n}M to expand its research team",
    "{c} opens a new lab in {city}",
    "Inside {c}'s plan to double its compute by next year",
    "{c} cuts {n} jobs in restructuring",
    "Why {c} is betting on smaller models",
    "{c} and {d} sign a multi-year cloud deal",
    "{c} shareholders approve new board",
    "Former {c} staff launch a stealth startup",
]
CITIES = ["London", "Zurich", "Toronto", "Singapore", "Austin", "Paris", "Seoul", "Tel Aviv"]
COMMENTS = [
    "Big loss for {c}, honestly.",
    "This industry is a merry-go-round.",
    "Source? Feels like PR.",
    "Good for them. {c} was a mess anyway.",
    "Paywall again...",
    "Who's next?",
]
EVENTS = ["NeurIPS keynote", "Web Summit", "AI Safety Forum", "Compute Conference", "Founders Dinner"]


@dataclass(frozen=True)
class Move:
    """One true employer change."""

    person: str
    month: str  # YYYY-MM
    frm: str
    to: str
    role: str


@dataclass(frozen=True)
class Page:
    """One web page."""

    url: str
    title: str
    names: tuple[str, ...]  # full names mentioned (for search)
    body: str


def _when(month: str) -> str:
    year, mm = month.split("-")
    return f"{MONTHS[int(mm) - 1]} {year}"


def month_of(when: str) -> str | None:
    """``YYYY-MM`` of a written month (``May 2024``), ``None`` when it is not one."""
    parts = when.split()
    if len(parts) == 2 and parts[0] in MONTHS and parts[1].isdigit():
        return f"{parts[1]}-{MONTHS.index(parts[0]) + 1:02d}"
    return None


def _employer_at(own: list["Move"], month: str) -> str:
    """The person's employer in ``month`` (their moves sorted by month)."""
    employer = own[0].frm
    for move in own:
        if move.month <= month:
            employer = move.to
    return employer


def _late_roundup_people(names: list[str]) -> list[tuple[str, list[str]]]:
    """Who each late round-up is about: (an early person whose DENIED move it reports, the late people in its headline).

    The early people are the first third of the prompt's order (at least one), the headline people the last
    two (one when there are only two people): the agent reads the denial while tracking the early person and
    the round-up only when it reaches the late ones, so the denial is far back by then.
    """
    if len(names) < 2:
        return []
    early = names[: max(1, len(names) // 3)]
    late = names[-2:] if len(names) >= 4 else names[-1:]
    return [(person, late) for person in early]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


class Knobs(Protocol):
    """The size knobs generation reads (``PeopleTracker``'s)."""

    people: int
    moves: int
    roundups: int
    noise: int


def generate_world(knobs: Knobs, seed: int) -> tuple[list[str], list[Move], list[Page]]:
    """The tracked names, their true moves and every web page for ``seed`` (deterministic)."""
    return WorldBuilder(knobs, random.Random(f"people_tracker:{seed}")).build()


class WorldBuilder:
    """Builds one world step by step from one seeded generator (the order of the draws is the world's)."""

    def __init__(self, knobs: Knobs, rng: random.Random) -> None:
        self.knobs = knobs
        self.rng = rng
        self.pages: list[Page] = []
        self.denied: list[Move] = []  # per person, the reported move its own gossip page denies

    def build(self) -> tuple[list[str], list[Move], list[Page]]:
        """Names, their moves, then per person its pages, then the round-ups and the late round-ups."""
        names = self.names()
        moves = [move for name in names for move in self.career(name)]
        for index, name in enumerate(names):
            own = [m for m in moves if m.person == name]
            self.move_pages(name, own)
            self.profile_page(name, own)
            self.gossip_page(name, own)
            self.twin_page(name, index)
        self.roundups(moves)
        self.late_roundups(names, moves)
        return names, moves, self.pages

    def names(self) -> list[str]:
        """The tracked people (first and last names drawn without repeats)."""
        self.firsts = self.rng.sample(FIRST, self.knobs.people)
        self.lasts = self.rng.sample(LAST, self.knobs.people)
        return [f"{first} {last}" for first, last in zip(self.firsts, self.lasts, strict=False)]

    def career(self, name: str) -> list[Move]:
        """One person's true moves, in month order, each from the company the last one joined."""
        rng = self.rng
        count = rng.randint(1, self.knobs.moves)
        months = sorted(rng.sample([f"{y}-{m:02d}" for y in range(2018, 2026) for m in range(1, 13)], count))
        employer = rng.choice(COMPANIES)
        moves = []
        for month in months:
            to = rng.choice([c for c in COMPANIES if c != employer])
            moves.append(Move(name, month, employer, to, rng.choice(ROLES)))
            employer = to
        return moves

    def page(self, url: str, title: str, mentioned: list[str], facts: list[str]) -> Page:
        """A noisy web page around ``facts``: boilerplate, filler, related links and reader comments."""
        rng, noise_count = self.rng, self.knobs.noise
        noise = rng.sample(NOISE, min(noise_count, len(NOISE)))
        paragraphs = facts + rng.sample(FILLER, min(len(FILLER), 3 + rng.randrange(3)))
        rng.shuffle(paragraphs)
        cut = len(noise) // 2
        related = ["Related links:"] + [
            "  · "
            + rng.choice(HEADLINES).format(
                c=rng.choice(COMPANIES), d=rng.choice(COMPANIES), n=rng.randint(20, 900), city=rng.choice(CITIES)
            )
            + f" — https://{rng.choice(SITES[:4])}/{rng.randint(2019, 2026)}/{rng.randrange(10**6):06d}"
            for _ in range(noise_count)
        ]
        comments = ["Reader comments:"] + [
            f"  @{rng.choice(FIRST).lower()}{rng.randint(1, 99)}: "
            + rng.choice(COMMENTS).format(c=rng.choice(COMPANIES), name=rng.choice(mentioned))
            for _ in range(max(1, noise_count // 2))
        ]
        body = (
            noise[:cut]
            + [f"# {title}", f"By staff reporter · {rng.randint(2, 9)} min read"]
            + paragraphs
            + ["\n".join(related)]
            + noise[cut:]
            + ["\n".join(comments)]
        )
        return Page(url, title, tuple(mentioned), "\n\n".join(body))

    def move_sentence(self, move: Move) -> str:
        """One of the move templates, filled in."""
        return self.rng.choice(MOVE_TEMPLATES).format(
            name=move.person, frm=move.frm, to=move.to, when=_when(move.month), role=move.role
        )

    def move_pages(self, name: str, own: list[Move]) -> None:
        """A news page per true move."""
        for move in own:
            site = self.rng.choice(SITES[:4])
            url = f"https://{site}/{move.month[:4]}/{_slug(name)}-joins-{_slug(move.to)}"
            self.pages.append(self.page(url, f"{name} joins {move.to}", [name], [self.move_sentence(move)]))

    def profile_page(self, name: str, own: list[Move]) -> None:
        """A profile, possibly out of date (its last move missing), with a talk that is not a move."""
        rng = self.rng
        shown = own[: max(1, len(own) - 1)] if rng.random() < 0.5 else own
        timeline = [self.move_sentence(m) for m in shown]
        timeline.append(SPOKE.format(name=name, event=rng.choice(EVENTS), when=_when(rng.choice(own).month)))
        self.pages.append(
            self.page(
                f"https://whoswho.example/people/{_slug(name)}",
                f"{name} — profile (last updated {shown[-1].month[:4]})",
                [name],
                timeline,
            )
        )

    def gossip_page(self, name: str, own: list[Move]) -> None:
        """A rumour of a move to a company the person never worked for, denied explicitly on the page."""
        rng = self.rng
        fake_month = f"{rng.randint(2018, 2025)}-{rng.randint(1, 12):02d}"
        employer = _employer_at(own, fake_month)
        fake_to = rng.choice([c for c in COMPANIES if c not in {m.to for m in own} | {m.frm for m in own}])
        self.denied.append(Move(name, fake_month, employer, fake_to, rng.choice(ROLES)))
        facts = [DENIAL.format(name=name, frm=employer, to=fake_to, when=_when(fake_month))]
        if rng.random() < 0.5:
            facts.append(self.move_sentence(rng.choice(own)))
        self.pages.append(
            self.page(
                f"https://{rng.choice(SITES[:4])}/gossip/{_slug(name)}-{_slug(fake_to)}-rumour",
                f"Is {name} heading to {fake_to}?",
                [name],
                facts,
            )
        )

    def twin_page(self, name: str, index: int) -> None:
        """A similar name (other first or last name, alternately) with a move or a talk of its own."""
        rng = self.rng
        first, last = name.split()
        twin = (
            f"{rng.choice([f for f in FIRST if f not in self.firsts])} {last}"
            if index % 2
            else f"{first} {rng.choice([surname for surname in LAST if surname not in self.lasts])}"
        )
        twin_move = Move(
            twin,
            f"{rng.randint(2018, 2025)}-{rng.randint(1, 12):02d}",
            rng.choice(COMPANIES),
            rng.choice(COMPANIES),
            rng.choice(ROLES),
        )
        if twin_move.frm != twin_move.to:
            facts = [self.move_sentence(twin_move)]
        else:
            facts = [SPOKE.format(name=twin, event=rng.choice(EVENTS), when=_when(twin_move.month))]
        self.pages.append(
            self.page(f"https://{rng.choice(SITES[:4])}/people/{_slug(twin)}", f"{twin}: a profile", [twin], facts)
        )

    def roundups(self, moves: list[Move]) -> None:
        """Round-up pages restating a few true moves each."""
        for r in range(self.knobs.roundups):
            chosen = self.rng.sample(moves, min(3, len(moves)))
            facts = [self.move_sentence(m) for m in chosen]
            self.pages.append(
                self.page(
                    f"https://{self.rng.choice(SITES[:4])}/features/talent-roundup-{r + 1}",
                    f"Talent round-up #{r + 1}: who went where",
                    [m.person for m in chosen],
                    facts,
                )
            )

    def late_roundups(self, names: list[str], moves: list[Move]) -> None:
        """Round-ups headlined by late people that report an early person's denied move as a move."""
        for r, (early, late) in enumerate(_late_roundup_people(names)):
            report = self.denied[names.index(early)]
            headline = [m for person in late for m in moves if m.person == person][: len(late) + 1]
            facts = [self.move_sentence(report)] + [self.move_sentence(m) for m in headline]
            url = f"https://{self.rng.choice(SITES[:4])}/features/who-went-where-{_slug(report.month)}-{r + 1}"
            self.pages.append(self.page(url, f"Who went where: {' and '.join(late)} on the move", list(late), facts))

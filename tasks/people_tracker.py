"""``people_tracker``: track who moved to which employer, and when (seed 002, experiment 2-10).

``people`` people (knob) change employers one to ``moves`` times between 2018 and 2025.
The agent finds them with ``search(query)`` (a results page: titles, URLs, snippets, ads)
and reads ``open_page(url)``: long, noisy web pages (navigation, cookie banner, ads,
related links, newsletter box, footer) with a few fact sentences each. Pages: a profile
per person (its timeline may be out of date), one news article per move, a page with a
rumour that was explicitly denied, a page about someone with a similar name, and
``roundups`` industry round-ups that repeat several people's moves. Every true move is on
at least one page that a search for the person returns.

Answer: ``submit(moves=[{"person": name, "month": "YYYY-MM", "company": employer joined}, ...])``,
one entry per move (the company is the employer the person JOINED; the one they left is
not asked for). Grade: success = the exact set of (person, month, company), compared
case- and space-insensitively; score = F1, so a move whose month or company was lost (a
summary that wrote "X left" instead of "X left Y in May 2024 to join Z") costs score.

Reference policy: takes the people in the prompt's order; for each one it searches the
full name, opens every result not yet opened, and after each page writes
``Notes on URL: ...`` with the moves of tracked people found there (exact names only: a
similar name is someone else; denied rumours are not moves), recites ``Moves so far`` and
``Progress: done ...; current NAME; opened ...; remaining ...``. When the search results of
the current person are no longer visible it searches again; a page it opened is never
re-opened while the progress line lists it.

Reference summary (lossy, documented): keeps the moves already noted, with month and
company, and the progress line; raw page facts not yet noted (a page read right before
the summary) are lost, and so are the pages themselves.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

from tasks.base import Grade, TaskFamily, TaskInstance, ToolResult, tool_schema
from tasks.kit.limits import limit_sentence, within_limit
from tasks.policy_kit import (REPORT_PREFIX, deferred_args, delegation_failed, exchanges, format_summary, latest_results,
                              make_call, rate_limited_notes, real_failures, reply, submit, texts, tool_texts, tools_used)

FIRST = ["Dana", "Ilya", "Mira", "Tomas", "Priya", "Kenji", "Sofia", "Marcus", "Lena", "Arjun", "Chloe", "Viktor",
         "Nadia", "Oren", "Hana", "Felix", "Ines", "Rafael", "Yuki", "Greta"]
LAST = ["Whitfield", "Sutskov", "Okafor", "Lindqvist", "Raman", "Takeda", "Moretti", "Brennan", "Kovac", "Haddad",
        "Duarte", "Nakamura", "Ferreira", "Volkov", "Achebe", "Larsen", "Castillo", "Weiss", "Mbeki", "Novak"]
COMPANIES = ["Orbital Labs", "Nimbus AI", "Helix Robotics", "Quanta Systems", "Ember Compute", "Polaris Research",
             "Vector Dynamics", "Lattice AI", "Cobalt Cloud", "Meridian Health AI", "Atlas Foundry", "Sable Security",
             "Northstar Capital", "Kite Mobility", "Prism Analytics", "Harbor Biotech"]
ROLES = ["chief scientist", "head of research", "VP of engineering", "chief technology officer", "research director",
         "head of safety", "principal engineer", "chief operating officer"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
BROWSER_CALLS = 4  # the search and browsing API's documented calls per turn: ``max_calls_per_turn`` (issue 13 §1)
SITES = ["technews.example", "bizwire.example", "aiinsider.example", "dailyledger.example", "whoswho.example"]

# Fact sentences (the policy's parser mirrors these).
MOVE_TEMPLATES = [
    "{name} left {frm} in {when} to join {to} as {role}.",
    "In {when}, {name} moved from {frm} to {to}, where the new role is {role}.",
    "{to} announced in {when} that it had hired {name}, formerly of {frm}, as {role}.",
]
DENIAL = ("Reports in {when} that {name} had left {frm} to join {to} were false: {to} denied that it had hired "
          "{name}, and {name} never joined {to}.")
DENIAL_PATTERN = re.compile(r"that (?P<name>[A-Z][a-z]+ [A-Z][a-z]+) had left [A-Z][\w ]+? to join (?P<to>[A-Z][\w ]+?) "
                            r"were false: (?P=to) denied")
SPOKE = "{name} spoke at the {event} in {when} about scaling research teams."
MOVE_PATTERNS = [
    re.compile(r"(?P<name>[A-Z][a-z]+ [A-Z][a-z]+) left (?P<frm>[A-Z][\w ]+?) in (?P<when>[A-Z][a-z]+ \d{4}) to join (?P<to>[A-Z][\w ]+?) as "),
    re.compile(r"In (?P<when>[A-Z][a-z]+ \d{4}), (?P<name>[A-Z][a-z]+ [A-Z][a-z]+) moved from (?P<frm>[A-Z][\w ]+?) to (?P<to>[A-Z][\w ]+?), where"),
    re.compile(r"(?P<to>[A-Z][\w ]+?) announced in (?P<when>[A-Z][a-z]+ \d{4}) that it had hired (?P<name>[A-Z][a-z]+ [A-Z][a-z]+), formerly of"),
]
NOISE = [
    "We use cookies to improve your experience. By continuing you accept our cookie policy. [Accept all] [Manage preferences]",
    "Home · World · Business · Technology · Markets · Opinion · Video · Podcasts · Newsletters · Subscribe",
    "ADVERTISEMENT — Upgrade your cloud bill: save 40% on GPU hours with SpotCompute. Terms apply.",
    "Related: The ten most influential labs of the decade · Why compute is the new oil · Inside the talent wars",
    "Sign up for The Briefing: the five stories you need every morning, free in your inbox. [Email address] [Sign up]",
    "Trending now: Chip export rules tighten again · Startups race to hire safety researchers · Is the AI bubble deflating?",
    "Share this article: X · LinkedIn · Facebook · Email · Copy link        Reading time: 6 min",
    "Comments (214) — Sort by: Top | Newest. Community guidelines apply. Log in to join the discussion.",
    "© 2026 Example Media Group. All rights reserved. About · Careers · Contact · Privacy · Accessibility · Sitemap",
    "Market snapshot: NDX +0.8% · SOX +1.4% · BTC −0.6% · 10Y 4.12% · Data delayed 15 minutes.",
    "ADVERTISEMENT — Meet Nova, the laptop built for builders. Preorder today and get a free dock.",
    "Editor's picks: A day in the life of a data-centre technician · The quiet return of symbolic AI",
]
FILLER = [
    "The industry has seen an unusual number of senior departures this year, with labs competing for a small pool of people.",
    "Analysts say compensation packages for top researchers now routinely include multi-year equity grants.",
    "Neither company commented on the financial terms of the arrangement.",
    "Colleagues describe a hands-on leader who still reviews code and papers personally.",
    "The move comes as several labs reorganise their research divisions around product teams.",
    "Recruiters told us the market for senior talent remains tight despite the broader slowdown.",
    "Earlier in the career came a doctorate in machine learning and a stint in academia.",
    "The team reportedly grew from twelve to more than eighty people within two years.",
]
HEADLINES = ["{c} raises ${n}M to expand its research team", "{c} opens a new lab in {city}",
             "Inside {c}'s plan to double its compute by next year", "{c} cuts {n} jobs in restructuring",
             "Why {c} is betting on smaller models", "{c} and {d} sign a multi-year cloud deal",
             "{c} shareholders approve new board", "Former {c} staff launch a stealth startup"]
CITIES = ["London", "Zurich", "Toronto", "Singapore", "Austin", "Paris", "Seoul", "Tel Aviv"]
COMMENTS = ["Big loss for {c}, honestly.", "This industry is a merry-go-round.",
            "Source? Feels like PR.", "Good for them. {c} was a mess anyway.", "Paywall again...", "Who's next?"]
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


def _month(when: str) -> str | None:
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
    the round-up only when it reaches the late ones, so the denial is far back by then (issue 13 §2).
    """
    if len(names) < 2:
        return []
    early = names[: max(1, len(names) // 3)]
    late = names[-2:] if len(names) >= 4 else names[-1:]
    return [(person, late) for person in early]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _norm(text: str) -> str:
    return " ".join(str(text).lower().split())


class PeopleTracker(TaskFamily):
    """Family generator. Knobs: ``people``, ``moves`` (max moves per person), ``roundups``
    (industry round-up pages) and ``noise`` (per page: up to 12 boilerplate blocks, ``noise``
    related links and ``noise // 2`` reader comments)."""

    name = "people_tracker"

    def __init__(self, people: int = 7, moves: int = 3, roundups: int = 2, noise: int = 20) -> None:
        self.people = self.check_knob("people", people, 1, 18)
        self.moves = self.check_knob("moves", moves, 1, 6)
        self.roundups = self.check_knob("roundups", roundups, 0, 6)
        self.noise = self.check_knob("noise", noise, 0, 60)

    def generate(self, seed: int) -> "PeopleTrackerInstance":
        """Generate the people, their moves and the web pages for ``seed``."""
        rng = random.Random(f"people_tracker:{seed}")
        firsts, lasts = rng.sample(FIRST, self.people), rng.sample(LAST, self.people)
        names = [f"{f} {l}" for f, l in zip(firsts, lasts)]
        moves: list[Move] = []
        for name in names:
            count = rng.randint(1, self.moves)
            months = sorted(rng.sample([f"{y}-{m:02d}" for y in range(2018, 2026) for m in range(1, 13)], count))
            employer = rng.choice(COMPANIES)
            for month in months:
                to = rng.choice([c for c in COMPANIES if c != employer])
                moves.append(Move(name, month, employer, to, rng.choice(ROLES)))
                employer = to
        pages: list[Page] = []
        denied: list[Move] = []  # per person, the reported move its own gossip page denies

        def boiler() -> list[str]:
            return rng.sample(NOISE, min(self.noise, len(NOISE)))

        def page(url: str, title: str, mentioned: list[str], facts: list[str]) -> Page:
            noise = boiler()
            paragraphs = facts + rng.sample(FILLER, min(len(FILLER), 3 + rng.randrange(3)))
            rng.shuffle(paragraphs)
            cut = len(noise) // 2
            related = ["Related links:"] + [
                f"  · {rng.choice(HEADLINES).format(c=rng.choice(COMPANIES), d=rng.choice(COMPANIES), n=rng.randint(20, 900), city=rng.choice(CITIES))}"
                f" — https://{rng.choice(SITES[:4])}/{rng.randint(2019, 2026)}/{rng.randrange(10**6):06d}" for _ in range(self.noise)]
            comments = ["Reader comments:"] + [
                f"  @{rng.choice(FIRST).lower()}{rng.randint(1, 99)}: "
                + rng.choice(COMMENTS).format(c=rng.choice(COMPANIES), name=rng.choice(mentioned))
                for _ in range(max(1, self.noise // 2))]
            body = (noise[:cut] + [f"# {title}", f"By staff reporter · {rng.randint(2, 9)} min read"] + paragraphs
                    + ["\n".join(related)] + noise[cut:] + ["\n".join(comments)])
            return Page(url, title, tuple(mentioned), "\n\n".join(body))

        def move_sentence(move: Move) -> str:
            return rng.choice(MOVE_TEMPLATES).format(name=move.person, frm=move.frm, to=move.to, when=_when(move.month),
                                                     role=move.role)

        for index, name in enumerate(names):
            own = [m for m in moves if m.person == name]
            for move in own:
                site = rng.choice(SITES[:4])
                url = f"https://{site}/{move.month[:4]}/{_slug(name)}-joins-{_slug(move.to)}"
                pages.append(page(url, f"{name} joins {move.to}", [name], [move_sentence(move)]))
            shown = own[: max(1, len(own) - 1)] if rng.random() < 0.5 else own
            timeline = [move_sentence(m) for m in shown]
            timeline.append(SPOKE.format(name=name, event=rng.choice(EVENTS), when=_when(rng.choice(own).month)))
            pages.append(page(f"https://whoswho.example/people/{_slug(name)}", f"{name} — profile (last updated "
                              f"{shown[-1].month[:4]})", [name], timeline))
            fake_month = f"{rng.randint(2018, 2025)}-{rng.randint(1, 12):02d}"
            employer = _employer_at(own, fake_month)
            fake_to = rng.choice([c for c in COMPANIES if c not in {m.to for m in own} | {m.frm for m in own}])
            denied.append(Move(name, fake_month, employer, fake_to, rng.choice(ROLES)))
            facts = [DENIAL.format(name=name, frm=employer, to=fake_to, when=_when(fake_month))]
            if rng.random() < 0.5:
                facts.append(move_sentence(rng.choice(own)))
            pages.append(page(f"https://{rng.choice(SITES[:4])}/gossip/{_slug(name)}-{_slug(fake_to)}-rumour",
                              f"Is {name} heading to {fake_to}?", [name], facts))
            first, last = name.split()
            twin = f"{rng.choice([f for f in FIRST if f not in firsts])} {last}" if index % 2 else \
                f"{first} {rng.choice([l for l in LAST if l not in lasts])}"
            twin_move = Move(twin, f"{rng.randint(2018, 2025)}-{rng.randint(1, 12):02d}", rng.choice(COMPANIES),
                             rng.choice(COMPANIES), rng.choice(ROLES))
            if twin_move.frm != twin_move.to:
                facts = [move_sentence(twin_move)]
            else:
                facts = [SPOKE.format(name=twin, event=rng.choice(EVENTS), when=_when(twin_move.month))]
            pages.append(page(f"https://{rng.choice(SITES[:4])}/people/{_slug(twin)}", f"{twin}: a profile", [twin], facts))
        for r in range(self.roundups):
            chosen = rng.sample(moves, min(3, len(moves)))
            facts = [move_sentence(m) for m in chosen]
            pages.append(page(f"https://{rng.choice(SITES[:4])}/features/talent-roundup-{r + 1}",
                              f"Talent round-up #{r + 1}: who went where", [m.person for m in chosen], facts))
        for r, (early, late) in enumerate(_late_roundup_people(names)):
            report = denied[names.index(early)]
            headline = [m for person in late for m in moves if m.person == person][: len(late) + 1]
            facts = [move_sentence(report)] + [move_sentence(m) for m in headline]
            pages.append(page(f"https://{rng.choice(SITES[:4])}/features/who-went-where-{_slug(report.month)}-{r + 1}",
                              f"Who went where: {' and '.join(late)} on the move",
                              list(late), facts))
        return PeopleTrackerInstance(self, seed, names, moves, pages)


class PeopleTrackerInstance(TaskInstance):
    """One generated set of people and pages."""

    family = PeopleTracker.name

    def __init__(self, family: PeopleTracker, seed: int, names: list[str], moves: list[Move], pages: list[Page]) -> None:
        self.seed = seed
        self.id = f"people_tracker-n{family.people}-s{seed}"
        self.names = names
        self.moves = moves
        self.pages = {p.url: p for p in pages}
        self.max_calls_per_turn = BROWSER_CALLS
        self.system_prompt = (
            "You are a research agent that tracks executive moves for an investor newsletter. You work only "
            "through the tools you are given. Every fact needs its month and company: \"X left\" is useless, "
            "\"X left A in May 2024 to join B\" is a fact. When you are done, call submit."
        )
        self.user_prompt = (
            f"Track these people: {'; '.join(names)}. For each one, find every employer change since 2018: the "
            "month (YYYY-MM) and the company they joined. Use search(query) and open_page(url). Beware of people "
            "with similar names (a different first or last name is a different person) and of rumours that were "
            "denied (a move that the company or the person denied did not happen, even where another page "
            "reports it). Submit every move with "
            "submit(moves=[{\"person\": full name, \"month\": \"YYYY-MM\", \"company\": company joined}, ...]). "
            + limit_sentence(BROWSER_CALLS, "search or open_page calls")
        )
        self.tools = [
            tool_schema("search", "Web search. Returns titles, URLs and snippets.",
                        {"query": {"type": "string", "description": "search terms"}}),
            tool_schema("open_page", "Open a web page by URL and return its text.",
                        {"url": {"type": "string", "description": "a URL from the search results"}}),
        ]
        self.answer_schema = {
            "type": "object",
            "properties": {"moves": {"type": "array", "description": "one entry per employer change", "items": {
                "type": "object", "properties": {"person": {"type": "string"}, "month": {"type": "string"},
                                                 "company": {"type": "string"}},
                "required": ["person", "month", "company"]}}},
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
                tokens = {t for n in page.names for t in n.lower().split()} | set(re.findall(r"[a-z]+", page.title.lower()))
                score = len(words & tokens)
                if score:
                    scored.append((-score, page.url, page))
            scored.sort()
            lines = [f"Search results for \"{query.strip()}\" · about {len(scored) * 1370:,} results (0.41 s)",
                     "Ad · SpotCompute — GPU hours from $0.39 · spotcompute.example", ""]
            for _, url, page in scored[:20]:
                snippet = re.sub(r"\s+", " ", next((p for p in page.body.split("\n\n") if p.startswith(tuple(FILLER))), ""))
                lines += [page.title, f"  {url}", f"  {snippet[:150]}", ""]
            if not scored:
                lines.append("No results. Try different keywords.")
            lines.append("People also ask: Who left OpenAI in 2024? · Which labs are hiring? · What is a chief scientist?")
            return ToolResult("\n".join(lines), resource=f"search:{' '.join(sorted(words))}")
        if name == "open_page":
            url = args.get("url")
            if not isinstance(url, str) or not url.strip():
                return ToolResult("ERROR: open_page needs a url string from the search results", is_error=True)
            page = self.pages.get(url.strip())
            if page is None:
                return ToolResult(f"ERROR: 404 Not Found: {url!r} (use a URL exactly as the search results show it)",
                                  is_error=True)
            return ToolResult(f"<page url=\"{page.url}\">\n{page.body}\n</page>", resource=page.url)
        return ToolResult(f"ERROR: unknown tool {name!r}; available: search, open_page", is_error=True)

    def grade(self, answer: dict) -> Grade:
        """Exact set of (person, month, company) for success; F1 for the score."""
        raw = answer.get("moves") if isinstance(answer, dict) else None
        given: set[tuple[str, str, str]] = set()
        if isinstance(raw, list):
            for item in raw:
                if isinstance(item, dict) and all(isinstance(item.get(k), str) for k in ("person", "month", "company")):
                    given.add((_norm(item["person"]), item["month"].strip(), _norm(item["company"])))
        truth = {(_norm(m.person), m.month, _norm(m.to)) for m in self.moves}
        hits = len(given & truth)
        precision = hits / len(given) if given else 0.0
        recall = hits / len(truth) if truth else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return Grade(given == truth, round(f1, 4), {"expected": len(truth), "given": len(given), "correct": hits,
                                                     "missed": sorted(" | ".join(t) for t in truth - given),
                                                     "wrong": sorted(" | ".join(t) for t in given - truth)})

    def reference_policy(self) -> "TrackerPolicy":
        """The careful researcher."""
        return TrackerPolicy()

    def data_fingerprint(self) -> list:
        """The people, their moves and every page."""
        return [self.names, [vars(m) for m in self.moves], [vars(p) for p in self.pages.values()]]


# --- reference policy ------------------------------------------------------------------------------------------

PAGE_URL = re.compile(r'^<page url="([^"]+)">')
SEARCH_HEADER = re.compile(r'^Search results for "([^"]+)"')
RESULT_URL = re.compile(r"^  (https://\S+)$", re.M)
NOTE = re.compile(r"Notes on (https://\S+):")
MOVE_ITEM = re.compile(r"([A-Z][a-z]+ [A-Z][a-z]+) (\d{4}-\d{2}) ([A-Z][\w ]+?)(?:;|$)")
MOVES_LINE = re.compile(r"(?:Moves so far|Moves noted): ([^\n]*)")
NOTE_LINE = re.compile(r"Notes on https://\S+: ([^\n]*)")
DENIED_NOTE = re.compile(r"denied: ([A-Z][a-z]+ [A-Z][a-z]+) joining ([A-Z][\w ]+?) \(not a move\)")
PROGRESS = re.compile(r"Progress: done: ([^;\n]*); current: ([^;\n]*); opened: ([^;\n]*); remaining: ([^\n]*)")
PEOPLE_PROMPT = re.compile(r"Track these people: ([^.]*)\.")
# delegation (strategy ``isolate``): one sub-agent per person
SUBTASK_PROMPT = re.compile(r"Track this person: ([^.]*)\.")
REPORT_TRACKED = re.compile(r"^Sub-agent report: tracked ([^\n]*)$", re.M)


def page_denials(text: str, people: set[str]) -> set[tuple[str, str]]:
    """(person, company) of the reported moves of tracked people that a page says were denied (exact names)."""
    return {(m.group("name"), m.group("to").strip()) for m in DENIAL_PATTERN.finditer(text) if m.group("name") in people}


def without_denied(moves: set[tuple[str, str, str]], denied: set[tuple[str, str]]) -> set[tuple[str, str, str]]:
    """The moves whose (person, company) was not denied."""
    return {m for m in moves if (m[0], m[2]) not in denied}


def page_moves(text: str, people: set[str]) -> set[tuple[str, str, str]]:
    """Moves of tracked people stated on a page (exact names; talks are not moves; a denial is no move).

    A move a page reports is returned even when another page denied it: the caller removes the
    denied ones it knows of (``without_denied``)."""
    found = set()
    for paragraph in text.split("\n\n"):
        for pattern in MOVE_PATTERNS:
            for match in pattern.finditer(paragraph):
                month = _month(match.group("when"))
                if match.group("name") in people and month:
                    found.add((match.group("name"), month, match.group("to").strip()))
    return found


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip() and n.strip() != "none"]


class TrackerPolicy:
    """Reference policy for ``people_tracker`` (see the module docstring).

    With the ``isolate`` strategy (``delegate`` on offer) it hands each person, in the
    prompt's order, to a sub-agent of their own (``Track this person: NAME. ...``): a
    person's search results and pages are a natural, self-contained unit, and pages that
    mention several people (round-ups) are simply read by each sub-agent that finds them.
    The sub-agent reports ``Moves noted``; the main agent merges the visible reports and
    submits. A person whose report is no longer visible is delegated again; a delegate
    result that is not a report (the sub-agent failed) ends delegation, and the main agent
    tracks the rest itself.
    """

    prompt_pattern = PEOPLE_PROMPT

    @staticmethod
    def _notes(messages: list[dict]) -> list[str]:
        """The agent's own notes plus the visible sub-agent reports (``delegate`` results)."""
        return texts(messages) + [t for t in tool_texts(messages) if t.startswith(REPORT_PREFIX)]

    def delegate_plan(self, messages: list[dict]) -> str | None:
        """The next person for a sub-agent; None to act normally (merge and submit)."""
        people = next((m.group(1) for t in texts(messages, ("user",)) for m in [PEOPLE_PROMPT.search(t)] if m), None)
        if people is None:
            return None
        if delegation_failed(messages):
            return None
        results = [e.result for e in exchanges(messages) if e.name == "delegate" and e.result is not None]
        tracked = {name.strip() for r in results for name in REPORT_TRACKED.findall(r)}
        pending = [n.strip() for n in people.split(";") if n.strip() and n.strip() not in tracked]
        if not pending:
            return None
        return (f"Track this person: {pending[0]}. Find every employer change since 2018: the month (YYYY-MM) and "
                "the company they joined. Use search(query) and open_page(url). Beware of people with similar names "
                "(a different first or last name is a different person) and of rumours that were denied (a move that "
                "the company or the person denied did not happen, even where another page reports it). Report every "
                "move as: person YYYY-MM company. " + limit_sentence(BROWSER_CALLS, "search or open_page calls"))

    def subagent_policy(self, task: str) -> "TrackerSubPolicy":
        """The policy of a sub-agent (it reads its person from its own context)."""
        return TrackerSubPolicy()

    def _state(self, tool_outputs: list[str], notes: list[str]):
        people: list[str] = []
        progress = None
        moves: set[tuple[str, str, str]] = set()
        denied: set[tuple[str, str]] = set()
        noted: set[str] = set()
        tracked: list[str] = []
        for text in notes:
            denied.update(DENIED_NOTE.findall(text))
            tracked += [n.strip() for n in REPORT_TRACKED.findall(text)]
            match = self.prompt_pattern.search(text)
            if match:
                people = [n.strip() for n in match.group(1).split(";")]
            for line in MOVES_LINE.findall(text) + NOTE_LINE.findall(text):
                moves.update(MOVE_ITEM.findall(line))
            noted.update(NOTE.findall(text))
            for groups in PROGRESS.findall(text):
                progress = groups
        done: list[str] = []
        current = None
        opened: set[str] = set()
        remaining: list[str] = []
        if progress:
            done, current, opened, remaining = (_names(progress[0]), progress[1].strip(),
                                                set(_names(progress[2])), _names(progress[3]))
            if current == "none":
                current = None
        for name in tracked:  # people a sub-agent reported on are done
            if name not in done:
                done.append(name)
            if current == name:
                current = None
        if not people:
            people = done + ([current] if current else []) + remaining
        pages: dict[str, str] = {}
        results: dict[str, list[str]] = {}
        for text in tool_outputs:
            match = PAGE_URL.match(text)
            if match:
                pages[match.group(1)] = text
                moves |= page_moves(text, set(people))
                denied |= page_denials(text, set(people))
            match = SEARCH_HEADER.match(text)
            if match:
                results[match.group(1)] = RESULT_URL.findall(text)
        moves = without_denied(moves, denied)
        return people, moves, noted, done, current, opened, pages, results

    def _visible_state(self, messages: list[dict]) -> tuple:
        """``_state`` of the visible messages, with the current person's ``opened`` pages brought up to date:
        pages in view or noted count as opened, a page whose open was rate limited (not done) does not.
        Returns (people, moves, noted, done, current, opened, pages, results) as ``_state`` does."""
        people, moves, noted, done, current, opened, pages, results = self._state(tool_texts(messages),
                                                                                   self._notes(messages))
        opened -= deferred_args(messages, "open_page", "url")
        if current is not None:
            opened |= {u for u in pages if u in results.get(current, [])} | (noted & set(results.get(current, [])))
        return people, moves, noted, done, current, opened, pages, results

    @staticmethod
    def _denied(messages: list[dict], people: list[str]) -> set[tuple[str, str]]:
        """(person, company) of every denied move the visible pages and notes show."""
        denied = {d for text in texts(messages) + tool_texts(messages) for d in DENIED_NOTE.findall(text)}
        return denied | {d for text in tool_texts(messages) if PAGE_URL.match(text) for d in page_denials(text, set(people))}

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The lookups whose arguments the visible messages already give, person by person in the prompt's
        order (profile ``realistic`` batches them with ``first``): a search for each person whose results
        are not in view, and every result page of a person whose results are in view that is neither open,
        noted nor listed as opened. A person's pages depend on their search, so they come a turn later."""
        if (first.get("function") or {}).get("name") not in ("search", "open_page"):
            return []
        people, _, noted, done, current, opened, pages, results = self._visible_state(messages)
        seen = set(noted) | set(pages)
        calls = []
        for person in ([current] if current else []) + [p for p in people if p not in done and p != current]:
            if person not in results:
                calls.append(make_call("search", query=person))
                continue
            for url in results[person]:
                if url not in seen and not (person == current and url in opened):
                    seen.add(url)
                    calls.append(make_call("open_page", url=url))
        return within_limit(messages, [call for call in calls if call["function"] != first.get("function")])  # canonical

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The moves it would submit now: every move noted or in view (None: none yet)."""
        moves = self._visible_state(messages)[1]
        if not moves:
            return None
        return {"moves": [{"person": p, "month": m, "company": c} for p, m, c in sorted(moves)]}

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Search the current person, open the next result, move to the next person, or submit."""
        people, moves, noted, done, current, opened, pages, results = self._visible_state(messages)
        lines = []
        denied = self._denied(messages, people)
        for text in latest_results(messages):  # the newest results, even with a status bar or notes after them
            match = PAGE_URL.match(text)
            if match:
                found = sorted(without_denied(page_moves(text, set(people)), denied))
                said = [" ".join(m) for m in found] + [f"denied: {p} joining {c} (not a move)"
                                                        for p, c in sorted(page_denials(text, set(people)))]
                lines.append(f"Notes on {match.group(1)}: " + ("; ".join(said) or "no moves of the people I track"))
        lines += rate_limited_notes(messages)
        action = None
        while action is None:
            if current is None:
                todo = [p for p in people if p not in done]
                if not todo:
                    break
                current, opened = todo[0], set()
            if current not in results:
                action = make_call("search", query=current)
                break
            pending = [u for u in results[current] if u not in opened and u not in noted and u not in pages]
            if pending:
                opened.add(pending[0])
                action = make_call("open_page", url=pending[0])
                break
            done.append(current)
            current = None
        remaining = [p for p in people if p not in done and p != current]
        lines.append("Moves so far: " + ("; ".join(" ".join(m) for m in sorted(moves)) or "none"))
        lines.append(f"Progress: done: {', '.join(done) or 'none'}; current: {current or 'none'}; "
                     f"opened: {', '.join(sorted(opened)) or 'none'}; remaining: {', '.join(remaining) or 'none'}")
        note = "\n".join(lines)
        if action is not None:
            return reply(note, action)
        answer = [{"person": p, "month": m, "company": c} for p, m, c in sorted(moves)]
        return submit(note + "\nEveryone tracked; submitting the moves.", moves=answer)

    def summarize(self, history_text: str) -> str:
        """Keep the noted moves (with month and company) and the progress; raw page facts not yet noted are lost."""
        progress = PROGRESS.findall(history_text)
        moves: set[tuple[str, str, str]] = set()
        for line in MOVES_LINE.findall(history_text) + NOTE_LINE.findall(history_text):
            moves.update(MOVE_ITEM.findall(line))
        findings = ["Moves noted: " + ("; ".join(" ".join(m) for m in sorted(moves)) or "none")]
        state = []
        if progress:
            d, c, o, r = progress[-1]
            state.append(f"Progress: done: {d}; current: {c}; opened: {o}; remaining: {r}")
        else:
            state.append("no person finished yet")
        return format_summary(findings, tools_used(history_text), real_failures(history_text), state)


class TrackerSubPolicy(TrackerPolicy):
    """A sub-agent tracking the one person its task names; it reports instead of submitting.

    It batches like the main policy (``parallel_calls`` is inherited: its one person's search,
    then every result page) but never submits early: a sub-agent ends with ``report``.
    """

    prompt_pattern = SUBTASK_PROMPT

    def early_answer(self, messages: list[dict]) -> dict | None:
        """None: a sub-agent cannot submit (an early ``submit`` would be an unknown tool to it)."""
        return None

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Search, open every result, then ``report`` the moves noted."""
        message = TrackerPolicy.act(self, messages, tools)
        calls = message.get("tool_calls") or []
        if not any(c.get("function", {}).get("name") == "submit" for c in calls):
            return message
        task = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
        match = SUBTASK_PROMPT.search(task)
        person = match.group(1).strip() if match else "nobody (no person named)"
        moves = sorted(self._state(tool_texts(messages), texts(messages))[1])
        conclusion = (f"{REPORT_PREFIX}: tracked {person}\n"
                      "Moves noted: " + ("; ".join(" ".join(m) for m in moves) or "none"))
        return reply(str(message.get("content") or ""), make_call("report", conclusion=conclusion))

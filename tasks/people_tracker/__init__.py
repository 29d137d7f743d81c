"""``people_tracker``: track who moved to which employer, and when (source 002, experiment 2-10).

``people`` people (knob) change employers one to ``moves`` times between 2018 and 2025.
The agent finds them with ``search(query)`` (a results page: titles, URLs, snippets, ads)
and reads ``open_page(url)``: long, noisy web pages (navigation, cookie banner, ads,
related links, newsletter box, footer) with a few fact sentences each. Pages: a profile
per person (its timeline may be out of date), one news article per move, a page per person
whose reported move the company explicitly denied, a page about someone with a similar
name, ``roundups`` industry round-ups that repeat several people's moves, and late
round-ups (headline: the last people of the prompt) that report an EARLY person's denied
move as a move. Every true move is on at least one page that a search for the person returns.
The browsing API allows 4 calls per turn (``max_calls_per_turn``, said in the prompt).

Answer: ``submit(moves=[{"person": name, "month": "YYYY-MM", "company": employer joined}, ...])``,
one entry per move (the company is the employer the person JOINED). Grade (``grade.py``):
success = the exact set of (person, month, company), compared case- and space-insensitively;
score = F1.

Reference policy (``reference_agent/policies/people_tracker.py``): takes the people in the
prompt's order; for each one it searches the full name, opens every result not yet opened (at
most 4 calls a turn), and after each page writes ``Notes on URL: ...`` with the moves of
tracked people found there (exact names only: a similar name is someone else) and the denials
the page states (``denied: P joining C (not a move)``); it recites ``Moves so far`` (moves
only, minus every denial it can see) and ``Progress: ...``. A strategy that drops the early
note and page of a denial makes it take the late round-up's report for a move (precision
fails): sliding_window, headtail, summarize (a summary keeps moves, not denials) and layered
at 8k.

Layout: ``world.py`` generation (templates, people, pages), ``tools.py`` the instance (prompts,
tools, rendering), ``grade.py``. Rules of every template: tasks/README.md.
"""

from __future__ import annotations

from tasks.base import FamilySpec, TaskFamily
from tasks.people_tracker.grade import grade_moves
from tasks.people_tracker.tools import PeopleTrackerInstance
from tasks.people_tracker.world import BROWSER_CALLS, DENIAL, MOVE_TEMPLATES, SPOKE, Move, Page, generate_world

__all__ = [
    "FAMILY",
    "BROWSER_CALLS",
    "DENIAL",
    "MOVE_TEMPLATES",
    "Move",
    "Page",
    "PeopleTracker",
    "PeopleTrackerInstance",
    "SPOKE",
]


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

    def generate(self, seed: int) -> PeopleTrackerInstance:
        """Generate the people, their moves and the web pages for ``seed``."""
        names, moves, pages = generate_world(self, seed)
        return PeopleTrackerInstance(self.people, seed, names, moves, pages)


FAMILY = FamilySpec(
    PeopleTracker.name,
    PeopleTracker,
    PeopleTrackerInstance,
    grade_moves,
    policy="reference_agent.policies.people_tracker:TrackerPolicy",  # the careful researcher
)
"""The family's registration (``tasks.registry``)."""

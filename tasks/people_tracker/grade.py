"""The grader of ``people_tracker``: the exact set of moves, and F1 as the partial score."""

from __future__ import annotations

from tasks.base import Grade
from tasks.kit.grading import set_grade
from tasks.people_tracker.world import Move


def normalized(text: object) -> str:
    """Lower case, single spaces: names and companies compare case- and space-insensitively."""
    return " ".join(str(text).lower().split())


def submitted_moves(answer: object) -> set[tuple[str, str, str]]:
    """(person, month, company) of every well-formed entry of a ``submit(moves=[...])``, normalized."""
    raw = answer.get("moves") if isinstance(answer, dict) else None
    given: set[tuple[str, str, str]] = set()
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict) and all(isinstance(item.get(k), str) for k in ("person", "month", "company")):
                given.add((normalized(item["person"]), item["month"].strip(), normalized(item["company"])))
    return given


def grade_moves(answer: object, moves: list[Move]) -> Grade:
    """Exact set of (person, month, company joined) for success; F1 for the score."""
    given = submitted_moves(answer)
    truth = {(normalized(m.person), m.month, normalized(m.to)) for m in moves}
    return set_grade(given, truth, label=" | ".join)

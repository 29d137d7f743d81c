"""The grader of ``invoice_audit``: the exact set of duplicate ids for success, F1 for the score."""

from __future__ import annotations

from tasks.base import Grade
from tasks.kit.grading import set_grade


def grade_ids(answer: dict, truth: set[str]) -> Grade:
    """Grade ``submit(invoice_ids=[...])`` against the ids of every invoice in a duplicate charge."""
    raw = answer.get("invoice_ids") if isinstance(answer, dict) else None
    given = {str(x).strip() for x in raw} if isinstance(raw, list) else set()
    return set_grade(given, truth)

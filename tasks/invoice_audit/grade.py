"""The grader of ``invoice_audit``: the exact set of duplicate ids for success, F1 for the score."""

from __future__ import annotations

from tasks.base import Grade


def grade_ids(answer: dict, truth: set[str]) -> Grade:
    """Grade ``submit(invoice_ids=[...])`` against the ids of every invoice in a duplicate charge."""
    raw = answer.get("invoice_ids") if isinstance(answer, dict) else None
    given = {str(x).strip() for x in raw} if isinstance(raw, list) else set()
    hits = len(given & truth)
    precision = hits / len(given) if given else 0.0
    recall = hits / len(truth) if truth else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Grade(
        given == truth,
        round(f1, 4),
        {
            "expected": len(truth),
            "given": len(given),
            "correct": hits,
            "missed": sorted(truth - given),
            "wrong": sorted(given - truth),
        },
    )

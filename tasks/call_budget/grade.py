"""The grader of ``call_budget``: the merchants closed within three calls each, and the calls beyond three."""

from __future__ import annotations

from collections import Counter

from tasks.base import Grade
from tasks.call_budget.world import MAX_CALLS
from tasks.kit.grading import set_scores


def grade_accepted(answer: object, truth: set[str], closed: set[str], violations: list[str]) -> Grade:
    """Success: the exact closable set, every one closed in this trial, no violation; score: F1 (a claimed
    merchant counts only if its deal was closed) minus 0.25 per violation, floored at 0."""
    raw = answer.get("accepted") if isinstance(answer, dict) else None
    given = {str(x).strip().upper() for x in raw} if isinstance(raw, list) else set()
    f1 = set_scores(given, truth, hits=len(given & truth & closed)).f1
    score = max(0.0, f1 - 0.25 * len(violations))
    success = given == truth and truth <= closed and not violations
    return Grade(
        success,
        round(score, 4),
        {
            "expected": sorted(truth),
            "missed": sorted(truth - given),
            "wrong": sorted(given - truth),
            "claimed_not_closed": sorted(given - closed),
            "violations": list(violations),
        },
    )


def call_metrics(tool_log: list[dict]) -> dict:
    """``call_violations`` (calls beyond the 3rd to a merchant) and ``max_calls_per_merchant``."""
    counts: Counter = Counter()
    for entry in tool_log:
        if entry["name"] == "call_merchant" and not entry["is_error"]:
            counts[str(entry["args"].get("merchant", "")).strip().upper()] += 1
    return {
        "call_violations": sum(max(0, c - MAX_CALLS) for c in counts.values()),
        "max_calls_per_merchant": max(counts.values(), default=0),
    }

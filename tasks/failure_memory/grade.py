"""The grader of ``failure_memory``: four fields in exact cents (``kit.grading.cents``) and strings, and the
repeated failed calls."""

from __future__ import annotations

import json

from tasks.base import Grade
from tasks.kit.grading import same_money


def grade_escalation(answer: object, expected: dict, repeats: int) -> Grade:
    """All four fields right (totals in exact cents) and no repeated failed call for success; the score is the
    fraction of right fields, halved for each repeated failed call."""
    answer = answer if isinstance(answer, dict) else {}
    right = {}
    for key, value in expected.items():
        given = answer.get(key)
        if isinstance(value, float):
            right[key] = same_money(given, value)
        else:
            right[key] = isinstance(given, str) and given.strip() == value
    score = sum(right.values()) / len(right) * 0.5**repeats
    return Grade(
        all(right.values()) and repeats == 0,
        round(score, 4),
        {"fields": right, "expected": expected, "repeated_failed_calls": repeats},
    )


def canonical_args(args: dict) -> str:
    """A call's arguments as canonical JSON (two equal calls have equal texts)."""
    return json.dumps(args, sort_keys=True, default=str)


def repeated_failed_calls(calls: list[tuple[str, str, bool]]) -> int:
    """Repeated failed calls: identical to an earlier failed call, or query_api after its auth failure."""
    failed: set[tuple[str, str]] = set()
    api_broken = False
    repeats = 0
    for name, args, is_error in calls:
        if (name, args) in failed or (name == "query_api" and api_broken):
            repeats += 1
        if is_error:
            failed.add((name, args))
            if name == "query_api":
                endpoint = json.loads(args).get("endpoint")
                if isinstance(endpoint, str) and endpoint.startswith("/"):
                    api_broken = True  # a well-formed call failed: the 401 of the broken approach
    return repeats

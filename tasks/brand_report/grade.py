"""The grader of ``brand_report``: all three counts exact for success, mean per-brand closeness for the score."""

from __future__ import annotations

from tasks.base import Grade
from tasks.kit.args import digits


def as_int(value: object) -> int | None:
    """An integer from an int or a digit string (``None`` otherwise; booleans are not numbers)."""
    if isinstance(value, str):
        return digits(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def closeness_of(given: int, true: int) -> float:
    """``max(0, 1 - |given - true| / max(true, 1))``, for any integer (a count of 10**400 scores 0, not an overflow)."""
    scale = max(true, 1)
    return 1 - min(abs(given - true), scale) / scale


def grade_counts(answer: dict, truth: dict[str, int]) -> Grade:
    """Grade ``submit(counts={brand: n})``: brand names case-insensitive; score = mean of
    ``max(0, 1 - |given - true| / max(true, 1))`` over the brands (a missing brand scores 0)."""
    raw = answer.get("counts") if isinstance(answer, dict) else None
    given: dict[str, int] = {}
    if isinstance(raw, dict):
        lookup = {b.lower(): b for b in truth}
        for key, value in raw.items():
            brand = lookup.get(str(key).strip().lower())
            number = as_int(value)
            if brand is not None and number is not None:
                given[brand] = number
    closeness = {b: (closeness_of(given[b], t) if b in given else 0.0) for b, t in truth.items()}
    exact = [b for b, t in truth.items() if given.get(b) == t]
    return Grade(
        len(exact) == len(truth),
        round(sum(closeness.values()) / len(closeness), 4),
        {"expected": dict(truth), "given": given, "exact": exact},
    )

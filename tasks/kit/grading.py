"""Grading pieces several families share: set F1, the exact-set grade, exact money, one exact answer.

* ``set_scores``: precision, recall and F1 of a submitted set against the true set. The rule every
  family uses: an empty answer has precision 0; an empty truth has recall 1 (nothing to find); F1 is
  0 when precision and recall are both 0. Sets, so a duplicate entry in an answer counts once.
* ``set_grade``: the grade of "submit exactly this set" (``code_review``, ``invoice_audit``,
  ``people_tracker``): success = the exact set, score = F1 rounded to 4 places, and the detail
  ``expected`` / ``given`` / ``correct`` / ``missed`` / ``wrong``.
* ``cents``: an amount in exact whole cents (money is compared in cents, never with a float tolerance).
* ``answer_text`` and ``exact_grade``: one answer field compared exactly, after trimming (``needle``).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, DecimalException
from typing import Any, Callable, Hashable, TypeVar

from tasks.base import Grade

Item = TypeVar("Item", bound=Hashable)


@dataclass(frozen=True)
class SetScores:
    """Precision, recall and F1 of an answer set (unrounded), and the hits they count."""

    hits: int
    precision: float
    recall: float
    f1: float


def set_scores(given: set, truth: set, hits: int | None = None) -> SetScores:
    """Precision, recall and F1 of ``given`` against ``truth``.

    ``hits`` defaults to ``len(given & truth)``; a family that counts fewer hits (an entry that counts
    only under a condition) passes its own. Empty ``given``: precision 0. Empty ``truth``: recall 1.
    """
    hits = len(given & truth) if hits is None else hits
    precision = hits / len(given) if given else 0.0
    recall = hits / len(truth) if truth else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return SetScores(hits, precision, recall, f1)


def set_grade(given: set[Item], truth: set[Item], label: Callable[[Item], str] = str) -> Grade:
    """Exact set for success, F1 (4 places) for the score; the detail counts and lists (by ``label``, sorted)
    the entries missed and the wrong ones."""
    scores = set_scores(given, truth)
    return Grade(
        given == truth,
        round(scores.f1, 4),
        {
            "expected": len(truth),
            "given": len(given),
            "correct": scores.hits,
            "missed": sorted(label(item) for item in truth - given),
            "wrong": sorted(label(item) for item in given - truth),
        },
    )


def cents(amount: object) -> int | None:
    """``amount`` in whole cents (half a cent rounds up), ``None`` when it is not a finite number or too
    large to count in cents exactly (``Decimal``'s 28 digits: ``1e30`` dollars is no refund total).

    Money is compared in exact cents: a float difference of one cent can come out just
    under ``0.01`` and pass a tolerance test. Booleans are not amounts; strings are read as decimals.
    """
    if isinstance(amount, bool) or not isinstance(amount, (int, float, str)):
        return None
    try:
        value = Decimal(str(amount).strip())
        if not value.is_finite():
            return None
        return int((value * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    except DecimalException:  # not a number; or too many digits to quantize (InvalidOperation), or Overflow
        return None


def same_money(given: object, expected: object) -> bool:
    """Whether two amounts are the same number of cents (an amount that is not one never matches)."""
    mine = cents(given)
    return mine is not None and mine == cents(expected)


def answer_text(answer: Any, key: str) -> str:
    """Field ``key`` of a submitted answer as trimmed text (``""`` when the answer is not a dict or lacks it)."""
    return str(answer.get(key, "")).strip() if isinstance(answer, dict) else ""


def exact_grade(answer: Any, key: str, expected: str) -> Grade:
    """One field that must equal ``expected`` exactly (after trimming): success and score (1 or 0) alike,
    with ``expected`` and ``given`` in the detail."""
    given = answer_text(answer, key)
    right = given == expected
    return Grade(right, 1.0 if right else 0.0, {"expected": expected, "given": given})

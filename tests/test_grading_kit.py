"""The shared grading kit (tasks/kit/grading.py): set F1, the exact-set grade, cents, one exact answer."""

from __future__ import annotations

import pytest

from tasks.base import Grade
from tasks.kit.grading import SetScores, answer_text, cents, exact_grade, same_money, set_grade, set_scores


def test_an_exact_answer_scores_one():
    assert set_scores({"a", "b"}, {"a", "b"}) == SetScores(2, 1.0, 1.0, 1.0)


def test_partial_overlap():
    scores = set_scores({"a", "b", "x"}, {"a", "b", "c", "d"})
    assert (scores.hits, scores.precision, scores.recall) == (2, 2 / 3, 0.5)
    assert scores.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_an_empty_answer_scores_zero_against_a_truth():
    assert set_scores(set(), {"a"}) == SetScores(0, 0.0, 0.0, 0.0)


def test_an_empty_truth_has_recall_one():
    """Nothing to find: recall is 1, so the empty answer scores 0 (precision 0) and any answer scores 0 too."""
    assert set_scores(set(), set()) == SetScores(0, 0.0, 1.0, 0.0)
    assert set_scores({"x"}, set()) == SetScores(0, 0.0, 1.0, 0.0)


def test_disjoint_sets_score_zero():
    assert set_scores({"x", "y"}, {"a"}).f1 == 0.0


def test_duplicates_in_an_answer_count_once():
    """Answers are sets: a family builds one from the submitted list, so a repeated entry is one entry."""
    given = set(["a", "a", "a", "b"])
    assert set_scores(given, {"a", "b"}) == SetScores(2, 1.0, 1.0, 1.0)


def test_a_family_may_count_fewer_hits():
    """``callback_search`` counts call sites only with the right target: hits override the overlap."""
    assert set_scores({"a", "b"}, {"a", "b"}, hits=0) == SetScores(0, 0.0, 0.0, 0.0)
    assert set_scores({"a", "b"}, {"a", "b", "c"}, hits=1).f1 == pytest.approx(0.4)


def test_set_grade_details():
    grade = set_grade({("f.py", "g"), ("f.py", "x")}, {("f.py", "g"), ("h.py", "k")}, label="::".join)
    assert grade == Grade(
        False,
        0.5,
        {"expected": 2, "given": 2, "correct": 1, "missed": ["h.py::k"], "wrong": ["f.py::x"]},
    )
    assert list(grade.detail) == ["expected", "given", "correct", "missed", "wrong"]  # the records' key order


def test_set_grade_exact_and_empty():
    assert set_grade({"1", "2"}, {"2", "1"}).success
    empty = set_grade(set(), {"1"})
    assert (empty.success, empty.score, empty.detail["missed"], empty.detail["wrong"]) == (False, 0.0, ["1"], [])
    assert set_grade(set(), set()) == Grade(
        True, 0.0, {"expected": 0, "given": 0, "correct": 0, "missed": [], "wrong": []}
    )


def test_set_grade_rounds_to_four_places():
    assert set_grade({"a", "b", "c"}, {"a", "d", "e", "f", "g", "h", "i"}).score == round(
        2 * (1 / 3) * (1 / 7) / (1 / 3 + 1 / 7), 4
    )


@pytest.mark.parametrize(
    ("amount", "expected"),
    [
        (12.34, 1234),
        ("12.34", 1234),
        (" 7 ", 700),
        (0.005, 1),  # half a cent rounds up
        (-1.5, -150),
        (10, 1000),
        (True, None),  # a boolean is no amount
        (None, None),
        ([1], None),
        ("ten", None),
        ("nan", None),
        (float("inf"), None),
        ("1e30", None),  # too many digits to count in cents exactly
    ],
)
def test_cents(amount, expected):
    assert cents(amount) == expected


def test_money_compares_in_exact_cents():
    assert same_money("0.30", 0.1 + 0.2)
    assert not same_money(10.0, 10.01)
    assert not same_money(None, 0.0)
    assert not same_money("ten", "ten")  # not an amount: never the same money


def test_answer_text():
    assert answer_text({"code": " 1234-5678 "}, "code") == "1234-5678"
    assert answer_text({}, "code") == ""
    assert answer_text("1234-5678", "code") == ""
    assert answer_text({"code": 12}, "code") == "12"


def test_exact_grade():
    assert exact_grade({"code": "1234-5678"}, "code", "1234-5678") == Grade(
        True, 1.0, {"expected": "1234-5678", "given": "1234-5678"}
    )
    assert exact_grade({"code": "1234-5679"}, "code", "1234-5678") == Grade(
        False, 0.0, {"expected": "1234-5678", "given": "1234-5679"}
    )
    assert exact_grade(None, "code", "x") == Grade(False, 0.0, {"expected": "x", "given": ""})

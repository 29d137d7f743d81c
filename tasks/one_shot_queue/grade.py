"""The grader of ``one_shot_queue``: the nightly batch, line by line (``kit.grading.set_grade``)."""

from __future__ import annotations

from typing import Any

from tasks.base import Grade
from tasks.kit.grading import set_grade

FIELDS = ("ticket", "auth_code", "action", "reference")
Line = tuple[str, ...]


def batch_lines(answer: Any) -> set[Line]:
    """The answer's batch lines as (ticket, auth_code, action, reference), trimmed; a line that is not an object of
    four strings counts as a wrong line of its own (``("malformed", index)``)."""
    actions = answer.get("actions") if isinstance(answer, dict) else None
    if not isinstance(actions, list):
        return set()
    lines: set[Line] = set()
    for index, item in enumerate(actions):
        if isinstance(item, dict) and all(isinstance(item.get(key), str) for key in FIELDS):
            lines.add(tuple(item[key].strip() for key in FIELDS))
        else:
            lines.add(("malformed", str(index)))
    return lines


def grade_batch(answer: Any, expected: dict[str, tuple[str, str, str]]) -> Grade:
    """Success = exactly one right line per ticket (code, action and reference exact); score = F1 of the lines."""
    truth: set[Line] = {(ticket, *line) for ticket, line in expected.items()}
    given = batch_lines(answer)
    grade = set_grade(given, truth, label=_label)
    right = {line[0] for line in given & truth}
    return Grade(grade.success, grade.score, {**grade.detail, "tickets_right": len(right)})


def _label(line: Line) -> str:
    return " ".join(line)

"""The grader of ``late_question``: the exact set of container numbers asked for, and F1 as the partial score."""

from __future__ import annotations

from tasks.base import Grade
from tasks.kit.grading import set_grade
from tasks.late_question.world import container_key


def submitted_containers(answer: object) -> set[str]:
    """The container numbers of a ``submit(values=[...])``, compared by letters and digits (``container_key``);
    entries that are not strings, or hold no letter or digit, are left out."""
    raw = answer.get("values") if isinstance(answer, dict) else None
    if not isinstance(raw, list):
        return set()
    return {key for item in raw if isinstance(item, str) for key in [container_key(item)] if key}


def grade_values(answer: object, containers: list[str]) -> Grade:
    """Exact set of the container numbers the request asks for (success); F1 against it (score)."""
    return set_grade(submitted_containers(answer), {container_key(c) for c in containers})

"""The grader of ``latest_value``: each asked (shipment, field) compared with its value now in force."""

from __future__ import annotations

from typing import Any

from tasks.base import Grade
from tasks.kit.args import digits


def normalized(field: str, value: Any) -> str | None:
    """A submitted value in the form it is compared in (``None``: not a value of that field).

    ETA: the ISO date as written; carrier: case and spacing ignored; dock: upper case; pallets: the integer.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = " ".join(str(value).split())
    if field == "pallets":
        number = digits(text)
        return None if number is None else str(number)
    if field == "carrier":
        return text.casefold()
    if field == "dock":
        return text.upper()
    return text


def given_values(answer: Any) -> dict[tuple[str, str], Any]:
    """(shipment, field) -> the value submitted for it (the first entry of a pair counts)."""
    raw = answer.get("values") if isinstance(answer, dict) else None
    found: dict[tuple[str, str], Any] = {}
    for entry in raw if isinstance(raw, list) else []:
        if not isinstance(entry, dict):
            continue
        shipment, field = entry.get("shipment"), entry.get("field")
        if isinstance(shipment, str) and isinstance(field, str):
            found.setdefault((shipment.strip().upper(), field.strip().lower()), entry.get("value"))
    return found


def grade_values(answer: Any, expected: dict[tuple[str, str], str]) -> Grade:
    """Success: every asked value right; score: the share of asked values right. The detail lists each wrong
    pair with the expected and the given value."""
    given = given_values(answer)
    wrong = {}
    for (shipment, field), value in expected.items():
        mine = given.get((shipment, field))
        if normalized(field, mine) != normalized(field, value):
            wrong[f"{shipment} {field}"] = {"expected": value, "given": mine if isinstance(mine, (str, int)) else None}
    right = len(expected) - len(wrong)
    return Grade(
        not wrong, round(right / len(expected), 4) if expected else 1.0, {"asked": len(expected), "wrong": wrong}
    )

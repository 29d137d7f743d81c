"""The column mapping of ``python -m harness import``: which column of a results file holds which field.

Fields (``FIELDS``): ``config`` (the strategy or configuration label), ``instance`` (the task
instance id) and ``outcome`` (success) are required; ``experiment``, ``trial``, ``cost``, ``tokens``
(input tokens over all model calls), ``output_tokens`` and ``turns`` (model calls) are optional.
A field without a mapping reads the column of its own name when there is one.

A mapping is given as ``--map field=column`` (repeatable, or comma-separated:
``--map config=strategy,instance=id``) or as a small YAML file (``--map mapping.yaml``) holding
``field: column`` lines. Unknown fields, mapped columns the file lacks and required fields with no
column are ``MappingError``\\ s: one line, exit code 2.

A field a flag sets (``--experiment NAME`` sets ``experiment``) is not read from a column of its
own name: the flag wins, and naming a column for it too (``--map experiment=...``) is an error.
``mapping_lines`` says, one line per field, where each one comes from. ``--where column=value``
(repeatable) keeps the rows whose column holds the value: several values of one column are
alternatives, different columns must all match.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable

import yaml

REQUIRED = ("config", "instance", "outcome")
OPTIONAL = ("experiment", "trial", "cost", "tokens", "output_tokens", "turns")
FIELDS = REQUIRED + OPTIONAL
SUCCESS_WORDS = {
    "1",
    "true",
    "yes",
    "y",
    "pass",
    "passed",
    "success",
    "succeeded",
    "resolved",
    "correct",
    "c",
    "solved",
}
FAILURE_WORDS = {
    "0",
    "false",
    "no",
    "n",
    "fail",
    "failed",
    "failure",
    "unresolved",
    "incorrect",
    "i",
    "unsolved",
    "error",
}
PARTIAL_WORDS = {"p", "partial"}  # inspect's PARTIAL: not a success, score 0.5


class MappingError(ValueError):
    """A mapping or a value that cannot be imported (one line, exit code 2)."""


def parse_map(values: Iterable[str]) -> dict[str, str]:
    """``field -> column`` from ``--map`` arguments (``a=b``, ``a=b,c=d`` or a YAML file path)."""
    mapping: dict[str, str] = {}
    for value in values:
        if value.endswith((".yaml", ".yml")) and "=" not in value:
            mapping.update(_from_yaml(Path(value)))
            continue
        for part in filter(None, (p.strip() for p in value.split(","))):
            field, sep, column = part.partition("=")
            if not sep or not field.strip() or not column.strip():
                raise MappingError(f"--map {part!r}: write FIELD=COLUMN (fields: {', '.join(FIELDS)})")
            mapping[field.strip()] = column.strip()
    unknown = sorted(set(mapping) - set(FIELDS))
    if unknown:
        raise MappingError(f"unknown field {unknown[0]!r} in --map (fields: {', '.join(FIELDS)})")
    return mapping


def _from_yaml(path: Path) -> dict[str, str]:
    """``field -> column`` from a YAML file of ``field: column`` lines."""
    if not path.is_file():
        raise MappingError(f"mapping file {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise MappingError(f"mapping file {path} is not valid YAML ({type(exc).__name__})") from None
    if not isinstance(data, dict) or not all(isinstance(v, (str, int)) for v in data.values()):
        raise MappingError(f"mapping file {path} must hold 'field: column' lines")
    return {str(k): str(v) for k, v in data.items()}


def resolve(mapping: dict[str, str], columns: list[str], source: str, fixed: Iterable[str] = ()) -> dict[str, str]:
    """``field -> column`` for every field that has a column; a ``MappingError`` for a missing one.

    ``fixed``: fields a flag sets (never read from a column of their own name)."""
    for field in fixed:
        if field in mapping:
            raise MappingError(f"--{field} and --map {field}={mapping[field]} both set the {field}: give one")
    for field, column in mapping.items():  # what was asked for explicitly is checked first
        if column not in columns:
            raise MappingError(
                f"column {column!r} (mapped to {field}) is not in {source} (columns: {', '.join(columns)})"
            )
    resolved: dict[str, str] = {}
    for field in FIELDS:
        if field in fixed:
            continue
        chosen = mapping.get(field, field if field in columns else None)
        if chosen is None:
            if field in REQUIRED:
                raise MappingError(
                    f"no column for {field!r} in {source}: map one with --map {field}=COLUMN "
                    f"(columns: {', '.join(columns)})"
                )
            continue
        if chosen not in columns:
            raise MappingError(
                f"column {chosen!r} (mapped to {field}) is not in {source} (columns: {', '.join(columns)})"
            )
        resolved[field] = chosen
    return resolved


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() == ""


def parse_outcome(value: Any, where: str) -> tuple[bool, float]:
    """``(success, score)`` of an outcome cell: a number (success = 1), a boolean, or a word (pass/fail, C/I ...)."""
    if isinstance(value, bool):
        return value, float(value)
    if not _blank(value):
        text = str(value).strip().lower()
        try:
            number = float(text)
        except ValueError:
            number = None
        if number is not None and not math.isnan(number):
            if not 0 <= number <= 1:
                raise MappingError(f"{where}: outcome {value!r} is a number outside [0, 1]")
            return number == 1, number
        if text in SUCCESS_WORDS:
            return True, 1.0
        if text in FAILURE_WORDS:
            return False, 0.0
        if text in PARTIAL_WORDS:
            return False, 0.5
    raise MappingError(
        f"{where}: outcome {value!r} is not a success or a failure "
        f"(numbers in [0, 1], true/false, pass/fail, resolved/unresolved, C/I)"
    )


def parse_number(value: Any, field: str, where: str, integer: bool = False) -> float | int:
    """A non-negative number cell; blank or text is a ``MappingError``."""
    try:
        number = float(str(value).strip().replace(",", "")) if not _blank(value) else math.nan
    except ValueError:
        number = math.nan
    if math.isnan(number) or number < 0:
        raise MappingError(f"{where}: {field} {value!r} is not a non-negative number")
    return int(round(number)) if integer else number


def parse_text(value: Any, field: str, where: str) -> str:
    """A non-blank label cell."""
    if _blank(value):
        raise MappingError(f"{where}: {field} is empty")
    text = str(value).strip()
    return text[:-2] if text.endswith(".0") and text[:-2].isdigit() else text


def mapping_lines(
    source: str, fields: dict[str, str], mapping: dict[str, str], experiment: str | None, default_experiment: str
) -> list[str]:
    """What ``import`` read from ``source``: one line per field, saying where its value comes from."""
    lines = [f"mapping of {source}:"]
    for field in FIELDS:
        if field in fields:
            how = "--map" if field in mapping else "same name"
            lines.append(f"  {field:<13} <- column {fields[field]!r} ({how})")
        elif field == "experiment":
            why = "--experiment" if experiment else "the file's name: no --experiment and no experiment column"
            lines.append(f"  {field:<13} = {experiment or default_experiment!r} ({why})")
        elif field == "trial":
            lines.append(
                f"  {field:<13} = the row's occurrence of its instance in its configuration, from 0 (no trial column)"
            )
    zero = [f for f in OPTIONAL if f not in fields and f not in ("experiment", "trial")]
    if zero:
        lines.append(f"  0 in every row (no column): {', '.join(zero)}")
    return lines


def parse_where(values: Iterable[str]) -> dict[str, set[str]]:
    """``column -> the values a kept row may hold`` from ``--where column=value`` arguments."""
    where: dict[str, set[str]] = {}
    for value in values:
        column, sep, wanted = value.partition("=")
        if not sep or not column.strip():
            raise MappingError(f"--where {value!r}: write COLUMN=VALUE")
        where.setdefault(column.strip(), set()).add(wanted.strip())
    return where


def check_where(where: dict[str, set[str]], columns: list[str], source: str) -> None:
    """A ``MappingError`` when a ``--where`` column is not in ``source``."""
    for column in where:
        if column not in columns:
            raise MappingError(f"--where column {column!r} is not in {source} (columns: {', '.join(columns)})")


def matches(raw: dict, where: dict[str, set[str]]) -> bool:
    """Whether a source row holds one of the wanted values in every ``--where`` column."""
    return all(cell_text(raw.get(column)) in wanted for column, wanted in where.items())


def cell_text(value: Any) -> str:
    """A cell as the text ``--where`` compares (``True`` -> ``true``, ``3.0`` -> ``3``)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value).strip()

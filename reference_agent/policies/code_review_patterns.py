"""The planted bug patterns a competent reviewer spots, read from a file's text (``detect``)."""

from __future__ import annotations

import re

from tasks.code_review.formats import NUMBERED

UNREAD = "    # (line not read)"  # stands for a numbered line missing from what the agent attended to


def numbered_lines(text: str) -> dict[int, str]:
    """Line number -> code of a ``read_file`` result (the lines the agent has in view)."""
    lines: dict[int, str] = {}
    for line in text.splitlines()[1:]:
        match = NUMBERED.match(line)
        if match:
            lines[int(match.group(1))] = match.group(2)
    return lines


def source_of(lines: dict[int, str], total: int) -> str:
    """The file's text from its numbered lines; a number it did not read becomes ``UNREAD`` (a gap it can see)."""
    return "\n".join(lines.get(number, UNREAD) for number in range(1, total + 1))


def _functions(source: str) -> list[tuple[str, str]]:
    """Top-level functions as (name, text)."""
    found: list[tuple[str, str]] = []
    current: list[str] | None = None
    name = ""
    for line in source.splitlines():
        if line and not line[0].isspace():
            if current is not None:
                found.append((name, "\n".join(current)))
                current = None
            match = re.match(r"def (\w+)\(", line)
            if match:
                name, current = match.group(1), [line]
                continue
        if current is not None:
            current.append(line)
    if current is not None:
        found.append((name, "\n".join(current)))
    return found


def helper_imports(source: str) -> dict[str, list[str]]:
    """Shared-helper module path -> imported names."""
    found: dict[str, list[str]] = {}
    for module, names in re.findall(r"^from (app\.common\.\w+) import ([\w, ]+)$", source, re.M):
        found[module.replace(".", "/") + ".py"] = [n.strip() for n in names.split(",")]
    return found


def comma_list(text: str) -> list[str]:
    """The non-empty, stripped items of a comma-separated text (a ledger line's list, a call's arguments)."""
    return [item.strip() for item in text.split(",") if item.strip()]


def helper_signatures(source: str) -> dict[str, list[str]]:
    """Function name -> parameter names, from a helper module's text."""
    return {name: comma_list(params) for name, params in re.findall(r"^def (\w+)\(([^)]*)\):", source, re.M)}


def detect(source: str, signatures: dict[str, list[str]]) -> list[tuple[str, str]]:
    """The planted bug patterns a competent reviewer spots: (function, kind)."""
    bugs = []
    for name, body in _functions(source):
        kind = None
        header = body.splitlines()[0]
        loop = re.search(r"for (\w+) in range\(len\((\w+)\) \+ 1\):", body)
        if loop and re.search(rf"\b{loop.group(2)}\[{loop.group(1)}\]", body):
            kind = "off_by_one"
        elif ("has expired" in body or re.match(r"def is_\w+_expired\(", header)) and re.search(
            r"\.expires_at > now|now < \w+\.expires_at", body
        ):  # the name or the docstring says so
            kind = "inverted_comparison"
        elif re.search(r"=\s*(\[\]|\{\}|set\(\))\s*[,)]", header):
            kind = "mutable_default"
        elif any(f"{v}.close()" not in body and "with open" not in body for v in re.findall(r"(\w+) = open\(", body)):
            kind = "resource_leak"
        elif any(
            not var.isupper() for q in re.findall(r'execute\(f"([^"]*)"', body) for var in re.findall(r"\{(\w+)", q)
        ) or re.search(r'execute\("[^"]*"\.format\(', body):
            kind = "sql_injection"
        else:
            for _num, den in re.findall(r"return (\w+) / (\w+)\s*$", body, re.M):
                if not den.isdigit() and not re.search(rf"if {den} == 0|if not {den}\b", body):
                    kind = "zero_division"
            for helper, args in re.findall(r"\b(\w+)\(([\w ,]*)\)", body):
                params = signatures.get(helper)
                positional = comma_list(args)
                if (
                    params
                    and positional
                    and "=" not in args
                    and sorted(positional) == sorted(params)
                    and positional != params
                ):
                    kind = "wrong_arg_order"
        if kind:
            bugs.append((name, kind))
    return bugs

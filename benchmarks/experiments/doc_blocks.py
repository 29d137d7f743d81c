"""The generated blocks of a markdown file: ``<!-- table:NAME -->`` ... ``<!-- /table:NAME -->``.

``update`` replaces what is between the markers with the table NAME of the registry and nothing else;
``stale_blocks`` compares a committed file with a fresh rendering, wall-time columns masked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

BLOCK = re.compile(r"<!-- table:(\w+) -->.*?<!-- /table:\1 -->", flags=re.S)


def _registry() -> Mapping[str, Callable[[Path], str]]:
    """The registry's tables (imported late: the registry imports every table module)."""
    from .registry import TABLES

    return TABLES


def render(
    text: str, results: Path, only: set[str] | None = None, tables: Mapping[str, Callable] | None = None
) -> tuple[str, list[str]]:
    """``text`` with every ``<!-- table:NAME -->`` block (or those named in ``only``) regenerated, and the names."""
    tables = _registry() if tables is None else tables
    done: list[str] = []

    def repl(match: re.Match) -> str:
        name = match.group(1)
        if only is not None and name not in only:
            return match.group(0)
        done.append(name)
        return f"<!-- table:{name} -->\n{tables[name](results)}\n<!-- /table:{name} -->"

    return BLOCK.sub(repl, text), done


def update(path: Path, results: Path) -> list[str]:
    """Replace every ``<!-- table:NAME -->`` block of ``path``; return the names replaced."""
    text, done = render(path.read_text(), results)
    path.write_text(text)
    return done


def mask_wall_times(text: str) -> str:
    """``text`` with the cells of every table column whose header mentions wall time blanked."""
    out, masked = [], set()
    for line in text.splitlines():
        cells = line.split(" | ") if line.startswith("|") else None
        if cells is None:
            masked = set()
        elif not masked and any("wall" in c for c in cells):
            masked = {i for i, c in enumerate(cells) if "wall" in c}
        elif masked and not line.startswith("|---"):
            line = " | ".join("…" if i in masked else c for i, c in enumerate(cells))
        out.append(line)
    return "\n".join(out)


def stale_blocks(path: Path, results: Path, only: set[str] | None = None) -> list[str]:
    """Names of the generated blocks of ``path`` (or those in ``only``) that differ from a fresh rendering
    (wall times aside)."""
    committed = path.read_text()
    fresh, _ = render(committed, results, only)
    old = {m.group(1): mask_wall_times(m.group(0)) for m in BLOCK.finditer(committed)}
    new = {m.group(1): mask_wall_times(m.group(0)) for m in BLOCK.finditer(fresh)}
    return [name for name in old if old[name] != new.get(name)]


def block_names(path: Path) -> list[str]:
    """The names of the generated blocks of ``path``, in order."""
    return [m.group(1) for m in BLOCK.finditer(path.read_text())]

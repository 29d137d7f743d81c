"""Imports run one way: the reference agent depends on ``tasks``; nothing in ``tasks`` imports it or the backends."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = ("reference_agent", "harness.models")


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at top level or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "tasks").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_tasks_never_import_the_reference_agent(path):
    bad = sorted(n for n in imported_modules(path) if any(n == f or n.startswith(f + ".") for f in FORBIDDEN))
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"

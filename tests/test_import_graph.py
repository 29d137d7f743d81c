"""The project's import graph has no cycle through harness/, and imports sit at the top of modules.

Every module of the project's packages is parsed (ast, nothing is imported), and each import of a
project module, at the top or inside a function, is an edge. A cycle through a harness module
fails: ``python -m harness`` then imports no module that imports it back. An import inside a
function is kept only for a heavy optional dependency and says why in a comment on its line.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_cli import ROOT, harness

PACKAGES = ("harness", "strategies", "tasks", "reference_agent")


def module_name(path: Path) -> str:
    """``harness/models/base.py`` -> ``harness.models.base``; a package's ``__init__.py`` is the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    """Every module of the project's packages, by dotted name."""
    return {
        module_name(p): p
        for package in PACKAGES
        if (ROOT / package).is_dir()
        for p in sorted((ROOT / package).rglob("*.py"))
    }


def imported_modules(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: dict[str, Path]
) -> set[str]:
    """The project modules an import statement loads (``from a import b``: module ``a.b`` if there is one, else
    ``a``)."""
    if isinstance(node, ast.Import):
        return {m for m in (resolve(alias.name, modules) for alias in node.names) if m}
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, *([base] if base else [])])
    found = {
        f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else resolve(base, modules) for alias in node.names
    }
    return {m for m in found if m}


def resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The project module ``name`` loads: itself, else its nearest enclosing module; None outside the project."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(path: Path, modules: dict[str, Path]) -> list[tuple[ast.stmt, str, bool]]:
    """``(statement, project module, inside a function)`` for every import of a project module in ``path``."""
    module = module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    late = {
        id(n)
        for f in ast.walk(tree)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        for n in ast.walk(f)
        if isinstance(n, (ast.Import, ast.ImportFrom))
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            targets = imported_modules(node, module, path.name == "__init__.py", modules) - {module}
            found += [(node, target, id(node) in late) for target in sorted(targets)]
    return found


def import_graph() -> dict[str, set[str]]:
    """Project module -> the project modules it imports (at the top or inside functions)."""
    modules = project_modules()
    return {name: {target for _, target, _ in imports_of(path, modules)} for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_imports_inside_functions():
    modules = project_modules()
    assert "harness.cli" in import_graph()["harness.__main__"]
    assert any(
        late for _, target, late in imports_of(ROOT / "harness" / "report.py", modules) if target == "harness.plots"
    )


def test_no_import_cycle_runs_through_harness():
    through_harness = [c for c in cycles(import_graph()) if any(m.split(".")[0] == "harness" for m in c)]
    assert not through_harness, f"import cycles: {through_harness}"


def test_imports_inside_functions_are_only_the_commented_optional_ones():
    modules = project_modules()
    uncommented = []
    for name, path in modules.items():
        if not name.startswith("harness"):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        rel = path.relative_to(ROOT).as_posix()
        for node, target, late in imports_of(path, modules):
            end = getattr(node, "end_lineno", node.lineno)
            commented = any("#" in lines[i - 1] for i in range(node.lineno, end + 1))
            if late and not commented:
                uncommented.append(f"{rel}:{node.lineno} imports {target} inside a function")
    assert not uncommented, uncommented


def test_the_command_line_loads_and_lists_every_command(tmp_path):
    result = harness("--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for command in ("run", "list", "report", "compare", "view", "import"):
        assert f"\n  {command} " in result.stdout or f"\n  {command}\n" in result.stdout, command

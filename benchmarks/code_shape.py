"""The code's shape (issue 33): imports against the layers, cycles, the largest classes, the longest functions.

    python benchmarks/code_shape.py [--repo PATH] [--top 3]

Reads the Python files of a checkout (``--repo``: another checkout, e.g. a worktree of an older commit; default
this one) with ``ast``; nothing is imported or run. Prints:

* imports that run up a layer, by the layer table of ``tests/test_import_graph.py`` (``LAYERS``, of this checkout,
  applied to the other one's graph), with the first few named;
* cycles among the top-level packages (harness, strategies, tasks, reference_agent, benchmarks) and among modules;
* the largest classes (methods, and fields: the distinct ``self.NAME`` assigned plus annotated class-level names)
  and the longest functions (lines, decorators and docstring included), of harness/, strategies/, tasks/ and
  reference_agent/.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests import test_import_graph as graph_rules  # noqa: E402

MEASURED = ("harness", "strategies", "tasks", "reference_agent")


def python_files(repo: Path, packages: tuple[str, ...]) -> list[Path]:
    """The ``.py`` files of ``packages`` under ``repo``."""
    return [p for package in packages if (repo / package).is_dir() for p in sorted((repo / package).rglob("*.py"))]


def class_fields(node: ast.ClassDef) -> set[str]:
    """Annotated class-level names and the distinct ``self.NAME`` assigned in the class's methods."""
    fields = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    for sub in ast.walk(node):
        targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target] if isinstance(sub, ast.AnnAssign) else []
        for target in targets:
            for leaf in target.elts if isinstance(target, ast.Tuple) else [target]:  # self.a, self.b = ...
                if isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name) and leaf.value.id == "self":
                    fields.add(leaf.attr)
    return fields


def shapes(repo: Path) -> tuple[list[tuple[int, int, str]], list[tuple[int, str]]]:
    """``(methods, fields, where)`` of every class and ``(lines, where)`` of every function, largest first."""
    classes, functions = [], []
    for path in python_files(repo, MEASURED):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(repo).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                methods = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
                classes.append((len(methods), len(class_fields(node)), f"{rel}:{node.name}"))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                functions.append((node.end_lineno - first + 1, f"{rel}:{node.name}"))
    return sorted(classes, reverse=True), sorted(functions, reverse=True)


def report(repo: Path, top: int) -> None:
    """Print the figures for the checkout at ``repo``."""
    graph = graph_rules.import_graph(repo)
    upward = graph_rules.upward_imports(graph)
    print(f"checkout: {repo}")
    print(f"imports that run up a layer: {len(upward)}")
    for line in upward[:top]:
        print(f"  {line}")
    packages = graph_rules.package_graph(graph)
    edges = [f"{a}->{b}" for a in sorted(packages) for b in sorted(packages[a])]
    print(f"package-level edges: {len(edges)}: {', '.join(edges)}")
    print(f"cycles among packages: {graph_rules.cycles(packages)}")
    print(f"cycles among modules: {graph_rules.cycles(graph)}")
    classes, functions = shapes(repo)
    print("largest classes (methods, fields):")
    for methods, fields, where in classes[:top]:
        print(f"  {methods:3d} methods {fields:3d} fields  {where}")
    print("longest functions (lines):")
    for lines, where in functions[:top]:
        print(f"  {lines:4d}  {where}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    parser.add_argument("--top", type=int, default=3, help="how many classes, functions and upward imports to list")
    args = parser.parse_args()
    report(args.repo.resolve(), args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())

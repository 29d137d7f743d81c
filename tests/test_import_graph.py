"""The project's imports run one way, down the layers of ``LAYERS``, and sit at the top of modules.

Every module of the project's packages is parsed (ast, nothing is imported), and each import of a
project module, at the top, inside a function or under ``TYPE_CHECKING``, is an edge. No edge may
run up a layer, the top-level packages import each other without a cycle, and no module imports
itself back through others: ``python -m harness`` then loads each module once, in one order. An
import inside a function is kept only for a heavy optional dependency and says why in a comment on
its line. harness/README.md draws the same layers.
"""

from __future__ import annotations

import pytest

import ast
import functools
from pathlib import Path

from tests.test_cli import ROOT, harness

PACKAGES = ("harness", "strategies", "tasks", "reference_agent", "benchmarks", "hydra_plugins")
RESOLVER_PLUGIN = "hydra_plugins"  # imported by Hydra without the harness: it may import no other project package

CONFIG_RESOLVERS = 0
CONTRACTS, COMPONENTS, TRIAL, RUNS_AS_DATA, RUNNER, FRONT_END, CONSUMERS = range(1, 8)
LAYERS: dict[str, int] = {
    # 0. the configs' resolvers and the run folder's naming they compute (budgets, a run's identity and hash):
    #    Hydra imports them while it discovers plugins, before and without the harness, so they import nothing of
    #    the project. Below the contracts, not beside them: harness.budget (a contract) re-exports the budget
    #    parsing from here, and a contract that imported the plugin back would be an import running up a layer
    "hydra_plugins.ctxbench_resolvers": CONFIG_RESOLVERS,
    # 1. contracts: the strategy contract and the message, budget and error helpers every layer reads
    "harness.contracts": CONTRACTS,
    "harness.conversation": CONTRACTS,
    "harness.budget": CONTRACTS,
    "harness.errors": CONTRACTS,
    # 2. components: what a config names (strategies, task families, model backends)
    "strategies": COMPONENTS,
    "tasks": COMPONENTS,
    "harness.models": COMPONENTS,
    # 3. one trial: the agent loop, sub-agents, accounting, records (the rest of harness/)
    "harness": TRIAL,
    # 4. runs as data: identity, analysis, the end-of-run table, plots, a run's outputs (the runner writes them)
    "harness.identity": RUNS_AS_DATA,
    "harness.analysis": RUNS_AS_DATA,
    "harness.lazy": RUNS_AS_DATA,
    "harness.plots": RUNS_AS_DATA,
    "harness.report": RUNS_AS_DATA,
    "harness.run_outputs": RUNS_AS_DATA,
    # 5. the runner: a config composed, checked, planned and run
    "harness.runner": RUNNER,
    "harness.config": RUNNER,
    "harness.plugins": RUNNER,
    "harness.workers": RUNNER,
    "harness.run_lock": RUNNER,
    "harness.dryrun": RUNNER,
    "harness.retry_errors": RUNNER,
    # 6. the front end: the command line, the HTML view, imports and exports, the inspect_ai bridge
    "harness.__main__": FRONT_END,
    "harness.cli": FRONT_END,
    "harness.commands": FRONT_END,
    "harness.check": FRONT_END,  # `check`: builds strategies and families as the runner does
    "harness.view": FRONT_END,
    "harness.view_data": FRONT_END,
    "harness.view_svg": FRONT_END,
    "harness.importer": FRONT_END,
    "harness.import_mapping": FRONT_END,
    "harness.integrations": FRONT_END,
    # 7. what uses the whole: the reference agent (a model built on tasks and strategies) and the benchmarks
    "reference_agent": CONSUMERS,
    "benchmarks": CONSUMERS,
}
"""Module-name prefix -> its layer, bottom (0) to top (7); a module's layer is its longest matching prefix
(``harness.models.base``: ``harness.models``, 2; ``harness.trial``: ``harness``, 3). A module may import its own
layer and those below it, never one above: the loop never imports the runner, the strategies only the contracts."""


def module_name(path: Path, root: Path = ROOT) -> str:
    """``harness/models/base.py`` -> ``harness.models.base``; a package's ``__init__.py`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the project's packages under ``root`` (this checkout, or another one), by dotted name."""
    return {
        module_name(p, root): p
        for package in PACKAGES
        if (root / package).is_dir()
        for p in sorted((root / package).rglob("*.py"))
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


def imports_of(path: Path, modules: dict[str, Path], root: Path = ROOT) -> list[tuple[ast.stmt, str, bool]]:
    """``(statement, project module, inside a function)`` for every import of a project module in ``path``."""
    module = module_name(path, root)
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


IMPORTERS = ("import_module", "__import__")  # importlib.import_module(name), import_module(name), __import__(name)


def module_constants(tree: ast.Module) -> dict[str, str]:
    """The module-level names bound to a string literal (``NAMER = "harness.config"``)."""
    return {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }


def imports_by_name(source: str, modules: dict[str, Path]) -> list[str]:
    """``"line N imports <module> by name"`` for each ``import_module`` / ``__import__`` call in ``source`` whose
    argument is a project module's name as a literal, or a module-level constant holding one: an import the graph
    cannot see (an f-string or a name read from a config is a lookup, not a fixed edge, and is not reported)."""
    tree = ast.parse(source)
    constants = module_constants(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        argument = node.args[0]
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            name: str | None = argument.value
        else:
            name = constants.get(argument.id) if isinstance(argument, ast.Name) else None
        target = resolve(name.partition(":")[0], modules) if called in IMPORTERS and name else None
        if target:
            found.append(f"line {node.lineno} imports {target} by name")
    return found


@functools.lru_cache(maxsize=2)
def _parsed_graph(root: Path) -> tuple[tuple[str, frozenset[str]], ...]:
    """The import graph of the checkout at ``root``, parsed once per process (its files do not change meanwhile)."""
    modules = project_modules(root)
    return tuple(
        (name, frozenset(target for _, target, _ in imports_of(path, modules, root))) for name, path in modules.items()
    )


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Project module -> the project modules it imports (at the top or inside functions), for this checkout or the
    one at ``root`` (benchmarks/code_shape.py); a fresh copy that a test may change (the tests that inject an edge
    do)."""
    return {name: set(targets) for name, targets in _parsed_graph(root)}


def layer_of(module: str) -> int | None:
    """The layer of ``module``: its longest prefix in ``LAYERS`` (a whole dotted part); None outside the table."""
    name = module
    while name:
        if name in LAYERS:
            return LAYERS[name]
        name = name.rpartition(".")[0]
    return None


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """``"importer -> imported (layer a -> b)"`` for every edge of ``graph`` that runs up a layer, sorted."""
    found = []
    for module, targets in graph.items():
        source = layer_of(module)
        for target in targets:
            destination = layer_of(target)
            if source is not None and destination is not None and destination > source:
                found.append(f"{module} -> {target} (layer {source} -> {destination})")
    return sorted(found)


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The top-level packages' graph: an edge wherever a module imports a module of another package."""
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        top = module.split(".")[0]
        packages.setdefault(top, set()).update(t.split(".")[0] for t in targets if t.split(".")[0] != top)
    return packages


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


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_the_graph_sees_imports_inside_functions():
    modules = project_modules()
    assert "harness.cli" in import_graph()["harness.__main__"]
    assert any(
        late for _, target, late in imports_of(ROOT / "harness" / "report.py", modules) if target == "harness.plots"
    )


def test_every_module_has_a_layer_and_every_layer_entry_names_modules():
    modules = project_modules()
    assert not [m for m in modules if layer_of(m) is None]
    stale = [p for p in LAYERS if not any(m == p or m.startswith(f"{p}.") for m in modules)]
    assert not stale, f"LAYERS names no module: {stale}"


def test_the_longest_prefix_decides_the_layer():
    assert layer_of("harness.models.wrappers") == COMPONENTS
    assert layer_of("harness.agent_loop") == TRIAL
    assert layer_of("harness.integrations.inspect") == FRONT_END
    assert layer_of("harness.contracts") == CONTRACTS
    assert layer_of("harness.contractsx") == TRIAL
    assert layer_of("numpy") is None


def test_no_import_runs_up_a_layer():
    assert upward_imports(import_graph()) == []


def test_an_added_upward_import_is_reported():
    graph = import_graph()
    graph["harness.conversation"].add("harness.runner")
    graph["strategies.headtail"].add("harness.runner")
    assert upward_imports(graph) == [
        f"harness.conversation -> harness.runner (layer {CONTRACTS} -> {RUNNER})",
        f"strategies.headtail -> harness.runner (layer {COMPONENTS} -> {RUNNER})",
    ]


def test_the_resolver_plugin_imports_nothing_of_the_harness():
    graph = import_graph()
    plugin = {m: targets for m, targets in graph.items() if m.startswith(f"{RESOLVER_PLUGIN}.")}
    assert {"resolvers", "_naming", "_budget"} <= {m.rpartition(".")[2] for m in plugin}
    outside = {m: sorted(t for t in ts if not t.startswith(f"{RESOLVER_PLUGIN}.")) for m, ts in plugin.items()}
    assert not any(outside.values()), f"Hydra imports hydra_plugins/ without the harness: {outside}"
    assert package_graph(graph)[RESOLVER_PLUGIN] == set()
    assert layer_of("hydra_plugins.ctxbench_resolvers._naming") == CONFIG_RESOLVERS < layer_of("harness.budget")


def test_a_resolver_that_imported_the_harness_is_reported():
    graph = import_graph()
    graph["hydra_plugins.ctxbench_resolvers.resolvers"].add("harness.config")
    assert upward_imports(graph) == [
        f"hydra_plugins.ctxbench_resolvers.resolvers -> harness.config (layer {CONFIG_RESOLVERS} -> {RUNNER})"
    ]
    assert ["harness", "hydra_plugins"] in cycles(package_graph(graph))


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_no_module_imports_a_project_module_by_name():
    modules = project_modules()
    found = [
        f"{path.relative_to(ROOT).as_posix()}: {line}"
        for path in modules.values()
        for line in imports_by_name(path.read_text(encoding="utf-8"), modules)
    ]
    assert not found, f"an import by name is invisible to the import graph: import the module instead: {found}"


def test_an_import_by_name_is_found():
    modules = project_modules()
    probe = 'import importlib\nNAMER = "harness.config"\n\ndef name(cfg):\n    return importlib.import_module(NAMER)\n'
    assert imports_by_name(probe, modules) == ["line 5 imports harness.config by name"]
    assert imports_by_name('from importlib import import_module\nimport_module("harness.identity")', modules) == [
        "line 2 imports harness.identity by name"
    ]
    assert imports_by_name('__import__("strategies.headtail:HeadTail")', modules) == [
        "line 1 imports strategies.headtail by name"
    ]
    dynamic = 'import importlib\nimportlib.import_module(f"tasks.{name}")\nimportlib.import_module("json")'
    assert imports_by_name(dynamic, modules) == []


def test_the_top_level_packages_import_each_other_without_a_cycle():
    packages = package_graph(import_graph())
    assert "strategies" not in packages["harness"], "harness reads the strategy contract from harness.contracts"
    assert cycles(packages) == []


def test_an_added_package_cycle_is_found():
    graph = import_graph()
    graph["harness.runner"].add("strategies.headtail")
    assert ["harness", "strategies"] in cycles(package_graph(graph))


def test_no_module_imports_itself_back():
    found = cycles(import_graph())
    assert not found, f"import cycles: {found}"


def test_an_added_module_cycle_is_found():
    graph = import_graph()
    graph["harness.conversation"].add("harness.agent_loop")
    assert any({"harness.conversation", "harness.agent_loop"} <= set(c) for c in cycles(graph))


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
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

"""``python -m harness check strategy=... | task=...``: the conformance suite on any strategy or task family.

``check strategy=NAME_OR_CLASS_PATH [strategy.param=value ...] [budget=B]`` builds the strategy as ``run``
does (the config composed and checked by harness/config.py, class paths and entry points by
harness/plugins.py, ``harness.runner.build``) and runs harness/strategy_conformance.py on random histories
(seeded), the recorded ones (harness/conformance_histories/), its tools and hooks; then a second process
(another hash seed) replays some of the histories and must produce the same outputs (``cross_process``).
``check task=NAME_OR_CLASS_PATH [task.knob=value ...]`` runs harness/task_conformance.py on a few seeds, and
compares the fingerprints with a second process's.

It prints one row per check (``pass``, ``FAIL`` with the first failure's reason, or ``skip``) and exits 0
when every check passes, 1 when one fails, 2 on bad input (one line: an unknown strategy or task, a bad
parameter, a key that is neither). Decision: the checks run on the same code as the in-repo tests
(tests/test_strategy_conformance.py drives ``strategy_conformance`` with hypothesis), so an author's class
meets the same bar as the built-ins.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable

from harness import strategy_conformance as sc
from harness import task_conformance as tc
from harness.budget import BudgetError, parse_budget
from harness.config import CONFIG_DIR, compose_checked, container_dict, register_plugins, validate_overrides
from harness.contracts import full_strategy
from harness.errors import ConfigError, UsageError
from harness.runner import build, build_families
from tasks.base import TaskFamily
from tasks.registry import registered_families

STRATEGY_CHECKS = (
    ("runs", "prepare returns messages and raises nothing"),
    ("no_mutation", "input not mutated (hashed before and after prepare)"),
    ("projection", "valid projection, tool order and offered tools"),
    ("own_results", "a rewritten tool result speaks of its own call"),
    ("deterministic", "two fresh instances give equal outputs"),
    ("cross_process", "another process gives the same outputs"),
    ("budget", "declared budget guarantee held"),
    ("tools", "tools answer hostile arguments (result or short ToolError)"),
    ("hooks", "declared hooks answer (server_options, observe_server_edits)"),
)
TASK_CHECKS = (
    ("generates", "generate(seed) gives a TaskInstance"),
    ("deterministic", "the same seed twice gives the same fingerprint"),
    ("cross_process", "another process gives the same fingerprints"),
    ("answer_key", "the answer key grades as success"),
    ("wrong_answers", "empty, changed and ill-shaped answers fail"),
    ("tools", "tools answer their schema's calls without raising"),
)
RANDOM_HISTORIES = 30
CROSS_PROCESS_HISTORIES = 5
"""Random histories the second process replays (the recorded ones too)."""
CHILD_TIMEOUT_S = 120


def cmd_check(overrides: list[str], histories: int = RANDOM_HISTORIES, seeds: int = len(tc.DEFAULT_SEEDS)) -> int:
    """Check the strategy or the task family ``overrides`` name; print the table; 0 pass, 1 fail."""
    if histories < 0 or seeds < 1:
        raise UsageError(f"check: --histories must be 0 or more and --seeds 1 or more (got {histories}, {seeds})")
    kind = check_kind(overrides)
    if kind == "strategy":
        spec, budget = strategy_spec(overrides)
        rows = strategy_rows(spec, budget, histories, cross_process=True)
    else:
        spec = task_spec(overrides)
        rows = task_rows(spec, tuple(range(seeds)), cross_process=True)
    print(f"check {kind}={spec.get('name') or spec.get('_target_')} ({spec.get('_target_')})")
    print(table(rows))
    failed = [check for check, _, status, _ in rows if status == "FAIL"]
    print(f"{len(failed)} of {len(rows)} checks failed" if failed else f"all {len(rows)} checks passed")
    return 1 if failed else 0


def check_kind(overrides: list[str]) -> str:
    """``strategy`` or ``task``: the one the overrides name; ``UsageError`` for none, both or another key."""
    keys = [o.partition("=")[0].lstrip("+~") for o in overrides]
    kinds = {k for k in keys if k in ("strategy", "task")}
    if len(kinds) != 1:
        raise UsageError("check takes strategy=NAME_OR_CLASS_PATH or task=NAME_OR_CLASS_PATH (one of them)")
    kind = kinds.pop()
    allowed = ("strategy", "budget") if kind == "strategy" else ("task",)
    for override, key in zip(overrides, keys, strict=True):
        if "=" not in override or not (key in allowed or key.partition(".")[0] == kind or key == "hydra.searchpath"):
            raise UsageError(f"check {kind}=...: {override!r} is not a {kind}.KEY=VALUE override")
    return kind


def composed(overrides: list[str]) -> Any:
    """The config of ``overrides``, checked as ``run`` checks it (one line and exit 2 on a bad one)."""
    validate_overrides(overrides)
    register_plugins(overrides)
    cfg, sweeps = compose_checked(overrides)
    if sweeps:
        raise UsageError(f"check takes one value per key, not a sweep ({', '.join(sweeps)})")
    return cfg


def strategy_spec(overrides: list[str]) -> tuple[dict, int | None]:
    """The strategy's spec, built once to name a bad parameter now, and the ``budget=`` given (or ``None``)."""
    given = [o.partition("=")[2] for o in overrides if o.partition("=")[0] == "budget"]
    try:
        budget = parse_budget(given[-1]) if given else None
    except BudgetError as exc:
        raise UsageError(str(exc)) from None
    cfg = composed([o for o in overrides if o.partition("=")[0] != "budget"])
    spec = container_dict(cfg.strategy, resolve=True)
    try:
        full_strategy(build(spec, "strategy"))
    except (ConfigError, TypeError) as exc:
        raise UsageError(" ".join(str(exc).split())) from None
    return spec, budget


def task_spec(overrides: list[str]) -> dict:
    """The family's spec (a registered family without a config by its class), built once to name a bad knob."""
    overrides = [registered_as_class_path(o) for o in overrides]
    cfg = composed(overrides)
    spec = container_dict(cfg.task, resolve=True)
    try:
        family = family_of(spec)
    except ConfigError as exc:
        raise UsageError(" ".join(str(exc).split())) from None
    if not isinstance(family, TaskFamily):
        raise UsageError(f"task {spec.get('name')}: {type(family).__name__} is not a TaskFamily (tasks/base.py)")
    return spec


def registered_as_class_path(override: str) -> str:
    """``task=NAME`` of a family registered in ``tasks`` but without a config: ``task=module:Class``."""
    key, _, value = override.partition("=")
    family = registered_families().get(value) if key == "task" else None
    config = CONFIG_DIR / "task" / f"{value}.yaml"
    if family is None or config.exists():
        return override
    return f"task={family.task.__module__}:{family.task.__qualname__}"


# ---------------------------------------------------------------- the rows

Row = tuple[str, str, str, str]  # check, what it checks, pass / FAIL / skip, reason or note


def rows_of(checks: tuple[tuple[str, str], ...], failures: Iterable[sc.Failure], notes: dict[str, str]) -> list[Row]:
    """One row per check: the first failure's reason, else its note (a note starting ``skip:`` skips)."""
    first: dict[str, str] = {}
    for failure in failures:
        first.setdefault(failure.check, failure.reason)
    rows = []
    for check, what in checks:
        note = notes.get(check, "")
        if check in first:
            rows.append((check, what, "FAIL", first[check]))
        elif note.startswith("skip:"):
            rows.append((check, what, "skip", note.removeprefix("skip:").strip()))
        else:
            rows.append((check, what, "pass", note))
    return rows


def table(rows: list[Row]) -> str:
    """The rows as aligned text lines."""
    width = max(len(what) for _, what, _, _ in rows)
    lines = [f"  {'result':<6}  {'check':<{width}}  reason"]
    lines += [f"  {status:<6}  {what:<{width}}  {reason}".rstrip() for _, what, status, reason in rows]
    return "\n".join(lines)


def strategy_rows(spec: dict, budget: int | None, histories: int, cross_process: bool) -> list[Row]:
    """Every strategy check on the strategy of ``spec`` (``cross_process``: with the second process)."""
    make = strategy_maker(spec)
    checked = sc.checked_histories(histories, budget)
    with tempfile.TemporaryDirectory(prefix="ctxbench-check-") as stores:
        try:
            probe = sc.fresh(make, sc.BUDGETS[1], Path(stores))
        except Exception as exc:  # bind or tools() of the author's class: a failing row, not a traceback
            return unbound_rows(exc)
        failures = list(sc.suite_failures(make, checked, Path(stores)))
        if cross_process and not any(f.check == "runs" for f in failures):
            failures += cross_process_failures(
                {"kind": "strategy", "spec": spec, "histories": CROSS_PROCESS_HISTORIES, "budget": budget},
                lambda: strategy_digest(make, CROSS_PROCESS_HISTORIES, budget, Path(stores)),
            )
    steps = sum(len(h.ends) for h in checked)
    tools = sc.tool_names(probe)
    hooks = sc.declared_hooks(probe)
    notes = {
        "runs": f"{steps} steps on {histories} random and {len(checked) - histories} recorded histories",
        "own_results": f"on the {histories} random histories",
        "cross_process": "" if cross_process else "skip: not asked",
        "budget": f"declares {getattr(probe, 'budget_guarantee', 'none')}",
        "tools": f"{sc.TOOL_CALLS} calls to each of {', '.join(tools)}" if tools else "skip: no tools",
        "hooks": f"declares {', '.join(hooks)}" if hooks else "skip: none declared",
    }
    return rows_of(STRATEGY_CHECKS, failures, notes)


def unbound_rows(exc: Exception) -> list[Row]:
    """The rows of a strategy that cannot be bound (``bind`` or ``tools()`` raised): nothing else can run."""
    reason = f"binding it (bind, tools) raised {type(exc).__name__}: {sc.one_line(exc)}"
    notes = {check: "skip: the strategy cannot be bound" for check, _ in STRATEGY_CHECKS}
    return rows_of(STRATEGY_CHECKS, [sc.Failure("runs", reason)], notes)


def strategy_maker(spec: dict) -> Callable[[], Any]:
    """A function that builds a fresh strategy from ``spec``."""
    return lambda: build(spec, "strategy")


def strategy_digest(make: Callable[[], Any], histories: int, budget: int | None, stores: Path) -> str:
    """The hash of the outputs on the first ``histories`` random histories and the recorded ones."""
    checked = sc.checked_histories(histories, budget)
    return sc.outputs_digest(make, [(h.messages, h.ends, h.budget) for h in checked], stores)


def task_rows(spec: dict, seeds: tuple[int, ...], cross_process: bool) -> list[Row]:
    """Every task check on the family of ``spec`` at ``seeds``."""
    family = family_of(spec)
    failures = [
        *tc.generation_failures(family, seeds),
        *tc.key_failures(family, seeds),
        *tc.tool_failures(family, seeds),
    ]
    if cross_process and not any(f.check == "generates" for f in failures):
        request = {"kind": "task", "spec": spec, "seeds": list(seeds)}
        failures += cross_process_failures(request, lambda: tc.fingerprints(family, seeds))
    notes = {
        "generates": f"seeds {', '.join(map(str, seeds))}",
        "cross_process": "" if cross_process else "skip: not asked",
        "wrong_answers": "" if keyed(family, seeds) else "skip: no answer key to compare with",
    }
    return rows_of(TASK_CHECKS, failures, notes)


def keyed(family: Any, seeds: tuple[int, ...]) -> bool:
    """Whether the family's instances declare ``answer_key`` (``True`` when none can be generated: said elsewhere)."""
    try:
        return tc.has_answer_key(tc.generated(family, seeds[0]))
    except Exception:
        return True


def family_of(spec: dict) -> Any:
    """The task family of ``spec``."""
    return build_families({str(spec.get("name")): spec})[str(spec.get("name"))]


# ---------------------------------------------------------------- the second process


def cross_process_failures(request: dict, here: Callable[[], str]) -> list[sc.Failure]:
    """``request`` answered by a second Python process (another hash seed) must equal ``here()``: the hash of
    a strategy's outputs or of a family's fingerprints."""
    what = "fingerprints" if request["kind"] == "task" else "outputs"
    try:
        mine = here()
    except Exception as exc:
        return [
            sc.Failure("cross_process", f"could not hash the {what} here: {type(exc).__name__}: {sc.one_line(exc)}")
        ]
    env = {
        **os.environ,
        "PYTHONHASHSEED": str(int(os.environ.get("PYTHONHASHSEED", "0") or 0) + 7919),
        "PYTHONPATH": os.pathsep.join(p or os.getcwd() for p in sys.path),
    }
    command = [sys.executable, "-c", "from harness.check import child_main; child_main()"]
    try:
        child = subprocess.run(
            command, input=json.dumps(request), capture_output=True, text=True, env=env, timeout=CHILD_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return [sc.Failure("cross_process", f"the second process took over {CHILD_TIMEOUT_S} s")]
    theirs = child.stdout.strip().splitlines()[-1] if child.stdout.strip() else ""
    if child.returncode != 0:
        last = (child.stderr.strip().splitlines() or ["no output"])[-1]
        return [sc.Failure("cross_process", f"the second process failed: {last[:160]}")]
    if theirs != mine:
        return [sc.Failure("cross_process", f"a second process (another hash seed) gave different {what}")]
    return []


def child_main() -> None:
    """The second process: read the request on stdin, print the hash of its outputs (or fingerprints)."""
    request = json.loads(sys.stdin.read())
    if request["kind"] == "task":
        print(tc.fingerprints(family_of(request["spec"]), tuple(request["seeds"])))
        return
    with tempfile.TemporaryDirectory(prefix="ctxbench-check-") as stores:
        make = strategy_maker(request["spec"])
        print(strategy_digest(make, request["histories"], request["budget"], Path(stores)))

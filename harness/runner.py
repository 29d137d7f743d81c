"""Run orchestration: build the objects from a config, run the pending trials, write the records.

``execute(cfg, run_dir)`` is what ``python -m harness run`` calls inside each Hydra job. It reads
the Hydra config once, into a frozen ``RunConfig`` (``run_config``: the trial settings, the specs,
the plan and the run's own switches); below it nothing reads the raw config. Config problems
raise ``ConfigError`` before anything is written.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, cast

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from harness.analysis import reference_note
from harness.budget import BudgetError, format_budget, parse_budget
from harness.cache_sim import get_profile
from harness.config import CONFIG_DIR, SettingError, check_config, container_dict
from harness.contracts import full_strategy
from harness.errors import ConfigError
from harness.hooks import Hooks
from harness.identity import RUN_TIME_KEYS, RUN_TIME_MODEL_KEYS, run_key
from harness.params import convert_spec, parameter_problem
from harness.trial import TrialSettings, run_trial
from harness.models.base import Model, ModelError, PreflightError, innermost
from harness.models.faults import FaultInjecting
from harness.models.response_cache import DEFAULT_PATH, Cached, ResponseStore, request_settings
from harness.models.settings import check_model_settings
from harness.models.wrappers import Delayed, Limits, Throttled
from harness.pricing import header as pricing_header, pricing_from
from harness.records import TRIALS, RunWriter, read_trials
from harness.report import end_of_run_lines
from harness.run_outputs import write_run_outputs
from harness.run_lock import hold_run_folder
from harness.workers import capped_workers, run_jobs, uses_processes
from tasks.base import KnobError, TaskFamily

IDENTITY_FILE = "identity.json"
NOT_IDENTITY = RUN_TIME_KEYS  # harness/identity.py: the one list
NOT_IDENTITY_MODEL = RUN_TIME_MODEL_KEYS
# keys of a spec that label it, or that the harness applies around it (model.max_concurrency), not constructor arguments
LABEL_KEYS = ("name", "cache_profile", "max_concurrency")
TYPED_KINDS = ("strategy",)  # what build converts by declared types (harness/params.py) before instantiating it
DEFAULT_CACHE_PROFILE = "openai"
PROGRESS_EVERY_S = 30.0  # without a terminal: a progress line at least this often (and at every tenth)
log = logging.getLogger("ctxbench")  # Hydra writes it to ctxbench.log in the run folder


@dataclass
class TrialJob:
    """One pending trial. ``instance`` is generated for this trial alone (tools may keep state)."""

    trial_id: str
    family: str
    family_obj: TaskFamily
    seed: int
    trial_index: int
    instance: Any = None

    def take_instance(self) -> Any:
        """The trial's own instance (generated now unless planning already made it)."""
        instance, self.instance = self.instance or self.family_obj.generate(self.seed), None
        return instance


def _node(cfg: Any) -> dict:
    return container_dict(cfg, resolve=True) if isinstance(cfg, DictConfig) else dict(cfg)


def build(spec: dict, what: str, labels: tuple[str, ...] = LABEL_KEYS) -> Any:
    """Instantiate a ``_target_`` spec (its ``labels`` keys, ``name`` and ``cache_profile`` by default, are
    not arguments).

    A strategy's parameters are converted by their declared types first (``params.convert_spec``: ``60k`` -> 60000;
    a value they refuse is one line). Any other failure names the parameter whose value does not fit, when the
    declared types tell it.
    """
    kind = what.split(" ", 1)[0]
    name = spec.get("name")
    if name and str(name) not in what:
        what = f"{what} {name}"
    if kind in TYPED_KINDS:
        spec = convert_spec(spec, kind)
    arguments = {k: v for k, v in spec.items() if k not in labels}
    try:
        return instantiate(arguments, _convert_="all")
    except Exception as exc:  # hydra wraps constructor errors
        cause: BaseException = exc
        while cause.__cause__ is not None:
            cause = cause.__cause__
        named = {**arguments, "name": name} if name else arguments
        raise ConfigError(f"cannot build {what}: {bad_parameters(named, kind)}{cause}") from None


def build_model(spec: dict, what: str = "model") -> Any:
    """A model (or summarizer) from its preset; the preset's ``name`` is passed on, so that every message
    of the model names the preset the user chose (``model vllm: cannot reach ...``). Every ``{what}.*`` value the
    table of harness/models/settings.py names is checked first (a bad one: ``ConfigError``, before any trial)."""
    check_model_settings(spec, what)
    return build(spec, what, labels=tuple(k for k in LABEL_KEYS if k != "name"))


def bad_parameters(spec: dict, kind: str) -> str:
    """``kind.keep=foo: ... takes an integer (default 3); `` when the declared types refuse a value or a key of
    ``spec`` (harness/params.py), else ``''``."""
    problem = parameter_problem(spec, kind)
    return f"{problem}; " if problem else ""


def recorded_strategy_name(spec: dict) -> str:
    """The strategy name recorded in every row: the config's ``name``, unless its ``_target_`` was changed.

    ``strategy._target_=my_pkg.MyStrategy`` on top of ``strategy=none`` runs ``MyStrategy``:
    recording it as ``none`` would pool it with the real baseline, so the row names the
    class path instead. A name with no config of its own in ``configs/strategy/`` is kept.
    """
    target = str(spec.get("_target_", "?"))
    name = spec.get("name")
    if not name:
        return target
    path = CONFIG_DIR / "strategy" / f"{name}.yaml"
    if path.exists():
        own = cast(DictConfig, OmegaConf.load(path)).get("_target_")  # a strategy's config file is a mapping
        if own is not None and str(own) != target:
            return target
    return str(name)


def strategy_params(spec: dict) -> dict:
    """The strategy's parameters as recorded in every row."""
    return {k: v for k, v in spec.items() if k not in ("name", "_target_")}


@dataclass(frozen=True)
class PlanSpec:
    """What decides a run's trials: the task families' specs, the instances of each, the first seed, the trials."""

    families: dict[str, dict]
    instances: int
    seed: int
    trials: int


def plan_spec(cfg: DictConfig) -> PlanSpec:
    """The run's ``PlanSpec``: ``task`` alone if set, else the suite's families (``trials`` is checked by
    ``settings_from``)."""
    specs = {cfg.task.name: _node(cfg.task)} if cfg.get("task") else _node(cfg.suite.families)
    return PlanSpec(specs, int(cfg.suite.get("instances", 1)), int(cfg.seed), int(cfg.trials))


def families_from(cfg: DictConfig) -> dict[str, TaskFamily]:
    """The task families of the run: ``task`` alone if set, else the suite's."""
    return build_families(plan_spec(cfg).families)


def build_families(specs: dict[str, dict]) -> dict[str, TaskFamily]:
    """The task families built from their specs (a bad knob: ``ConfigError`` naming it)."""
    families = {}
    for name, spec in specs.items():
        try:
            families[name] = build(spec, f"task family {name}")
        except ConfigError as exc:
            raise ConfigError(str(exc).replace("cannot build task family", "bad task knob for")) from None
    return families


def identity(cfg: DictConfig) -> dict:
    """The part of the config that decides what a trial is; a run folder holds one identity."""
    data = _node(cfg)
    for key in NOT_IDENTITY:
        data.pop(key, None)
    for node in ("model", "summarizer"):
        if isinstance(data.get(node), dict):
            for key in NOT_IDENTITY_MODEL:
                data[node].pop(key, None)
    return data


def check_identity(run_dir: Path, ident: dict) -> None:
    """Refuse to mix two configs in one folder (resume needs the same config, however it was spelled)."""
    path = run_dir / IDENTITY_FILE
    if not path.exists():
        return
    old, new = run_key(json.loads(path.read_text())), run_key(ident)
    if old != new:
        keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        raise ConfigError(
            f"{run_dir} already holds a run of a different config (differs in: {', '.join(keys)}); "
            "choose another folder with hydra.run.dir=..., or start over with --fresh"
        )


def plan(cfg: DictConfig) -> tuple[list[TrialJob], dict[str, TaskFamily]]:
    """Every trial of the run, in a fixed order, and its task families."""
    spec = plan_spec(cfg)
    families = build_families(spec.families)
    return plan_jobs(spec, families), families


def plan_jobs(spec: PlanSpec, families: dict[str, TaskFamily]) -> list[TrialJob]:
    """Every trial of ``spec`` over ``families``, in a fixed order (each instance generated once, for its
    first trial)."""
    jobs: list[TrialJob] = []
    for name, family in families.items():
        for i in range(spec.instances):
            try:
                instance = family.generate(spec.seed + i)
            except KnobError as exc:
                raise ConfigError(str(exc)) from None
            for t in range(spec.trials):
                jobs.append(
                    TrialJob(f"{instance.id}-t{t}", name, family, spec.seed + i, t, instance if t == 0 else None)
                )
    return jobs


PLAN_FILE = "plan.json"


def plan_in(spec: PlanSpec, run_dir: Path) -> list[TrialJob]:
    """The run's trials, as ``plan`` makes them, read back from the run folder's ``plan.json`` when it has one.

    The folder holds one config (``check_identity``), and generation is deterministic, so the
    recorded plan is the plan: a rerun generates an instance only for a trial it runs
    (``TrialJob.take_instance``), and a no-op rerun generates none.
    """
    families = build_families(spec.families)
    saved = read_plan(Path(run_dir) / PLAN_FILE)
    if saved is None or {family for family, *_ in saved} - set(families):
        return plan_jobs(spec, families)
    return [TrialJob(trial_id, family, families[family], seed, trial) for family, seed, trial, trial_id in saved]


def read_plan(path: Path) -> list[tuple[str, int, int, str]] | None:
    """The jobs ``write_plan`` recorded (``None`` when there is no readable plan)."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))["jobs"]
        return [(str(f), int(seed), int(trial), str(trial_id)) for f, seed, trial, trial_id in rows]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_plan(path: Path, jobs: list[TrialJob]) -> None:
    """Record the run's jobs (family, seed, trial, trial id) in ``path``."""
    rows = [[job.family, job.seed, job.trial_index, job.trial_id] for job in jobs]
    path.write_text(json.dumps({"jobs": rows}, indent=0), encoding="utf-8")


def settings_from(cfg: DictConfig, run_dir: Path) -> tuple[TrialSettings, dict, dict]:
    """Trial settings plus the strategy and model specs."""
    try:
        budget = parse_budget(cfg.budget)
    except BudgetError as exc:
        raise ConfigError(str(exc)) from None
    try:
        check_config(cfg)  # trials, seed, hooks, task knobs, the plan's size...: declared once, in harness/config.py
    except SettingError as exc:
        raise ConfigError(str(exc)) from None
    strategy_spec = _node(cfg.strategy)
    model_spec = _node(cfg.model)
    try:
        pricing = pricing_from(
            _node(cfg.pricing) if cfg.get("pricing") else None,
            model_spec,
            _node(cfg.summarizer) if cfg.get("summarizer") else None,
        )
    except TypeError as exc:
        raise ConfigError(f"bad pricing profile: {exc}") from None
    try:
        cache_profile = get_profile(
            cfg.get("cache_profile") or model_spec.get("cache_profile") or DEFAULT_CACHE_PROFILE
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    settings = TrialSettings(
        budget=budget,
        max_steps=int(cfg.max_steps),
        strategy_name=recorded_strategy_name(strategy_spec),
        strategy_params=strategy_params(strategy_spec),
        model_name=str(model_spec.get("name", "?")),
        pricing=pricing,
        run_name=run_dir.name,
        cache_profile=cache_profile,
        hooks=Hooks(**_node(cfg.hooks)) if cfg.get("hooks") else Hooks(),
    )
    return settings, strategy_spec, model_spec


@dataclass(frozen=True)
class RunConfig:
    """Everything a run reads of its config, read and checked once, at the edge (``run_config``): below
    ``execute`` nothing reads the raw config."""

    settings: TrialSettings
    strategy_spec: dict
    model_spec: dict
    summarizer_spec: dict | None
    plan: PlanSpec
    identity: dict
    text: str
    """The config as YAML, for ctxbench.log."""
    max_cost: float | None
    latency_s: float
    faults: dict | None
    cache_responses: bool
    response_cache: str | None
    workers: int
    progress: bool
    plots: bool


def run_config(cfg: DictConfig, run_dir: Path) -> RunConfig:
    """The run's ``RunConfig`` (a bad setting: ``ConfigError``, before anything is written)."""
    settings, strategy_spec, model_spec = settings_from(cfg, run_dir)
    return RunConfig(
        settings=settings,
        strategy_spec=strategy_spec,
        model_spec=model_spec,
        summarizer_spec=_node(cfg.summarizer) if cfg.get("summarizer") else None,
        plan=plan_spec(cfg),
        identity=identity(cfg),
        text=OmegaConf.to_yaml(cfg).rstrip(),
        max_cost=max_cost_from(cfg),
        latency_s=float(cfg.get("latency_s") or 0),
        faults=_node(cfg.faults) if cfg.get("faults") else None,
        cache_responses=bool(cfg.get("cache_responses")),
        response_cache=cfg.get("response_cache"),
        workers=max(1, int(cfg.get("workers", 1))),
        progress=bool(cfg.get("progress", True)),
        plots=bool(cfg.get("plots", True)),
    )


def wrap_model(model: Any, run: RunConfig, store: Any = None) -> Any:
    """Apply the wrappers, innermost first: ``latency_s``, the response cache (``Cached``, when ``store``
    is given), ``faults`` (fault injection), then the model's limits (``Throttled``: ``max_concurrency``
    and the shared rate-limit pause) outermost.

    The cache sits inside the injector, so it records real replies only: a run without faults never
    replays an injected reply, and a rerun with the same faults replays every model call and injects
    the same faults again. A replayed call skips the latency; the limits hold every call and the
    injector's retries (an injected 429 pauses every worker, as a real one does).

    Preflight and lifecycle (``check``, ``__enter__``) run on the bare model before this.
    """
    spec = run.model_spec
    if run.latency_s:
        model = Delayed(model, run.latency_s)
    model = cache(model, spec, store)
    if run.faults:
        try:
            model = FaultInjecting(model, **run.faults)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"faults: {exc}") from None
    return limit(model, spec)


def limit_and_cache(model: Any, spec: dict, store: Any = None) -> Any:
    """``model`` under its shared limits (``spec['max_concurrency']``), then the response cache if ``store``."""
    return cache(limit(model, spec), spec, store)


def limit(model: Any, spec: dict) -> Any:
    """``model`` under its shared limits (``spec['max_concurrency']`` and the rate-limit pause)."""
    try:
        return Throttled(model, Limits(str(getattr(model, "name", "model")), spec.get("max_concurrency")))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"model {spec.get('name', '?')}: {exc}") from None


def cache(model: Any, spec: dict, store: Any = None) -> Any:
    """``model`` behind the response cache when ``store`` is given (keyed by ``request_settings(spec)``)."""
    if store is None:
        return model
    return Cached(model, store, request_settings(spec))


def response_store(run: RunConfig) -> Any:
    """The shared ``ResponseStore`` when ``cache_responses`` is true (``response_cache``: its file), else None."""
    if not run.cache_responses:
        return None
    path = run.response_cache or DEFAULT_PATH
    try:
        return ResponseStore(path)
    except (OSError, sqlite3.Error) as exc:
        raise ConfigError(f"response_cache={path}: cannot open it ({exc})") from None


def banner(model: Model, settings: TrialSettings, n_pending: int, n_done: int, run_dir: Path) -> str:
    """The first lines a run prints."""
    lines = [f"ctxbench run -> {run_dir}"]
    if model.is_reference:
        lines.append(f"model: {settings.model_name} = {getattr(model, 'label', 'reference agent (not an LLM)')}")
    else:
        lines.append(f"model: {settings.model_name}")
    lines.append(
        f"strategy: {settings.strategy_name} {settings.strategy_params or ''}  "
        f"budget: {format_budget(settings.budget)}  "
        f"max_steps: {settings.max_steps}  trials to run: {n_pending} (already recorded: {n_done})"
    )
    lines.append(f"pricing: {pricing_header(settings.pricing)}  cache profile: {settings.cache_profile.name}")
    return "\n".join(lines)


def execute(cfg: DictConfig, run_dir: Path, echo: Callable[[str], None] = print) -> list[dict]:
    """Run every pending trial of ``cfg`` into ``run_dir``; return the rows written now.

    The run holds ``run_dir`` (harness/run_lock.py): a second process on it is a ``ConfigError``.
    """
    with hold_run_folder(Path(run_dir)):
        return _execute(cfg, Path(run_dir), echo)


def _execute(cfg: DictConfig, run_dir: Path, echo: Callable[[str], None] = print) -> list[dict]:
    run_dir = Path(run_dir)
    run = run_config(cfg, run_dir)  # the one reading of the config: below here, nothing reads cfg
    model = build_model(run.model_spec)
    summarizer = build_model(run.summarizer_spec, "summarizer") if run.summarizer_spec is not None else None
    check_server_side(build(run.strategy_spec, "strategy"), model, run.settings.strategy_name)  # bad parameters too
    check_identity(run_dir, run.identity)
    jobs = plan_in(run.plan, run_dir)
    models = [m for i, m in enumerate((model, summarizer)) if m is not None and (i == 0 or m is not model)]
    preflight(models)
    check_tasks(models, jobs)
    with contextlib.ExitStack() as stack:
        for m in models:  # a backend with a lifecycle (the local llama.cpp server) starts here
            if hasattr(m, "__enter__"):
                try:
                    stack.enter_context(m)
                except (PreflightError, ModelError) as exc:
                    raise ConfigError(f"model {getattr(m, 'name', '?')}: {exc}") from None
        store = response_store(run)
        if store is not None:
            stack.callback(store.close)
        if summarizer is not None and run.summarizer_spec is not None:
            summarizer = limit_and_cache(summarizer, run.summarizer_spec, store)
        return _run(run, run_dir, wrap_model(model, run, store), summarizer, jobs, echo)


def check_server_side(strategy: Any, model: Model, strategy_name: str) -> None:
    """Refuse a server-side strategy on a backend that does not apply its parameters, and an object that is not a
    strategy (one line, exit 2)."""
    try:
        full = full_strategy(strategy)
    except TypeError as exc:
        raise ConfigError(f"strategy {strategy_name}: {exc}") from None
    need = full.server_side
    if not need:
        return
    backend = innermost(model)
    if need == "context_management" and getattr(backend, "server_context_management", False):
        return
    supported = ", ".join(f"model={m}" for m in full.supporting_models) or "none"
    raise ConfigError(
        f"strategy {strategy_name} needs a backend that applies server-side context management; "
        f"model {getattr(model, 'name', '?')} does not (supported: {supported})"
    )


def preflight(models: list[Any]) -> None:
    """Call each model's ``check()`` (API key present, endpoint reachable, extra installed)."""
    for m in models:
        check = getattr(m, "check", None)
        if callable(check):
            try:
                check()
            except PreflightError as exc:
                raise ConfigError(str(exc)) from None


def check_tasks(models: list[Any], jobs: list[TrialJob]) -> None:
    """Call each model's ``check_task(instance)`` (the reference agent: a policy for the family) on the first planned
    instance of every family, before any trial runs; a ``PreflightError`` is one line, exit 2, nothing written.

    A rerun that reads its plan back has no instances (``plan_in``) and checks nothing: its first run was checked."""
    checks = [m.check_task for m in models if callable(getattr(m, "check_task", None))]
    firsts: dict[str, Any] = {}
    for job in jobs if checks else []:
        if job.instance is not None:
            firsts.setdefault(job.family, job.instance)
    for instance in firsts.values():
        for check in checks:
            try:
                check(instance)
            except PreflightError as exc:
                raise ConfigError(str(exc)) from None


def _run(
    run: RunConfig,
    run_dir: Path,
    model: Model,
    summarizer: Model | None,
    jobs: list[TrialJob],
    echo: Callable[[str], None],
) -> list[dict]:
    settings = run.settings
    writer = RunWriter(run_dir)
    for line in writer.recovered:  # corrupt lines of the records, kept aside (harness/records.py)
        echo(line)
        log.warning("%s", line)
    if not (run_dir / IDENTITY_FILE).exists():  # the first spelling of the config stays
        (run_dir / IDENTITY_FILE).write_text(json.dumps(run.identity, indent=1, sort_keys=True))
    if not (run_dir / PLAN_FILE).exists():
        write_plan(run_dir / PLAN_FILE, jobs)
    pending = [job for job in jobs if job.trial_id not in writer.done]
    head = banner(model, settings, len(pending), len(jobs) - len(pending), run_dir)
    echo(head)
    log.info("config:\n%s", run.text)
    log.info("%s", head)
    text_cache: dict[str, int] = {}
    rows: list[dict] = []

    def one(job: TrialJob, out: Any) -> dict:
        strategy = build(run.strategy_spec, "strategy")
        return run_trial(
            trial_id=job.trial_id,
            trial_index=job.trial_index,
            instance=job.take_instance(),
            strategy=strategy,
            model=model,
            summarizer=summarizer,
            settings=settings,
            writer=out,
            text_cache=text_cache,
        )

    progress = _progress(len(pending), run.progress)
    workers, capped = capped_workers(run.workers, len(pending))
    if capped:
        echo(capped)
        log.info("%s", capped)
    spend = CostLimit(run.max_cost, *recorded_cost(run_dir, {job.trial_id for job in jobs}))

    def commit(row: dict, steps: list[dict]) -> None:
        for step in steps:  # a worker process's steps: written here, before the row that commits them
            writer.step(step)
        rows.append(_commit(writer, row, progress))
        spend.add(row)

    shared = run.cache_responses or run.model_spec.get("max_concurrency") is not None  # one process holds them
    processes = uses_processes(model, workers, shared_state=shared)
    log.info("workers: %d %s", workers, "processes" if processes else "threads" if workers > 1 else "")
    try:
        started = run_jobs(pending, one, commit, workers, spend.reached, writer, processes)
    except KeyboardInterrupt:
        log.info("interrupted after %d trials of this session", len(rows))
        raise
    finally:
        progress.close()
        writer.close()
    writer.canonicalize([job.trial_id for job in jobs])
    trials = write_run_outputs(run_dir, settings, plots=run.plots)
    successes = int(trials["success"].astype(bool).sum()) if len(trials) else 0
    lines = [f"done: {len(trials)} trials, {successes} succeeded; records in {run_dir}", *end_of_run_lines(trials)]
    if model.is_reference:
        lines.append(f"note: these results come from the {reference_note(trials)}.")
    lines.extend(no_server_edits_lines(run, model, trials))
    if started < len(pending):
        lines.append(spend.stop_line())
    for line in lines:
        echo(line)
        log.info("%s", line)
    return rows


def no_server_edits_lines(run: RunConfig, model: Model, trials: Any) -> list[str]:
    """One warning line when a server-side strategy ran and the server reported no edit in any trial.

    A backend forced to send context management (``model.server_context_management=true``) to a server
    that ignores it would otherwise report 0 compactions and say nothing.
    """
    if not len(trials) or not full_strategy(build(run.strategy_spec, "strategy")).server_side:
        return []
    if int(trials["compactions"].fillna(0).sum()) > 0:
        return []
    return [
        f"warning: strategy {run.settings.strategy_name}: model {run.settings.model_name} reported no server "
        f"context edit in {len(trials)} trials (0 compactions); if the server ignores context_management, "
        "the run measured the unmanaged history"
    ]


def max_cost_from(cfg: DictConfig) -> float | None:
    """The config's ``max_cost`` in USD (None: no limit); ``ConfigError`` unless a positive number."""
    value = cfg.get("max_cost")
    if value is None:
        return None
    try:
        limit = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"max_cost={value!r} must be a number of USD (or null)") from None
    if not limit > 0:
        raise ConfigError(f"max_cost={value} must be > 0 (or null for no limit)")
    return limit


def recorded_cost(run_dir: Path, trial_ids: set[str]) -> tuple[float, int]:
    """USD cost and number of the trials of ``trial_ids`` already recorded in ``run_dir/trials.jsonl`` (its valid
    rows: ``RunWriter`` has set the others aside by now)."""
    rows = [r for r in read_trials(Path(run_dir) / TRIALS) if r["trial_id"] in trial_ids]
    return sum(float(r.get("cost") or 0.0) for r in rows), len(rows)


@dataclass
class CostLimit:
    """``max_cost``: the accumulated cost of the recorded trials (earlier sessions included) against a limit."""

    limit: float | None
    spent: float = 0.0
    trials: int = 0

    def add(self, row: dict) -> None:
        """Count one recorded trial."""
        self.spent += float(row.get("cost") or 0.0)
        self.trials += 1

    def reached(self) -> bool:
        """True once the recorded trials cost ``limit`` or more (never without a limit)."""
        return self.limit is not None and self.spent >= self.limit

    def stop_line(self) -> str:
        """The one line that says why the run stopped early."""
        return (
            f"stopped: max_cost ${self.limit:.2f} reached after {self.trials} trials (${self.spent:.4f}); "
            "rerun with a higher max_cost to resume"
        )


def trial_line(row: dict) -> str:
    """One trial's outcome, for ctxbench.log."""
    line = (
        f"trial {row['trial_id']}: {row['outcome']} success={bool(row['success'])} steps={row['steps']} "
        f"input_tokens(all calls)={row.get('total_input_tokens', 0):,} cost=${row.get('cost', 0.0):.4f}"
    )
    return line + (f" error: {row['error']}" if row.get("error") else "")


def _commit(writer: RunWriter, row: dict, progress: Any) -> dict:
    writer.trial(row)
    log.info("%s", trial_line(row))
    progress.record(row)
    return row


class _progress:
    """tqdm bar with success and token counts so far; without a terminal, a progress line now and then.

    Lines (on stderr) come at every tenth of the trials and at least every ``PROGRESS_EVERY_S`` seconds.
    """

    def __init__(self, total: int, enabled: bool) -> None:
        self.ok = self.tokens = self.done = 0
        self.cost = 0.0
        self.total = total
        self.bar = None
        self.lines = enabled and total > 0 and not sys.stderr.isatty()
        self.last_line = time.monotonic()
        if enabled and total and not self.lines:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="trial", file=sys.stderr, dynamic_ncols=True)

    def status(self) -> str:
        return f"success {self.ok}/{self.done}, input {self.tokens:,} tok, ${self.cost:.4f}"

    def record(self, row: dict) -> None:
        self.ok += bool(row["success"])
        self.tokens += row["total_input_tokens"]
        self.cost += row["cost"]
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix_str(self.status())
            self.bar.update(1)
        elif self.lines and self._due():
            print(f"progress: {self.done}/{self.total} trials; {self.status()}", file=sys.stderr, flush=True)
            self.last_line = time.monotonic()

    def _due(self) -> bool:
        tenth = self.done * 10 // self.total > (self.done - 1) * 10 // self.total
        return tenth or time.monotonic() - self.last_line >= PROGRESS_EVERY_S

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

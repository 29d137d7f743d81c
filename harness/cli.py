"""Command line: ``python -m harness {run,list} ...``.

Hydra parses ``key=value`` only, so the subcommand (and ``--fresh``, ``--dry-run``) is taken off
``sys.argv`` before Hydra sees the rest. ``--dry-run`` stops after the checks: harness/dryrun.py
prints the plan and the reference agent's estimate, and Hydra never runs. ``run`` validates group names, budgets and every override first
(composing the config once with Hydra's compose API), so that a typo gives one clear line,
exit code 2, and no output folder.

Folders: a run goes to ``results/runs/<strategy>-<budget>-<hash>`` and a sweep to
``results/sweeps/<swept keys>-<hash>/<job>-<hash>`` (harness/identity.py: the hash is of the
resolved, normalised config), so that the same config, however spelled, resumes in the same
folder. ``hydra.run.dir`` / ``hydra.sweep.dir`` and the experiment presets' own folders win.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

from harness.config import SettingError, check_settings
from harness.records import trial_files
from harness.retry_errors import FAIL_FLAG, RETRY_FLAG, error_counts, error_line, retry_outcomes, set_aside_errors

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"
GROUPS = ("strategy", "task", "suite", "model", "summarizer", "pricing", "faults", "experiment")
DEFAULT_SWEEP_DIR = "results/sweeps/${now:%Y-%m-%d_%H-%M-%S}"  # config.yaml's, for Hydra used without this CLI
SWEEPS_ROOT = "results/sweeps"
FRESH = "--fresh"
EXIT_INTERRUPTED = 130
USAGE = """usage: python -m harness COMMAND [ARGS]

commands:
  run [--fresh] [--dry-run] [--retry-errors[=model_error,strategy_error]] [--fail-on-error] [key=value ...]
                                  run trials (Hydra overrides; -m for a sweep), e.g. strategy=headtail budget=25k
                                  a rerun of the same config resumes; --fresh deletes its records and starts over
                                  --retry-errors: re-run the trials that ended in model_error (kept in retried/)
                                  --fail-on-error: exit 1 when any trial ended in model_error or strategy_error
                                  --dry-run: trial count, jobs and an estimate of tokens and cost; nothing is run
                                  max_cost=USD: start no trial once the recorded trials cost that much
  list                  strategies, task families, suites, models, pricing profiles and experiment presets
  report RUN... [--out DIR]            summary.md, summary.csv and plots of runs or sweeps
  compare BASE CAND [--fail-on-regression] [--tolerance 0.10]   paired comparison, regression gate
  view RUN [TRIAL] [--out FILE]        static HTML: RUN/view/index.html + a page per trial (token curve, requests marked)
  import FILE... --format csv|jsonl|inspect-log [--map FIELD=COLUMN|FILE.yaml] [--out DIR]
                                  another harness's per-instance results as ctxbench run folders (report, compare)

your own strategy or task: strategy=my_pkg.module:MyClass strategy.param=3, an entry point in the group
ctxbench.strategies / ctxbench.tasks, or a config folder: hydra.searchpath=[file:///path/to/configs]
"""


class UsageError(ValueError):
    """Bad command-line input: one line, exit code 2."""


def options(group: str, extra_dirs: Iterable[Path] = ()) -> list[str]:
    """The config names available in a group: ``configs/<group>/*.yaml`` and the same in ``extra_dirs``."""
    dirs = [CONFIG_DIR, *extra_dirs]
    return sorted({p.stem for d in dirs for p in (Path(d) / group).glob("*.yaml")})


def _sweep_values(value: str) -> list[str]:
    value = value.strip()
    for wrapper in ("choice(", "glob("):
        if value.startswith(wrapper) and value.endswith(")"):
            value = value[len(wrapper) : -1]
    return [v.strip().strip("'\"") for v in value.split(",") if v.strip()]


def _check_name(group: str, name: str, valid: list[str]) -> None:
    """A group value is a config name, or (strategy, task) a class path or an installed entry point."""
    from harness import plugins

    if name in valid:
        return
    entry_points = plugins.plugin_entry_points(group)
    if group in plugins.ENTRY_POINT_GROUPS and (plugins.is_class_path(name) or name in entry_points):
        try:
            plugins.spec_for(name, entry_points.get(name, name))
        except plugins.PluginError as exc:
            raise UsageError(str(exc)) from None
        return
    hint = ", or pkg.module:Class" if group in plugins.ENTRY_POINT_GROUPS else ""
    raise UsageError(f"unknown {group} {name!r} (valid: {', '.join(sorted({*valid, *entry_points}))}{hint})")


def validate_overrides(args: list[str]) -> None:
    """Check group names and budgets in the overrides; raise ``UsageError`` with the valid values."""
    from harness.budget import BudgetError, parse_budget
    from harness.plugins import searchpath_dirs

    extra = searchpath_dirs(args)
    for arg in args:
        if arg.startswith("-") or "=" not in arg:
            continue
        key, value = arg.split("=", 1)
        key = key.lstrip("+~")
        if key in GROUPS or (key.startswith("variant/") and (CONFIG_DIR / key).is_dir()):
            valid = options(key, extra)  # variant/<preset>: the non-cartesian variants of an experiment preset
            for name in _sweep_values(value):
                if name in ("null", "none") and key in ("task", "experiment", "summarizer", "faults"):
                    continue
                _check_name(key, name, valid)
        elif key == "budget":
            for budget in _sweep_values(value):
                try:
                    parse_budget(budget)
                except BudgetError as exc:
                    raise UsageError(str(exc)) from None


def register_plugins(args: list[str]) -> None:
    """Give Hydra a config for every class path and entry point named in a strategy or task override."""
    from harness import plugins

    extra = plugins.searchpath_dirs(args)
    for arg in args:
        key, sep, value = arg.partition("=")
        key = key.lstrip("+~")
        if not sep or key not in plugins.ENTRY_POINT_GROUPS:
            continue
        valid = options(key, extra)
        for name in _sweep_values(value):
            if name not in valid:
                plugins.register(key, name)


# ---------------------------------------------------------------- composing once, before Hydra runs

def _one_line(exc: BaseException) -> str:
    """A Hydra/OmegaConf error as one line, without the ``+key`` hint (the key is not a parameter)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip() and not line.startswith("To append")]
    return " ".join(lines) or type(exc).__name__


def _compose(overrides: list[str]) -> Any:
    from hydra import compose, initialize_config_dir

    _register_resolvers()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return compose("config", overrides=overrides, return_hydra_config=True)


def _no_such_key(key: str, overrides: list[str]) -> str:
    """``strategy headtail has no parameter 'x' (its parameters: ...)``, or the keys next to ``key``."""
    from omegaconf import DictConfig, OmegaConf

    parent_key, _, leaf = key.rpartition(".")
    selections = [o for o in overrides if "=" in o and "." not in o.split("=", 1)[0]]
    try:
        cfg = _compose(selections)
        parent = OmegaConf.select(cfg, parent_key) if parent_key else cfg
    except Exception:  # the message stays useful without the list
        parent = None
    if not isinstance(parent, DictConfig):
        return f"no config key {key!r}"
    names = [k for k in parent.keys() if k not in ("name", "_target_", "hydra")]
    if parent_key in GROUPS:
        kind = "parameter" if parent_key == "strategy" else "setting"
        return (f"{parent_key} {parent.get('name', '?')} has no {kind} {leaf!r} "
                f"(its {kind}s: {', '.join(map(str, names)) or 'none'})")
    where = f"under {parent_key!r}" if parent_key else "at the top level"
    return f"no config key {key!r} (keys {where}: {', '.join(map(str, names))})"


def compose_checked(args: list[str]) -> tuple[Any, dict[str, list[str]]]:
    """The config of ``args`` with each sweep at its first value, and the sweeps; ``UsageError`` on a bad override."""
    import re

    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    overrides = [a for a in args if not a.startswith("-") and ("=" in a or a.startswith("~"))]
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException as exc:
        raise UsageError(f"bad override: {_one_line(exc)}") from None
    plain, first, sweeps = [], [], {}
    for o in parsed:
        if o.is_sweep_override():
            try:
                values = [str(v) for v in o.sweep_string_iterator()]
            except Exception:  # glob() over a group: Hydra expands it itself
                values = []
            sweeps[o.get_key_element()] = values
            if values:
                first.append(f"{o.get_key_element()}={values[0]}")
        else:
            plain.append(o.input_line)
    try:
        if first:  # each sweep at its first value composes too (a bad value fails now, not in a job)
            _compose(plain + first)
        cfg = _compose(plain)
    except (HydraException, OmegaConfBaseException) as exc:
        missing = re.match(r"Could not override '([^']+)'", str(exc))
        raise UsageError(_no_such_key(missing.group(1), plain + first) if missing else _one_line(exc)) from None
    try:
        check_settings(cfg, sweeps)
    except SettingError as exc:
        raise UsageError(str(exc)) from None
    return cfg, sweeps


def config_dict(cfg: Any) -> dict:
    """The resolved config without Hydra's own node; ``UsageError`` naming a required value that is missing."""
    from omegaconf import DictConfig, ListConfig, OmegaConf
    from omegaconf.errors import MissingMandatoryValue

    data = {}
    try:
        for key in cfg:
            if key == "hydra":
                continue
            value = cfg[key]
            data[key] = OmegaConf.to_container(value, resolve=True) if isinstance(value, (DictConfig, ListConfig)) else value
    except MissingMandatoryValue as exc:
        key = getattr(exc, "full_key", "") or "?"
        raise UsageError(f"{key} has no value (set it: {key}=...)") from None
    return data


def sweep_dir_override(args: list[str], cfg: Any, sweeps: dict[str, list[str]]) -> tuple[list[str], Path]:
    """The sweep's folder, and ``args`` with ``hydra.sweep.dir=results/sweeps/<name>-<hash>`` added when
    neither the command line nor an experiment preset chose one."""
    from omegaconf import OmegaConf

    from harness.identity import sweep_folder_name

    chosen = OmegaConf.to_container(cfg.hydra.sweep, resolve=False).get("dir")
    if any(a.split("=", 1)[0].lstrip("+") == "hydra.sweep.dir" for a in args) or chosen != DEFAULT_SWEEP_DIR:
        return args, Path(str(cfg.hydra.sweep.dir))
    swept = {k: v for k, v in sweeps.items() if not k.startswith("hydra")}
    folder = Path(SWEEPS_ROOT) / sweep_folder_name(config_dict(cfg), swept)
    return [*args, f"hydra.sweep.dir={folder}"], folder


def fail(message: str) -> None:
    """Print one error line and exit with code 2."""
    print(f"ctxbench: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def cmd_list() -> int:
    """Print what can be named on the command line (entry points of installed packages too)."""
    from harness.plugins import plugin_entry_points

    def describe(group: str, name: str) -> str:
        path = CONFIG_DIR / group / f"{name}.yaml"
        first = next((line[1:].strip() for line in path.read_text().splitlines() if line.startswith("#") and "@package" not in line), "")
        return f"  {name:<22} {first}"

    sections = [("strategies", "strategy"), ("task families", "task"), ("suites", "suite"),
                ("models", "model"), ("summarizers", "summarizer"), ("pricing profiles", "pricing"), ("fault injection", "faults"), ("experiments", "experiment")]
    for title, group in sections:
        names = options(group)
        plugins = {k: v for k, v in plugin_entry_points(group).items() if k not in names}
        if not names and not plugins:
            continue
        print(f"{title} ({group}=NAME):")
        for name in names:
            print(describe(group, name))
        for name, target in sorted(plugins.items()):
            print(f"  {name:<22} {target} (entry point of an installed package)")
        print()
    return 0


def _run_folder(*, _root_: Any) -> str:
    """Resolver ``${ctxbench_run:}``: the run folder's name from the resolved config (identity.folder_name)."""
    from harness.identity import folder_name

    return folder_name(config_dict(_root_))


def _register_resolvers() -> None:
    from omegaconf import OmegaConf

    if not OmegaConf.has_resolver("ctxbench_dirname"):  # the experiment presets' job folders
        OmegaConf.register_new_resolver(
            "ctxbench_dirname", lambda name: (name or "defaults").replace("/", "_").replace("=", "-").replace(",", "_")
        )
    if not OmegaConf.has_resolver("ctxbench_run"):
        OmegaConf.register_new_resolver("ctxbench_run", _run_folder)
    if not OmegaConf.has_resolver("ctxbench_exclude_keys"):  # the job folders' names: harness/identity.py
        from harness.identity import folder_name_exclusions

        OmegaConf.register_new_resolver("ctxbench_exclude_keys", lambda *extra: folder_name_exclusions(*extra))


_STATE: dict[str, Path] = {}  # the folder of the run in progress (for the Ctrl-C line)


def cmd_run(args: list[str]) -> int:
    """Validate and compose, name the sweep folder, then hand the overrides to Hydra."""
    from harness.dryrun import DRY_RUN

    fresh, dry, fail_on_error = FRESH in args, DRY_RUN in args, FAIL_FLAG in args
    retry = retry_flag(args)
    _STATE.clear()
    if retry is not None and fresh:
        raise UsageError(f"{RETRY_FLAG} keeps the other trials and --fresh deletes them all: choose one")
    args = [a for a in args if a not in (FRESH, DRY_RUN, FAIL_FLAG) and a.partition("=")[0] != RETRY_FLAG]
    check_options(args)
    validate_overrides(args)
    register_plugins(args)
    cfg, sweeps = compose_checked(args)
    sweep_dir: Path | None = None
    if "-m" in args or "--multirun" in args:
        args, sweep_dir = sweep_dir_override(args, cfg, sweeps)
        _STATE["target"] = sweep_dir
    else:
        config_dict(cfg)  # a required value that is missing: one line now
    check_writable(Path(str(cfg.hydra.run.dir)) if sweep_dir is None else sweep_dir)
    if dry:
        return dry_run(args, cfg, sweeps, sweep_dir)
    from hydra.core.hydra_config import HydraConfig

    def job(cfg) -> None:
        from harness.run_lock import hold_run_folder
        from harness.runner import ConfigError, execute

        run_dir = Path(HydraConfig.get().runtime.output_dir)
        _STATE.setdefault("target", run_dir)
        existed_with_trials = (run_dir / "trials.jsonl").exists()
        try:
            with hold_run_folder(run_dir):  # --fresh and --retry-errors change records: not under a running run
                if fresh:
                    print(clear_records(run_dir))
                if retry is not None:
                    print(set_aside_errors(run_dir, retry))
                execute(cfg, run_dir)
        except ConfigError as exc:
            if not existed_with_trials:
                _remove_empty_run_dir(run_dir)
            fail(str(exc))
        except OSError as exc:  # the disk is full, the folder went read-only: what was recorded stays
            fail(os_error_line(exc))

    try:
        if sweep_dir is None and not any(a.startswith("-") for a in args):
            run_composed(cfg, job)
        else:
            hydra_main(job, args)
    except KeyboardInterrupt:
        return interrupted(_STATE.get("target"))
    if sweep_dir is not None and sweep_dir.exists():
        print_sweep_summary(sweep_dir)
    errors = error_counts(_STATE.get("target")) if fail_on_error else None
    if errors:
        print(error_line(errors), file=sys.stderr)
        return 1
    return 0


RUN_OPTIONS = (FRESH, "--dry-run", "--retry-errors", FAIL_FLAG)
HYDRA_OPTIONS = ("-m", "--multirun", "--cfg", "-c", "--resolve", "--package", "-p", "--info", "-i")


def check_options(args: list[str]) -> None:
    """Refuse, in one line, an option that neither ``run`` nor Hydra knows (``--frseh``: did you mean --fresh?)."""
    import difflib

    for arg in args:
        if not arg.startswith("-") or "=" in arg and not arg.startswith("--"):
            continue
        name = arg.partition("=")[0]
        if name in HYDRA_OPTIONS or name.lstrip("-") in ("job", "hydra", "all"):
            continue
        close = difflib.get_close_matches(name, RUN_OPTIONS + HYDRA_OPTIONS, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise UsageError(f"unknown option {name} for run (its options: {', '.join(RUN_OPTIONS)}; "
                         f"Hydra's: -m, --cfg job){hint}")


def run_composed(cfg: Any, job: Callable[[Any], None]) -> None:
    """Run one job on the config composed already (``compose_checked``), as Hydra's app runner would run it.

    Hydra's runner composes the config twice more (once to learn the mode, once to run); a single
    run needs neither. ``run_job`` does what Hydra does for a job: makes the run folder, saves
    ``.hydra/`` (config, hydra, overrides), configures the job's logging (``ctxbench.log``) and
    sets ``HydraConfig``. Sweeps and Hydra's own flags (``-m``, ``--cfg``) go through ``hydra_main``.
    """
    from hydra._internal.callbacks import Callbacks  # honours hydra.callbacks, as the app runner does
    from hydra.core.utils import run_job
    from hydra.types import HydraContext, RunMode
    from omegaconf import open_dict

    with open_dict(cfg.hydra):
        cfg.hydra.mode = RunMode.RUN
    callbacks = Callbacks(cfg)
    result = run_job(task_function=job, config=cfg, job_dir_key="hydra.run.dir", job_subdir_key=None,
                     hydra_context=HydraContext(config_loader=None, callbacks=callbacks))  # type: ignore[arg-type]
    result.return_value  # re-raises what the job raised


def hydra_main(job: Callable[[Any], None], args: list[str]) -> None:
    """Run ``job`` through Hydra's app runner with ``args`` (sweeps, launchers, Hydra's flags)."""
    import hydra

    sys.argv = [sys.argv[0], *args]
    hydra.main(config_path=str(CONFIG_DIR), config_name="config", version_base="1.3")(job)()


def check_writable(target: Path) -> None:
    """Refuse, in one line, a run or sweep folder that cannot be made or written (before any folder is made)."""
    existing = Path(target).absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"cannot write the records to {target}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write the records to {target}: {existing} is not writable")


def os_error_line(exc: OSError) -> str:
    """One line for a file-system error: what could not be done, where, and why."""
    where = f" {exc.filename}" if exc.filename else ""
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        return f"cannot write{where}: a file is in the way ({exc.strerror})"
    return f"cannot write{where}: {exc.strerror or exc}"


def retry_flag(args: list[str]) -> tuple[str, ...] | None:
    """The outcomes ``--retry-errors[=...]`` asks to re-run, or ``None`` without the flag."""
    flags = [a for a in args if a.partition("=")[0] == RETRY_FLAG]
    if not flags:
        return None
    try:
        return retry_outcomes(flags[-1])
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def dry_run(args: list[str], cfg: Any, sweeps: dict[str, list[str]], sweep_dir: Path | None) -> int:
    """``--dry-run``: the plan and the reference agent's estimate (harness/dryrun.py); a config error is one line."""
    from harness.dryrun import dry_run as print_plan
    from harness.runner import ConfigError

    try:
        return print_plan(args, cfg, sweeps, sweep_dir)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _remove_empty_run_dir(run_dir: Path) -> None:
    """Remove a run folder that holds nothing but Hydra's own files."""
    if not run_dir.exists():
        return
    leftovers = [p for p in run_dir.iterdir() if p.name not in (".hydra",) and not p.name.endswith(".log")]
    if not leftovers:
        shutil.rmtree(run_dir, ignore_errors=True)
        parent, stop = run_dir.parent, Path.cwd().resolve()
        while parent.resolve() != stop and stop in parent.resolve().parents and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent



def recorded_trials(path: Path | None) -> int:
    """Trial rows recorded at or below ``path`` (complete lines of every ``trials.jsonl``)."""
    return sum(line.endswith("\n") for f in trial_files(path) for line in f.read_text(encoding="utf-8").splitlines(keepends=True))


def interrupted(target: Path | None) -> int:
    """The one line after Ctrl-C; exit code 130."""
    print(f"interrupted; {recorded_trials(target)} trials recorded; rerun the same command to resume", file=sys.stderr)
    return EXIT_INTERRUPTED


def clear_records(run_dir: Path) -> str:
    """``--fresh``: delete the records of this config's folder (not Hydra's ``.hydra`` nor the log); say what."""
    if not run_dir.exists():
        return f"--fresh: no earlier records in {run_dir}"
    n = recorded_trials(run_dir)
    removed = [p for p in run_dir.iterdir() if p.name not in (".hydra", "run.lock") and not p.name.endswith(".log")]
    for p in removed:
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    if not removed:
        return f"--fresh: no earlier records in {run_dir}"
    return f"--fresh: deleted the earlier records of this config ({n} trials, steps, transcripts, summary, plots) in {run_dir}"


def print_sweep_summary(sweep_dir: Path) -> None:
    """The end-of-sweep table: one row per configuration of the sweep."""
    from harness.report import end_of_run_lines

    lines = end_of_run_lines([sweep_dir])
    if lines:
        print(f"\nsweep done; records in {sweep_dir}")
        print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m harness``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    command, rest = argv[0], argv[1:]
    try:
        if command == "run":
            return cmd_run(rest)
        if command == "list":
            return cmd_list()
        from harness import commands  # report / compare and later commands register here

        handler = commands.COMMANDS.get(command)
        if handler is None:
            raise UsageError(f"unknown command {command!r} (valid: run, list, {', '.join(sorted(commands.COMMANDS))})")
        return handler(rest)
    except UsageError as exc:
        fail(str(exc))
    except OSError as exc:  # report / view / import writing where they cannot
        fail(os_error_line(exc))
    except KeyboardInterrupt:
        return interrupted(_STATE.get("target"))
    return 0

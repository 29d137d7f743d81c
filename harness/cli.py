"""Command line: ``python -m harness COMMAND ...``.

``run`` takes Hydra's ``key=value`` overrides (and Hydra's ``-m``), so its own flags (``--fresh``,
``--dry-run``, ``--retry-errors``, ``--fail-on-error``) are taken off the arguments before Hydra
sees the rest. ``--dry-run`` stops after the checks: harness/dryrun.py prints the plan and the
reference agent's estimate, and Hydra never runs. ``run`` validates group names, budgets and every
override first (harness/config.py composes the config once with Hydra's compose API), so that a
typo gives one clear line, exit code 2, and no output folder. Every other command is an argparse
subcommand declared in harness/commands.py.

Folders: a run goes to ``results/runs/<strategy>-<budget>-<hash>`` and a sweep to
``results/sweeps/<swept keys>-<hash>/<job>-<hash>`` (harness/identity.py: the hash is of the
resolved, normalised config), so that the same config, however spelled, resumes in the same
folder. ``hydra.run.dir`` / ``hydra.sweep.dir`` and the experiment presets' own folders win.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable

import hydra
from hydra._internal.callbacks import Callbacks  # honours hydra.callbacks, as the app runner does
from hydra.core.hydra_config import HydraConfig
from hydra.core.utils import run_job
from hydra.types import HydraContext, RunMode
from omegaconf import DictConfig, open_dict

from harness import commands
from harness.commands import PROG, SUBCOMMANDS, CommandParser, synopsis
from harness.config import (
    CONFIG_DIR,
    compose_checked,
    config_dict,
    container_dict,
    register_plugins,
    validate_overrides,
)
from harness.dryrun import DRY_RUN
from harness.dryrun import dry_run as print_plan
from harness.errors import ConfigError, UsageError
from harness.identity import sweep_folder_name
from harness.records import TRIALS, count_trials
from harness.report import end_of_run_lines, print_study
from harness.retry_errors import FAIL_FLAG, RETRY_FLAG, error_counts, error_line, retry_outcomes, set_aside_errors
from harness.run_lock import hold_run_folder
from harness.runner import execute

DEFAULT_SWEEP_DIR = "results/sweeps/${now:%Y-%m-%d_%H-%M-%S}"  # config.yaml's, for Hydra used without this CLI
SWEEPS_ROOT = "results/sweeps"
FRESH = "--fresh"
EXIT_INTERRUPTED = 130
RUN_SYNOPSIS = (
    "run [--fresh] [--dry-run] [--retry-errors[=model_error,strategy_error]] [--fail-on-error] [key=value ...]"
)
RUN_SUMMARY = """run trials (Hydra overrides; -m for a sweep), e.g. strategy=headtail budget=25k
a rerun of the same config resumes; --fresh deletes its records and starts over
--retry-errors: re-run the trials that ended in model_error (kept in retried/)
--fail-on-error: exit 1 when any trial ended in model_error or strategy_error
--dry-run: trial count, jobs and an estimate of tokens and cost; nothing is run
max_cost=USD: start no trial once the recorded trials cost that much"""
PLUGINS_NOTE = """your own strategy or task: strategy=my_pkg.module:MyClass strategy.param=3, \
an entry point in the group
ctxbench.strategies / ctxbench.tasks, or a config folder: hydra.searchpath=[file:///path/to/configs];
check it first: check strategy=my_pkg.module:MyClass (or task=...)"""
SYNOPSIS_WIDTH = 32


# ---------------------------------------------------------------- the parser and its help


class TopParser(CommandParser):
    """``python -m harness``: ``run`` and the subcommands, with the overview of them all as its help."""

    def format_help(self) -> str:
        """The overview: each command's synopsis and what it does, then how to bring your own strategy."""
        return overview(self)


def build_parser() -> TopParser:
    """The command line's parser: ``run`` (whose arguments go to Hydra unparsed) and harness/commands.py's."""
    parser = TopParser(prog=PROG, usage=f"{PROG} COMMAND [ARGS]")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    subparsers.add_parser("run", prog=f"{PROG} run", add_help=False, help=RUN_SUMMARY.splitlines()[0])
    commands.add_subcommands(subparsers)
    return parser


def subparsers_of(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommand parsers of ``parser``, by name."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def command_lines(name: str, summary: str) -> list[str]:
    """A command's synopsis, and its summary lines aligned beside or below it."""
    indent = " " * (SYNOPSIS_WIDTH + 2)
    first, *more = summary.splitlines()
    if len(name) <= SYNOPSIS_WIDTH - 2:
        lines = [f"  {name:<{SYNOPSIS_WIDTH}}{first}"]
    else:
        lines = [f"  {name}", indent + first]
    return lines + [indent + line for line in more]


def overview(parser: argparse.ArgumentParser) -> str:
    """``python -m harness --help``: every command with its synopsis and summary."""
    lines = [f"usage: {PROG} COMMAND [ARGS]", "", "commands:", *command_lines(RUN_SYNOPSIS, RUN_SUMMARY)]
    for name, sub in subparsers_of(parser).items():
        if name in SUBCOMMANDS:
            lines += command_lines(synopsis(sub), SUBCOMMANDS[name].summary)
    return "\n".join([*lines, "", PLUGINS_NOTE, ""])


def dispatch(argv: list[str]) -> int:
    """Run the command ``argv`` names; ``UsageError`` for an unknown command or bad arguments."""
    parser = build_parser()
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(parser.format_help())
        return 0
    command, rest = argv[0], argv[1:]
    if command == "run":
        return cmd_run(rest)
    subparsers = subparsers_of(parser)
    if command not in subparsers:
        raise UsageError(f"unknown command {command!r} (valid: run, {', '.join(sorted(SUBCOMMANDS))})")
    ns = subparsers[command].parse_args(rest)
    return ns.handler(ns)


# ---------------------------------------------------------------- run


def sweep_dir_override(args: list[str], cfg: Any, sweeps: dict[str, list[str]]) -> tuple[list[str], Path]:
    """The sweep's folder, and ``args`` with ``hydra.sweep.dir=results/sweeps/<name>-<hash>`` added when
    neither the command line nor an experiment preset chose one."""
    chosen = container_dict(cfg.hydra.sweep, resolve=False).get("dir")
    if any(a.split("=", 1)[0].lstrip("+") == "hydra.sweep.dir" for a in args) or chosen != DEFAULT_SWEEP_DIR:
        return args, Path(str(cfg.hydra.sweep.dir))
    swept = {k: v for k, v in sweeps.items() if not k.startswith("hydra")}
    folder = Path(SWEEPS_ROOT) / sweep_folder_name(config_dict(cfg), swept)
    return [*args, f"hydra.sweep.dir={folder}"], folder


def fail(message: str) -> None:
    """Print one error line and exit with code 2."""
    print(f"ctxbench: error: {message}", file=sys.stderr)
    raise SystemExit(2)


_STATE: dict[str, Path] = {}  # the folder of the run in progress (for the Ctrl-C line)
_JOBS: list[Path] = []  # the run folders of this command's jobs, in the order they ran (a study compares them)


def cmd_run(args: list[str]) -> int:
    """Validate and compose, name the sweep folder, then hand the overrides to Hydra."""
    fresh, dry, fail_on_error = FRESH in args, DRY_RUN in args, FAIL_FLAG in args
    retry = retry_flag(args)
    _STATE.clear()
    _JOBS.clear()
    if retry is not None and fresh:
        raise UsageError(f"{RETRY_FLAG} keeps the other trials and --fresh deletes them all: choose one")
    args = [a for a in args if a not in (FRESH, DRY_RUN, FAIL_FLAG) and a.partition("=")[0] != RETRY_FLAG]
    check_options(args)
    validate_overrides(args)
    register_plugins(args)
    cfg, sweeps = compose_checked(args)
    baseline = study_baseline(cfg)
    sweep_dir: Path | None = None
    if "-m" in args or "--multirun" in args:
        args, sweep_dir = sweep_dir_override(args, cfg, sweeps)
        _STATE["target"] = sweep_dir
    else:
        config_dict(cfg)  # a required value that is missing: one line now
    check_writable(Path(str(cfg.hydra.run.dir)) if sweep_dir is None else sweep_dir)
    if dry:
        return dry_run(args, cfg, sweeps, sweep_dir)

    def job(cfg) -> None:
        run_dir = Path(HydraConfig.get().runtime.output_dir)
        _STATE.setdefault("target", run_dir)
        _JOBS.append(run_dir)
        with open_dict(cfg):
            cfg.pop("study", None)  # what the sweep prints at its end, not what a trial is: not in the identity
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
        if baseline is not None:
            print_study(list(_JOBS), baseline, sweep_dir, plots=bool(cfg.get("plots", True)))
    errors = error_counts(_STATE.get("target")) if fail_on_error else None
    if errors:
        print(error_line(errors), file=sys.stderr)
        return 1
    return 0


RUN_OPTIONS = (FRESH, "--dry-run", "--retry-errors", FAIL_FLAG)
HYDRA_OPTIONS = ("-m", "--multirun", "--cfg", "-c", "--resolve", "--package", "-p", "--info", "-i")


def check_options(args: list[str]) -> None:
    """Refuse, in one line, an option that neither ``run`` nor Hydra knows (``--frseh``: did you mean --fresh?)."""
    for arg in args:
        if not arg.startswith("-") or "=" in arg and not arg.startswith("--"):
            continue
        name = arg.partition("=")[0]
        if name in HYDRA_OPTIONS or name.lstrip("-") in ("job", "hydra", "all"):
            continue
        close = difflib.get_close_matches(name, RUN_OPTIONS + HYDRA_OPTIONS, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise UsageError(
            f"unknown option {name} for run (its options: {', '.join(RUN_OPTIONS)}; Hydra's: -m, --cfg job){hint}"
        )


def run_composed(cfg: Any, job: Callable[[Any], None]) -> None:
    """Run one job on the config composed already (``compose_checked``), as Hydra's app runner would run it.

    Hydra's runner composes the config twice more (once to learn the mode, once to run); a single
    run needs neither. ``run_job`` does what Hydra does for a job: makes the run folder, saves
    ``.hydra/`` (config, hydra, overrides), configures the job's logging (``ctxbench.log``) and
    sets ``HydraConfig``. Sweeps and Hydra's own flags (``-m``, ``--cfg``) go through ``hydra_main``.
    """
    with open_dict(cfg.hydra):
        cfg.hydra.mode = RunMode.RUN
    callbacks = Callbacks(cfg)
    result = run_job(
        task_function=job,
        config=cfg,
        job_dir_key="hydra.run.dir",
        job_subdir_key=None,
        # run_job reads only the callbacks; Hydra's annotation asks for a loader all the same
        hydra_context=HydraContext(config_loader=None, callbacks=callbacks),  # type: ignore[arg-type]
    )
    _ = result.return_value  # re-raises what the job raised


def hydra_main(job: Callable[[Any], None], args: list[str]) -> None:
    """Run ``job`` through Hydra's app runner with ``args`` (sweeps, launchers, Hydra's flags)."""
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
    """Trial rows recorded at or below ``path`` (the valid rows of every ``trials.jsonl``: ``records.count_trials``)."""
    return count_trials(path)


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
    # trials.jsonl first (one unlink): after a crash halfway no trial is done, and a rerun removes the rest
    for p in sorted(removed, key=lambda p: p.name != TRIALS):
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    if not removed:
        return f"--fresh: no earlier records in {run_dir}"
    return (
        f"--fresh: deleted the earlier records of this config ({n} trials, steps, transcripts, summary, plots) "
        f"in {run_dir}"
    )


def study_baseline(cfg: Any) -> str | None:
    """The baseline arm of the study the config declares (``study: {baseline: ARM}``, the study presets such as
    configs/experiment/strategy_question.yaml), or None; a sweep that declares one ends with ``compare`` of its
    run folders against that arm (``report.print_study``). ``UsageError`` for a study block of another shape."""
    node = cfg.get("study")
    if node is None:
        return None
    keys = set(node) if isinstance(node, DictConfig) else set()
    baseline = node.get("baseline") if isinstance(node, DictConfig) else None
    if keys != {"baseline"} or not isinstance(baseline, str) or not baseline:
        raise UsageError(
            f"study={node} must be {{baseline: ARM}}: the arm the sweep's other run folders are compared with"
        )
    return baseline


def print_sweep_summary(sweep_dir: Path) -> None:
    """The end-of-sweep table: one row per configuration of the sweep."""
    lines = end_of_run_lines([sweep_dir])
    if lines:
        print(f"\nsweep done; records in {sweep_dir}")
        print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m harness``: a usage or file-system error is one line and exit code 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return dispatch(argv)
    except UsageError as exc:
        fail(str(exc))
    except OSError as exc:  # report / view / import writing where they cannot
        fail(os_error_line(exc))
    except KeyboardInterrupt:
        return interrupted(_STATE.get("target"))
    return 0

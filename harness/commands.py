"""The subcommands besides ``run``: one argparse parser each, declared by one function.

A subcommand is a function decorated with ``@subcommand(name, summary)``: it declares the
subcommand's arguments on the parser it is given and returns the handler, which takes the parsed
arguments and returns the exit code. ``python -m harness --help`` lists it (its synopsis comes
from the declared arguments), and bad arguments are one line and exit code 2 (``CommandParser``).
Adding a subcommand is adding one such function here::

    @subcommand("export", "runs as another harness's logs")
    def _export(parser: argparse.ArgumentParser) -> Handler:
        parser.add_argument("runs", nargs="+", metavar="RUN")
        return lambda ns: export.cmd_export(ns.runs)

``run`` is not here: its arguments are Hydra overrides, which harness/cli.py hands to Hydra.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from harness import check, importer, power, report, view
from harness.config import CONFIG_DIR, options
from harness.errors import UsageError
from harness.importer import DEFAULT_OUT, FORMATS
from harness.plugins import plugin_entry_points
from harness.task_conformance import DEFAULT_SEEDS

PROG = "python -m harness"
Handler = Callable[[argparse.Namespace], int]


class CommandParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one ``UsageError`` line (exit code 2) naming the command and its usage."""

    def error(self, message: str):  # type: ignore[override]
        """Raise ``UsageError`` instead of printing the usage and exiting."""
        name = self.prog.removeprefix(f"{PROG} ")
        raise UsageError(f"{name}: {message} (usage: {PROG} {synopsis(self)})")


@dataclass(frozen=True)
class Subcommand:
    """A registered subcommand: its name, its one-line summary and the function that declares it."""

    name: str
    summary: str
    declare: Callable[[argparse.ArgumentParser], Handler]


SUBCOMMANDS: dict[str, Subcommand] = {}


def subcommand(
    name: str, summary: str
) -> Callable[[Callable[[argparse.ArgumentParser], Handler]], Callable[[argparse.ArgumentParser], Handler]]:
    """Register the decorated function as the declaration of subcommand ``name``."""

    def register(declare: Callable[[argparse.ArgumentParser], Handler]) -> Callable[[argparse.ArgumentParser], Handler]:
        SUBCOMMANDS[name] = Subcommand(name, summary, declare)
        return declare

    return register


def add_subcommands(subparsers: argparse._SubParsersAction) -> None:
    """Add every registered subcommand to ``subparsers``, its handler stored as the parsed ``handler``."""
    for command in SUBCOMMANDS.values():
        parser = subparsers.add_parser(
            command.name, prog=f"{PROG} {command.name}", help=command.summary, description=command.summary
        )
        parser.set_defaults(handler=command.declare(parser))


def synopsis(parser: argparse.ArgumentParser) -> str:
    """``report [--out DIR] RUN [RUN ...]``: the usage on one line, without ``python -m harness`` and ``-h``."""
    usage = " ".join(parser.format_usage().split()).removeprefix("usage: ").removeprefix(f"{PROG} ")
    return usage.replace(" [-h]", "")


# ---------------------------------------------------------------- the subcommands


@subcommand("list", "strategies, task families, suites, models, pricing profiles and experiment presets")
def _list(parser: argparse.ArgumentParser) -> Handler:
    return lambda ns: cmd_list()


@subcommand("report", "summary.md, summary.csv and plots of runs or sweeps")
def _report(parser: argparse.ArgumentParser) -> Handler:
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run folders or sweep folders")
    parser.add_argument("--out", metavar="DIR", help="where to write (default: the one folder, or their common one)")
    return lambda ns: report.cmd_report(ns.runs, ns.out)


@subcommand("compare", "paired comparison of candidate runs with a base run, their verdicts, and the regression gate")
def _compare(parser: argparse.ArgumentParser) -> Handler:
    parser.add_argument("base", metavar="BASE", help="the base run folder (or sweep folder)")
    parser.add_argument("cands", nargs="+", metavar="CAND", help="the candidate run folders, each paired with BASE")
    parser.add_argument("--fail-on-regression", action="store_true", help="exit 1 when a candidate regresses")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.10,
        metavar="T",
        help="how far above 1 the input-token or cost ratio may go (default 0.10)",
    )
    parser.add_argument("--alpha", type=float, default=0.05, metavar="A", help="McNemar's level (default 0.05)")
    parser.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    return lambda ns: report.cmd_compare(ns.base, ns.cands, ns.fail_on_regression, ns.tolerance, ns.alpha, ns.json)


@subcommand("view", "static HTML: RUN/view/index.html and a page per trial (token curve, requests marked)")
def _view(parser: argparse.ArgumentParser) -> Handler:
    parser.add_argument("run", metavar="RUN", help="a run folder")
    parser.add_argument("trial", nargs="?", metavar="TRIAL", help="one trial's page alone")
    parser.add_argument("--out", metavar="FILE", help="where the index (or the trial's page) goes")
    return lambda ns: view.cmd_view(Path(ns.run), ns.trial, Path(ns.out) if ns.out else None)


@subcommand("import", "another harness's per-instance results as ctxbench run folders (report, compare)")
def _import(parser: argparse.ArgumentParser) -> Handler:
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--format", required=True, choices=FORMATS)
    parser.add_argument("--map", action="append", default=[], metavar="FIELD=COLUMN|FILE.yaml")
    parser.add_argument(
        "--experiment",
        default=None,
        metavar="NAME",
        help="the experiment of every row (a column named experiment is then not read)",
    )
    parser.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="COLUMN=VALUE",
        help="import only the rows whose COLUMN holds VALUE (repeatable: values of one column are "
        "alternatives, different columns must all match)",
    )
    parser.add_argument("--out", default=str(DEFAULT_OUT), metavar="DIR")
    return lambda ns: importer.cmd_import(ns.files, ns.format, ns.map, ns.experiment, ns.out, ns.where)


@subcommand("export", "runs and sweeps as inspect_ai eval logs, one per run folder, for inspect view")
def _export(parser: argparse.ArgumentParser) -> Handler:
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run folders or sweep folders")
    parser.add_argument("--to", nargs=2, required=True, metavar=("FORMAT", "DIR"), help="inspect DIR")
    return lambda ns: _cmd_export(ns.runs, *ns.to)


def _cmd_export(runs: list[str], fmt: str, out_dir: str) -> int:
    """``export``: imported here, as it needs the inspect extra (inspect_ai), which the core never imports."""
    try:
        from harness.integrations.inspect_export import cmd_export  # inspect_ai, an optional extra: imported only here
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("inspect_ai"):
            raise
        raise UsageError(f'export --to inspect needs the inspect extra ({exc}): pip install -e ".[inspect]"') from None
    return cmd_export(runs, fmt, out_dir)


@subcommand("power", "how many paired instances (and trials) detect a difference in success, for the gate's test")
def _power(parser: argparse.ArgumentParser) -> Handler:
    parser.add_argument("--base", type=float, required=True, metavar="P", help="the base arm's success rate, e.g. 0.6")
    parser.add_argument(
        "--delta", type=float, required=True, metavar="D", help="candidate - base success, e.g. -0.2 or 0.2"
    )
    parser.add_argument("--alpha", type=float, default=0.05, metavar="A", help="McNemar's level (default 0.05)")
    parser.add_argument("--power", type=float, default=0.80, metavar="P", help="the power wanted (default 0.80)")
    parser.add_argument("--trials", type=int, default=1, metavar="N", help="trials per instance (default 1)")
    parser.add_argument(
        "--families",
        type=int,
        default=power.DEFAULT_FAMILIES,
        metavar="N",
        help=f"task families per instance (default {power.DEFAULT_FAMILIES}, the default suite; 1 with task=NAME)",
    )
    parser.add_argument(
        "--worse-wins",
        type=float,
        default=None,
        metavar="S",
        help="share of pairs only the worse arm solves (default: the arms independent within a pair)",
    )
    return lambda ns: power.cmd_power(
        power.Question(ns.base, ns.delta, ns.alpha, ns.power, ns.trials, ns.families, ns.worse_wins)
    )


@subcommand("check", "the conformance suite on a strategy or a task family: a pass/fail row per check")
def _check(parser: argparse.ArgumentParser) -> Handler:
    parser.add_argument(
        "overrides",
        nargs="+",
        metavar="KEY=VALUE",
        help="strategy=NAME|pkg.mod:Class [strategy.param=V ...] [budget=B], or task=NAME|pkg.mod:Class [task.knob=V]",
    )
    parser.add_argument(
        "--histories",
        type=int,
        default=check.RANDOM_HISTORIES,
        metavar="N",
        help=f"random histories a strategy is checked on (default {check.RANDOM_HISTORIES})",
    )
    parser.add_argument(
        "--seeds", type=int, default=len(DEFAULT_SEEDS), metavar="N", help="seeds a task family is checked at"
    )
    return lambda ns: check.cmd_check(ns.overrides, ns.histories, ns.seeds)


# ---------------------------------------------------------------- list

LIST_SECTIONS = (
    ("strategies", "strategy"),
    ("arms (a strategy with its parameters and budget)", "arm"),
    ("task families", "task"),
    ("suites", "suite"),
    ("models", "model"),
    ("summarizers", "summarizer"),
    ("pricing profiles", "pricing"),
    ("fault injection", "faults"),
    ("experiments", "experiment"),
)


def config_description(group: str, name: str) -> str:
    """The first comment line of configs/<group>/<name>.yaml (``# @package`` aside): what ``list`` prints."""
    path = CONFIG_DIR / group / f"{name}.yaml"
    return next(
        (line[1:].strip() for line in path.read_text().splitlines() if line.startswith("#") and "@package" not in line),
        "",
    )


def describe(group: str, name: str) -> str:
    """``  name   description`` (``config_description``), one line of ``list``."""
    return f"  {name:<22} {config_description(group, name)}"


def cmd_list() -> int:
    """Print what can be named on the command line (entry points of installed packages too)."""
    for title, group in LIST_SECTIONS:
        names = options(group)
        installed = {k: v for k, v in plugin_entry_points(group).items() if k not in names}
        if not names and not installed:
            continue
        print(f"{title} ({group}=NAME):")
        for name in names:
            print(describe(group, name))
        for name, target in sorted(installed.items()):
            print(f"  {name:<22} {target} (entry point of an installed package)")
        print()
    return 0

"""Subcommands besides ``run`` and ``list``: name -> handler(args) -> exit code."""
from __future__ import annotations

from typing import Callable


def _report(args: list[str]) -> int:
    from harness.report import cmd_report

    return cmd_report(args)


def _compare(args: list[str]) -> int:
    from harness.report import cmd_compare

    return cmd_compare(args)


def _view(args: list[str]) -> int:
    from harness.view import cmd_view

    return cmd_view(args)


def _import(args: list[str]) -> int:
    from harness.importer import cmd_import

    return cmd_import(args)


COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "report": _report,    # report RUN... [--out DIR]: summary.md, summary.csv, plots/
    "compare": _compare,  # compare BASE CAND [--fail-on-regression] [--tolerance 0.10]
    "view": _view,        # view RUN [TRIAL] [--out FILE]: static HTML (RUN/view/index.html + a page per trial)
    "import": _import,    # import FILE... --format csv|jsonl|inspect-log [--map FIELD=COLUMN|FILE.yaml] [--out DIR]
}

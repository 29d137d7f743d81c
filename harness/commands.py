"""Subcommands besides ``run`` and ``list``: name -> handler(args) -> exit code."""
from __future__ import annotations

from typing import Callable

COMMANDS: dict[str, Callable[[list[str]], int]] = {}

"""Parsing token budgets: ``25k``, ``25000``, ``0.5M``, ``1_000``; ``Tokens``, the parameter type of a token count.

``BudgetError``, ``parse_budget`` and ``format_budget`` are defined once, in
hydra_plugins/ctxbench_resolvers/_budget.py (importable without the harness: the resolver ``${ctxbench_run:}``
writes a run folder's budget with them); this module re-exports them for the harness.
"""

from __future__ import annotations

from typing import Annotated

from hydra_plugins.ctxbench_resolvers._budget import BudgetError as BudgetError
from hydra_plugins.ctxbench_resolvers._budget import format_budget as format_budget
from hydra_plugins.ctxbench_resolvers._budget import parse_budget as parse_budget


class TokenCount:
    """The converter of ``Tokens`` (a ``ParamConverter``, harness/params.py): the budget's spellings to an int."""

    expects = "a token count such as 60000, 60k or 0.5M"

    def convert(self, value: object) -> int:
        """``60k`` -> 60000, ``0.5M`` -> 500000, 60000 -> 60000; ``BudgetError`` for anything else."""
        return parse_budget(value)


Tokens = Annotated[int, TokenCount()]
"""A strategy parameter that is a positive token count, written as a budget is (``60000``, ``60k``, ``0.5M``)."""

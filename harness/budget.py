"""Parsing token budgets: ``25k``, ``25000``, ``0.5M``, ``1_000``.

``BudgetError``, ``parse_budget`` and ``format_budget`` are defined once, in
hydra_plugins/ctxbench_resolvers/_budget.py (importable without the harness: the resolver ``${ctxbench_run:}``
writes a run folder's budget with them); this module re-exports them for the harness.
"""

from __future__ import annotations

from hydra_plugins.ctxbench_resolvers._budget import BudgetError as BudgetError
from hydra_plugins.ctxbench_resolvers._budget import format_budget as format_budget
from hydra_plugins.ctxbench_resolvers._budget import parse_budget as parse_budget

"""``isolate``: isolation instead of compression — a sub-agent with a fresh context (source 002 §2.7.6).

The agent gets ``delegate(task)``. The harness runs a sub-agent on the same task
environment with a fresh context (system prompt + the task text, the task's tools and a
``report`` tool); only its conclusion comes back as the tool result, so the raw material
it read never enters the main context. The sub-agent's calls are billed and logged apart
(``kind=subagent`` steps, ``subagent_*`` trial columns). The task text must be
self-contained: the sub-agent sees nothing of the main context. The main context itself
is trimmed by a ``base`` strategy (default ``headtail``).

Sub-agents are managed too: each gets a fresh copy of ``base`` (as it was before it was
bound) and ``subagent_budget`` tokens (default: the trial's budget), so isolation is
compared at the same budget as every other strategy. Their peaks and budget adherence are
the ``subagent_peak_context``, ``subagent_over_budget_steps`` and
``subagent_max_budget_ratio`` columns.
"""

from __future__ import annotations

import copy
from typing import Any

from harness.budget import Tokens, parse_budget
from strategies.base import ToolError, WrappingStrategy, budget_guarantee


class Isolate(WrappingStrategy):
    """Offer ``delegate(task)``; trim the main context with ``base``.

    Parameters:
        base: the strategy for the main context (object or ``_target_`` config; default headtail).
        subagent_max_steps: a sub-agent that has not reported by then returns what it has (default 60).
        subagent_budget: the token budget of each sub-agent's context (``null`` = the trial's budget;
            ``8k`` works); a fresh copy of ``base`` manages it.
    """

    def __init__(self, base: Any = None, subagent_max_steps: int = 60, subagent_budget: Tokens | None = None) -> None:
        if subagent_max_steps < 1:
            raise ValueError("isolate: subagent_max_steps must be at least 1")
        if base is None:
            from strategies.headtail import HeadTail

            base = HeadTail()
        self.base = self.build_base(base, "isolate")
        self.subagent_prototype = copy.deepcopy(self.base)
        self.subagent_max_steps = subagent_max_steps
        try:
            self.subagent_budget = None if subagent_budget is None else parse_budget(subagent_budget)
        except ValueError as exc:
            raise ValueError(f"isolate: subagent_budget: {exc}") from None

    @property
    def budget_guarantee(self) -> str:  # type: ignore[override]
        """The base's: the main context is the base's projection, nothing added."""
        return budget_guarantee(self.base)

    @property
    def budget_exception(self) -> str:  # type: ignore[override]
        """The base's: when the base can exceed the budget, so can the main context."""
        return getattr(self.base, "budget_exception", "")

    def own_tools(self) -> list[dict]:
        """``delegate(task)``."""
        return [
            {
                "type": "function",
                "function": {
                    "name": "delegate",
                    "description": (
                        "Run a sub-agent with a fresh context on a self-contained sub-task; it uses the same tools "
                        "and returns only its conclusion."
                    ),
                    "parameters": {"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]},
                },
            }
        ]

    def own_call(self, name: str, args: dict) -> str | None:
        """Run a sub-agent for ``delegate``."""
        if name != "delegate":
            return None
        task = args.get("task")
        if not isinstance(task, str) or not task.strip():
            raise ToolError("delegate needs a non-empty, self-contained 'task' string")
        self.ctx.log("delegate", task=task[:200])
        return self.ctx.run_subagent(
            task.strip(),
            max_steps=self.subagent_max_steps,
            strategy=copy.deepcopy(self.subagent_prototype),
            budget=self.subagent_budget,
        )

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The base strategy's projection."""
        return self.base_prepare(messages)

"""What the strategies share beyond the contract: budget guarantees and wrapping strategies.

The Strategy contract itself (``prepare``, the hooks of ``STRATEGY_HOOKS``, the declared attributes,
``BaseStrategy``, ``full_strategy``) lives in ``harness.contracts``, the bottom import layer that the
agent loop reads too; it is re-exported here, so a strategy writes ``from strategies.base import
BaseStrategy, ToolError`` and the loop never imports this package.

A class attribute ``budget_guarantee`` documents what a strategy promises about the budget
(``BUDGET_GUARANTEES``; strategies/README.md says, per strategy, when it cannot keep it):

* ``"hard"``: the request (tool schemas included) is at most the budget whenever the head
  (system + task), the newest round and a one-line note of ``NOTE_ALLOWANCE`` tokens fit;
* ``"soft"``: it aims at the budget but can exceed it (what it never removes is too big);
* ``"none"``: it does not aim at the budget.

A strategy without the attribute counts as ``"none"``. ``tests/test_strategy_conformance.py``
checks the ``"hard"`` ones.

A wrapping strategy (``WrappingStrategy``) forwards every hook and the declared attributes
(``FORWARDED_ATTRIBUTES``) to its base.
"""

from __future__ import annotations

from typing import Any

from harness.contracts import (
    BUDGET_GUARANTEES,
    NOTE_ALLOWANCE,
    STRATEGY_HOOKS,
    AdaptedStrategy,
    BaseStrategy,
    FullHistory,
    FullStrategy,
    Strategy,
    StrategyContext,
    ToolError,
    full_strategy,
    strategy_class,
    tool_name,
)

__all__ = [
    "BUDGET_GUARANTEES",
    "FINAL_TOOLS",
    "FORWARDED_ATTRIBUTES",
    "NOTE_ALLOWANCE",
    "STRATEGY_HOOKS",
    "AdaptedStrategy",
    "BaseStrategy",
    "FullHistory",
    "FullStrategy",
    "ReservedContext",
    "Strategy",
    "StrategyContext",
    "ToolError",
    "WrappingStrategy",
    "budget_guarantee",
    "full_strategy",
    "guarantee_text",
    "strategy_class",
    "tool_name",
]

FORWARDED_ATTRIBUTES = ("rewrites_system", "server_side", "supporting_models")
"""The declared attributes a wrapper takes from its base."""
FINAL_TOOLS = ("submit", "report")
"""The tools that end an agent's work: the agent's ``submit``, a sub-agent's ``report``; ``expose_tools``
keeps its loop's."""


def budget_guarantee(strategy: Any) -> str:
    """The strategy's documented ``budget_guarantee`` (``"none"`` when it declares none)."""
    value = getattr(strategy, "budget_guarantee", "none")
    if value not in BUDGET_GUARANTEES:
        raise ValueError(f"budget_guarantee must be one of {BUDGET_GUARANTEES}, got {value!r}")
    return value


def guarantee_text(strategy: Any) -> str:
    """The declared guarantee in words: ``"hard unless <budget_exception>"``, or the bare level."""
    level = budget_guarantee(strategy)
    exception = getattr(strategy, "budget_exception", "") if level == "hard" else ""
    return f"{level} unless {exception}" if exception else level


class ReservedContext:
    """A view of the trial context whose budget is reduced by what the wrapper adds itself."""

    def __init__(self, ctx: StrategyContext, reserve: int = 0) -> None:
        self._ctx = ctx
        self.budget = max(1, ctx.budget - reserve)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)


class WrappingStrategy(BaseStrategy):
    """Base of strategies that wrap another one (``base``) and add messages or tools of their own.

    The base is bound to a ``ReservedContext``; ``reserve(tokens)`` gives it the budget minus
    what the wrapper will add (a notes block, a status message), so the request as a whole
    still fits. Every hook and declared attribute is the base's (``STRATEGY_HOOKS``,
    ``FORWARDED_ATTRIBUTES``): the base's tools are offered next to the wrapper's ``own_tools()``,
    calls the wrapper does not handle in ``own_call`` go to the base, the base orders and chooses
    the tools (the wrapper's own stay offered), and it sends and observes the server's options
    and edits.
    """

    base: FullStrategy | None = None

    @property
    def budget_guarantee(self) -> str:  # type: ignore[override]
        """The base's guarantee made ``soft`` by what the wrapper adds (``none`` without a base that aims)."""
        if self.base is None or budget_guarantee(self.base) == "none":
            return "none"
        return "soft"

    @staticmethod
    def build_base(base: Any, owner: str) -> FullStrategy | None:
        """``base`` as a strategy with the whole contract: built from a ``_target_`` mapping, or checked."""
        if isinstance(base, dict):
            from hydra.utils import instantiate

            base = instantiate({k: v for k, v in base.items() if k != "name"}, _convert_="all")
        if base is None:
            return None
        if not hasattr(base, "prepare"):
            raise ValueError(f"{owner}: base must be a strategy (something with prepare)")
        return full_strategy(base)

    @property
    def rewrites_system(self) -> bool:  # type: ignore[override]
        """Whether the base changes the system message."""
        return self.base is not None and self.base.rewrites_system

    @property
    def server_side(self) -> str | None:  # type: ignore[override]
        """The base's server feature (``None``: the base runs in the harness)."""
        return self.base.server_side if self.base is not None else None

    @property
    def supporting_models(self) -> tuple[str, ...]:  # type: ignore[override]
        """The presets whose backend applies the base's server feature."""
        return tuple(self.base.supporting_models) if self.base is not None else ()

    def bind(self, ctx: StrategyContext) -> None:
        """Keep the context and bind the base to a reserved view of it."""
        self.ctx = ctx
        self.base_ctx = ReservedContext(ctx)
        if self.base is not None:
            self.base.bind(self.base_ctx)

    def reserve(self, tokens: int) -> None:
        """Give the base the budget minus ``tokens``."""
        self.base_ctx.budget = max(1, self.ctx.budget - tokens)

    def base_prepare(self, messages: list[dict]) -> list[dict]:
        """The base's projection, or the history when there is no base."""
        return self.base.prepare(messages) if self.base is not None else list(messages)

    def order_tools(self, tools: list[dict]) -> list[dict] | None:
        """The base's order of the tools (``None``: as they are)."""
        return self.base.order_tools(tools) if self.base is not None else None

    def expose_tools(self, tools: list[dict]) -> list[dict] | None:
        """The base's choice of tools, the wrapper's own always among them, in the given order (``None``: all)."""
        exposed = self.base.expose_tools(tools) if self.base is not None else None
        if exposed is None:
            return None
        own = {tool_name(t) for t in self.own_tools()}
        missing = [t for t in tools if tool_name(t) in own and t not in exposed]
        if not missing:
            return exposed
        return [t for t in tools if t in exposed or t in missing]

    def server_options(self) -> dict:
        """The base's request options (none for a base that runs in the harness)."""
        return dict(self.base.server_options() or {}) if self.base is not None else {}

    def observe_server_edits(self, edits: list[dict]) -> None:
        """Hand the server's edits to the base (logged as plain ``server_edit`` events without a base)."""
        if self.base is not None:
            self.base.observe_server_edits(edits)
        else:
            super().observe_server_edits(edits)

    def own_tools(self) -> list[dict]:
        """The wrapper's own tools (none by default)."""
        return []

    def own_call(self, name: str, args: dict) -> str | None:
        """Execute one of the wrapper's own tools; ``None`` when ``name`` is not one of them."""
        return None

    def tools(self) -> list[dict]:
        """The wrapper's tools, then the base's."""
        base_tools = list(self.base.tools()) if self.base is not None else []
        return self.own_tools() + base_tools

    def call(self, name: str, args: dict) -> str:
        """The wrapper's tool, else the base's."""
        result = self.own_call(name, args)
        if result is not None:
            return result
        if self.base is not None:
            return self.base.call(name, args)
        raise ToolError(f"unknown tool {name!r}")

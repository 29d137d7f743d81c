"""The Strategy contract: what the agent loop calls on a strategy, at the bottom of the import layers.

A strategy decides what the model sees. Its one required method is
``prepare(messages) -> messages``: it receives the full, append-only history and returns
the projection that is sent to the model. It must never mutate the history (copy a
message before changing it) and its output must be a valid conversation (leading system
message unchanged, tool calls paired with their results, no trailing assistant message);
the harness validates every projection and ends the trial with ``strategy_error`` if not.

One instance serves one trial (or one sub-agent run), so a strategy may keep state (frozen
placeholders, a running summary, counters). The loop calls these hooks (``STRATEGY_HOOKS``);
``BaseStrategy`` gives each a no-op default:

* ``bind(ctx)`` receives the ``StrategyContext`` below before the first ``prepare``
  (default: keeps it as ``self.ctx``);
* ``tools()`` returns extra tool schemas offered to the agent (default: none);
* ``call(name, args) -> str`` executes them (raise ``ToolError`` for a bad call; default: every
  name is unknown);
* ``order_tools(tools) -> tools | None`` returns this step's order of the tool schemas (called
  after every ``prepare``; it must return a permutation, or the trial ends with
  ``strategy_error``); ``None``, the default, leaves the order alone. The schemas precede the
  messages in the cached prefix, so reordering them breaks the cache; it exists for deliberate
  experiments (``strategies/pitfalls.py``). The request event records ``tool_order`` at each
  step it returns a list;
* ``expose_tools(tools) -> tools | None`` returns the tools offered at this step (called after
  every ``prepare`` and ``order_tools``): a subset of the tools, unchanged, that keeps the final
  tool of the loop (``submit``, a sub-agent's ``report``: ``strategies.base.FINAL_TOOLS``; else the
  run ends with ``strategy_error``); ``None``, the default, offers them all. The harness answers a
  call to a tool that is not offered with an error, without running it (``unoffered_calls``), and
  records the schema tokens sent and left out (``tool_schema_tokens``, ``tool_schema_tokens_saved``)
  and the names offered (``tools_offered``). A change of the offered set breaks the prefix cache
  like a reorder (``strategies/select_tools.py``);
* ``server_options() -> dict``: the request options sent with every call of the agent the
  strategy manages (server-side strategies, strategies/server_side.py: ``context_management``,
  ``betas``; default: none);
* ``observe_server_edits(edits)`` receives the edits the server reports after a call (default:
  each is logged as a ``server_edit`` strategy event).

Declared attributes, with their defaults on ``BaseStrategy``:

* ``server_side`` (``None``) names the server feature the backend must apply
  (``"context_management"``; the run refuses other backends with one line, exit code 2), and
  ``supporting_models`` (``()``) the presets whose backend does;
* ``rewrites_system = True`` declares that ``prepare`` changes the leading system message (it
  must still be a system message). The harness then relaxes that one rule of the validation and
  records ``rewrites_system: true`` in the trial row. It is for deliberate experiments only (the
  timestamp anti-pattern of source 002 exp 2-3); a real strategy keeps the system message
  byte-identical;
* ``budget_guarantee`` and ``budget_exception`` document what a strategy promises about the
  budget (the levels, and the wrapping strategies that forward all of the above to a base, are in
  ``strategies/base.py``).

A third-party strategy needs no change to the ``strategies`` package: any importable class with a
``prepare`` method can be named by ``_target_`` in a config (see strategies/README.md), with
any of the hooks or none. ``full_strategy`` adapts such an object once, at the edge, to the
whole contract (``FullStrategy``), so the loop calls every hook directly. A sub-agent without a
strategy of its own is unmanaged: ``FullHistory`` sends it its whole history.

This module imports nothing of the project: the loop (``harness.agent_loop``) and the strategies
(``strategies/``) both import it, and neither imports the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Protocol, runtime_checkable

STRATEGY_HOOKS = ("bind", "tools", "call", "order_tools", "expose_tools", "server_options", "observe_server_edits")
"""The hooks the loop calls besides ``prepare`` (module docstring); ``BaseStrategy`` defaults each."""
BUDGET_GUARANTEES = ("hard", "soft", "none")
"""The levels a strategy's ``budget_guarantee`` declares (what each promises: strategies/base.py)."""
NOTE_ALLOWANCE = 64
"""Tokens a ``hard`` strategy may spend on its own note (e.g. headtail's "N earlier rounds were cut")."""


def tool_name(tool: dict) -> str:
    """The name of one tool schema."""
    return str(tool.get("function", {}).get("name", ""))


class ToolError(Exception):
    """Raised by a strategy's ``call`` for a bad tool call; becomes an error tool result."""


class StrategyContext(Protocol):
    """What the harness gives a strategy at ``bind`` time (one per trial)."""

    budget: int
    """Token budget for the prepared request (tool schemas included)."""
    store: Path
    """A per-trial directory the strategy may write files to."""

    def count_tokens(self, messages: list[dict]) -> int:
        """Tokens of these messages (memoized per message; excludes tools and primer)."""

    def count_message(self, message: dict) -> int:
        """Tokens of one message (memoized)."""

    def request_overhead(self) -> int:
        """Tokens every request pays besides its messages: tool schemas and reply primer."""

    def summarize(self, messages: list[dict], instructions: str = "") -> str:
        """Ask the configured summarizer model for a structured summary (billed to the trial)."""

    def run_subagent(self, task: str, max_steps: int = 60, strategy: Any = None, budget: int | None = None) -> str:
        """Run a sub-agent with a fresh context on ``task`` and return its conclusion (billed to the trial).

        ``strategy`` (a fresh, unbound object) manages the sub-agent's context under ``budget``
        (default: the trial's); without one the sub-agent is unmanaged.
        """

    def log(self, event: str, **data: Any) -> None:
        """Record a strategy event in the transcript; ``compaction`` events are counted."""


@runtime_checkable
class Strategy(Protocol):
    """Anything with ``prepare(messages) -> messages``: what a config may name (``full_strategy`` adapts it)."""

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Return the projection of ``messages`` that the model sees."""


class FullStrategy(Protocol):
    """The whole contract the loop calls: ``prepare``, every hook of ``STRATEGY_HOOKS`` and the declared
    attributes (module docstring). ``BaseStrategy`` and its subclasses have it; ``full_strategy`` gives it."""

    rewrites_system: bool
    server_side: str | None
    supporting_models: tuple[str, ...]

    def bind(self, ctx: StrategyContext) -> None:
        """Receive the context before the first ``prepare``."""

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Return the projection of ``messages`` that the model sees."""

    def tools(self) -> list[dict]:
        """Extra tool schemas offered to the agent."""

    def call(self, name: str, args: dict) -> str:
        """Execute one of ``tools()``."""

    def order_tools(self, tools: list[dict]) -> list[dict] | None:
        """This step's order of the tool schemas (``None``: as they are)."""

    def expose_tools(self, tools: list[dict]) -> list[dict] | None:
        """The tools offered at this step (``None``: all of them)."""

    def server_options(self) -> dict:
        """Request options sent with every call of the agent."""

    def observe_server_edits(self, edits: list[dict]) -> None:
        """Receive the edits the server applied to a request."""


class BaseStrategy:
    """Base class of the strategies: keeps the bound context, and a no-op default for every hook."""

    ctx: StrategyContext
    rewrites_system: bool = False
    """True only for deliberate experiments that change the system message (see the module docstring)."""
    server_side: str | None = None
    """The server feature a backend must apply (``None``: the strategy runs in the harness)."""
    supporting_models: tuple[str, ...] = ()
    """The model presets whose backend applies ``server_side`` (named when a run is refused)."""
    budget_guarantee: str = "none"
    """``hard``, ``soft`` or ``none`` (strategies/base.py); subclasses override it."""
    budget_exception: str = ""
    """When a ``hard`` strategy can exceed the budget, completing "hard unless ..." (``guarantee_text``)."""

    def bind(self, ctx: StrategyContext) -> None:
        """Keep the trial context."""
        self.ctx = ctx

    def tools(self) -> list[dict]:
        """No extra tools by default."""
        return []

    def call(self, name: str, args: dict) -> str:
        """No extra tools by default."""
        raise ToolError(f"unknown tool {name!r}")

    def order_tools(self, tools: list[dict]) -> list[dict] | None:
        """The tools' order is left alone by default (``None``)."""
        return None

    def expose_tools(self, tools: list[dict]) -> list[dict] | None:
        """Every tool is offered by default (``None``)."""
        return None

    def server_options(self) -> dict:
        """No request options by default."""
        return {}

    def observe_server_edits(self, edits: list[dict]) -> None:
        """Log each edit the server applied as a ``server_edit`` strategy event."""
        for edit in edits:
            self.ctx.log("server_edit", **edit)

    def prepare(self, messages: list[dict]) -> list[dict]:  # pragma: no cover - abstract
        raise NotImplementedError


class FullHistory(BaseStrategy):
    """The no-op projection: the whole history, unchanged, every step (a sub-agent without a strategy)."""

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Return the history as it is."""
        return list(messages)


class AdaptedStrategy(BaseStrategy):
    """A strategy object with ``prepare`` and any of the hooks (or none), given the whole contract.

    Each hook calls the object's own when it has one, else ``BaseStrategy``'s default; the
    declared attributes are read from the object once, with the same defaults.
    """

    def __init__(self, inner: Strategy) -> None:
        self.inner = inner
        self.own: dict[str, Callable[..., Any]] = {
            name: getattr(inner, name) for name in STRATEGY_HOOKS if callable(getattr(inner, name, None))
        }
        self.rewrites_system = bool(getattr(inner, "rewrites_system", False))
        self.server_side = getattr(inner, "server_side", None)
        self.supporting_models = tuple(getattr(inner, "supporting_models", ()))
        self.budget_guarantee = getattr(inner, "budget_guarantee", "none")
        self.budget_exception = getattr(inner, "budget_exception", "")

    def bind(self, ctx: StrategyContext) -> None:
        """Keep the context and bind the object, if it takes one."""
        super().bind(ctx)
        if "bind" in self.own:
            self.own["bind"](ctx)

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The object's projection."""
        return self.inner.prepare(messages)

    def tools(self) -> list[dict]:
        """The object's tools (none without the hook)."""
        return list(self.own["tools"]()) if "tools" in self.own else []

    def call(self, name: str, args: dict) -> str:
        """The object's tool call (every name unknown without the hook)."""
        return self.own["call"](name, args) if "call" in self.own else super().call(name, args)

    def order_tools(self, tools: list[dict]) -> list[dict] | None:
        """The object's order of the tools (``None`` without the hook)."""
        return self.own["order_tools"](tools) if "order_tools" in self.own else None

    def expose_tools(self, tools: list[dict]) -> list[dict] | None:
        """The object's choice of tools (``None`` without the hook)."""
        return self.own["expose_tools"](tools) if "expose_tools" in self.own else None

    def server_options(self) -> dict:
        """The object's request options (none without the hook)."""
        return dict(self.own["server_options"]() or {}) if "server_options" in self.own else {}

    def observe_server_edits(self, edits: list[dict]) -> None:
        """The object's handling of the server's edits (``server_edit`` events without the hook)."""
        if "observe_server_edits" in self.own:
            self.own["observe_server_edits"](edits)
        else:
            super().observe_server_edits(edits)


def full_strategy(strategy: Any) -> FullStrategy:
    """``strategy`` with the whole contract: a ``BaseStrategy`` as it is, any other object with ``prepare``
    adapted (``AdaptedStrategy``); ``TypeError`` for an object without ``prepare``."""
    if isinstance(strategy, BaseStrategy):
        return strategy
    if not callable(getattr(strategy, "prepare", None)):
        raise TypeError(f"a strategy needs a prepare(messages) method; {type(strategy).__name__} has none")
    return AdaptedStrategy(strategy)


def strategy_class(strategy: Any) -> str:
    """The dotted class of the strategy as configured (an ``AdaptedStrategy``: the object it adapts)."""
    if isinstance(strategy, AdaptedStrategy):
        strategy = strategy.inner
    return f"{type(strategy).__module__}.{type(strategy).__qualname__}"

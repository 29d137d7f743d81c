"""The Strategy contract.

A strategy decides what the model sees. Its one required method is
``prepare(messages) -> messages``: it receives the full, append-only history and returns
the projection that is sent to the model. It must never mutate the history (copy a
message before changing it) and its output must be a valid conversation (leading system
message unchanged, tool calls paired with their results, no trailing assistant message);
the harness validates every projection and ends the trial with ``strategy_error`` if not.

One instance serves one trial, so a strategy may keep state (frozen placeholders, a
running summary, counters). Optional, duck-typed hooks:

* ``bind(ctx)`` receives the ``StrategyContext`` below before the first ``prepare``;
* ``tools()`` returns extra tool schemas offered to the agent;
* ``call(name, args) -> str`` executes them (raise ``ToolError`` for a bad call);
* ``order_tools(tools) -> tools`` returns this step's order of the tool schemas (called after
  every ``prepare``; it must return a permutation, or the trial ends with ``strategy_error``).
  The schemas precede the messages in the cached prefix, so reordering them breaks the cache;
  it exists for deliberate experiments (``strategies/pitfalls.py``);
* ``expose_tools(tools) -> tools`` returns the tools offered at this step (called after every
  ``prepare`` and ``order_tools``): a subset of the trial's tools, unchanged, that keeps
  ``submit`` (else the trial ends with ``strategy_error``). The harness answers a call to a tool
  of the trial that is not offered with an error, without running it (``unoffered_calls``), and
  records the schema tokens sent and left out (``tool_schema_tokens``, ``tool_schema_tokens_saved``).
  A change of the offered set breaks the prefix cache like a reorder (``strategies/select_tools.py``).

Server-side strategies (strategies/server_side.py) add three more: a class attribute
``server_side`` names the server feature the backend must apply (``"context_management"``;
the run refuses other backends with one line, exit code 2), ``server_options()`` returns the
request options sent with every agent call (``context_management``, ``betas``), and
``observe_server_edits(edits)`` receives the edits the server reports after each call (to log
them as strategy events). A wrapping strategy forwards all three to its base.

A class attribute ``rewrites_system = True`` declares that ``prepare`` changes the leading
system message (it must still be a system message). The harness then relaxes that one rule of
the validation and records ``rewrites_system: true`` in the trial row. It is for deliberate
experiments only (the timestamp anti-pattern of seed 002 exp 2-3); a real strategy keeps the
system message byte-identical.

A class attribute ``budget_guarantee`` documents what a strategy promises about the budget
(``BUDGET_GUARANTEES``; strategies/README.md says, per strategy, when it cannot keep it):

* ``"hard"``: the request (tool schemas included) is at most the budget whenever the head
  (system + task), the newest round and a one-line note of ``NOTE_ALLOWANCE`` tokens fit;
* ``"soft"``: it aims at the budget but can exceed it (what it never removes is too big);
* ``"none"``: it does not aim at the budget.

A strategy without the attribute counts as ``"none"``. ``tests/test_strategy_conformance.py``
checks the ``"hard"`` ones.

A third-party strategy needs no change to this package: any importable class with a
``prepare`` method can be named by ``_target_`` in a config (see strategies/README.md).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable


BUDGET_GUARANTEES = ("hard", "soft", "none")
NOTE_ALLOWANCE = 64
"""Tokens a ``hard`` strategy may spend on its own note (e.g. headtail's "N earlier rounds were cut")."""


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
    """Anything with ``prepare(messages) -> messages``."""

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Return the projection of ``messages`` that the model sees."""


class BaseStrategy:
    """Optional convenience base class: keeps the bound context, offers no tools."""

    ctx: StrategyContext
    rewrites_system: bool = False
    """True only for deliberate experiments that change the system message (see the module docstring)."""
    budget_guarantee: str = "none"
    """``hard``, ``soft`` or ``none`` (see the module docstring); subclasses override it."""
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

    def fits(self, messages: list[dict]) -> bool:
        """Whether ``messages`` plus the request overhead fit the budget."""
        return self.ctx.count_tokens(messages) + self.ctx.request_overhead() <= self.ctx.budget

    def prepare(self, messages: list[dict]) -> list[dict]:  # pragma: no cover - abstract
        raise NotImplementedError


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
    still fits. The base's tools are offered next to the wrapper's ``own_tools()``, and calls
    the wrapper does not handle in ``own_call`` go to the base.
    """

    base: Any = None

    @property
    def budget_guarantee(self) -> str:  # type: ignore[override]
        """The base's guarantee made ``soft`` by what the wrapper adds (``none`` without a base that aims)."""
        if self.base is None or budget_guarantee(self.base) == "none":
            return "none"
        return "soft"

    @staticmethod
    def build_base(base: Any, owner: str) -> Any:
        """``base`` as a strategy object: built from a ``_target_`` mapping, or checked."""
        if isinstance(base, dict):
            from hydra.utils import instantiate

            base = instantiate({k: v for k, v in base.items() if k != "name"}, _convert_="all")
        if base is not None and not hasattr(base, "prepare"):
            raise ValueError(f"{owner}: base must be a strategy (something with prepare)")
        return base

    def bind(self, ctx: StrategyContext) -> None:
        """Keep the context and bind the base to a reserved view of it."""
        self.ctx = ctx
        self.base_ctx = ReservedContext(ctx)
        if self.base is not None and hasattr(self.base, "bind"):
            self.base.bind(self.base_ctx)

    def reserve(self, tokens: int) -> None:
        """Give the base the budget minus ``tokens``."""
        self.base_ctx.budget = max(1, self.ctx.budget - tokens)

    def base_prepare(self, messages: list[dict]) -> list[dict]:
        """The base's projection, or the history when there is no base."""
        return self.base.prepare(messages) if self.base is not None else list(messages)

    @property
    def server_side(self) -> str | None:
        """The base's server feature (``None``: the base runs in the harness)."""
        return getattr(self.base, "server_side", None) if self.base is not None else None

    def server_options(self) -> dict:
        """The base's request options (none for a base that runs in the harness)."""
        options = getattr(self.base, "server_options", None)
        return dict(options() or {}) if callable(options) else {}

    def observe_server_edits(self, edits: list[dict]) -> None:
        """Hand the server's edits to the base (logged as plain ``server_edit`` events when it takes none)."""
        observe = getattr(self.base, "observe_server_edits", None)
        if callable(observe):
            observe(edits)
            return
        for edit in edits:
            self.ctx.log("server_edit", **edit)

    def own_tools(self) -> list[dict]:
        """The wrapper's own tools (none by default)."""
        return []

    def own_call(self, name: str, args: dict) -> str | None:
        """Execute one of the wrapper's own tools; ``None`` when ``name`` is not one of them."""
        return None

    def tools(self) -> list[dict]:
        """The wrapper's tools, then the base's."""
        base_tools = list(self.base.tools()) if self.base is not None and hasattr(self.base, "tools") else []
        return self.own_tools() + base_tools

    def call(self, name: str, args: dict) -> str:
        """The wrapper's tool, else the base's."""
        result = self.own_call(name, args)
        if result is not None:
            return result
        if self.base is not None and hasattr(self.base, "call"):
            return self.base.call(name, args)
        raise ToolError(f"unknown tool {name!r}")

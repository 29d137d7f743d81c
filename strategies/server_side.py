"""Server-side context management (source 004: Anthropic's context editing and compaction).

``server_clear_tool_uses`` and ``server_compaction`` leave the history alone: ``prepare``
returns it unchanged and the strategy sends Anthropic's ``context_management`` parameters with
every agent call (``server_options``), so the SERVER edits the prompt before the model reads it.
The edits the server reports (``context_management.applied_edits``; a ``compaction`` block) come
back through ``observe_server_edits`` and are logged as ``compaction`` strategy events with
``method`` = the strategy's name and ``tier="server"``, so records, plots and the trial's
``compactions`` count show them like the client-side strategies' edits.

Only a backend that applies the parameters can run them: ``model=anthropic``
(``server_context_management: true``). Elsewhere the run refuses at start with one line and
exit code 2 (``harness.runner.check_server_side``); llama-server's Messages API accepts the
request but does not edit.

Thresholds (``trigger``, ``clear_at_least``) take the spellings of ``clear_tool_results``: a
fraction of the budget, tokens, ``25k``; they are resolved against the trial's budget at bind
time and sent as ``input_tokens``. ``trigger`` is declared as the strategy's ``size_trigger``
(strategies/triggers.py), as the client-side strategies declare theirs, but the server evaluates it.
The server counts with its own tokenizer, the harness with tiktoken, so the two meet at slightly
different points; the request the harness records and counts is the unedited one (the server
reports the tokens it cleared in the event).
"""

from __future__ import annotations

from typing import Any

from strategies._common import check_threshold, resolve_tokens
from strategies.base import BaseStrategy
from strategies.triggers import RequestSizeMixin, SizeTrigger, Trigger

CONTEXT_MANAGEMENT = "context_management"
COMPACTION_BETA = "compact-2026-01-12"
SUPPORTING_MODELS = ("anthropic",)


class ServerSideStrategy(RequestSizeMixin, BaseStrategy):
    """Base of the server-side strategies: history unchanged, parameters sent, edits logged."""

    budget_guarantee = "none"
    """The server edits the prompt against its own trigger; the harness cannot promise a budget."""
    server_side = CONTEXT_MANAGEMENT
    """The server feature a backend must support (``harness.runner.check_server_side``)."""
    supporting_models = SUPPORTING_MODELS
    """The presets whose backend supports it (named in the refusal line)."""
    method = "server"

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The history, unchanged: the server edits it."""
        return list(messages)

    def edits(self) -> list[dict]:  # pragma: no cover - abstract
        """The ``context_management.edits`` sent with every agent call."""
        raise NotImplementedError

    def betas(self) -> list[str]:
        """Beta flags the edits need besides context management's own."""
        return []

    def server_options(self) -> dict:
        """The request options the loop hands to the backend (``harness.models.base.request_options``)."""
        return {"context_management": {"edits": self.edits()}, "betas": self.betas()}

    def observe_server_edits(self, edits: list[dict]) -> None:
        """Log each edit the server applied as a ``compaction`` event of this strategy."""
        for edit in edits:
            data = {k: v for k, v in edit.items() if k != "type"}
            self.ctx.log("compaction", method=self.method, tier="server", edit=edit.get("type"), **data)


class ServerClearToolUses(ServerSideStrategy):
    """Anthropic's ``clear_tool_uses_20250919`` edit, applied by the server.

    Parameters:
        trigger: clear when the prompt exceeds this many input tokens: a fraction of the budget,
            tokens or ``25k`` (default 1.0: the budget; Anthropic's own default is 100,000).
        keep: the most recent tool uses never cleared (default 3, as Anthropic's).
        clear_at_least: clear only if at least this many tokens go (0: leave it to the server).
        exclude_tools: tool names whose uses are never cleared.
        clear_tool_inputs: also clear the calls' inputs (``true``), or only those of the named tools (a list).
    """

    method = "server_clear_tool_uses"

    def __init__(
        self,
        trigger: Trigger = 1.0,
        keep: int = 3,
        clear_at_least: Trigger = 0,
        exclude_tools: list[str] | None = None,
        clear_tool_inputs: bool | list[str] = False,
    ) -> None:
        self.size_trigger = SizeTrigger(trigger, "server_clear_tool_uses: trigger")
        if clear_at_least:
            check_threshold(clear_at_least, "server_clear_tool_uses: clear_at_least")
        if int(keep) < 0:
            raise ValueError(f"server_clear_tool_uses: keep={keep} must be >= 0")
        self.trigger = trigger
        self.keep = int(keep)
        self.clear_at_least = clear_at_least
        self.exclude_tools = list(exclude_tools or [])
        self.clear_tool_inputs = (
            list(clear_tool_inputs) if isinstance(clear_tool_inputs, (list, tuple)) else bool(clear_tool_inputs)
        )

    def edits(self) -> list[dict]:
        """One ``clear_tool_uses_20250919`` edit with the resolved thresholds."""
        edit: dict[str, Any] = {
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": self.trigger_tokens()},
            "keep": {"type": "tool_uses", "value": self.keep},
        }
        if self.clear_at_least:
            edit["clear_at_least"] = {
                "type": "input_tokens",
                "value": resolve_tokens(self.clear_at_least, self.ctx.budget, "clear_at_least"),
            }
        if self.exclude_tools:
            edit["exclude_tools"] = list(self.exclude_tools)
        if self.clear_tool_inputs:
            edit["clear_tool_inputs"] = self.clear_tool_inputs
        return [edit]


class ServerCompaction(ServerSideStrategy):
    """Anthropic's server-side compaction (``compact_20260112``): the server summarizes the
    conversation once the prompt exceeds ``trigger`` and returns a ``compaction`` block, which the
    harness keeps on the reply (``server_blocks``) and sends back; the server then reads the
    summary in place of everything before it.

    Parameters:
        trigger: compact when the prompt exceeds this many input tokens: a fraction of the
            budget, tokens or ``25k`` (default 1.0: the budget; the API's default is 150,000 and
            it may refuse small values).
        instructions: replaces the server's summarization prompt (``null``: the server's own).
    """

    method = "server_compaction"

    def __init__(self, trigger: Trigger = 1.0, instructions: str | None = None) -> None:
        self.size_trigger = SizeTrigger(trigger, "server_compaction: trigger")
        self.trigger = trigger
        self.instructions = instructions

    def edits(self) -> list[dict]:
        """One ``compact_20260112`` edit (never paused: the reply continues after the summary)."""
        edit: dict[str, Any] = {
            "type": "compact_20260112",
            "trigger": {"type": "input_tokens", "value": self.trigger_tokens()},
            "pause_after_compaction": False,
        }
        if self.instructions:
            edit["instructions"] = self.instructions
        return [edit]

    def betas(self) -> list[str]:
        """Compaction's own beta flag."""
        return [COMPACTION_BETA]

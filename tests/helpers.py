"""Shared test helpers: a stand-in strategy context and hand-built histories."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

from harness.tokens import CountsTokens, TokenCounter

SYSTEM = {"role": "system", "content": "You are a test agent."}
STORES = tempfile.TemporaryDirectory(prefix="ctxbench-test-stores-")  # every FakeContext's store; removed at exit
TASK = {"role": "user", "content": "Do the task."}


class FakeContext(CountsTokens):
    """A StrategyContext for unit tests: real token counting, recorded events, canned summaries."""

    def __init__(
        self,
        budget: int,
        tools: list[dict] | None = None,
        summary: str = "Key findings:\n- x",
        counter: TokenCounter | None = None,
        store: Path | None = None,
    ) -> None:
        self.budget = budget
        self.counter = counter or TokenCounter()
        self.tools = tools or []
        self.store = store or Path(tempfile.mkdtemp(prefix="store-", dir=STORES.name))
        self.events: list[tuple[str, dict]] = []
        self.summaries: list[list[dict]] = []
        self.summary = summary

    def summarize(self, messages: list[dict], instructions: str = "") -> str:
        self.summaries.append(messages)
        return self.summary

    def log(self, event: str, **data: Any) -> None:
        self.events.append((event, data))


def call(call_id: str, name: str = "read", **args: Any) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def history(
    rounds: int = 6, size: int = 400, parallel: int = 1, error_at: int | None = None, user_turn_at: int | None = None
) -> list[dict]:
    """system, task, then `rounds` assistant rounds with `parallel` tool calls each (~size words per result)."""
    messages = [dict(SYSTEM), dict(TASK)]
    for r in range(rounds):
        if user_turn_at == r:
            messages.append({"role": "user", "content": f"Also check item {r}."})
        calls = [call(f"c{r}_{i}", "read", path=f"f{r}_{i}.py") for i in range(parallel)]
        messages.append({"role": "assistant", "content": f"step {r}", "tool_calls": calls})
        for i in range(parallel):
            is_error = error_at == r
            content = ("ERROR: permission denied " if is_error else "") + " ".join(
                f"word{r}_{i}_{k}" for k in range(size)
            )
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": f"c{r}_{i}",
                    "content": content,
                    "_tool": "read",
                    "_args": {"path": f"f{r}_{i}.py"},
                    "_error": is_error,
                    "_step": r + 1,
                    "_resource": None if is_error else f"file:f{r}_{i}.py",
                }
            )
    return messages


def frozen(messages: list[dict]) -> list[dict]:
    return copy.deepcopy(messages)


def compose(*overrides: str):
    """The run config for ``overrides`` (Hydra compose, no job started)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from harness.config import CONFIG_DIR, register_resolvers

    register_resolvers()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return hydra_compose(config_name="config", overrides=list(overrides))


class RaisingStrategy:
    """A strategy that raises on its fourth call (for run-level fault tests)."""

    def __init__(self) -> None:
        self.calls = 0

    def prepare(self, messages):
        self.calls += 1
        if self.calls == 4:
            raise RuntimeError("strategy bug")
        return list(messages)

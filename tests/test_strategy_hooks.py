"""The strategy contract is declared (harness/contracts.py): every hook has a default, every wrapper forwards every
hook and declared attribute to its base, and a prepare-only object is adapted once to the whole contract."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest

import strategies
from strategies.base import (
    FORWARDED_ATTRIBUTES,
    STRATEGY_HOOKS,
    AdaptedStrategy,
    BaseStrategy,
    ToolError,
    WrappingStrategy,
    full_strategy,
    strategy_class,
    tool_name,
)
from strategies.select_tools import SelectTools
from tests.helpers import FakeContext


def schema(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {"type": "object"}}}


BASE_TOOL = schema("base_tool")
TASK_TOOLS = [schema("read"), schema("grep"), schema("submit")]
EDITS = [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2}]


class Recording(BaseStrategy):
    """A base that answers every hook with something of its own and records each call."""

    rewrites_system = True
    server_side = "context_management"
    supporting_models = ("anthropic",)

    def __init__(self) -> None:
        self.calls: list[str] = []

    def bind(self, ctx: Any) -> None:
        self.calls.append("bind")
        super().bind(ctx)

    def prepare(self, messages: list[dict]) -> list[dict]:
        return list(messages)

    def tools(self) -> list[dict]:
        self.calls.append("tools")
        return [BASE_TOOL]

    def call(self, name: str, args: dict) -> str:
        self.calls.append("call")
        return f"base ran {name}"

    def order_tools(self, tools: list[dict]) -> list[dict]:
        self.calls.append("order_tools")
        return list(reversed(tools))

    def expose_tools(self, tools: list[dict]) -> list[dict]:
        self.calls.append("expose_tools")
        return [t for t in tools if tool_name(t) != "grep"]

    def server_options(self) -> dict:
        self.calls.append("server_options")
        return {"betas": ["b"]}

    def observe_server_edits(self, edits: list[dict]) -> None:
        self.calls.append("observe_server_edits")


def wrapper_classes() -> list[type]:
    """Every ``WrappingStrategy`` subclass in ``strategies/``."""
    for module in pkgutil.iter_modules(strategies.__path__):
        importlib.import_module(f"strategies.{module.name}")
    found, todo = [], list(WrappingStrategy.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted({c for c in found if c.__module__.startswith("strategies.")}, key=lambda c: c.__qualname__)


def call_hook(strategy: Any, hook: str, tools: list[dict]) -> Any:
    """Call ``hook`` of a bound strategy with fitting arguments."""
    arguments = {
        "bind": (FakeContext(10_000, tools=tools),),
        "tools": (),
        "call": ("base_tool", {}),
        "order_tools": (list(tools),),
        "expose_tools": (list(tools),),
        "server_options": (),
        "observe_server_edits": (EDITS,),
    }
    return getattr(strategy, hook)(*arguments[hook])


def test_the_wrappers_are_found():
    names = {c.__name__ for c in wrapper_classes()}
    assert {"Isolate", "Notes", "StatusBar", "MemoryTool"} <= names


@pytest.mark.parametrize("cls", wrapper_classes(), ids=lambda c: c.__name__)
@pytest.mark.parametrize("hook", STRATEGY_HOOKS)
def test_a_wrapper_forwards_every_hook_to_its_base(cls, hook):
    base = Recording()
    wrapper = cls(base=base)
    wrapper.bind(FakeContext(10_000, tools=TASK_TOOLS))
    tools = [*TASK_TOOLS[:-1], *wrapper.tools(), TASK_TOOLS[-1]]
    base.calls.clear()
    result = call_hook(wrapper, hook, tools)
    assert hook in base.calls, f"{cls.__name__}.{hook} does not reach its base"
    if hook == "expose_tools":
        own = {tool_name(t) for t in wrapper.own_tools()}
        assert "grep" not in map(tool_name, result) and own <= set(map(tool_name, result)), "own tools stay offered"
    if hook == "server_options":
        assert result == {"betas": ["b"]}


@pytest.mark.parametrize("cls", wrapper_classes(), ids=lambda c: c.__name__)
@pytest.mark.parametrize("attribute", FORWARDED_ATTRIBUTES)
def test_a_wrapper_forwards_the_declared_attributes(cls, attribute):
    assert getattr(cls(base=Recording()), attribute) == getattr(Recording, attribute)


def test_wrapping_select_tools_keeps_its_exposure():
    from strategies.notes import Notes

    notes = Notes(base=SelectTools(max_tools=0, keep_recent_rounds=0))
    notes.bind(FakeContext(10_000, tools=TASK_TOOLS))
    tools = [*TASK_TOOLS[:-1], *notes.tools(), TASK_TOOLS[-1]]
    notes.prepare([{"role": "system", "content": "s"}, {"role": "user", "content": "nothing relevant"}])
    offered = [tool_name(t) for t in notes.expose_tools(tools)]
    assert offered == ["write_note", "read_notes", "submit"], "select_tools hid the task tools; the notes tools stay"


@pytest.mark.parametrize("hook", STRATEGY_HOOKS)
def test_every_hook_has_a_default(hook):
    class PrepareOnly(BaseStrategy):
        def prepare(self, messages: list[dict]) -> list[dict]:
            return list(messages)

    strategy = PrepareOnly()
    strategy.bind(ctx := FakeContext(10_000))
    if hook == "call":
        with pytest.raises(ToolError):
            call_hook(strategy, hook, TASK_TOOLS)
        return
    default = {
        "bind": None,
        "tools": [],
        "order_tools": None,
        "expose_tools": None,
        "server_options": {},
        "observe_server_edits": None,
    }[hook]
    assert call_hook(strategy, hook, TASK_TOOLS) == default
    if hook == "observe_server_edits":
        assert ctx.events == [("server_edit", EDITS[0])]


class ThirdParty:
    """A strategy of another package: ``prepare`` and one hook, no base class."""

    def prepare(self, messages: list[dict]) -> list[dict]:
        return list(messages)

    def expose_tools(self, tools: list[dict]) -> list[dict]:
        return tools[-1:]


def test_a_prepare_only_object_is_adapted_to_the_whole_contract():
    adapted = full_strategy(ThirdParty())
    assert isinstance(adapted, AdaptedStrategy) and strategy_class(adapted) == "tests.test_strategy_hooks.ThirdParty"
    adapted.bind(FakeContext(10_000))
    assert adapted.tools() == [] and adapted.order_tools(TASK_TOOLS) is None and adapted.server_options() == {}
    assert adapted.expose_tools(TASK_TOOLS) == TASK_TOOLS[-1:], "its own hook is called"
    assert (adapted.rewrites_system, adapted.server_side, adapted.supporting_models) == (False, None, ())
    base = Recording()
    assert full_strategy(base) is base, "a BaseStrategy has the contract already"
    with pytest.raises(TypeError, match="prepare"):
        full_strategy(object())

"""Running a reply's tool calls: ``ToolRunner``.

Each call of a reply is parsed and run in turn: the task's own tools (at most the task's
``max_calls_per_turn`` a turn: a call over it is answered with an error), the strategy's, and
the final tool, which the agent loop runs (``final_call``).

Blame for a strategy's tool: the model's arguments are checked against the tool's declared
schema first (``argument_problem``: required keys, and the JSON type, ``enum`` and array
``items`` type of each declared property); a mismatch is answered as a tool error that the model
sees, and the strategy is not called. A ``ToolError`` the strategy raises is the model's mistake
too (the strategy validates what the schema cannot say: paths, sizes, caps). Any other exception
is the strategy's bug: the run ends as ``strategy_error``.

A tool of the run that this step did not offer is refused, and a task tool that raises is
answered with an error; the run goes on. The runner counts the refused and failed calls
(``CallCounts``); the loop appends each result as it comes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from harness.contracts import FullStrategy, ToolError, tool_name
from harness.conversation import parse_arguments
from harness.tool_offer import ToolOffer
from harness.trial_row import CallCounts
from tasks.base import ToolResult, rate_limited_message


class TaskTools(Protocol):
    """What the runner needs of a task instance: its tools' per-turn limit and ``call``."""

    max_calls_per_turn: int | None

    def call(self, name: str, args: dict) -> ToolResult:
        """Execute a task tool."""


@dataclass(frozen=True)
class CallResult:
    """A tool call's result: its text, whether it failed, the resource it read, and whether it ended the run."""

    content: str
    is_error: bool = False
    resource: Any = None
    ends: bool = False


FinalCall = Callable[[dict, list[dict], dict], CallResult]
"""The loop's final tool: ``(args, request, reply) -> CallResult`` (``ends``: the run is over)."""


class ToolRunner:
    """Runs the tool calls of one agent's replies and counts the refused and failed ones (``counts``)."""

    def __init__(
        self,
        task: TaskTools,
        strategy: FullStrategy,
        offer: ToolOffer,
        final_call: FinalCall,
        end: Callable[[str, str], None],
    ) -> None:
        self.task, self.strategy, self.offer = task, strategy, offer
        self.final_call, self.end = final_call, end  # ``end``: the loop's, for a strategy tool that raises
        self.counts = CallCounts()

    def run(
        self, calls: list[tuple[str, str, Any]], request: list[dict], reply: dict
    ) -> Iterator[tuple[str, str, dict, CallResult]]:
        """Run the reply's calls in order, yielding ``(call_id, name, args, result)`` after each (the caller appends
        the result before the next call runs)."""
        task_calls = 0
        for call_id, name, raw in calls:
            args: dict = {}
            try:
                args = parse_arguments(raw)
            except ValueError as exc:
                result = CallResult(
                    f"ERROR: could not parse the arguments of {name}: {exc}. Fix the JSON and call again.", True
                )
            else:
                task_calls += self.offer.is_task_call(name)
                exceeded = self.exceeded_call_limit(task_calls) if self.offer.is_task_call(name) else None
                if exceeded is not None:
                    result = CallResult(rate_limited_message(exceeded), True)
                    self.counts.rate_limited += 1
                else:
                    result = self.run_one(name, args, request, reply)
            yield call_id, name, args, result

    def exceeded_call_limit(self, task_calls: int) -> int | None:
        """The task's per-turn limit (``max_calls_per_turn``) when the ``task_calls``-th task call of this turn
        exceeds it, else ``None``."""
        limit = self.task.max_calls_per_turn
        return limit if limit is not None and task_calls > limit else None

    def run_one(self, name: str, args: dict, request: list[dict], reply: dict) -> CallResult:
        """Run one parsed call: the final tool, a refused one, the strategy's or the task's."""
        if name == self.offer.final_name:
            return self.final_call(args, request, reply)
        if self.offer.is_unoffered(name):
            self.counts.unoffered_calls += 1
            offered = ", ".join(self.offer.names())
            return CallResult(f"ERROR: the tool {name} is not offered at this step (offered now: {offered}).", True)
        if name in self.offer.strategy_tool_names:
            return self.strategy_tool(name, args)
        return self.task_tool(name, args)

    def strategy_tool(self, name: str, args: dict) -> CallResult:
        """Run a tool the strategy offers: arguments that do not fit its schema are a tool error (the strategy is
        not called), and so is a ``ToolError``; any other exception is a ``strategy_error``."""
        problem = argument_problem(args, self.parameters(name))
        if problem is not None:
            return CallResult(f"ERROR: {name}: {problem}; check the arguments against the tool's schema.", True)
        try:
            return CallResult(str(self.strategy.call(name, args)), False)
        except ToolError as exc:
            return CallResult(f"ERROR: {exc}", True)
        except Exception as exc:
            self.end("strategy_error", f"strategy tool {name} raised: {type(exc).__name__}: {exc}")
            return CallResult(f"ERROR: internal error in {name}", True)

    def parameters(self, name: str) -> Any:
        """The ``parameters`` schema the run's tool ``name`` declares (``None`` when it declares none)."""
        for tool in self.offer.all_tools:
            if tool_name(tool) == name:
                function = tool.get("function")
                return function.get("parameters") if isinstance(function, dict) else None
        return None

    def task_tool(self, name: str, args: dict) -> CallResult:
        """Run one of the task's tools; one that raises on odd arguments is answered with an error (the run goes
        on)."""
        try:
            result = self.task.call(name, args)
        except Exception as exc:
            self.counts.tool_exceptions += 1
            return CallResult(
                f"ERROR: {name} failed on these arguments ({type(exc).__name__}: {str(exc)[:200]}); check "
                "them against the tool's schema and call again.",
                True,
            )
        return CallResult(result.content, result.is_error, result.resource)


JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}
"""The Python types of the JSON-schema types ``argument_problem`` checks (a bool is never a number)."""


def json_type(value: Any) -> str:
    """The JSON type of a parsed argument (``integer`` for a whole number)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    for name, types in JSON_TYPES.items():
        if isinstance(value, types):
            return name
    return type(value).__name__


def type_fits(value: Any, declared: Any) -> bool:
    """Whether ``value`` is of the declared JSON type (a name or a list of names; an unknown name fits all)."""
    names = declared if isinstance(declared, list) else [declared]
    if not all(isinstance(name, str) and name in JSON_TYPES for name in names):
        return True
    actual = json_type(value)
    return actual in names or (actual == "integer" and "number" in names)


def argument_problem(args: dict, schema: Any) -> str | None:
    """Why ``args`` do not fit a tool's ``parameters`` schema, in one line (``None`` when they fit).

    Checked: the ``required`` keys, and for each declared property that is present its ``type``,
    its ``enum`` and, for an array, its ``items`` ``type``. Anything else the schema says is left
    to the tool; a schema that is not an object schema checks nothing.
    """
    if not isinstance(schema, dict):
        return None
    required = schema.get("required")
    missing = (
        [key for key in required if isinstance(key, str) and key not in args] if isinstance(required, list) else []
    )
    if missing:
        return f"missing required argument {', '.join(missing)}"
    properties = schema.get("properties")
    for key, spec in properties.items() if isinstance(properties, dict) else ():
        if key in args and isinstance(spec, dict):
            problem = value_problem(args[key], spec)
            if problem is not None:
                return f"argument {key} {problem}"
    return None


def value_problem(value: Any, spec: dict) -> str | None:
    """Why one argument does not fit its property schema (type, enum, array items' type), else ``None``."""
    declared = spec.get("type")
    if declared is not None and not type_fits(value, declared):
        expected = declared if isinstance(declared, str) else " or ".join(map(str, declared))
        return f"must be {expected}, not {json_type(value)}"
    enum = spec.get("enum")
    if isinstance(enum, list) and not any(type(value) is type(option) and value == option for option in enum):
        return f"must be one of {', '.join(str(option)[:40] for option in enum[:10])}"
    items = spec.get("items")
    if isinstance(value, list) and isinstance(items, dict) and items.get("type") is not None:
        wrong = [json_type(item) for item in value if not type_fits(item, items["type"])]
        if wrong:
            return f"must hold {items['type']} items, not {wrong[0]}"
    return None

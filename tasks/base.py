"""The Task contract: families generate deterministic, code-graded instances.

A *family* (``TaskFamily``) is configured with size knobs and turns a seed into a
``TaskInstance``. The instance carries the prompts, the tool schemas, the tool
implementations (``call``) and the grader (``grade``). The reference agent that
``model=scripted`` runs lives apart, in ``reference_agent/``: it reads tasks, and
nothing in ``tasks`` reads it.

Rules every family obeys (tasks/README.md; a new family: docs/new_task.md):

* generation is deterministic: the same seed and knobs give a byte-identical instance;
* grading is code, never an LLM;
* read-type tool results carry a ``resource`` key so that re-reads can be counted;
* bad tool arguments come back as ``ToolResult(is_error=True)``, never as exceptions.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping


class KnobError(ValueError):
    """A task knob is out of range; the message names the knob and its valid range."""


@dataclass(frozen=True)
class ToolResult:
    """What one tool call returned.

    ``resource`` is the key of what a read-type call fetched (a file path, a page
    number, a URL). Two reads with the same resource in one trial make a re-read.
    """

    content: str
    is_error: bool = False
    resource: str | None = None


@dataclass(frozen=True)
class Grade:
    """The code grader's verdict: exact success, a partial score in [0, 1], and details."""

    success: bool
    score: float
    detail: dict[str, Any] = field(default_factory=dict)


def tool_schema(name: str, description: str, properties: dict[str, Any], required: list[str] | None = None) -> dict:
    """Build an OpenAI function-tool schema."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(required if required is not None else properties),
            },
        },
    }


RATE_LIMITED = "ERROR: rate limited"
"""How the result of a call beyond a task's per-turn limit starts (``rate_limited_message``)."""


def rate_limited_message(limit: int) -> str:
    """The result of a call beyond a task's per-turn limit (it starts with ``RATE_LIMITED``)."""
    return f"{RATE_LIMITED}: at most {limit} tool calls per turn; this call was not executed. Retry it in a later turn."


class TaskInstance(ABC):
    """One generated task: prompts, tools and grader.

    An instance serves exactly one trial (the runner generates a fresh one per trial), so
    its tools may keep per-trial state (calls made so far, a failed login) and ``grade``
    may use it.
    """

    family: str
    id: str
    seed: int
    system_prompt: str
    user_prompt: str
    tools: list[dict]
    answer_schema: dict
    max_calls_per_turn: int | None = None
    """A documented limit on the task-tool calls one reply may make (``None``: no limit). The loop
    answers each call beyond it with ``rate_limited_message`` and does not execute it; the call
    counts as a failed call in the records (``is_error``) and never reaches ``call``, so a task's
    own state and grader do not see it. Say the limit in the task's prompt."""

    @abstractmethod
    def call(self, name: str, args: dict) -> ToolResult:
        """Execute a task tool. Unknown names and bad arguments give an error result."""

    @abstractmethod
    def grade(self, answer: dict) -> Grade:
        """Grade the arguments of the agent's ``submit`` call."""

    def trial_metrics(self, tool_log: list[dict]) -> dict[str, Any]:
        """Extra per-trial metrics computed from the trial's tool log.

        ``tool_log`` holds one dict per executed call: ``name``, ``args``, ``is_error``,
        ``resource``. Families override this (file coverage, repeated failed calls).
        """
        return {}

    def fingerprint(self) -> str:
        """A stable serialization of the instance, used to test byte-identical generation."""
        return json.dumps(
            {
                "id": self.id,
                "system": self.system_prompt,
                "user": self.user_prompt,
                "tools": self.tools,
                "answer_schema": self.answer_schema,
                "data": self.data_fingerprint(),
            },
            sort_keys=True,
        )

    def data_fingerprint(self) -> Any:
        """The generated hidden data, JSON-serializable; families override it."""
        return None

    def answer_key(self) -> dict:
        """An answer (``submit``'s arguments) that ``grade`` passes as a success, on this fresh instance.

        ``python -m harness check task=`` submits it as its scripted solver (harness/task_conformance.py).
        Derive it from what ``grade`` compares against. A family whose grader also judges what the trial
        did (``call_budget``: only deals closed in this trial count) makes those calls here, through its
        own tools, so call it once, on a fresh instance. Optional: the default raises ``NotImplementedError``.
        """
        raise NotImplementedError(
            f"{type(self).__name__} has no answer_key(): add one to it returning an answer that grades as "
            "success (tasks/base.py, TaskInstance.answer_key)"
        )


class TaskFamily(ABC):
    """A configurable generator of task instances. Knobs are constructor arguments."""

    name: ClassVar[str]

    @abstractmethod
    def generate(self, seed: int) -> TaskInstance:
        """Generate the instance for ``seed``; deterministic."""

    @staticmethod
    def check_knob(name: str, value: int, low: int, high: int) -> int:
        """Validate an integer knob, raising ``KnobError`` with its valid range."""
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise KnobError(f"task knob {name}={value!r} is out of range (valid: {low}..{high})")
        return value


@dataclass(frozen=True)
class Knob:
    """One knob of a family as its constructor declares it: the parameter's name, annotation and default.

    The annotation is the knob's type (``int``, ``bool``, ``str | None``, ``list[int] | None``); the
    constructor checks the range (``TaskFamily.check_knob``), often against other knobs."""

    name: str
    hint: Any
    default: Any

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` is of the declared type."""
        return _fits(value, self.hint)

    def rule(self) -> str:
        """``an integer, default 30``: what the declaration accepts."""
        default = "" if self.default is inspect.Parameter.empty else f", default {_plain(self.default)}"
        return f"{_type_name(self.hint)}{default}"


def family_knobs(family: type[Any]) -> dict[str, Knob]:
    """The knobs ``family`` declares: its constructor's named parameters, with their annotations and defaults."""
    signature = inspect.signature(family)
    try:
        hints = typing.get_type_hints(family.__init__)
    except Exception:  # annotations that do not evaluate: every value is accepted, the constructor checks
        hints = {}
    return {
        name: Knob(name, hints.get(name, Any), param.default)
        for name, param in signature.parameters.items()
        if param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY)
    }


def check_knobs(family: type[Any], knobs: Mapping[str, Any]) -> Any:
    """``family`` built with ``knobs``: names and types checked against ``family_knobs`` first, then the
    constructor's own range checks. ``KnobError`` names the first bad knob, its value and the rule."""
    declared = family_knobs(family)
    open_ended = any(p.kind == p.VAR_KEYWORD for p in inspect.signature(family).parameters.values())
    for name, value in knobs.items():
        knob = declared.get(name)
        if knob is None:
            if open_ended:
                continue
            raise KnobError(f"task knob {name}={_plain(value)} is not a knob (its knobs: {', '.join(declared)})")
        if not knob.accepts(value):
            raise KnobError(f"task knob {name}={_plain(value)} must be {knob.rule()}")
    try:
        return family(**knobs)
    except KnobError:
        raise
    except Exception as exc:  # a family (a plugin's) that checks without KnobError: still one line
        raise KnobError(f"task knobs {dict(knobs)}: {exc}") from None


def _fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of the type ``hint`` (an int is a float; a bool is neither)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arm) for arm in args)
    if hint is type(None):
        return value is None
    if origin in (list, tuple):
        return isinstance(value, (list, tuple)) and all(_fits(item, args[0]) for item in value if args)
    if hint in (int, float) and isinstance(value, bool):
        return False
    if hint is float:
        return isinstance(value, (int, float))
    if isinstance(hint, type) and hint is not Any:
        return isinstance(value, hint)
    return True  # Any, or a hint this check does not read: the constructor decides


TYPE_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string", type(None): "null"}


def _type_name(hint: Any) -> str:
    """``an integer``, ``null or a string``, ``a list of integers``: the declared type in words."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(arm) for arm in sorted(args, key=lambda a: a is not type(None)))
    if origin in (list, tuple):
        return f"a list of {_type_name(args[0]).split(' ', 1)[-1]}s" if args else "a list"
    return TYPE_NAMES.get(hint, getattr(hint, "__name__", str(hint)))


def _plain(value: Any) -> str:
    """A value as a config spells it: ``abc``, ``3``, ``true``, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


@dataclass(frozen=True)
class FamilySpec:
    """A task family's one registration: its module declares ``FAMILY = FamilySpec(...)`` and ``tasks.registry``
    finds it.

    ``task`` is the ``TaskFamily`` (its knobs are a config's keys), ``instance`` the ``TaskInstance`` it
    generates (prompts, tools and ``call``: the world seen through its tools), ``grader`` the function its
    ``grade`` delegates to. ``policy`` names the reference policy of ``model=scripted`` as an import path,
    ``"reference_agent.policies.<module>:<Class>"``, a string because ``tasks`` never imports the reference
    agent; the class is called with the instance attributes named in ``policy_args`` as keyword arguments.
    ``policy=None``: the reference agent's default policy (``reference_agent/policies/default.py``) runs it.
    """

    name: str
    task: type[TaskFamily]
    instance: type[TaskInstance]
    grader: Callable[..., Grade]
    policy: str | None = None
    policy_args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.name != self.task.name:
            raise ValueError(f"family spec {self.name!r} names task class {self.task.__name__} ({self.task.name!r})")
        if self.policy is not None and ":" not in self.policy:
            raise ValueError(f"family spec {self.name!r}: policy {self.policy!r} is not 'package.module:Class'")

"""The Task contract: families generate deterministic, code-graded instances.

A *family* (``TaskFamily``) is configured with size knobs and turns a seed into a
``TaskInstance``. The instance carries the prompts, the tool schemas, the tool
implementations (``call``) and the grader (``grade``). The reference agent that
``model=scripted`` runs lives apart, in ``reference_agent/``: it reads tasks, and
nothing in ``tasks`` reads it.

Rules every family obeys (see ../shared/DESIGN.md):

* generation is deterministic: the same seed and knobs give a byte-identical instance;
* grading is code, never an LLM;
* read-type tool results carry a ``resource`` key so that re-reads can be counted;
* bad tool arguments come back as ``ToolResult(is_error=True)``, never as exceptions.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar


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

"""The conformance checks of a task family (``python -m harness check task=``).

A family is checked on a few seeds, each check on fresh instances (an instance serves one trial, so its
tools may keep state):

* ``generates``: ``generate(seed)`` returns a ``TaskInstance`` and raises nothing;
* ``deterministic``: generating the same seed twice gives the same ``fingerprint()`` (harness/check.py
  compares it with another process's too: ``fingerprints``);
* ``answer_key``: the scripted solver submits ``answer_key()`` and the grader says success;
* ``wrong_answers``: on the same instance, the grader fails an empty answer, the key with one value changed
  (``perturbed``) and answers of the wrong shape, without raising;
* ``tools``: every tool of the schema answers calls with arguments of its schema's types, and with hostile
  ones, with a ``ToolResult`` (an unknown tool too), never an exception.

Each check yields ``Failure`` (harness/strategy_conformance.py): the check and one line saying why.
"""

from __future__ import annotations

from typing import Any, Iterator

from harness.strategy_conformance import Failure, digest, one_line, short_args
from tasks.base import TaskFamily, TaskInstance, ToolResult

DEFAULT_SEEDS = (0, 1, 2)
WRONG_SHAPES: tuple[Any, ...] = (None, [], "answer", {"answer": None}, {"values": "x", "counts": 3})
"""Answers of the wrong shape the grader must fail without raising."""
SAMPLES: dict[str, tuple[Any, ...]] = {
    "string": ("x", "", "1", "A-1 /../ \ud800"),
    "integer": (1, 0, -1, 10**12),
    "number": (1.5, 0, -2.0),
    "boolean": (True, False),
    "array": ([], ["x"]),
    "object": ({}, {"x": 1}),
}
HOSTILE_VALUES: tuple[Any, ...] = (None, 3.5, ["x"], {"x": 1}, "x" * 10_000, "\ud800")
UNKNOWN_TOOL = "no_such_tool"
NOTHING = object()
"""``perturbed``'s answer for a value it cannot change."""


def generated(family: TaskFamily, seed: int) -> TaskInstance:
    """The instance of ``seed``; ``TypeError`` when ``generate`` returns something else."""
    instance = family.generate(seed)
    if not isinstance(instance, TaskInstance):
        raise TypeError(f"generate({seed}) returned a {type(instance).__name__}, not a TaskInstance")
    return instance


def generation_failures(family: TaskFamily, seeds: tuple[int, ...]) -> Iterator[Failure]:
    """``generates`` and ``deterministic``: each seed generates, twice the same fingerprint."""
    for seed in seeds:
        try:
            first, second = generated(family, seed).fingerprint(), generated(family, seed).fingerprint()
        except Exception as exc:
            yield Failure("generates", f"seed {seed}: {type(exc).__name__}: {one_line(exc)}")
            continue
        if first != second:
            yield Failure("deterministic", f"seed {seed}: two instances of the same seed differ (fingerprint)")


def fingerprints(family: TaskFamily, seeds: tuple[int, ...]) -> str:
    """One hash of the fingerprints of ``seeds`` (what another process must reproduce)."""
    return digest([generated(family, seed).fingerprint() for seed in seeds])


def has_answer_key(instance: TaskInstance) -> bool:
    """Whether the instance's class declares ``answer_key`` (the default only raises)."""
    return type(instance).answer_key is not TaskInstance.answer_key


def answer_key_of(instance: TaskInstance) -> dict:
    """The instance's ``answer_key()``; ``NotImplementedError`` for a family without one."""
    key = instance.answer_key()
    if not isinstance(key, dict):
        raise TypeError(f"answer_key returned a {type(key).__name__}, not a dict")
    return key


def key_failures(family: TaskFamily, seeds: tuple[int, ...]) -> Iterator[Failure]:
    """``answer_key`` and ``wrong_answers``: the key passes the grader; the empty, changed and ill-shaped fail.

    Each seed's answers are graded on one fresh instance, after its ``answer_key`` (a family may act through
    its tools there); grading reads the instance and changes nothing, so one instance grades them all.
    """
    for seed in seeds:
        try:
            instance = generated(family, seed)
            key = answer_key_of(instance)
            grade = instance.grade(key)
        except NotImplementedError as exc:
            yield Failure("answer_key", one_line(exc))
            return
        except Exception as exc:
            yield Failure("answer_key", f"seed {seed}: {type(exc).__name__}: {one_line(exc)}")
            continue
        if not grade.success:
            yield Failure("answer_key", f"seed {seed}: the answer key does not grade as success ({grade.score})")
        yield from wrong_answer_failures(instance, key, seed)


def wrong_answer_failures(instance: TaskInstance, key: dict, seed: int) -> Iterator[Failure]:
    """The grader fails every wrong answer: empty, of the wrong shape, the ``key`` with one value changed."""
    wrong: list[tuple[str, Any]] = [("an empty answer", {})]
    wrong += [(f"the answer {shape!r}", shape) for shape in WRONG_SHAPES]
    changed = perturbed(key)
    if changed is not NOTHING:
        wrong.append(("the answer key with one value changed", changed))
    for what, answer in wrong:
        try:
            grade = instance.grade(answer)
        except Exception as exc:
            yield Failure("wrong_answers", f"seed {seed}: grading {what} raised {type(exc).__name__}: {one_line(exc)}")
            continue
        if grade.success:
            yield Failure("wrong_answers", f"seed {seed}: the grader accepts {what}")


def perturbed(value: Any) -> Any:
    """``value`` with its first changeable leaf changed (a list loses its last item, a number grows by 7, a
    string gets ``-wrong``, a boolean flips); ``NOTHING`` when nothing can change."""
    if isinstance(value, dict):
        for key, item in value.items():
            changed = perturbed(item)
            if changed is not NOTHING:
                return {**value, key: changed}
        return NOTHING
    if isinstance(value, list):
        return value[:-1] if value else NOTHING
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 7
    if isinstance(value, str):
        return f"{value}-wrong"
    return NOTHING


def schema_calls(tool: dict) -> list[dict]:
    """Arguments for one tool: none, each property with each sample of its type, every property hostile."""
    parameters = tool.get("function", {}).get("parameters", {})
    properties: dict[str, dict] = parameters.get("properties", {}) or {}
    typical = {name: samples(prop)[0] for name, prop in properties.items()}  # each at its first sample
    calls: list[dict] = [{}]
    for name, prop in properties.items():
        calls += [{**typical, name: value} for value in samples(prop)]
    calls += [{name: value for name in properties} for value in HOSTILE_VALUES]
    return calls


def samples(prop: dict) -> tuple[Any, ...]:
    """The values a property is called with: its enum, else the samples of its type."""
    return prop.get("enum") or SAMPLES.get(str(prop.get("type")), ("x",))


def tool_failures(family: TaskFamily, seeds: tuple[int, ...]) -> Iterator[Failure]:
    """``tools``: every schema call (and an unknown tool) answered with a ``ToolResult``, never an exception."""
    for seed in seeds:
        try:
            instance = generated(family, seed)
        except Exception:
            continue  # generation_failures says it
        calls = [
            (tool.get("function", {}).get("name", ""), args) for tool in instance.tools for args in schema_calls(tool)
        ]
        calls.append((UNKNOWN_TOOL, {}))
        for name, args in calls:
            try:
                result = instance.call(name, dict(args))
            except Exception as exc:
                yield Failure(
                    "tools", f"seed {seed}: {name}({short_args(args)}) raised {type(exc).__name__}: {one_line(exc)}"
                )
                return
            if not isinstance(result, ToolResult):
                yield Failure("tools", f"seed {seed}: {name} returned a {type(result).__name__}, not a ToolResult")
                return
            if name == UNKNOWN_TOOL and not result.is_error:
                yield Failure("tools", f"seed {seed}: a call to an unknown tool is not an error result")
                return

"""Strategy parameters: declared by type hints, converted and checked before the first trial.

A strategy's parameters are its constructor's (a class's ``__init__``, or a dataclass's fields):
their type hints say what a value may be, and ``convert_spec`` turns a config's ``_target_`` mapping
into the values the strategy receives, or raises ``ParameterError``, one line that names the
override, the parameter, what it takes and its default::

    strategy.keep=foo: clear_tool_results's parameter keep takes an integer (default 3)

The types understood (anything else, ``Any`` or no hint, is passed on as it is):

* ``int`` (not ``true``/``false``), ``float`` (an int is kept an int, as PEP 484 allows), ``bool``,
  ``str``; ``list[X]`` and ``tuple[X, ...]`` (a list or tuple); ``dict`` and ``dict[str, X]``;
* ``X | None`` (``null``), ``X | Y`` (the first that fits), ``Literal["a", "b"]`` (one of the choices);
* ``Annotated[T, converter]``, where ``converter`` is a ``ParamConverter``: ``harness.budget.Tokens``
  (``60k`` becomes 60000) and ``strategies.triggers.Trigger`` (a fraction of the budget or tokens).

A value equal to the constructor's own default is always accepted as it is (the class chose it).
A mapping with a ``_target_`` (a wrapper's ``base``) is converted by its own class's hints.
An unknown key is refused with the known ones, unless the constructor takes ``**kwargs``.

Only the values a strategy receives are converted: the config, the run's identity and the
``strategy_params`` of every row keep the values as written (``trigger: 60k`` stays ``60k``).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import types
import typing
from typing import Annotated, Any, Literal, Protocol, Union, runtime_checkable

from harness.errors import ConfigError

NOT_PARAMETERS = ("name", "_target_")
"""Keys of a ``_target_`` mapping that are not constructor arguments (Hydra's ``_x_`` keys neither)."""


@runtime_checkable
class ParamConverter(Protocol):
    """The metadata of an ``Annotated`` parameter type: how a written value becomes the value passed on."""

    expects: str
    """What the parameter takes, for the error line (``a token count such as 60000, 60k or 0.5M``)."""

    def convert(self, value: Any) -> Any:
        """The value passed on; ``ValueError`` or ``TypeError`` when ``value`` is not one."""
        ...


class ParameterError(ConfigError):
    """A parameter value that its declared type refuses, or a parameter that does not exist (one line, exit 2)."""


class Mismatch(ValueError):
    """A value that a type refuses; ``expects`` says what the type takes."""

    def __init__(self, expects: str) -> None:
        super().__init__(expects)
        self.expects = expects


# ---------------------------------------------------------------- values


def convert_value(hint: Any, value: Any) -> Any:
    """``value`` as the type ``hint`` declares it; ``Mismatch`` when it does not fit."""
    origin = typing.get_origin(hint)
    if origin is Annotated:
        return _annotated(hint, value)
    if origin in (Union, types.UnionType):
        return _union(typing.get_args(hint), value)
    if origin is Literal:
        return _literal(typing.get_args(hint), value)
    if hint in (list, tuple) or origin in (list, tuple):
        return _sequence(hint, value)
    if hint is dict or origin is dict:
        return _mapping(hint, value)
    if hint in SCALARS:
        return SCALARS[hint](value)
    if hint is type(None):
        if value is None:
            return None
        raise Mismatch("null")
    return value  # Any, no hint, or a type the harness does not convert: the strategy checks it


def describe(hint: Any) -> str:
    """What ``hint`` takes, in words (``an integer``, ``a list of texts``, ``one of replace, append``)."""
    origin = typing.get_origin(hint)
    if origin is Annotated:
        converter = _converter(hint)
        return converter.expects if converter else describe(typing.get_args(hint)[0])
    if origin in (Union, types.UnionType):
        return " or ".join(describe(member) for member in typing.get_args(hint))
    if origin is Literal:
        return "one of " + ", ".join(shown(choice) for choice in typing.get_args(hint))
    if hint in (list, tuple) or origin in (list, tuple):
        items = [a for a in typing.get_args(hint) if a is not Ellipsis]
        return "a list" + (f" of {_plural(describe(items[0]))}" if items else "")
    if hint is dict or origin is dict:
        return "a mapping"
    return WORDS.get(hint, getattr(hint, "__name__", str(hint)))


def shown(value: Any) -> str:
    """A value as a config writes it: ``foo``, ``3``, ``true``, ``null``, ``[a, b]``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {shown(v)}" for k, v in value.items()) + "}"
    return str(value)


def _integer(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise Mismatch("an integer")


def _number(value: Any) -> float | int:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return value
    raise Mismatch("a number")


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise Mismatch("true or false")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise Mismatch("a text")


SCALARS: dict[Any, Any] = {int: _integer, float: _number, bool: _boolean, str: _text}
WORDS: dict[Any, str] = {int: "an integer", float: "a number", bool: "true or false", str: "a text", type(None): "null"}


def _plural(words: str) -> str:
    """``an integer`` -> ``integers``, ``a text`` -> ``texts`` (for ``a list of ...``)."""
    for article in ("an ", "a "):
        if words.startswith(article):
            return words[len(article) :] + "s"
    return words


def _converter(hint: Any) -> ParamConverter | None:
    return next((m for m in typing.get_args(hint)[1:] if isinstance(m, ParamConverter)), None)


def _annotated(hint: Any, value: Any) -> Any:
    converter = _converter(hint)
    if converter is None:
        return convert_value(typing.get_args(hint)[0], value)
    try:
        return converter.convert(value)
    except (TypeError, ValueError):
        raise Mismatch(converter.expects) from None


def _union(members: tuple[Any, ...], value: Any) -> Any:
    for member in members:
        try:
            return convert_value(member, value)
        except Mismatch:
            continue
    raise Mismatch(" or ".join(describe(member) for member in members))


def _literal(choices: tuple[Any, ...], value: Any) -> Any:
    for choice in choices:
        if value == choice and type(value) is type(choice):
            return value
    raise Mismatch("one of " + ", ".join(shown(choice) for choice in choices))


def _sequence(hint: Any, value: Any) -> list | tuple:
    if not isinstance(value, (list, tuple)):
        raise Mismatch(describe(hint))
    items = [a for a in typing.get_args(hint) if a is not Ellipsis]
    try:
        converted = [convert_value(items[0], v) for v in value] if items else list(value)
    except Mismatch:
        raise Mismatch(describe(hint)) from None
    container = typing.get_origin(hint) or hint
    return tuple(converted) if container is tuple else converted


def _mapping(hint: Any, value: Any) -> dict:
    if not isinstance(value, dict):
        raise Mismatch("a mapping")
    args = typing.get_args(hint)
    if len(args) != 2:
        return dict(value)
    try:
        return {convert_value(args[0], k): convert_value(args[1], v) for k, v in value.items()}
    except Mismatch as exc:
        raise Mismatch(f"a mapping of {exc.expects}") from None


# ---------------------------------------------------------------- a class's parameters


@dataclasses.dataclass(frozen=True)
class Declared:
    """The parameters of one strategy class: its signature, type hints and whether it takes ``**kwargs``."""

    owner: str
    signature: inspect.Signature
    hints: dict[str, Any]

    @property
    def open_ended(self) -> bool:
        """Whether the constructor takes ``**kwargs`` (any key is then passed on)."""
        return any(p.kind == p.VAR_KEYWORD for p in self.signature.parameters.values())

    def names(self) -> list[str]:
        """The named parameters, in their order."""
        return [
            name
            for name, p in self.signature.parameters.items()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY)
        ]


def declared(target: Any, owner: str) -> Declared | None:
    """The declared parameters of the class (or function) ``target`` names; ``None`` when it cannot be imported
    (building it then says why)."""
    try:
        obj = locate(str(target))
        signature = inspect.signature(obj)
    except Exception:  # not importable, or no signature: the build's own error names it
        return None
    source = obj.__init__ if inspect.isclass(obj) and not dataclasses.is_dataclass(obj) else obj
    try:
        hints = typing.get_type_hints(source, include_extras=True)
    except Exception:  # annotations that do not evaluate: passed on unconverted
        hints = {}
    return Declared(owner, signature, hints)


def locate(path: str) -> Any:
    """The object a dotted ``_target_`` path names (``strategies.headtail.HeadTail``), imported quietly.

    Hydra's own look-up logs an error for a path that does not import; here that is the build's to say.
    """
    parts = path.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attr in parts[split:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"cannot import {path}")


def convert_spec(spec: dict, path: str = "strategy") -> dict:
    """``spec`` (a ``_target_`` mapping) with every parameter converted by its declared type.

    ``path`` is where the spec sits in the config (``strategy``); nested ``_target_`` mappings
    (``strategy.base``) are converted by their own class. ``ParameterError`` names the first value
    refused, or an unknown parameter with the known ones.
    """
    owner = str(spec.get("name") or spec.get("_target_", "?"))
    params = declared(spec.get("_target_"), owner)
    out = dict(spec)
    for key, value in spec.items():
        if key in NOT_PARAMETERS or (key.startswith("_") and key.endswith("_")):
            continue
        where = f"{path}.{key}"
        if params is not None:
            out[key] = _parameter(params, key, value, where)
        if isinstance(out[key], dict) and "_target_" in out[key]:
            out[key] = convert_spec(out[key], where)
    return out


def _parameter(params: Declared, key: str, value: Any, where: str) -> Any:
    """One parameter's value converted, or ``ParameterError``."""
    param = params.signature.parameters.get(key)
    if param is None or key not in params.names():
        if params.open_ended:
            return value
        known = ", ".join(params.names()) or "none"
        raise ParameterError(f"{where}={shown(value)}: {params.owner} has no parameter {key} (its parameters: {known})")
    default = param.default
    if default is not param.empty and type(value) is type(default) and value == default:
        return value
    try:
        return convert_value(params.hints.get(key, Any), value)
    except Mismatch as exc:
        said = "required" if default is param.empty else f"default {shown(default)}"
        raise ParameterError(
            f"{where}={shown(value)}: {params.owner}'s parameter {key} takes {exc.expects} ({said})"
        ) from None


def with_value(spec: dict, keys: list[str], value: Any) -> dict:
    """A copy of ``spec`` with ``value`` at the nested ``keys`` (``["base", "keep"]``), for checking a swept value."""
    out = dict(spec)
    if len(keys) == 1:
        out[keys[0]] = value
        return out
    inner = out.get(keys[0])
    out[keys[0]] = with_value(inner if isinstance(inner, dict) else {}, keys[1:], value)
    return out


def parameter_problem(spec: dict, path: str) -> str:
    """What ``convert_spec`` refuses in ``spec``, as text (``''`` when nothing): the note of a failed build."""
    try:
        convert_spec(spec, path)
    except ParameterError as exc:
        return str(exc)
    return ""

"""The Model contract: ``complete(messages, tools) -> Completion``.

``Usage`` is normalized across backends: ``prompt_tokens`` counts all input tokens
(cached included), ``cached_tokens`` the part served from a prefix cache, and
``cached_source`` says where that figure came from: ``reported`` by the engine,
``simulated`` by the harness's prefix-cache model, or ``none``. ``cache_write_tokens`` is the
part of the input written to a provider's cache at a premium (Anthropic's
``cache_creation_input_tokens``; 0 where a provider writes its cache for free).

Request options: ``request_options(context_management=...)`` makes options visible to the
backend for the calls made inside the ``with`` block (a ``ContextVar``, so it passes through
every wrapper unchanged and stays per thread). The loop uses it to hand a server-side
strategy's parameters to the agent's calls only; a backend that understands an option reads
it with ``current_request_options()``.
"""

from __future__ import annotations

import contextlib
import inspect
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterator, Protocol


class ModelError(RuntimeError):
    """The model could not produce a reply (exhausted retries, bad endpoint, ...)."""


class ContextOverflowError(ModelError):
    """The request is longer than the model's context window (a real API's 400)."""


class PreflightError(ValueError):
    """A model cannot be used at all (missing API key, unreachable endpoint, extra not installed).

    Raised by a backend's optional ``check()``, which the runner calls before anything is
    written; the runner reports it as a config error (one line, exit code 2).
    """


@dataclass
class Usage:
    """Token usage of one model call, normalized across providers.

    ``None`` means "not reported": the harness then fills in its own tiktoken count
    and marks ``tokens_source`` as ``tiktoken``; an unreported ``cached_tokens`` becomes
    the prefix-cache simulator's figure, marked ``cached_source="simulated"``.
    ``output_tokens`` includes reasoning tokens (as OpenAI's ``completion_tokens`` does);
    ``reasoning_tokens`` says how many of them were reasoning.
    """

    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int = 0
    cached_source: str = "none"
    tokens_source: str = "reported"
    cache_write_tokens: int = 0


@dataclass
class Completion:
    """A model reply: the assistant message, its usage and the call's latency.

    ``context_edits`` are the edits a server applied to the request before the model read
    it (Anthropic's ``context_management.applied_edits``, and a ``compaction`` entry when the
    server compacted the context), as plain dicts with a ``type``.
    ``from_cache`` is true when the reply was replayed from the response cache
    (``harness.models.response_cache``): nothing was paid for it.
    ``injected`` is true when fault injection (``harness.models.faults``) made the reply up:
    the response cache never records one.
    """

    message: dict
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    raw: dict[str, Any] | None = None
    context_edits: list[dict] = field(default_factory=list)
    from_cache: bool = False
    injected: bool = False


class Model(Protocol):
    """A chat model. ``for_trial`` (optional) returns a per-trial session."""

    name: str
    context_window: int
    is_reference: bool

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        """Reply to a request."""


def session_for(model: Any, instance: Any, trial: int = 0) -> Any:
    """The per-trial session of a model: ``model.for_trial(instance, trial)`` if it has one.

    ``trial`` (the trial's index) seeds a model's per-trial variation; a ``for_trial`` that
    takes only the instance is called without it.
    """
    factory = getattr(model, "for_trial", None)
    if not callable(factory):
        return model
    return factory(instance, trial) if takes_trial(factory) else factory(instance)


def subagent_session(model: Any, instance: Any, task: str, trial: int = 0, run: int = 1) -> Any:
    """The model session of a sub-agent: ``model.for_subtask`` if the model has it, else a normal session.

    ``trial`` and ``run`` (the sub-agent's number in the trial) seed a model's variation.
    """
    factory = getattr(model, "for_subtask", None)
    if callable(factory):
        return factory(instance, task, trial, run) if takes_trial(factory) else factory(instance, task)
    return session_for(model, instance, trial)


def takes_trial(factory: Any) -> bool:
    """Whether ``factory`` accepts a ``trial`` argument after the instance."""
    try:
        parameters = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return False
    return any(p.name == "trial" for p in parameters) or any(p.kind is p.VAR_POSITIONAL for p in parameters)


_REQUEST_OPTIONS: ContextVar[dict | None] = ContextVar("ctxbench_request_options", default=None)  # None: no options


def _innermost_options() -> dict:
    """The options of the innermost ``request_options`` block, ``{}`` outside one (not a copy)."""
    options = _REQUEST_OPTIONS.get()
    return {} if options is None else options


@contextlib.contextmanager
def request_options(**options: Any) -> Iterator[None]:
    """Make ``options`` visible to the backend for the calls made inside the block (see the module docstring)."""
    token = _REQUEST_OPTIONS.set({**_innermost_options(), **{k: v for k, v in options.items() if v is not None}})
    try:
        yield
    finally:
        _REQUEST_OPTIONS.reset(token)


def current_request_options() -> dict:
    """The options set by the innermost ``request_options`` block (empty outside one)."""
    return dict(_innermost_options())


def innermost(model: Any) -> Any:
    """The backend under any wrappers (each wrapper keeps the model it wraps as ``inner``)."""
    seen = 0
    while getattr(model, "inner", None) is not None and seen < 32:
        model, seen = model.inner, seen + 1
    return model

"""The Model contract: ``complete(messages, tools) -> Completion``.

``Usage`` is normalized across backends: ``prompt_tokens`` counts all input tokens
(cached included), ``cached_tokens`` the part served from a prefix cache, and
``cached_source`` says where that figure came from: ``reported`` by the engine,
``simulated`` by the harness's prefix-cache model, or ``none``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


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


@dataclass
class Completion:
    """A model reply: the assistant message, its usage and the call's latency.

    ``from_cache`` is true when the reply was replayed from the response cache
    (``harness.models.response_cache``): nothing was paid for it.
    """

    message: dict
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    raw: dict[str, Any] | None = None
    from_cache: bool = False


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


def takes_trial(factory: Any) -> bool:
    """Whether ``factory`` accepts a ``trial`` argument after the instance."""
    import inspect

    try:
        parameters = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return False
    return any(p.name == "trial" for p in parameters) or any(p.kind is p.VAR_POSITIONAL for p in parameters)

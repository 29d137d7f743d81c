"""The rules of every ``model.*`` and ``model.retry.*`` value, declared per key and checked before the first trial.

``check_model_settings`` runs on a model's (or summarizer's) spec when the runner builds it
(``harness.runner.build_model``: in a run and in ``run --dry-run``, before any trial), so a bad value is one line
and exit 2 that names the key, the value and the rule (``model.timeout=-1 must be more than 0 (...)``), instead of
a run whose every trial ends as ``model_error``. A key is checked wherever it appears, whatever the backend; keys
that are not in the table (``base_url``, ``profile``, ...) are left to the model's own constructor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from harness.errors import ConfigError


@dataclass(frozen=True)
class ModelSetting:
    """One key's rule: its kind (``int``, ``float``, ``bool``), its least value (``above``: strictly more than
    ``minimum``), whether null is allowed, and what it means (said in the error)."""

    kind: type
    minimum: float | None = None
    above: bool = False
    nullable: bool = False
    meaning: str = ""

    def check(self, key: str, value: Any) -> None:
        """``ConfigError`` naming ``key``, ``value`` and the rule unless ``value`` is accepted."""
        if value is None and self.nullable:
            return
        number = self.parse(key, value)
        if self.minimum is None or self.kind is bool:
            return
        if number < self.minimum or (self.above and number == self.minimum):
            rule = "more than" if self.above else "at least"
            raise ConfigError(f"{key}={value!r} must be {rule} {self.minimum:g} ({self.meaning})")

    def parse(self, key: str, value: Any) -> Any:
        """``value`` as this setting's kind; ``ConfigError`` when it is not one."""
        if self.kind is bool:
            if isinstance(value, bool):
                return value
            raise ConfigError(f"{key}={value!r} must be true or false ({self.meaning})")
        wanted = "an integer" if self.kind is int else "a number"
        null = " or null" if self.nullable else ""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}={value!r} must be {wanted}{null} ({self.meaning})")
        if isinstance(value, float) and not math.isfinite(value):  # an int is finite, however large
            raise ConfigError(f"{key}={value!r} must be a finite number ({self.meaning})")
        if self.kind is int and isinstance(value, float) and not value.is_integer():
            raise ConfigError(f"{key}={value!r} must be an integer ({self.meaning})")
        return value


MODEL_SETTINGS: dict[str, ModelSetting] = {
    "timeout": ModelSetting(float, 0, above=True, meaning="seconds: the wall-clock deadline of one call"),
    "max_response_bytes": ModelSetting(int, 1, meaning="bytes: the cap on a response's decoded body"),
    "context_window": ModelSetting(int, 1, meaning="tokens a request may hold"),
    "max_tokens": ModelSetting(int, 0, nullable=True, meaning="tokens of one reply; 0 or null: not sent"),
    "temperature": ModelSetting(float, 0, nullable=True, meaning="sampling temperature; null: the provider's"),
    "seed": ModelSetting(int, nullable=True, meaning="the sampling seed sent with each request; null: none"),
    "max_concurrency": ModelSetting(int, 1, nullable=True, meaning="calls in flight at once; null: no limit"),
    "check_endpoint": ModelSetting(bool, meaning="reach the endpoint before the run"),
    "parse_text_tool_calls": ModelSetting(bool, meaning="read tool calls written in the text"),
    "cache_breakpoints": ModelSetting(bool, meaning="place cache_control breakpoints"),
    "server_context_management": ModelSetting(bool, meaning="the endpoint applies context-management edits"),
    "startup_timeout": ModelSetting(float, 0, above=True, meaning="seconds to wait for the local server"),
    "parallel": ModelSetting(int, 1, meaning="the local server's slots"),
    "threads": ModelSetting(int, 1, nullable=True, meaning="llama.cpp threads; null: its choice"),
    "n_ctx": ModelSetting(int, 1, nullable=True, meaning="the local server's context; null: context_window"),
    "poll_s": ModelSetting(float, 0, above=True, meaning="seconds between looks for a reply file"),
    "settle_s": ModelSetting(float, 0, meaning="seconds an incomplete reply file is given"),
    "max_reply_bytes": ModelSetting(int, 1, meaning="bytes: a larger reply file is rejected unread"),
}
RETRY_SETTINGS: dict[str, ModelSetting] = {
    "attempts": ModelSetting(int, 1, meaning="attempts of one call, the first included"),
    "initial_wait": ModelSetting(float, 0, meaning="seconds before the first retry"),
    "max_wait": ModelSetting(float, 0, meaning="seconds: the cap on one backoff wait"),
    "jitter": ModelSetting(float, 0, meaning="seconds of random wait added to a backoff"),
    "max_retry_after": ModelSetting(float, 0, meaning="seconds: the cap on a server's Retry-After"),
}


def check_model_settings(spec: Mapping[str, Any], prefix: str = "model") -> None:
    """Check every value of a model's spec that the tables name (``retry``'s too); ``ConfigError`` on the first
    bad one, naming ``{prefix}.{key}``, the value and the rule."""
    for key, rule in MODEL_SETTINGS.items():
        if key in spec:
            rule.check(f"{prefix}.{key}", spec[key])
    retry = spec.get("retry")
    if retry is None:
        return
    if not isinstance(retry, Mapping):
        raise ConfigError(f"{prefix}.retry={retry!r} must be a mapping of {', '.join(RETRY_SETTINGS)}")
    for key, rule in RETRY_SETTINGS.items():
        if key in retry:
            rule.check(f"{prefix}.retry.{key}", retry[key])

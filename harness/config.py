"""The run's top-level settings, declared once with their types and ranges, and checked before anything runs.

``python -m harness run`` checks every value here (each value of a sweep too) right after composing
the config, so that ``seed=abc``, ``workers=0`` or ``progress=maybe`` is one line and exit code 2,
and no run folder is made. The declaration is the documentation: ``SETTINGS`` lists each key, what
it accepts, and why.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable


class SettingError(ValueError):
    """A top-level setting with a value it does not accept; the message names the key, the value and the rule."""


@dataclass(frozen=True)
class Setting:
    """One top-level key: its kind (``int``, ``float`` or ``bool``), its least value, and whether null is allowed."""

    kind: type
    minimum: float | None = None
    nullable: bool = False
    meaning: str = ""

    def check(self, key: str, value: Any) -> None:
        """Raise ``SettingError`` unless ``value`` is accepted for ``key``."""
        if value is None and self.nullable:
            return
        number = self.parse(key, value)
        if self.minimum is not None and number < self.minimum:
            raise SettingError(f"{key}={value} must be at least {self.minimum:g} ({self.meaning})")

    def parse(self, key: str, value: Any) -> Any:
        """``value`` as this setting's kind; ``SettingError`` when it is not one."""
        if self.kind is bool:
            if isinstance(value, bool):
                return value
            raise SettingError(f"{key}={value} must be true or false ({self.meaning})")
        if isinstance(value, bool):
            raise SettingError(f"{key}={value} must be a number, not true/false ({self.meaning})")
        try:
            number = self.kind(value)
        except (TypeError, ValueError):
            raise SettingError(f"{key}={value} must be {'an integer' if self.kind is int else 'a number'} "
                               f"({self.meaning})") from None
        if self.kind is int and isinstance(value, float) and value != number:
            raise SettingError(f"{key}={value} must be an integer ({self.meaning})")
        if number != number or number in (float("inf"), float("-inf")):
            raise SettingError(f"{key}={value} must be a finite number ({self.meaning})")
        return number


SETTINGS: dict[str, Setting] = {
    "trials": Setting(int, 1, meaning="repeated trials per task instance"),
    "max_steps": Setting(int, 1, meaning="model calls before a trial ends as step_limit"),
    "seed": Setting(int, 0, meaning="instance i of each family uses seed + i"),
    "workers": Setting(int, 1, meaning="trials run in parallel"),
    "latency_s": Setting(float, 0, meaning="injected latency per model call, in seconds"),
    "max_cost": Setting(float, 0, nullable=True, meaning="USD; null for no limit"),
    "progress": Setting(bool, meaning="the progress bar"),
    "plots": Setting(bool, meaning="write plots/ when a run ends"),
    "cache_responses": Setting(bool, meaning="replay recorded replies to the same request"),
}


def check_settings(cfg: Any, sweeps: dict[str, Iterable[str]] | None = None) -> None:
    """Check the top-level settings of ``cfg`` and every swept value of them; ``SettingError`` names the first bad one."""
    for key, setting in SETTINGS.items():
        if key in cfg:
            setting.check(key, cfg[key])
    for key, values in (sweeps or {}).items():
        if key in SETTINGS:
            for value in values:
                SETTINGS[key].check(key, yaml_value(value))


def yaml_value(text: str) -> Any:
    """A swept value as the config would hold it (``3`` an int, ``true`` a bool, ``null`` None)."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text

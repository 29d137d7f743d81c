"""The run's configuration: composing it with Hydra, checking every override and setting, and reading it out.

``python -m harness run`` composes the config once (``compose_checked``) before anything runs:
group names, budgets and overrides are checked (``validate_overrides``), and so are the top-level
settings declared here (``SETTINGS``: each key, what it accepts, and why), each value of a sweep
too, so that ``seed=abc``, ``workers=0``, ``strategy=bogus`` or ``strategy.keep=3`` is one line
(``UsageError``), exit code 2, and no run folder is made. ``config_dict`` is the resolved config
as plain data (what the run folder's identity hashes); ``compose`` is Hydra's compose API on
``CONFIG_DIR`` with ctxbench's resolvers registered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml
from hydra import compose as hydra_compose
from hydra import initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from harness import plugins
from harness.budget import BudgetError, parse_budget
from harness.errors import UsageError
from harness.identity import folder_name
from hydra_plugins.ctxbench_resolvers._naming import MissingValueError
from hydra_plugins.ctxbench_resolvers._naming import config_dict as resolved_config
from hydra_plugins.ctxbench_resolvers.resolvers import job_dirname as job_dirname  # harness.dryrun uses it
from hydra_plugins.ctxbench_resolvers.resolvers import register_resolvers

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"
GROUPS = ("strategy", "task", "suite", "model", "summarizer", "pricing", "faults", "arm", "experiment")
NULLABLE_GROUPS = ("task", "experiment", "summarizer", "faults", "arm")


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
            raise SettingError(
                f"{key}={value} must be {'an integer' if self.kind is int else 'a number'} ({self.meaning})"
            ) from None
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


def check_settings(cfg: Any, sweeps: Mapping[str, Iterable[str]] | None = None) -> None:
    """Check the top-level settings of ``cfg`` and every swept value of them.

    ``SettingError`` names the first bad one."""
    for key, setting in SETTINGS.items():
        if key in cfg:
            setting.check(key, cfg[key])
    for key, values in (sweeps or {}).items():
        if key in SETTINGS:
            for value in values:
                SETTINGS[key].check(key, yaml_value(value))


def yaml_value(text: str) -> Any:
    """A swept value as the config would hold it (``3`` an int, ``true`` a bool, ``null`` None)."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


# ---------------------------------------------------------------- group names and overrides


def options(group: str, extra_dirs: Iterable[Path] = ()) -> list[str]:
    """The config names available in a group: ``configs/<group>/*.yaml`` and the same in ``extra_dirs``."""
    dirs = [CONFIG_DIR, *extra_dirs]
    return sorted({p.stem for d in dirs for p in (Path(d) / group).glob("*.yaml")})


def sweep_values(value: str) -> list[str]:
    """The values of a sweep override's right-hand side: ``a,b``, ``choice(a,b)`` or ``glob(a,b)``."""
    value = value.strip()
    for wrapper in ("choice(", "glob("):
        if value.startswith(wrapper) and value.endswith(")"):
            value = value[len(wrapper) : -1]
    return [v.strip().strip("'\"") for v in value.split(",") if v.strip()]


def _check_name(group: str, name: str, valid: list[str]) -> None:
    """A group value is a config name, or (strategy, task) a class path or an installed entry point."""
    if name in valid:
        return
    entry_points = plugins.plugin_entry_points(group)
    if group in plugins.ENTRY_POINT_GROUPS and (plugins.is_class_path(name) or name in entry_points):
        try:
            plugins.spec_for(name, entry_points.get(name, name))
        except plugins.PluginError as exc:
            raise UsageError(str(exc)) from None
        return
    hint = ", or pkg.module:Class" if group in plugins.ENTRY_POINT_GROUPS else ""
    raise UsageError(f"unknown {group} {name!r} (valid: {', '.join(sorted({*valid, *entry_points}))}{hint})")


def validate_overrides(args: list[str]) -> None:
    """Check group names and budgets in the overrides; raise ``UsageError`` with the valid values."""
    extra = plugins.searchpath_dirs(args)
    for arg in args:
        if arg.startswith("-") or "=" not in arg:
            continue
        key, value = arg.split("=", 1)
        key = key.lstrip("+~")
        if key in GROUPS or (key.startswith("variant/") and (CONFIG_DIR / key).is_dir()):
            valid = options(key, extra)  # variant/<preset>: the non-cartesian variants of an experiment preset
            for name in sweep_values(value):
                if name in ("null", "none") and key in NULLABLE_GROUPS:
                    continue
                _check_name(key, name, valid)
        elif key == "budget":
            for budget in sweep_values(value):
                try:
                    parse_budget(budget)
                except BudgetError as exc:
                    raise UsageError(str(exc)) from None
    check_arm_alone(args)


def check_arm_alone(args: list[str]) -> None:
    """``arm=NAME`` chooses the strategy and its parameters (configs/arm/): beside ``strategy=...`` it is refused in
    one line (``strategy.KEY=VALUE`` still sets one parameter of the arm's strategy)."""
    chosen: dict[str, str] = {}
    for arg in override_lines(args):
        key, _, value = arg.partition("=")
        chosen[key.lstrip("+~")] = value
    arms = [v for v in sweep_values(chosen.get("arm", "")) if v != "null"]
    if arms and "strategy" in chosen:
        raise UsageError(
            f"arm={chosen['arm']} chooses the strategy and its parameters: drop strategy={chosen['strategy']}, "
            "or set one parameter with strategy.KEY=VALUE (configs/arm/README.md)"
        )


def register_plugins(args: list[str]) -> None:
    """Give Hydra a config for every class path and entry point named in a strategy or task override."""
    extra = plugins.searchpath_dirs(args)
    for arg in args:
        key, sep, value = arg.partition("=")
        key = key.lstrip("+~")
        if not sep or key not in plugins.ENTRY_POINT_GROUPS:
            continue
        valid = options(key, extra)
        for name in sweep_values(value):
            if name not in valid:
                plugins.register(key, name)


# ---------------------------------------------------------------- composing


def run_folder_name(cfg: Any) -> str:
    """The run folder's name of the composed ``cfg`` (identity.folder_name): what ``${ctxbench_run:}`` resolves to.

    The resolvers (``register_resolvers``, ``job_dirname``, ``run_folder``) and the naming they use are in
    hydra_plugins/ctxbench_resolvers/, which Hydra imports without the harness; here a missing required value is
    a ``UsageError`` (``config_dict``)."""
    return folder_name(config_dict(cfg))


def compose(overrides: list[str]) -> Any:
    """The config ``configs/config.yaml`` with ``overrides`` (Hydra's own node included), as Hydra composes it."""
    register_resolvers()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return hydra_compose("config", overrides=overrides, return_hydra_config=True)


def _one_line(exc: BaseException) -> str:
    """A Hydra/OmegaConf error as one line, without the ``+key`` hint (the key is not a parameter)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip() and not line.startswith("To append")]
    return " ".join(lines) or type(exc).__name__


def _no_such_key(key: str, overrides: list[str]) -> str:
    """``strategy headtail has no parameter 'x' (its parameters: ...)``, or the keys next to ``key``."""
    parent_key, _, leaf = key.rpartition(".")
    selections = [o for o in overrides if "=" in o and "." not in o.split("=", 1)[0]]
    try:
        cfg = compose(selections)
        parent = OmegaConf.select(cfg, parent_key) if parent_key else cfg
    except Exception:  # the message stays useful without the list
        parent = None
    if not isinstance(parent, DictConfig):
        return f"no config key {key!r}"
    names = [k for k in parent.keys() if k not in ("name", "_target_", "hydra")]
    if parent_key in GROUPS:
        kind = "parameter" if parent_key == "strategy" else "setting"
        return (
            f"{parent_key} {parent.get('name', '?')} has no {kind} {leaf!r} "
            f"(its {kind}s: {', '.join(map(str, names)) or 'none'})"
        )
    where = f"under {parent_key!r}" if parent_key else "at the top level"
    return f"no config key {key!r} (keys {where}: {', '.join(map(str, names))})"


def override_lines(args: list[str]) -> list[str]:
    """The overrides among ``args`` (``key=value`` and ``~key``), options left out."""
    return [a for a in args if not a.startswith("-") and ("=" in a or a.startswith("~"))]


def plain_overrides(args: list[str]) -> list[str]:
    """The overrides of ``args`` that are not sweeps (``a=1,2``), as typed."""
    return [
        input_line(o)
        for o in OverridesParser.create().parse_overrides(override_lines(args))
        if not o.is_sweep_override()
    ]


def input_line(override: Override) -> str:
    """The line ``override`` was parsed from, as typed."""
    line = override.input_line
    assert line is not None  # never None: OverridesParser sets it on every override it returns
    return line


def compose_checked(args: list[str]) -> tuple[Any, dict[str, list[str]]]:
    """The config of ``args`` with each sweep at its first value, and the sweeps; ``UsageError`` on a bad override."""
    try:
        parsed = OverridesParser.create().parse_overrides(override_lines(args))
    except HydraException as exc:
        raise UsageError(f"bad override: {_one_line(exc)}") from None
    plain: list[str] = []
    first: list[str] = []
    sweeps: dict[str, list[str]] = {}
    for o in parsed:
        if o.is_sweep_override():
            try:
                values = [str(v) for v in o.sweep_string_iterator()]
            except Exception:  # glob() over a group: Hydra expands it itself
                values = []
            sweeps[o.get_key_element()] = values
            if values:
                first.append(f"{o.get_key_element()}={values[0]}")
        else:
            plain.append(input_line(o))
    try:
        if first:  # each sweep at its first value composes too (a bad value fails now, not in a job)
            compose(plain + first)
        cfg = compose(plain)
    except (HydraException, OmegaConfBaseException) as exc:
        missing = re.match(r"Could not override '([^']+)'", str(exc))
        raise UsageError(_no_such_key(missing.group(1), plain + first) if missing else _one_line(exc)) from None
    try:
        check_settings(cfg, sweeps)
    except SettingError as exc:
        raise UsageError(str(exc)) from None
    return cfg, sweeps


def container_dict(node: DictConfig, resolve: bool = False) -> dict:
    """``OmegaConf.to_container`` of a mapping node: a plain dict (typed as one)."""
    data = OmegaConf.to_container(node, resolve=resolve)
    assert isinstance(data, dict)  # to_container turns a DictConfig into a dict
    return data


def config_dict(cfg: Any) -> dict:
    """The resolved config without Hydra's own node; ``UsageError`` naming a required value that is missing.

    Defined in hydra_plugins/ctxbench_resolvers/_naming.py (``${ctxbench_run:}`` hashes the same data)."""
    try:
        return resolved_config(cfg)
    except MissingValueError as exc:
        raise UsageError(str(exc)) from None

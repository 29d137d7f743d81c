"""The run's configuration: composing it with Hydra, checking every override and setting, and reading it out.

``python -m harness run`` composes the config once (``compose_checked``) before anything runs:
group names, budgets and overrides are checked (``validate_overrides``), and so are the top-level
settings declared here (``SETTINGS``: each key, what it accepts, and why), each value of a sweep
too, so that ``seed=abc``, ``workers=0``, ``strategy=bogus`` or ``strategy.keep=3`` is one line
(``UsageError``), exit code 2, and no run folder is made. Dotted keys are declared the same way
(``hooks.plan``, ``suite.instances``). ``check_config`` is what a job's config must pass before its
first trial (the runner and ``--dry-run`` call it too): the settings, the plan (``check_plan``: at most
``MAX_PLANNED_TRIALS`` trials, the last seed at most ``SEED_MAX``; decided here, so that a huge plan is
one line at once instead of minutes of silent planning) and every task family's knobs
(``check_task_knobs``: names and types from the family's constructor signature, ranges from the
constructor's own ``check_knob``; tasks/base.py ``check_knobs``). A sweep's other choices of task,
suite or experiment are composed, and each value of a swept knob checked, before the first job.
``config_dict`` is the resolved config
as plain data (what the run folder's identity hashes); ``compose`` is Hydra's compose API on
``CONFIG_DIR`` with ctxbench's resolvers registered.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import yaml
from hydra import compose as hydra_compose
from hydra import initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException
from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from harness import params, plugins
from harness.budget import BudgetError, parse_budget
from harness.errors import UsageError
from harness.identity import folder_name
from hydra_plugins.ctxbench_resolvers._naming import MissingValueError
from hydra_plugins.ctxbench_resolvers._naming import config_dict as resolved_config
from hydra_plugins.ctxbench_resolvers.resolvers import job_dirname as job_dirname  # harness.dryrun uses it
from hydra_plugins.ctxbench_resolvers.resolvers import register_resolvers
from tasks.base import KnobError, TaskFamily, check_knobs

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"
GROUPS = ("strategy", "task", "suite", "model", "summarizer", "pricing", "faults", "arm", "experiment")
NULLABLE_GROUPS = ("task", "experiment", "summarizer", "faults", "arm")


class SettingError(ValueError):
    """A top-level setting with a value it does not accept; the message names the key, the value and the rule."""


@dataclass(frozen=True)
class Setting:
    """One key (``seed``, or dotted: ``hooks.plan``): its kind (``int``, ``float`` or ``bool``), its least and
    greatest value, and whether null is allowed."""

    kind: type
    minimum: float | None = None
    nullable: bool = False
    meaning: str = ""
    maximum: float | None = None

    def check(self, key: str, value: Any) -> None:
        """Raise ``SettingError`` unless ``value`` is accepted for ``key``."""
        if value is None and self.nullable:
            return
        number = self.parse(key, value)
        if self.minimum is not None and number < self.minimum:
            raise SettingError(f"{key}={value} must be at least {self.minimum:g} ({self.meaning})")
        if self.maximum is not None and number > self.maximum:
            raise SettingError(f"{key}={value} must be at most {self.maximum} ({self.meaning})")

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
        except (TypeError, ValueError, OverflowError):  # OverflowError: int(inf)
            raise SettingError(
                f"{key}={value} must be {'an integer' if self.kind is int else 'a number'} ({self.meaning})"
            ) from None
        if self.kind is int and isinstance(value, float) and value != number:
            raise SettingError(f"{key}={value} must be an integer ({self.meaning})")
        if number != number or number in (float("inf"), float("-inf")):
            raise SettingError(f"{key}={value} must be a finite number ({self.meaning})")
        return number


SEED_MAX = 2**63 - 1
"""The largest seed an instance may have (``seed + suite.instances - 1``): the records' seed column is int64."""
MAX_PLANNED_TRIALS = 100_000
"""The most trials one run plans (families x ``suite.instances`` x ``trials``): a run is planned, and its instances
generated, before the first trial; a larger study is several runs (``seed=0``, ``seed=N``, ...)."""

SETTINGS: dict[str, Setting] = {
    "trials": Setting(int, 1, meaning="repeated trials per task instance"),
    "max_steps": Setting(int, 1, meaning="model calls before a trial ends as step_limit"),
    "seed": Setting(int, 0, maximum=SEED_MAX, meaning="instance i of each family uses seed + i"),
    "suite.instances": Setting(int, 1, meaning="instances (seeds) per task family"),
    "hooks.plan": Setting(bool, meaning="start hook: ask for a plan before the first call"),
    "hooks.completion_check": Setting(bool, meaning="stop hook: a check may refuse a submit"),
    "hooks.max_continues": Setting(int, 0, meaning="the stop hook's refusals per trial"),
    "faults.seed": Setting(int, 0, maximum=SEED_MAX, meaning="seeds each trial's fault sequence"),
    "workers": Setting(int, 1, meaning="trials run in parallel"),
    "latency_s": Setting(float, 0, meaning="injected latency per model call, in seconds"),
    "max_cost": Setting(float, 0, nullable=True, meaning="USD; null for no limit"),
    "progress": Setting(bool, meaning="the progress bar"),
    "plots": Setting(bool, meaning="write plots/ when a run ends"),
    "cache_responses": Setting(bool, meaning="replay recorded replies to the same request"),
}


SECTIONS = ("hooks",)
"""Config nodes whose every key is a declared setting (``hooks.bogus`` is refused, not ignored)."""
UNSET = object()


def check_config(cfg: Any) -> None:
    """Check a job's config before its first trial: its declared settings, the size of its plan and its seeds
    (``check_plan``) and its task knobs (``check_task_knobs``). ``SettingError`` names the first bad one."""
    check_settings(cfg)
    check_plan(cfg)
    check_task_knobs(cfg)


def check_settings(cfg: Any, sweeps: Mapping[str, Iterable[str]] | None = None) -> None:
    """Check the declared settings of ``cfg`` (``SETTINGS``, ``SECTIONS``) and every swept value of them.

    ``SettingError`` names the first bad one."""
    for key, setting in SETTINGS.items():
        value = setting_value(cfg, key)
        if value is not UNSET:
            setting.check(key, value)
    for section in SECTIONS:
        check_section_keys(cfg, section)
    for key, values in (sweeps or {}).items():
        key = key.lstrip("+~")
        if key in SETTINGS:
            for value in values:
                SETTINGS[key].check(key, yaml_value(value))


def setting_value(cfg: Any, key: str) -> Any:
    """The value of the (dotted) ``key`` in ``cfg``, ``UNSET`` when a part of it is absent or null."""
    node = cfg
    for part in key.split("."):
        if not isinstance(node, (Mapping, DictConfig)) or part not in node:
            return UNSET
        node = node[part]
    return node


def check_section_keys(cfg: Any, section: str) -> None:
    """Refuse a key under ``section`` that no setting declares (``+hooks.bogus=1``)."""
    node = setting_value(cfg, section)
    if not isinstance(node, (Mapping, DictConfig)):
        return
    known = [key.split(".", 1)[1] for key in SETTINGS if key.startswith(f"{section}.")]
    for key in node:
        if key not in known:
            raise SettingError(f"{section} has no setting {key!r} (its settings: {', '.join(known)})")


# ---------------------------------------------------------------- the plan: its size, its seeds, its task knobs


def family_specs(cfg: Any) -> dict[str, dict]:
    """The task families' specs of ``cfg`` (``task`` alone if set, else the suite's), as plain data."""
    task = setting_value(cfg, "task")
    if isinstance(task, (Mapping, DictConfig)):
        return {str(task.get("name")): plain_node(task)}
    families = setting_value(cfg, "suite.families")
    if not isinstance(families, (Mapping, DictConfig)):
        return {}
    return {str(name): plain_node(spec) for name, spec in families.items()}


def plain_node(node: Any) -> dict:
    """A config node as a plain, resolved dict."""
    return container_dict(node, resolve=True) if isinstance(node, DictConfig) else dict(node)


def largest(cfg: Any, sweeps: Mapping[str, Iterable[str]] | None, key: str, default: int) -> int:
    """The largest value ``key`` takes in ``cfg`` and its sweep (checked already: an integer)."""
    value = setting_value(cfg, key)
    values = [default if value is UNSET or value is None else value]
    for swept, texts in (sweeps or {}).items():
        if swept.lstrip("+~") == key:
            values += [yaml_value(text) for text in texts]
    return max(SETTINGS[key].parse(key, v) for v in values)


def check_plan(cfg: Any, sweeps: Mapping[str, Iterable[str]] | None = None) -> None:
    """Refuse a plan of more than ``MAX_PLANNED_TRIALS`` trials, or whose last seed passes ``SEED_MAX``.

    Each at the largest value its sweep takes; a config without families (a bare settings file) plans none."""
    families = len(family_specs(cfg))
    if not families:
        return
    instances = largest(cfg, sweeps, "suite.instances", 1)
    trials = largest(cfg, sweeps, "trials", 1)
    planned = families * instances * trials
    if planned > MAX_PLANNED_TRIALS:
        over = f"{families} task famil{'ies' if families > 1 else 'y'}"
        raise SettingError(
            f"trials={trials} with suite.instances={instances} over {over}"
            f" plans {planned:,} trials; a run plans at most {MAX_PLANNED_TRIALS:,} (split the study into several runs)"
        )
    seed = largest(cfg, sweeps, "seed", 0)
    if seed + instances - 1 > SEED_MAX:
        raise SettingError(
            f"seed={seed} with suite.instances={instances}: the last instance's seed {seed + instances - 1} must be "
            f"at most {SEED_MAX} (the records hold a seed as a 64-bit integer)"
        )


def check_task_knobs(cfg: Any) -> None:
    """Check every task family's knobs of ``cfg`` against its declaration (``tasks.base.check_knobs``)."""
    for name, spec in family_specs(cfg).items():
        task_family(name, spec)


def task_family(name: str, spec: Mapping[str, Any]) -> Any:
    """The family ``spec`` builds (its ``_target_`` class with its knobs); ``SettingError`` naming a bad knob, its
    value and the rule (the knob's declared type, or the constructor's range)."""
    knobs = {k: v for k, v in spec.items() if k not in ("name", "_target_")}
    try:
        family = get_class(str(spec.get("_target_")))
    except Exception as exc:  # not importable: the one line says why
        raise SettingError(f"task family {name}: cannot import {spec.get('_target_')!r} ({exc})") from None
    if not (isinstance(family, type) and issubclass(family, TaskFamily)):
        raise SettingError(
            f"task family {name}: {spec.get('_target_')} is not a task family (a subclass of tasks.base.TaskFamily)"
        )
    try:
        return check_knobs(family, knobs)
    except KnobError as exc:
        raise SettingError(f"bad task knob for {name}: {exc}") from None


def check_swept_families(configs: list[Any], sweeps: Mapping[str, Iterable[str]]) -> None:
    """Check the plan and the task knobs of each of ``configs`` (the sweep's choices of task, suite or experiment)
    and each value of a swept knob (``task.pages=4,abc``, ``suite.families.F.pages=...``) on them."""
    for cfg in configs:
        check_plan(cfg, sweeps)
        specs = family_specs(cfg)
        for name, spec in specs.items():
            task_family(name, spec)
        for key, values in sweeps.items():
            target = swept_knob(cfg, key.lstrip("+~"))
            if target is not None and target[0] in specs:
                family, knob = target
                for value in list(values)[1:]:
                    task_family(family, {**specs[family], knob: yaml_value(value)})


FAMILY_SWEEPS = ("task", "suite", "experiment")
"""The groups whose sweep chooses the task families (and so which knobs, and how many trials, a job plans)."""


def family_configs(cfg: Any, overrides: list[str], sweeps: Mapping[str, list[str]]) -> list[Any]:
    """``cfg`` (every sweep at its first value, ``overrides``) and the config of every other combination of the
    ``FAMILY_SWEEPS`` values, composed."""
    choosers = {k.lstrip("+~"): v for k, v in sweeps.items() if k.lstrip("+~") in FAMILY_SWEEPS and v}
    fixed = [o for o in overrides if o.partition("=")[0].lstrip("+~") not in choosers]
    configs = [cfg]
    for combo in itertools.product(*choosers.values()):
        if list(combo) != [values[0] for values in choosers.values()]:
            configs.append(composed(fixed + [f"{k}={v}" for k, v in zip(choosers, combo, strict=True)]))
    return configs


def swept_knob(cfg: Any, key: str) -> tuple[str, str] | None:
    """The (family, knob) that the override key ``key`` sets in ``cfg``, or None."""
    parts = key.split(".")
    task = setting_value(cfg, "task")
    if len(parts) == 2 and parts[0] == "task" and isinstance(task, (Mapping, DictConfig)):
        return str(task.get("name")), parts[1]
    if len(parts) == 4 and parts[:2] == ["suite", "families"] and task in (UNSET, None):
        return parts[2], parts[3]
    return None


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
    first_cfg = composed(plain + first)  # each sweep at its first value composes too (a bad value fails now)
    cfg = composed(plain) if first else first_cfg
    try:
        check_settings(cfg, sweeps)
        check_swept_families(family_configs(first_cfg, plain + first, sweeps), sweeps)
    except SettingError as exc:
        raise UsageError(str(exc)) from None
    check_strategy_parameters(first_cfg, plain + first, [o for o in parsed if o.is_sweep_override()])
    return cfg, sweeps


def composed(overrides: list[str]) -> Any:
    """``compose(overrides)``; ``UsageError`` in one line for an override Hydra refuses (an unknown key named)."""
    try:
        return compose(overrides)
    except (HydraException, OmegaConfBaseException) as exc:
        missing = re.match(r"Could not override '([^']+)'", str(exc))
        raise UsageError(_no_such_key(missing.group(1), overrides) if missing else _one_line(exc)) from None


STRATEGY_SWEEPS = ("strategy", "arm")
"""The groups whose sweep chooses the strategy (and so which parameters ``strategy.KEY`` sets)."""


def check_strategy_parameters(cfg: Any, overrides: list[str], sweeps: list[Override]) -> None:
    """Convert the strategy's parameters by their declared types (harness/params.py) before the first trial.

    ``cfg`` is the config with every sweep at its first value (``overrides``). Checked: its strategy; the
    strategy of every other combination of ``strategy``/``arm`` sweep values (composed); and each value of a
    ``strategy.KEY`` sweep, on each of those strategies. ``UsageError`` names the first value refused
    (``strategy.keep=foo: clear_tool_results's parameter keep takes an integer (default 3)``).
    """
    chooser = {o.key_or_group: _swept(o, str) for o in sweeps if o.key_or_group in STRATEGY_SWEEPS and _swept(o, str)}
    swept = {o.key_or_group: _swept(o) for o in sweeps if o.key_or_group.startswith("strategy.")}
    fixed = [o for o in overrides if o.partition("=")[0].lstrip("+~") not in chooser]
    configs = [cfg]
    for combo in itertools.product(*chooser.values()):
        if list(combo) != [values[0] for values in chooser.values()]:
            configs.append(composed(fixed + [f"{k}={v}" for k, v in zip(chooser, combo, strict=True)]))
    try:
        for each in configs:
            spec = container_dict(each.strategy, resolve=True)
            params.convert_spec(spec)
            for key, values in swept.items():
                for value in values[1:]:
                    params.convert_spec(params.with_value(spec, key.split(".")[1:], value))
    except params.ParameterError as exc:
        raise UsageError(str(exc)) from None
    except OmegaConfBaseException as exc:  # an interpolation in the strategy's config that does not resolve
        raise UsageError(_one_line(exc)) from None


def _swept(override: Override, kind: Callable[[Any], Any] = lambda v: v) -> list[Any]:
    """The values of a sweep override as the config would hold them (``kind=str``: as typed); ``[]`` for a glob."""
    try:
        return [kind(v) for v in override.sweep_iterator()]
    except Exception:  # glob() over a group: Hydra expands it itself
        return []


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

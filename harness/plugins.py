"""Strategies and task families from outside this repository.

Three ways, all usable wherever a config name is (``strategy=...``, ``task=...``, sweeps):

* a config folder of your own: ``hydra.searchpath=[file:///path/to/configs]`` holding
  ``strategy/<name>.yaml`` (or ``task/<name>.yaml``) with ``name`` and ``_target_``;
* a class path: ``strategy=my_pkg.my_module:MyStrategy`` (parameters as usual:
  ``strategy.keep=3``; their defaults come from the class's ``__init__``, and so do their types:
  harness/params.py converts each value by its hint before the first trial, as for a built-in strategy);
* an installed package's entry point in the group ``ctxbench.strategies`` or ``ctxbench.tasks``
  (``elide = "my_pkg.my_module:Elide"`` in its ``pyproject.toml``), then ``strategy=elide``.

The last two become configs in Hydra's ``ConfigStore`` before Hydra composes the run
(``register``); the repo's own ``configs/`` win over an entry point of the same name.
"""

from __future__ import annotations

import importlib
import inspect
import re
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Iterable

from hydra.core.config_store import ConfigStore

ENTRY_POINT_GROUPS = {"strategy": "ctxbench.strategies", "task": "ctxbench.tasks"}
CLASS_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
PRIMITIVES = (int, float, str, bool, type(None))


class PluginError(ValueError):
    """A class path or entry point that cannot be loaded (one line, exit code 2)."""


def is_class_path(value: str) -> bool:
    """``pkg.module:Class``."""
    return bool(CLASS_PATH.match(value))


def plugin_entry_points(group: str) -> dict[str, str]:
    """Entry points of installed packages for a config group: name -> ``module:attr``."""
    ep_group = ENTRY_POINT_GROUPS.get(group)
    if ep_group is None:
        return {}
    return {ep.name: ep.value for ep in entry_points(group=ep_group)}


def load_class(path: str) -> type:
    """Import ``pkg.module:Class``; ``PluginError`` with the reason when that fails."""
    module_name, _, attr = path.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:  # ImportError, AttributeError, or the module's own error
        raise PluginError(f"cannot import {path}: {type(exc).__name__}: {exc}") from None
    if not callable(obj):
        raise PluginError(f"{path} is not a class")
    return obj


def default_parameters(cls: type) -> dict[str, Any]:
    """The ``__init__`` parameters of ``cls`` with their defaults (``???``, Hydra's "required", when none).

    Defaults that are not plain values (objects) are left out: the class uses its own.
    """
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        return {}
    params: dict[str, Any] = {}
    for name, p in signature.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is inspect.Parameter.empty:
            params[name] = "???"
        elif isinstance(p.default, PRIMITIVES) or _plain(p.default):
            params[name] = p.default
    return params


def _plain(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(isinstance(v, PRIMITIVES) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and isinstance(v, PRIMITIVES) for k, v in value.items())
    return False


def spec_for(name: str, path: str) -> dict[str, Any]:
    """The config of class ``path`` under the name ``name``: ``name``, ``_target_`` and its parameters."""
    cls = load_class(path)
    target = path.replace(":", ".")
    params = {k: list(v) if isinstance(v, tuple) else v for k, v in default_parameters(cls).items() if k != "name"}
    return {"name": name, "_target_": target, **params}


def register(group: str, name: str) -> bool:
    """Store a config for ``name`` in ``group`` when it is a class path or an entry point; True if stored."""
    path = name if is_class_path(name) else plugin_entry_points(group).get(name)
    if path is None:
        return False
    ConfigStore.instance().store(group=group, name=name, node=spec_for(name, path), provider="ctxbench-plugins")
    return True


def searchpath_dirs(args: Iterable[str]) -> list[Path]:
    """The ``file://`` folders of a ``hydra.searchpath=[...]`` override (where extra configs live)."""
    dirs: list[Path] = []
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep or key.lstrip("+~") != "hydra.searchpath":
            continue
        for item in value.strip().strip("[]").split(","):
            item = item.strip().strip("'\"")
            if item.startswith("file://"):
                dirs.append(Path(item[len("file://") :]))
    return dirs

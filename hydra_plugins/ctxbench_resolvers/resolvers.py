"""The OmegaConf resolvers of ctxbench's configs, defined once and importable without the harness.

- ``${ctxbench_exclude_keys:...}``: the keys a job folder's name leaves out (``folder_name_exclusions``);
- ``${ctxbench_dirname:...}``: an override list as a folder name (``job_dirname``, the experiment presets);
- ``${ctxbench_run:}``: the run folder's name from the resolved config (``run_folder``: ``_naming.config_dict``,
  the resolved config as plain data, named by ``_naming.folder_name``).

This package imports only the standard library and OmegaConf, never the harness. The run folder's name is
the run's identity (a hash of the resolved, normalised config), computed by ``_naming.folder_name``, the one
definition that ``harness.identity`` re-exports.

Hydra's plugin scan executes every module of ``hydra_plugins`` again, in place, unless its name starts with
``_``: a class defined here would be a new class after the scan, and ``except`` / ``isinstance`` in the harness,
which imported the first one, would miss it. So what the harness imports to compare by identity (``BudgetError``,
``MissingValueError``) is defined in ``_budget.py`` and ``_naming.py``, which the scan leaves alone.
"""

from __future__ import annotations

from typing import Any, Callable

from omegaconf import OmegaConf

from hydra_plugins.ctxbench_resolvers._naming import RUN_TIME_KEYS, config_dict, folder_name

# RUN_TIME_KEYS, the one list of run-time keys, is defined in _naming.py with the identity it is left out of
HYDRA_FOLDER_KEYS = ("hydra.run.dir", "hydra.sweep.dir", "hydra/launcher")  # where and how, never what


def folder_name_exclusions(*extra: str) -> list[str]:
    """The override keys a job folder's name leaves out: ``extra`` (e.g. ``experiment``), ``RUN_TIME_KEYS`` and
    ``HYDRA_FOLDER_KEYS`` (the resolver ``ctxbench_exclude_keys`` of the configs)."""
    return [*(e for e in extra if e), *RUN_TIME_KEYS, *HYDRA_FOLDER_KEYS]


def job_dirname(name: str | None) -> str:
    """Resolver ``${ctxbench_dirname:...}``: an override list as a folder name (the experiment presets' job folders)."""
    return (name or "defaults").replace("/", "_").replace("=", "-").replace(",", "_")


def run_folder(*, _root_: Any) -> str:
    """Resolver ``${ctxbench_run:}``: the run folder's name from the resolved config (``_naming.folder_name``)."""
    return folder_name(config_dict(_root_))


RESOLVERS: dict[str, Callable[..., Any]] = {
    "ctxbench_dirname": job_dirname,
    "ctxbench_run": run_folder,
    "ctxbench_exclude_keys": folder_name_exclusions,
}


def register_resolvers() -> None:
    """Register ctxbench's OmegaConf resolvers; a resolver already registered is left as it is."""
    for name, resolver in RESOLVERS.items():
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, resolver)

"""The OmegaConf resolvers of ctxbench's configs, defined once and importable without the harness.

- ``${ctxbench_exclude_keys:...}``: the keys a job folder's name leaves out (``folder_name_exclusions``);
- ``${ctxbench_dirname:...}``: an override list as a folder name (``job_dirname``, the experiment presets);
- ``${ctxbench_run:}``: the run folder's name from the resolved config (``run_folder``).

This module imports only the standard library and OmegaConf. The run folder's name is the run's identity
(a hash of the resolved, normalised config: ``harness.identity``), so ``run_folder`` asks the harness for it
when it is resolved, never when a config is composed.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from omegaconf import OmegaConf

RUN_TIME_KEYS = ("trials", "progress", "plots", "workers", "latency_s", "max_cost", "cache_responses", "response_cache")
"""Top-level keys that change how a run is carried out, never what a trial is: the one list. They are left
out of a run's identity (``harness.runner.identity``), and of the job folders' names of the main config
and every experiment preset (``exclude_keys: ${ctxbench_exclude_keys:...}``, ``folder_name_exclusions``)."""
HYDRA_FOLDER_KEYS = ("hydra.run.dir", "hydra.sweep.dir", "hydra/launcher")  # where and how, never what
RUN_FOLDER_NAMER = "harness.config"  # the module whose ``run_folder_name(cfg)`` names a run folder


def folder_name_exclusions(*extra: str) -> list[str]:
    """The override keys a job folder's name leaves out: ``extra`` (e.g. ``experiment``), ``RUN_TIME_KEYS`` and
    ``HYDRA_FOLDER_KEYS`` (the resolver ``ctxbench_exclude_keys`` of the configs)."""
    return [*(e for e in extra if e), *RUN_TIME_KEYS, *HYDRA_FOLDER_KEYS]


def job_dirname(name: str | None) -> str:
    """Resolver ``${ctxbench_dirname:...}``: an override list as a folder name (the experiment presets' job folders)."""
    return (name or "defaults").replace("/", "_").replace("=", "-").replace(",", "_")


def run_folder(*, _root_: Any) -> str:
    """Resolver ``${ctxbench_run:}``: the run folder's name from the resolved config (``harness.identity``).

    The harness is imported here, when the resolver is called, so that composing never imports it."""
    namer = importlib.import_module(RUN_FOLDER_NAMER)
    return namer.run_folder_name(_root_)


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

"""A run folder's name from its resolved config: the pure naming that ``${ctxbench_run:}`` resolves to.

Defined once, here, and importable without the harness (only the standard library, OmegaConf and ``_budget.py``):
``RUN_TIME_KEYS``, ``normalise`` (a run's identity), ``run_key``, ``run_hash``, ``slug``, ``readable_folder`` and
``folder_name``, a run's folder ``headtail-25k-<hash>``, which ``harness.identity`` re-exports; ``config_dict``,
the resolved config the folder is named from (``harness.config.config_dict`` turns its ``MissingValueError`` into
the command line's ``UsageError``). The leading ``_``: Hydra's plugin scan does not execute this module again
(resolvers.py says why that matters).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Mapping

from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import MissingMandatoryValue

from hydra_plugins.ctxbench_resolvers._budget import BudgetError, format_budget, parse_budget

# ---------------------------------------------------------------- a run's identity

RUN_TIME_KEYS = ("trials", "progress", "plots", "workers", "latency_s", "max_cost", "cache_responses", "response_cache")
"""Top-level keys that change how a run is carried out, never what a trial is: the one list. They are left
out of a run's identity (``harness.runner.identity``), and of the job folders' names of the main config
and every experiment preset (``exclude_keys: ${ctxbench_exclude_keys:...}``, ``folder_name_exclusions``)."""
# keys of ``model`` / ``summarizer`` that change how calls are made only
RUN_TIME_MODEL_KEYS = ("max_concurrency", "max_response_bytes")
NOT_CONFIG = ("seed", *RUN_TIME_KEYS, "hydra")
NOT_CONFIG_MODEL = RUN_TIME_MODEL_KEYS
HASH_CHARS = 10


def budget_tokens(value: Any) -> Any:
    """``value`` in tokens when it is a budget (``25k`` -> 25000), else as it is."""
    try:
        return parse_budget(value)
    except (BudgetError, TypeError, ValueError):
        return value


def normalise(identity: Mapping[str, Any]) -> dict:
    """The identity minus seed/trials/run-time knobs/hydra, budget in tokens, family list dropped under ``task``."""
    data = json.loads(json.dumps(dict(identity), sort_keys=True, default=str))
    for key in NOT_CONFIG:
        data.pop(key, None)
    for node in ("model", "summarizer"):
        if isinstance(data.get(node), dict):
            for key in NOT_CONFIG_MODEL:
                data[node].pop(key, None)
    if "budget" in data:
        data["budget"] = budget_tokens(data["budget"])
    if data.get("task") and isinstance(data.get("suite"), dict):
        data["suite"] = {k: v for k, v in data["suite"].items() if k not in ("families", "name")}
    return data


# ---------------------------------------------------------------- run folders named by what ran

FOLDER_CHARS = re.compile(r"[^A-Za-z0-9_.]+")
DEFAULT_SUITE = "default"
DEFAULT_MODEL = "scripted"


def run_key(config: Mapping[str, Any]) -> dict:
    """What decides a run folder's records: the normalised identity plus the ``seed``."""
    return {**normalise(config), "seed": config.get("seed", 0)}


def run_hash(config: Mapping[str, Any]) -> str:
    """A short stable hash of ``run_key(config)``: ``budget=25k``, ``25K`` and ``25000`` give the same."""
    text = json.dumps(run_key(config), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


def slug(text: Any) -> str:
    """A folder-safe piece of a name: ``my_pkg.mod:Elide`` -> ``Elide``, ``a/b c`` -> ``a_b_c``."""
    text = str(text).rsplit(":", 1)[-1]
    return FOLDER_CHARS.sub("_", text).strip("_.") or "x"


def readable_folder(config: Mapping[str, Any]) -> str:
    """``headtail-25k`` plus the task (or a suite other than the default), a model other than the
    reference agent, and a seed other than 0."""
    data = normalise(config)
    given = data.get("strategy")
    strategy: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    budget = data.get("budget")
    parts = [
        slug(strategy.get("name") or strategy.get("_target_", "strategy")),
        format_budget(budget) if isinstance(budget, int) else slug(budget),
    ]
    task, suite, model = data.get("task"), data.get("suite"), data.get("model")
    if isinstance(task, Mapping) and task.get("name"):
        parts.append(slug(task["name"]))
    elif isinstance(suite, Mapping) and suite.get("name") not in (None, DEFAULT_SUITE):
        parts.append(slug(suite["name"]))
    if isinstance(model, Mapping) and model.get("name") not in (None, DEFAULT_MODEL):
        parts.append(slug(model["name"]))
    if config.get("seed", 0) not in (0, None):
        parts.append(f"seed{config['seed']}")
    return "-".join(parts)


def folder_name(config: Mapping[str, Any]) -> str:
    """The folder of a run: ``headtail-25k-<run_hash>``."""
    return f"{readable_folder(config)}-{run_hash(config)}"


# ---------------------------------------------------------------- the resolved config the folder is named from


class MissingValueError(ValueError):
    """A required config value (``???``) that is not set; the message names the key and how to set it."""


def config_dict(cfg: Any) -> dict:
    """The resolved config without Hydra's own node; ``MissingValueError`` naming a required value that is missing."""
    data = {}
    try:
        for key in cfg:
            if key == "hydra":
                continue
            value = cfg[key]
            data[key] = (
                OmegaConf.to_container(value, resolve=True) if isinstance(value, (DictConfig, ListConfig)) else value
            )
    except MissingMandatoryValue as exc:
        key = getattr(exc, "full_key", "") or "?"
        raise MissingValueError(f"{key} has no value (set it: {key}=...)") from None
    return data

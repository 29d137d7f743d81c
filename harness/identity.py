"""Configuration identity: what makes two runs the same configuration, as a stable hash and a readable name.

A run folder's ``identity.json`` is the resolved config minus ``RUN_TIME_KEYS`` and
``model.max_concurrency`` (harness.runner). For grouping and pairing, ``normalise`` also drops
``seed`` (the instances differ, the configuration does not) and any ``hydra`` noise, writes the
budget in tokens, and drops ``suite.families``/``suite.name`` when ``task`` names the one family run.

- ``config_id(identity)``: a short stable hash of the normalised identity;
- ``flatten(identity)``: dotted keys (``hooks.completion_check``) to values;
- ``differing_keys(identities)``: the dotted keys whose values differ between identities;
- ``readable_name(flat, keys)``: ``strategy@budget`` plus ``key=value`` for the given keys;
- ``folder_name(config)``: a run's folder, ``headtail-25k-<hash>`` (``run_hash``: the normalised
  identity plus the seed), so that the same config, however spelled, lands in the same folder;
- ``sweep_folder_name(base, sweeps)``: a sweep's folder, ``strategy-headtail.none-<hash>``.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

from harness.budget import BudgetError, format_budget, parse_budget
from hydra_plugins.ctxbench_resolvers.resolvers import RUN_TIME_KEYS
from hydra_plugins.ctxbench_resolvers.resolvers import folder_name_exclusions as folder_name_exclusions

# RUN_TIME_KEYS (the one list of run-time keys) and folder_name_exclusions (the resolver ``ctxbench_exclude_keys``)
# are defined with the configs' resolvers, in hydra_plugins/ctxbench_resolvers/resolvers.py (importable without harness)
IDENTITY_FILE = "identity.json"
RUN_TIME_MODEL_KEYS = ("max_concurrency",)  # keys of ``model`` / ``summarizer`` that change how calls are made only
NOT_CONFIG = ("seed", *RUN_TIME_KEYS, "hydra")
NOT_CONFIG_MODEL = RUN_TIME_MODEL_KEYS
SIZE_KEYS = ("suite", "task")  # identity keys that decide which tasks, at which size, are run
HASH_CHARS = 10
NAMED_KEYS = ("strategy.name", "budget")  # already in the ``strategy@budget`` part of a name
LEGACY_PREFIX = "legacy:"


def load_identity(run_dir: str | Path) -> dict | None:
    """The run folder's ``identity.json``, or None when it has none (older records)."""
    path = Path(run_dir) / IDENTITY_FILE
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _budget_tokens(value: Any) -> Any:
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
        data["budget"] = _budget_tokens(data["budget"])
    if data.get("task") and isinstance(data.get("suite"), dict):
        data["suite"] = {k: v for k, v in data["suite"].items() if k not in ("families", "name")}
    return data


def config_id(identity: Mapping[str, Any]) -> str:
    """A short stable hash of the normalised identity (same config -> same id, whatever the key order)."""
    text = json.dumps(normalise(identity), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


def legacy_id(strategy: str, params: str, budget: Any, model: str) -> str:
    """The id of a run without identity.json: its old configuration key, hashed and marked ``legacy:``."""
    text = json.dumps([str(strategy), str(params), str(budget), str(model)])
    return LEGACY_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys; lists and scalars are leaves (lists as JSON text)."""
    if isinstance(data, Mapping) and data:
        out: dict[str, Any] = {}
        for key in sorted(data):
            out.update(flatten(data[key], f"{prefix}{key}."))
        return out
    value = json.dumps(data, sort_keys=True) if isinstance(data, list) else data
    return {prefix[:-1]: value} if prefix else {}


def differing_keys(flats: Iterable[Mapping[str, Any]]) -> list[str]:
    """Dotted keys whose value is not the same in every given flat identity (a missing key counts as a value)."""
    flats = list(flats)
    keys = sorted({k for f in flats for k in f})
    return [k for k in keys if len({json.dumps(f.get(k, "<absent>"), default=str) for f in flats}) > 1]


def size_keys(keys: Iterable[str]) -> list[str]:
    """The keys among ``keys`` that change which tasks are run or their size (suite, task)."""
    return [k for k in keys if k.split(".")[0] in SIZE_KEYS]


def _short(key: str) -> str:
    """``strategy.min_recent_rounds`` -> ``min_recent_rounds``; other keys keep their dotted path."""
    return key[len("strategy.") :] if key.startswith("strategy.") and key != "strategy._target_" else key


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return "-" if value is None else str(value)


def readable_name(flat: Mapping[str, Any], keys: Iterable[str] = ()) -> str:
    """``strategy@budget`` plus ``key=value`` for each of ``keys`` (except those the first part shows)."""
    budget = flat.get("budget")
    budget_text = format_budget(int(budget)) if isinstance(budget, (int, float)) else _value(budget)
    parts = [f"{flat.get('strategy.name', '?')}@{budget_text}"]
    parts += [f"{_short(k)}={_value(flat.get(k))}" for k in keys if k not in NAMED_KEYS]
    return " ".join(parts)


# ---------------------------------------------------------------- run folders named by what ran

FOLDER_CHARS = re.compile(r"[^A-Za-z0-9_.]+")
DEFAULT_SUITE = "default"
DEFAULT_MODEL = "scripted"
SWEEP_IGNORED = ("progress", "plots", "workers", "latency_s", "max_cost")  # sweep keys that do not change what runs


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


def _sweep_value(key: str, value: str) -> Any:
    """A sweep value as it is meant: budgets in tokens, the rest as typed."""
    return _budget_tokens(value) if key == "budget" else value


def sweep_folder_name(base: Mapping[str, Any], sweeps: Mapping[str, Iterable[str]]) -> str:
    """The folder of a sweep: the swept keys and values, readable, plus a hash of them and the base config.

    ``base`` is the config without the sweep (each swept key at its default); ``sweeps`` maps a swept
    key to its values. The order of keys and values does not matter, nor how a budget is spelled.
    """

    def order(value: str) -> tuple:
        loaded = json.loads(value)
        return (0, loaded, "") if isinstance(loaded, (int, float)) and not isinstance(loaded, bool) else (1, 0, value)

    swept = {
        k: sorted({json.dumps(_sweep_value(k, v), default=str) for v in vals}, key=order)
        for k, vals in sweeps.items()
        if k not in SWEEP_IGNORED
    }
    text = json.dumps({"base": run_key(base), "sweep": swept}, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]

    def shown(key: str, value: str) -> str:
        loaded = json.loads(value)
        return format_budget(loaded) if key == "budget" and isinstance(loaded, int) else slug(loaded)

    readable = "_".join(f"{slug(k.split('/')[-1])}-{'.'.join(shown(k, v) for v in swept[k])}" for k in sorted(swept))
    return f"{readable[:80] or 'sweep'}-{digest}"

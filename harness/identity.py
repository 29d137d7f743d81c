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

The run folder's naming (``RUN_TIME_KEYS``, ``NOT_CONFIG``, ``normalise``, ``run_key``, ``run_hash``, ``slug``,
``readable_folder``, ``folder_name`` and their constants) is defined once in
hydra_plugins/ctxbench_resolvers/_naming.py, so that the resolver ``${ctxbench_run:}`` computes it without
importing the harness; this module re-exports those names beside the rest.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from harness.budget import format_budget
from hydra_plugins.ctxbench_resolvers._naming import (  # the run folder's naming, re-exported (see the docstring)
    DEFAULT_MODEL as DEFAULT_MODEL,
    DEFAULT_SUITE as DEFAULT_SUITE,
    FOLDER_CHARS as FOLDER_CHARS,
    HASH_CHARS as HASH_CHARS,
    NOT_CONFIG as NOT_CONFIG,
    NOT_CONFIG_MODEL as NOT_CONFIG_MODEL,
    RUN_TIME_KEYS as RUN_TIME_KEYS,
    RUN_TIME_MODEL_KEYS as RUN_TIME_MODEL_KEYS,
    budget_tokens,
    folder_name as folder_name,
    normalise as normalise,
    readable_folder as readable_folder,
    run_hash as run_hash,
    run_key as run_key,
    slug as slug,
)
from hydra_plugins.ctxbench_resolvers.resolvers import folder_name_exclusions as folder_name_exclusions

IDENTITY_FILE = "identity.json"
SIZE_KEYS = ("suite", "task")  # identity keys that decide which tasks, at which size, are run
NAMED_KEYS = ("strategy.name", "budget")  # already in the ``strategy@budget`` part of a name
LEGACY_PREFIX = "legacy:"


def load_identity(run_dir: str | Path) -> dict | None:
    """The run folder's ``identity.json``, or None when it has none (older records)."""
    path = Path(run_dir) / IDENTITY_FILE
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


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


# ---------------------------------------------------------------- sweep folders named by what they sweep

SWEEP_IGNORED = ("progress", "plots", "workers", "latency_s", "max_cost")  # sweep keys that do not change what runs


def _sweep_value(key: str, value: str) -> Any:
    """A sweep value as it is meant: budgets in tokens, the rest as typed."""
    return budget_tokens(value) if key == "budget" else value


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

"""Configuration identity: what makes two runs the same configuration, as a stable hash and a readable name.

A run folder's ``identity.json`` is the resolved config minus ``trials``/``progress``/``workers``/
``latency_s`` (harness.runner). For grouping and pairing, ``normalise`` also drops ``seed`` (the
instances differ, the configuration does not) and any ``hydra`` noise, writes the budget in
tokens, and drops ``suite.families``/``suite.name`` when ``task`` names the one family run.

- ``config_id(identity)``: a short stable hash of the normalised identity;
- ``flatten(identity)``: dotted keys (``hooks.completion_check``) to values;
- ``differing_keys(identities)``: the dotted keys whose values differ between identities;
- ``readable_name(flat, keys)``: ``strategy@budget`` plus ``key=value`` for the given keys.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Mapping

IDENTITY_FILE = "identity.json"
NOT_CONFIG = ("seed", "trials", "progress", "workers", "latency_s", "hydra")
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
    from harness.budget import BudgetError, parse_budget

    try:
        return parse_budget(value)
    except (BudgetError, TypeError, ValueError):
        return value


def normalise(identity: Mapping[str, Any]) -> dict:
    """The identity minus seed/trials/run-time knobs/hydra, budget in tokens, family list dropped under ``task``."""
    data = json.loads(json.dumps(dict(identity), sort_keys=True, default=str))
    for key in NOT_CONFIG:
        data.pop(key, None)
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
    return key[len("strategy."):] if key.startswith("strategy.") and key != "strategy._target_" else key


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return "-" if value is None else str(value)


def readable_name(flat: Mapping[str, Any], keys: Iterable[str] = ()) -> str:
    """``strategy@budget`` plus ``key=value`` for each of ``keys`` (except those the first part shows)."""
    from harness.budget import format_budget

    budget = flat.get("budget")
    budget_text = format_budget(int(budget)) if isinstance(budget, (int, float)) else _value(budget)
    parts = [f"{flat.get('strategy.name', '?')}@{budget_text}"]
    parts += [f"{_short(k)}={_value(flat.get(k))}" for k in keys if k not in NAMED_KEYS]
    return " ".join(parts)

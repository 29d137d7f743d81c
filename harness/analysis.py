"""Loading run folders into tidy pandas frames, aggregating and comparing them.

Notebooks and the CLI (``report``, ``compare``) use these functions; they never
re-implement them. Column names are documented in docs/analysis.md.

- ``load_trials(paths)`` / ``load_steps(paths)``: one row per trial / per model call, from
  any mix of run folders and sweep folders (searched recursively).
- ``summarize(trials)``: aggregates per configuration (full identity, ``config_id``) x task family.
- ``paired(base, cand)``: the paired comparison of two configurations.
- ``curves(steps, trials)``, ``trial_events(run_dir, trial_id)``: token curves and strategy events.

All intervals are 95%. Bootstraps use a fixed seed on sorted data, so the same records give
the same numbers whatever order the runs were loaded in.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from harness import identity as ident
from harness import verdicts
from harness.budget import format_budget
from harness.curves import CURVE_RULES, SHAPES, classify, is_thrashing
from harness.records import STEPS, TRIALS, Scan, read_steps, read_transcript, scan_trials, transcript_path

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:  # imported on first use
    from harness.lazy import numpy as np
    from harness.lazy import pandas as pd

# a configuration is its full resolved identity (harness/identity.py); runs without identity.json
# fall back to the old key (strategy, params, budget, model)
CONFIG_KEYS = ["config_id"]
GROUP_KEYS = ["config_id", "family"]
LEGACY_CONFIG_KEYS = ["strategy", "params", "budget", "model"]
DESCRIPTIVE = ["config", "strategy", "params", "budget", "model"]  # constant within a config_id
# the parts of total_input_tokens (all model calls of a trial) when the row does not carry the total
INPUT_PARTS = ("input_tokens", "summarizer_input_tokens", "subagent_input_tokens", "stop_hook_input_tokens")
CACHED_PARTS = ("cached_tokens", "summarizer_cached_tokens", "subagent_cached_tokens", "stop_hook_cached_tokens")
OUTPUT_PARTS = ("output_tokens", "summarizer_output_tokens", "subagent_output_tokens", "stop_hook_output_tokens")
PAIR_KEYS = ["family", "instance_id", "seed", "trial"]
OUTCOMES = ("submitted", "step_limit", "context_overflow", "model_error", "strategy_error")
BOOTSTRAP_SEED = 20240601
BOOTSTRAP_RESAMPLES = 2000
Z95 = 1.959963984540054
# columns later backends may add to trial rows; aggregated as means when present
OPTIONAL_MEANS = ("sim_cached_tokens", "reasoning_tokens", "summarizer_cached_tokens")
REFERENCE_NOTE = "scripted reference agent, not an LLM"


def reference_note(trials: pd.DataFrame) -> str:
    """``REFERENCE_NOTE`` naming the profile(s) of the trials (``agent_profile``; older rows: unknown)."""
    if "agent_profile" not in trials:
        return REFERENCE_NOTE
    profiles = sorted({str(p) for p in trials["agent_profile"].dropna()})
    if not profiles:
        return REFERENCE_NOTE
    return f"scripted reference agent (profile {', '.join(profiles)}), not an LLM"


# ---------------------------------------------------------------- loading


def run_dirs(paths: Iterable[str | Path]) -> list[Path]:
    """Every run folder (one holding ``trials.jsonl``) at or below the given paths (sweeps included)."""
    found: list[Path] = []
    for path in paths:
        path = Path(path)
        if (path / TRIALS).exists():
            found.append(path)
        elif path.is_dir():
            runs = sorted(p.parent for p in path.rglob(TRIALS))
            if not runs:
                raise FileNotFoundError(f"{path}: no run folders (no {TRIALS}) in it")
            found.extend(runs)
        else:
            raise FileNotFoundError(f"{path}: not a run folder (no {TRIALS}) nor a folder of runs")
    return found


def _params_label(value) -> str:
    if isinstance(value, dict):
        return ",".join(f"{k}={value[k]}" for k in sorted(value)) or "-"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return str(value)


class ForeignRecords(ValueError):
    """A ``trials.jsonl`` that is not a ctxbench trial file; the message names the file and the missing keys."""


def check_trial_rows(scan: Scan, path: Path) -> None:
    """Raise ``ForeignRecords`` when ``path`` holds lines but no trial row (``harness.record_schema.TrialRecord``):
    a file of another harness. A file with some trial rows is ours: its bad lines are skipped and said
    (``records.corruption_notes``)."""
    if scan.bad and not scan.rows:
        number, _, why = scan.reasons[0].removeprefix("line ").partition(": ")
        raise ForeignRecords(
            f"{path}: row {number} is not a ctxbench trial row ({why}); "
            "report reads the folders that `run` and `import` write"
        )


def load_trials(paths: Iterable[str | Path], curves: bool = True) -> pd.DataFrame:
    """One row per trial across the given runs, with ``run_dir``, ``params``, configuration and derived columns.

    Derived: ``params`` (the strategy parameters as ``k=v,...``), ``config_id``/``config``/``identity``
    (see ``attach_configs``), ``total_input_tokens``/``total_cached_tokens``/``total_output_tokens``
    (all model calls: the row's value, else agent + summarizer + sub-agent + stop-hook parts),
    ``cache_hit_ratio`` (cached / input, agent calls), ``over_budget_steps``/``max_budget_ratio``
    (the row's values, else computed from ``steps.jsonl``). ``curve_shape``/``thrashing`` are
    re-diagnosed from ``steps.jsonl`` (and the transcripts' per-resource reads) when the row was
    labelled by older rules (no ``curve_rules`` or an older one), when ``curves`` is true.
    """
    dirs = run_dirs(paths)
    frames = []
    for run in dirs:
        scan = scan_trials(run / TRIALS)
        check_trial_rows(scan, run / TRIALS)
        rows = scan.rows
        if rows:
            frame = pd.DataFrame(rows)
            frame["run_dir"] = str(run)
            frames.append(frame)
    if not frames:
        return pd.DataFrame()
    trials = pd.concat(frames, ignore_index=True)
    trials["params"] = trials["strategy_params"].map(_params_label) if "strategy_params" in trials else "-"
    for col in (
        "summarizer_input_tokens",
        "cached_tokens",
        "output_tokens",
        "cost",
        "reads",
        "rereads",
        "reread_rate",
        "compactions",
        "peak_context",
    ):
        if col not in trials:
            trials[col] = 0
    add_totals(trials)
    trials["cache_hit_ratio"] = np.where(
        trials["input_tokens"] > 0,
        trials["cached_tokens"] / trials["input_tokens"].where(trials["input_tokens"] > 0, 1),
        0.0,
    )
    if "reference_agent" not in trials:
        trials["reference_agent"] = False
    attach_configs(trials)
    needs_budget = any(c not in trials or trials[c].isna().any() for c in ("over_budget_steps", "max_budget_ratio"))
    stale = _stale_curves(trials) if curves else pd.Series(False, index=trials.index)
    steps = load_steps(dirs) if (needs_budget or stale.any()) else pd.DataFrame()
    if needs_budget:
        _fill(trials, budget_adherence(steps, trials))
    if stale.any():
        shapes = diagnose(steps, trials)
        for col in ("curve_shape", "thrashing", "max_resource_reads"):
            if col not in trials:
                trials[col] = None
            trials[col] = trials[col].astype(object)
            trials.loc[stale, col] = shapes.loc[stale, col]
        trials["curve_rules"] = CURVE_RULES
    return trials


def _stale_curves(trials: pd.DataFrame) -> pd.Series:
    """Rows without a shape, or whose shape was decided by older rules than ``harness.curves``'."""
    if "curve_shape" not in trials:
        return pd.Series(True, index=trials.index)
    rules = trials["curve_rules"] if "curve_rules" in trials else pd.Series(np.nan, index=trials.index)
    return trials["curve_shape"].isna() | rules.isna() | (pd.to_numeric(rules, errors="coerce") < CURVE_RULES)


def _fill(trials: pd.DataFrame, computed: pd.DataFrame) -> None:
    """Set each column of ``computed`` where ``trials`` lacks it or holds NaN (in place)."""
    for col in computed.columns:
        if col not in trials:
            trials[col] = computed[col]
        else:
            trials[col] = trials[col].where(trials[col].notna(), computed[col])


def _parts_sum(trials: pd.DataFrame, parts: Sequence[str]) -> pd.Series:
    total = pd.Series(0.0, index=trials.index)
    for col in parts:
        if col in trials:
            total = total + pd.to_numeric(trials[col], errors="coerce").fillna(0)
    return total


def add_totals(trials: pd.DataFrame) -> None:
    """``total_input_tokens``, ``total_cached_tokens``, ``total_output_tokens`` of all model calls (in place).

    The row's own value when it carries one (records since the loop writes them), else the sum of
    the agent, summarizer, sub-agent and stop-hook parts the row has.
    """
    for total, parts in (
        ("total_input_tokens", INPUT_PARTS),
        ("total_cached_tokens", CACHED_PARTS),
        ("total_output_tokens", OUTPUT_PARTS),
    ):
        summed = _parts_sum(trials, parts)
        trials[total] = trials[total].where(trials[total].notna(), summed) if total in trials else summed


def _trial_identity(run: str, row: pd.Series, cache: dict) -> tuple[str, dict]:
    """(config_id, flat identity) of one trial: its run's identity.json, else the legacy key."""
    if run not in cache:
        found = ident.load_identity(run)
        cache[run] = None if found is None else (ident.config_id(found), ident.flatten(ident.normalise(found)))
    if cache[run] is not None:
        return cache[run]
    flat = {
        "strategy.name": row["strategy"],
        "strategy.params": row["params"],
        "budget": int(row["budget"]),
        "model.name": row["model"],
    }
    return ident.legacy_id(row["strategy"], row["params"], row["budget"], row["model"]), flat


def attach_configs(trials: pd.DataFrame) -> None:
    """Add ``config_id`` (hash of the full identity), ``identity`` (flat dict) and ``config`` (readable) in place."""
    cache: dict = {}
    pairs = [_trial_identity(str(r["run_dir"]), r, cache) for _, r in trials.iterrows()]
    trials["config_id"] = [p[0] for p in pairs]
    trials["identity"] = [p[1] for p in pairs]
    trials["config"] = trials["config_id"].map(config_names(trials))


def config_names(trials: pd.DataFrame) -> dict[str, str]:
    """Readable name per config_id: ``strategy@budget`` plus the identity keys that tell it apart.

    A key is shown for the configurations whose ``strategy@budget`` is shared with another
    configuration that differs in that key (e.g. ``headtail@8k hooks.completion_check=false``);
    names that still collide get the id appended.
    """
    flats = {cid: flat for cid, flat in zip(trials["config_id"], trials["identity"], strict=False)}
    groups: dict[tuple, list[str]] = {}
    for cid, flat in flats.items():
        groups.setdefault((flat.get("strategy.name"), flat.get("budget")), []).append(cid)
    names = {}
    for ids in groups.values():
        keys = ident.differing_keys([flats[c] for c in ids])
        for cid in ids:
            names[cid] = ident.readable_name(flats[cid], keys)
    counts = pd.Series(list(names.values())).value_counts()
    return {cid: (f"{name} #{cid.split(':')[-1][:6]}" if counts[name] > 1 else name) for cid, name in names.items()}


def load_steps(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per model call across the given runs, with a ``run_dir`` column."""
    frames = []
    for run in run_dirs(paths):
        rows = read_steps(run / STEPS)
        if rows:
            frame = pd.DataFrame(rows)
            frame["run_dir"] = str(run)
            frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def agent_curve(steps: pd.DataFrame, run_dir: str, trial_id: str) -> pd.DataFrame:
    """The agent steps of one trial in step order (``step``, ``request_tokens``, ``strategy_events`` ...)."""
    if steps.empty:
        return steps
    mask = (steps["run_dir"] == str(run_dir)) & (steps["trial_id"] == trial_id) & (steps["kind"] == "agent")
    return steps[mask].sort_values("step")


def _agent_curves(steps: pd.DataFrame) -> dict[tuple[str, str], list[float]]:
    """``request_tokens`` of the agent steps per (run_dir, trial_id), in step order."""
    if steps.empty:
        return {}
    agent = steps[steps["kind"] == "agent"]
    return {key: g.sort_values("step")["request_tokens"].tolist() for key, g in agent.groupby(["run_dir", "trial_id"])}


def max_resource_reads(run_dir: str | Path, trial_id: str) -> int | None:
    """The most times the agent read one resource in a trial (from its transcript; sub-agent reads excluded)."""
    path = transcript_path(run_dir, trial_id)
    if path is None:
        return None
    counts: dict[str, int] = {}
    for event in read_transcript(path, only=("tool",)):
        if event.get("resource") is not None and not event.get("is_error") and event.get("subagent") is None:
            counts[event["resource"]] = counts.get(event["resource"], 0) + 1
    return max(counts.values(), default=0)


def diagnose(steps: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    """``curve_shape``, ``thrashing`` and ``max_resource_reads`` of every trial (index of ``trials``).

    The shape comes from the trial's agent steps; thrashing from its re-read rate and the most reads
    of one resource (the row's ``max_resource_reads``, else counted from its transcript).
    """
    curves_by = _agent_curves(steps)
    shapes, thrash, repeats = [], [], []
    for _, row in trials.iterrows():
        shape = classify(curves_by.get((row["run_dir"], row["trial_id"]), []), row["budget"])
        most = row.get("max_resource_reads")
        if most is None or (isinstance(most, float) and math.isnan(most)):
            most = max_resource_reads(row["run_dir"], row["trial_id"])
        shapes.append(shape)
        repeats.append(most)
        thrash.append(is_thrashing(shape, row.get("reread_rate"), most))
    return pd.DataFrame({"curve_shape": shapes, "thrashing": thrash, "max_resource_reads": repeats}, index=trials.index)


def budget_adherence(steps: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    """``over_budget_steps`` (agent steps whose request exceeded the trial's budget) and ``max_budget_ratio``.

    ``max_budget_ratio`` = max request_tokens / budget over the agent steps (NaN without steps or budget).
    """
    curves_by = _agent_curves(steps)
    over, ratio = [], []
    for _, row in trials.iterrows():
        curve = [float(t) for t in curves_by.get((row["run_dir"], row["trial_id"]), []) if t is not None]
        budget = float(row["budget"] or 0)
        over.append(sum(1 for t in curve if budget > 0 and t > budget))
        ratio.append(max(curve) / budget if curve and budget > 0 else math.nan)
    return pd.DataFrame({"over_budget_steps": over, "max_budget_ratio": ratio}, index=trials.index)


def trial_events(run_dir: str | Path, trial_id: str) -> pd.DataFrame:
    """Strategy events of one trial from its transcript: ``step``, ``name``, ``data``."""
    rows = read_transcript(run_dir, trial_id, only=("strategy",))
    events = [{"step": r.get("step"), "name": r.get("name"), "data": r.get("data")} for r in rows]
    return pd.DataFrame(events, columns=["step", "name", "data"])


def cumulative_input(steps: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    """Cumulative input tokens of all model calls (agent, summarizer, sub-agent, stop hook) by step, per trial x step.

    Columns: the trial's config keys, ``trial_id``, ``run_dir``, ``step``, ``cum_input_tokens``.
    """
    if steps.empty:
        return pd.DataFrame()
    per_step = steps.groupby(["run_dir", "trial_id", "step"], as_index=False)["prompt_tokens"].sum()
    per_step = per_step.sort_values(["run_dir", "trial_id", "step"])
    per_step["cum_input_tokens"] = per_step.groupby(["run_dir", "trial_id"])["prompt_tokens"].cumsum()
    keys = trials[["run_dir", "trial_id", *dict.fromkeys([*GROUP_KEYS, *DESCRIPTIVE])]]
    return per_step.merge(keys, on=["run_dir", "trial_id"], how="inner")


# ---------------------------------------------------------------- statistics


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (95% by default); (nan, nan) when n = 0."""
    if n <= 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_mean(
    values: Sequence[float], seed: int = BOOTSTRAP_SEED, resamples: int = BOOTSTRAP_RESAMPLES
) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the mean (deterministic: fixed seed, sorted data)."""
    data = np.sort(np.asarray(values, dtype=float))
    data = data[~np.isnan(data)]
    if data.size == 0:
        return (math.nan, math.nan)
    if data.size == 1 or np.all(data == data[0]):
        return (float(data[0]), float(data[0]))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, data.size, size=(resamples, data.size))
    means = data[idx].mean(axis=1)
    return (float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5)))


def pass_hat_k(successes_per_task: Sequence[tuple[int, int]], k: int) -> float:
    """tau-bench's pass^k: mean over tasks of C(c, k) / C(n, k) (n trials, c successes); nan if any n < k."""
    values = []
    for n, c in successes_per_task:
        if n < k:
            return math.nan
        values.append(math.comb(c, k) / math.comb(n, k))
    return float(np.mean(values)) if values else math.nan


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts b and c (binomial, p = 1/2)."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(0, min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired_bootstrap_ratio(
    base: Sequence[float], cand: Sequence[float], seed: int = BOOTSTRAP_SEED, resamples: int = BOOTSTRAP_RESAMPLES
) -> tuple[float, float, float]:
    """Ratio sum(cand)/sum(base) over pairs and its paired-bootstrap 95% interval (nan when base sums to 0)."""
    b = np.asarray(base, dtype=float)
    c = np.asarray(cand, dtype=float)
    if b.size == 0 or b.sum() <= 0:
        return (math.nan, math.nan, math.nan)
    ratio = float(c.sum() / b.sum())
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, b.size, size=(resamples, b.size))
    bs, cs = b[idx].sum(axis=1), c[idx].sum(axis=1)
    ok = bs > 0
    ratios = cs[ok] / bs[ok]
    return (ratio, float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5)))


def paired_bootstrap_diff(
    base: Sequence[float], cand: Sequence[float], seed: int = BOOTSTRAP_SEED, resamples: int = BOOTSTRAP_RESAMPLES
) -> tuple[float, float, float]:
    """Mean of (cand - base) over pairs and its paired-bootstrap 95% interval."""
    d = np.asarray(cand, dtype=float) - np.asarray(base, dtype=float)
    if d.size == 0:
        return (math.nan, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, d.size, size=(resamples, d.size))
    means = d[idx].mean(axis=1)
    return (float(d.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5)))


# ---------------------------------------------------------------- aggregation


def _group_row(group: pd.DataFrame) -> dict:
    n = len(group)
    successes = int(group["success"].astype(bool).sum())
    low, high = wilson(successes, n)
    row: dict = {
        "trials": n,
        "tasks": int(group["instance_id"].nunique()),
        "successes": successes,
        "success_rate": successes / n if n else math.nan,
        "success_ci_low": low,
        "success_ci_high": high,
    }
    per_task = [(len(g), int(g["success"].astype(bool).sum())) for _, g in group.groupby("instance_id")]
    max_k = min(n_ for n_, _ in per_task) if per_task else 0
    for k in range(1, max_k + 1):
        row[f"pass^{k}"] = pass_hat_k(per_task, k)
    row["mean_score"] = float(group["score"].mean())
    for col in ("input_tokens", "cached_tokens", "output_tokens", "total_input_tokens", "cost"):
        values = group[col].astype(float)
        row[f"mean_{col}"] = float(values.mean())
        row[f"{col}_ci_low"], row[f"{col}_ci_high"] = bootstrap_mean(values)
    for col in (
        "total_cached_tokens",
        "total_output_tokens",
        "summarizer_input_tokens",
        "subagent_input_tokens",
        "stop_hook_input_tokens",
    ):
        row[f"mean_{col}"] = float(pd.to_numeric(group[col], errors="coerce").fillna(0).mean()) if col in group else 0.0
    total_input = float(group["input_tokens"].sum())
    row["cache_hit_ratio"] = float(group["cached_tokens"].sum()) / total_input if total_input else 0.0
    for col in OPTIONAL_MEANS:
        if col in group and group[col].notna().any():
            row[f"mean_{col}"] = float(group[col].astype(float).mean())
            if col == "sim_cached_tokens":
                row["sim_cache_hit_ratio"] = float(group[col].sum()) / total_input if total_input else 0.0
    row["total_cost"] = float(group["cost"].sum())
    row.update(_response_cache_row(group))
    row["reread_rate"] = float(group["reread_rate"].astype(float).mean())
    reads = float(group["reads"].sum())
    row["pooled_reread_rate"] = float(group["rereads"].sum()) / reads if reads else 0.0
    row["mean_peak_context"] = float(group["peak_context"].mean())
    row["max_peak_context"] = int(group["peak_context"].max())
    row["mean_compactions"] = float(group["compactions"].mean())
    row["mean_steps"] = float(group["steps"].mean())
    for outcome in OUTCOMES:
        row[f"outcome_{outcome}"] = int((group["outcome"] == outcome).sum())
    if "curve_shape" in group:
        counts = group["curve_shape"].value_counts()
        row["curve_shapes"] = " ".join(f"{s}:{int(counts[s])}" for s in SHAPES if s in counts) or "-"
        row["thrashing_trials"] = int(group["thrashing"].fillna(False).astype(bool).sum())
    row.update(_budget_row(group))
    row["reference_agent"] = bool(group["reference_agent"].fillna(False).astype(bool).all())
    row["run_dirs"] = int(group["run_dir"].nunique()) if "run_dir" in group else 1
    return row


def _response_cache_row(group: pd.DataFrame) -> dict:
    """What the group's calls would have cost had none come from the response cache, and how many did.

    Rows written before the response cache existed count as paid in full (``cost``, 0 calls replayed).
    """
    cost = group["cost"].astype(float)
    uncached = pd.to_numeric(group["cost_uncached"], errors="coerce").fillna(cost) if "cost_uncached" in group else cost
    replayed = pd.to_numeric(group["from_cache_calls"], errors="coerce").fillna(0) if "from_cache_calls" in group else 0
    return {
        "mean_cost_uncached": float(uncached.mean()),
        "total_cost_uncached": float(uncached.sum()),
        "from_cache_calls": int(pd.Series(replayed).sum()),
    }


def _budget_row(group: pd.DataFrame) -> dict:
    """Budget adherence of a group: over-budget trials and steps, the largest request / budget, held or not."""
    if "over_budget_steps" not in group:
        return {}
    over = pd.to_numeric(group["over_budget_steps"], errors="coerce").fillna(0)
    ratio = pd.to_numeric(group.get("max_budget_ratio"), errors="coerce") if "max_budget_ratio" in group else None
    return {
        "over_budget_trials": int((over > 0).sum()),
        "mean_over_budget_steps": float(over.mean()),
        "max_budget_ratio": float(ratio.max()) if ratio is not None and ratio.notna().any() else math.nan,
        "held_budget": bool((over == 0).all()),
    }


def summarize(trials: pd.DataFrame, by: Sequence[str] = GROUP_KEYS) -> pd.DataFrame:
    """Aggregates per ``by`` (default configuration x task family); see docs/analysis.md.

    Grouping by ``config_id`` adds the columns that describe it (``config``, ``strategy``,
    ``params``, ``budget``, ``model``); rows are sorted by strategy, budget, configuration, family.
    """
    if trials.empty:
        return pd.DataFrame()
    trials = trials.copy()
    if "params" not in trials:
        trials["params"] = trials.get("strategy_params", pd.Series("-", index=trials.index)).map(_params_label)
    if "config_id" in by and "config_id" not in trials:
        attach_configs(trials)
    if "total_input_tokens" not in trials or "total_cached_tokens" not in trials:
        add_totals(trials)
    for col in ("summarizer_input_tokens", "reads", "rereads"):
        if col not in trials:
            trials[col] = 0
    by = list(by)
    extra = [c for c in DESCRIPTIVE if "config_id" in by and c not in by and c in trials]
    rows = []
    for key, group in trials.groupby(by, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        described = {c: group[c].iloc[0] for c in extra}
        rows.append({**dict(zip(by, key, strict=False)), **described, **_group_row(group)})
    out = pd.DataFrame(rows)
    order = [c for c in ("strategy", "budget", "config", "family", *by) if c in out.columns]
    out = out.sort_values(list(dict.fromkeys(order)), kind="stable").reset_index(drop=True)
    lead = list(
        dict.fromkeys(
            [c for c in ("config_id", "config", "strategy", "params", "family", "budget", "model") if c in out.columns]
            + by
        )
    )
    pass_cols = sorted((c for c in out.columns if c.startswith("pass^")), key=lambda c: int(c[5:]))
    others = [c for c in out.columns if not c.startswith("pass^") and c not in lead]
    at = others.index("success_ci_high") + 1
    return out[lead + others[:at] + pass_cols + others[at:]]


def pooling_notes(trials: pd.DataFrame, by: Sequence[str] = CONFIG_KEYS) -> list[str]:
    """Warnings (``WARNING: ...``) and notes (``note: ...``) about what one row of ``summarize(trials, by)`` pools.

    WARNING when a row pools different suites or task sizes: several ``suite``/``task`` identities,
    or, within one family, instance ids of several sizes (``invoice_audit-p30`` and ``-p40``).
    note when a row pools several run folders of one identical configuration (duplicate runs).
    """
    if trials.empty:
        return []
    notes = []
    for key, group in trials.groupby(list(by), sort=True):
        label = (
            group["config"].iloc[0]
            if "config" in group
            else "/".join(map(str, key if isinstance(key, tuple) else (key,)))
        )
        sizes = _size_signatures(group)
        if len(sizes) > 1:
            notes.append(
                f"WARNING: {label} pools different suites or task sizes ({'; '.join(sorted(sizes))}); "
                "its numbers mix tasks of different difficulty: report the runs separately"
            )
        if "config_id" in group and "run_dir" in group:
            for _, runs in group.groupby("config_id")["run_dir"].unique().items():
                if len(runs) > 1:
                    notes.append(
                        f"note: {label}: {len(runs)} run folders of one identical configuration pooled "
                        f"({', '.join(sorted(Path(r).name for r in runs))})"
                    )
    return notes


def _size_signatures(group: pd.DataFrame) -> set[str]:
    """What tasks a group ran: suite/task identity values when known, else instance ids without the seed."""
    signatures: set[str] = set()
    if "identity" in group:
        for flat in group["identity"]:
            if isinstance(flat, dict) and any(k.split(".")[0] in ident.SIZE_KEYS for k in flat):
                size = {k: v for k, v in flat.items() if k.split(".")[0] in ident.SIZE_KEYS}
                signatures.add(json.dumps(size, sort_keys=True, default=str))
    described = set()
    if len(signatures) > 1:
        differing = ident.differing_keys([json.loads(s) for s in signatures])
        for sig in signatures:
            flat = json.loads(sig)
            described.add(" ".join(f"{k}={flat.get(k, '-')}" for k in differing))
        return described
    if "imported" in group:  # rows from another harness (harness/importer.py): their ids carry no task size
        group = group[~group["imported"].fillna(False).astype(bool)]
    per_family = group.assign(size=group["instance_id"].astype(str).str.replace(r"-s\d+$", "", regex=True))
    for _, fam in per_family.groupby("family"):
        if fam["size"].nunique() > 1:
            described.update(f"{size}" for size in sorted(fam["size"].unique()))
    return described


def config_label(row) -> str:
    """``strategy@budget`` (plus params and model when they are not the defaults)."""
    label = f"{row['strategy']}@{format_budget(int(row['budget']))}"
    if row.get("params") not in (None, "-", ""):
        label += f" [{row['params']}]"
    return label


def all_reference(trials: pd.DataFrame) -> bool:
    """Whether every trial comes from the scripted reference agent."""
    return bool(len(trials)) and bool(trials["reference_agent"].fillna(False).astype(bool).all())


# ---------------------------------------------------------------- paired comparison


class CompareError(ValueError):
    """The two sides cannot be paired (one line, exit code 2)."""


@dataclass
class Comparison:
    """Paired comparison of a candidate against a base, per stratum (see ``paired``)."""

    table: pd.DataFrame
    strata_keys: list[str]
    base_label: str
    cand_label: str
    tolerance: float
    alpha: float
    notes: list[str] = field(default_factory=list)

    @property
    def regression(self) -> bool:
        """True when the gate fails any stratum: fewer successes, or costlier without more successes
        (``harness.verdicts``)."""
        return bool(self.table["regression"].any()) if not self.table.empty else False


def decide(cmp: Comparison, adjusted: Sequence[float] | None = None) -> None:
    """Set each stratum's ``p_adjusted`` (``adjusted``, else its own McNemar p), ``verdict`` (the kind),
    ``verdict_text``, ``regression`` and ``reasons`` (why the gate fails it) in place (``harness.verdicts``)."""
    table = cmp.table
    if table.empty:
        return
    ps = list(adjusted) if adjusted is not None else [float(p) for p in table["mcnemar_p"]]
    decided = [
        verdicts.verdict(row, p, cmp.alpha, cmp.tolerance) for row, p in zip(table.to_dict("records"), ps, strict=True)
    ]
    table["p_adjusted"] = ps
    table["verdict"] = [v.kind for v in decided]
    table["verdict_text"] = [v.text for v in decided]
    table["regression"] = [v.regression for v in decided]
    table["reasons"] = ["; ".join(v.reasons) for v in decided]


def _legacy_flat(row) -> dict:
    return {
        "strategy.name": row["strategy"],
        "strategy.params": row["params"],
        "budget": int(row["budget"]),
        "model.name": row["model"],
    }


def _pairing_flats(base: pd.DataFrame, cand: pd.DataFrame) -> tuple[list[dict], list[dict]]:
    """The flat identity of every trial of each side; the legacy key for both when any run lacks identity.json."""
    ids = pd.concat([base.get("config_id", pd.Series(dtype=object)), cand.get("config_id", pd.Series(dtype=object))])
    legacy = (
        "identity" not in base
        or "identity" not in cand
        or len(ids) < len(base) + len(cand)
        or ids.astype(str).str.startswith(ident.LEGACY_PREFIX).any()
    )
    if legacy:
        return ([_legacy_flat(r) for _, r in base.iterrows()], [_legacy_flat(r) for _, r in cand.iterrows()])
    return list(base["identity"]), list(cand["identity"])


def _key_values(flats: list[dict], key: str) -> set[str]:
    return {json.dumps(f.get(key, "<absent>"), sort_keys=True, default=str) for f in flats}


def _split_keys(fb: list[dict], fc: list[dict]) -> tuple[list[str], list[str]]:
    """(compared, strata): identity keys that differ between the sides (one value per side), and those
    that take the same several values on both sides (two matching sweeps)."""
    compared, strata = [], []
    for key in sorted({k for f in fb + fc for k in f}):
        bv, cv = _key_values(fb, key), _key_values(fc, key)
        if bv == cv:
            if len(bv) > 1:
                strata.append(key)
        elif len(bv) > 1 or len(cv) > 1:
            raise CompareError(
                f"cannot pair: {key} takes several values ({', '.join(sorted(bv))} vs "
                f"{', '.join(sorted(cv))}); give one configuration per side or matching sweeps"
            )
        else:
            compared.append(key)
    return compared, strata


def _stratum_label(flat: dict, keys: Sequence[str]) -> str:
    """``strategy@budget`` when both are among ``keys``, plus ``key=value`` for the others."""
    keys = list(keys)
    parts = []
    if "strategy.name" in keys and "budget" in keys:
        parts.append(ident.readable_name(flat))
        keys = [k for k in keys if not k.startswith("strategy.") and k != "budget"]
    for key in keys:
        if key == "strategy._target_" and "strategy.name" in keys:
            continue
        value = flat.get(key)
        if key == "budget" and isinstance(value, (int, float)):
            value = format_budget(int(value))
        parts.append(f"{key}={'-' if value is None else value}")
    return " ".join(parts)


def _pairing_frame(trials: pd.DataFrame, flats: list[dict], strata: Sequence[str]) -> pd.DataFrame:
    """The columns pairing needs, with ``stratum`` (readable label of the stratum keys' values).

    ``cost`` is what the strategy's calls cost (``cost_uncached``), so that a side replayed from the
    response cache (paid 0) compares on what its calls cost when they were made.
    """
    frame = trials[[*PAIR_KEYS, "success", "total_input_tokens", "cost"]].copy()
    if "cost_uncached" in trials:
        frame["cost"] = pd.to_numeric(trials["cost_uncached"], errors="coerce").fillna(frame["cost"])
    frame["stratum"] = [_stratum_label(f, strata) for f in flats]
    frame["knobs"] = [
        json.dumps(family_knobs(f, family), sort_keys=True, default=str)
        for f, family in zip(flats, trials["family"], strict=True)
    ]
    frame["run"] = [Path(str(r)).name for r in trials["run_dir"]] if "run_dir" in trials else "?"
    return frame


def family_knobs(flat: dict, family: str) -> dict:
    """The knobs a trial's instance of ``family`` was generated with, from its flat identity: ``task.*`` when
    the run named one family (``task=...``), else ``suite.families.<family>.*``; ``name`` aside. Empty when the
    identity does not say (runs without identity.json, imported runs)."""
    prefix = "task." if flat.get("task.name") == family else f"suite.families.{family}."
    return {k[len(prefix) :]: v for k, v in flat.items() if k.startswith(prefix) and k != f"{prefix}name"}


def check_family_knobs(merged: pd.DataFrame) -> None:
    """``CompareError`` when a pair's two instances were generated with different family knobs (the same instance
    id for different tasks: ``callback_search`` at 26 or 80 functions per file). Sides whose identity says
    nothing of the knobs are not checked."""
    for _, pair in merged[merged["knobs_base"] != merged["knobs_cand"]].iterrows():
        kb, kc = json.loads(pair["knobs_base"]), json.loads(pair["knobs_cand"])
        if not kb or not kc:
            continue
        knob = next(k for k in sorted(set(kb) | set(kc)) if kb.get(k, "<absent>") != kc.get(k, "<absent>"))
        raise CompareError(
            f"compare: {pair['family']} instances differ in {knob} ({_knob_value(kb, knob)} in {pair['run_base']}, "
            f"{_knob_value(kc, knob)} in {pair['run_cand']}): not the same instances"
        )


def _knob_value(knobs: dict, knob: str) -> str:
    """A knob's value as the error line shows it (``absent`` when that side's family has no such knob)."""
    return json.dumps(knobs[knob], default=str) if knob in knobs else "absent"


def _side_label(flat: dict, compared: Sequence[str], strata: Sequence[str]) -> str:
    """What one side is: ``strategy@budget`` (when not a stratum) plus the compared keys' values."""
    if "strategy.name" not in strata and "budget" not in strata:
        return ident.readable_name(flat, [k for k in compared if k != "strategy._target_"])
    return _stratum_label(flat, compared) or "(same configuration)"


def paired(base: pd.DataFrame, cand: pd.DataFrame, tolerance: float = 0.10, alpha: float = 0.05) -> Comparison:
    """Compare ``cand`` against ``base`` on the same (family, instance, seed, trial) pairs.

    Pairing uses the configuration identity (every key of identity.json but seed and trials; the
    old strategy/params/budget/model key when a run has no identity.json). Keys that take the same
    several values on both sides (two matching sweeps) become strata: pairs are matched within a
    stratum and each is tested on its own. A key that differs between the sides is what is being
    compared; it must hold one value per side. The instances paired must have been generated with the
    same family knobs (``check_family_knobs``). Per stratum: McNemar's exact test on success, the
    paired-bootstrap interval of the success difference, and the paired-bootstrap ratios of total input
    tokens and of cost (cand / base); then the verdict and the gate at McNemar's own p (``decide``;
    ``compare_runs`` decides again at Holm-adjusted p when there are several candidates).
    """
    if base.empty or cand.empty:
        raise CompareError("no trials to compare on one side")
    notes: list[str] = []
    fb, fc = _pairing_flats(base, cand)
    compared, strata = _split_keys(fb, fc)
    merged, unpaired = _pairs(_pairing_frame(base, fb, strata), _pairing_frame(cand, fc, strata), base, cand)
    check_family_knobs(merged)
    if unpaired:
        notes.append(f"{unpaired} trials without a partner were left out")
    rows = [_stratum_row(stratum, g, bool(strata), alpha, notes) for stratum, g in merged.groupby("stratum", sort=True)]
    notes.extend(_reference_notes(base, cand))
    cmp = Comparison(
        pd.DataFrame(rows),
        ["stratum"] if strata else [],
        _side_label(fb[0], compared, strata),
        _side_label(fc[0], compared, strata),
        tolerance,
        alpha,
        notes,
    )
    decide(cmp)
    return cmp


def _pairs(b: pd.DataFrame, c: pd.DataFrame, base: pd.DataFrame, cand: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The pairing frames ``b`` and ``c`` (of the trials ``base`` and ``cand``) merged on stratum and
    ``PAIR_KEYS``, and the number of trials left without a partner; a side holding a key twice, or no
    common pair, is a ``CompareError``."""
    keys = ["stratum", *PAIR_KEYS]
    for side, frame, rows in (("base", b, base), ("candidate", c, cand)):
        if frame.duplicated(keys).any():
            runs = sorted(Path(r).name for r in rows["run_dir"].unique()) if "run_dir" in rows else []
            raise CompareError(
                f"the {side} holds the same (instance, seed, trial) twice (run folders: "
                f"{', '.join(runs)}); give one configuration per side"
            )
    merged = b.merge(c, on=keys, suffixes=("_base", "_cand"))
    if merged.empty:
        raise CompareError("no common (task instance, seed, trial) pairs between base and candidate")
    return merged, len(b) + len(c) - 2 * len(merged)


def _stratum_row(stratum: str, g: pd.DataFrame, stratified: bool, alpha: float, notes: list[str]) -> dict:
    """One stratum's comparison row (see ``paired``); a warning about too few discordant pairs goes to ``notes``."""
    sb, sc = g["success_base"].astype(bool).to_numpy(), g["success_cand"].astype(bool).to_numpy()
    n_b = int((sb & ~sc).sum())  # base succeeded, candidate failed
    n_c = int((~sb & sc).sum())
    p = mcnemar_exact(n_b, n_c)
    diff, dlo, dhi = paired_bootstrap_diff(sb.astype(float), sc.astype(float))
    tok, tlo, thi = paired_bootstrap_ratio(g["total_input_tokens_base"], g["total_input_tokens_cand"])
    cost, clo, chi = paired_bootstrap_ratio(g["cost_base"], g["cost_cand"])
    worse_success = p < alpha and sc.sum() < sb.sum()
    if not worse_success and n_b > n_c and n_b + n_c < 6:
        notes.append(
            f"{stratum or 'all'}: the candidate lost {n_b - n_c} more pairs than it won, but "
            "with fewer than 6 discordant pairs McNemar's test cannot reach p < 0.05: run more instances"
        )
    return {
        **({"stratum": stratum} if stratified else {}),
        "pairs": len(g),
        "base_successes": int(sb.sum()),
        "cand_successes": int(sc.sum()),
        "base_only": n_b,
        "cand_only": n_c,
        "mcnemar_p": p,
        "success_diff": diff,
        "success_diff_ci_low": dlo,
        "success_diff_ci_high": dhi,
        "input_ratio": tok,
        "input_ratio_ci_low": tlo,
        "input_ratio_ci_high": thi,
        "cost_ratio": cost,
        "cost_ratio_ci_low": clo,
        "cost_ratio_ci_high": chi,
    }


def _reference_notes(base: pd.DataFrame, cand: pd.DataFrame) -> list[str]:
    """What a comparison of reference-agent trials can and cannot show (none when an LLM ran)."""
    if not (all_reference(base) and all_reference(cand)):
        return []
    note = reference_note(pd.concat([base, cand]))
    if "realistic" in note:
        return [
            f"all trials come from the {note}: its trials of one instance vary but share the "
            "instance's ground truth; more instances are stronger evidence than more trials"
        ]
    return [
        f"all trials come from the {note}: under the perfect profile repeated trials of an "
        "instance are identical, not independent evidence"
    ]


# ---------------------------------------------------------------- several candidates against one base


@dataclass
class MultiComparison:
    """``compare BASE CAND...``: the arms (base first) with their labels, and each candidate's ``Comparison``
    against the base, decided at McNemar's p Holm-adjusted over the candidates (``compare_runs``)."""

    labels: list[str]
    arms: list[pd.DataFrame]
    comparisons: list[Comparison]
    tolerance: float
    alpha: float
    notes: list[str] = field(default_factory=list)

    @property
    def regression(self) -> bool:
        """True when the gate fails any candidate."""
        return any(cmp.regression for cmp in self.comparisons)


def compare_runs(
    arms: Sequence[pd.DataFrame], names: Sequence[str], tolerance: float = 0.10, alpha: float = 0.05
) -> MultiComparison:
    """Pair every candidate (``arms[1:]``) with the base (``arms[0]``; ``paired``), Holm-adjust each stratum's
    McNemar p over the candidates that have that stratum, and decide the verdicts at the adjusted p.

    ``names`` (the arms' folder names) label an arm that holds several configurations (a sweep) or whose
    configuration another arm shares; otherwise an arm is labelled by its configuration (``config_names``).
    """
    if len(arms) < 2:
        raise CompareError("compare needs a base and at least one candidate")
    comparisons = [paired(arms[0], cand, tolerance, alpha) for cand in arms[1:]]
    holm_over_candidates(comparisons)
    labels = arm_labels(arms, names)
    return MultiComparison(labels, list(arms), comparisons, tolerance, alpha, _multi_notes(arms, labels, comparisons))


def _multi_notes(arms: Sequence[pd.DataFrame], labels: Sequence[str], comparisons: Sequence[Comparison]) -> list[str]:
    """The comparisons' notes: one candidate's as they are; of several, what the reference agent's trials can
    show once, then each candidate's own notes prefixed with its label."""
    if len(comparisons) == 1:
        return list(comparisons[0].notes)
    shared = _reference_notes(arms[0], pd.concat(list(arms[1:]), ignore_index=True))
    own = [
        f"{label}: {note}"
        for label, cand, cmp in zip(labels[1:], arms[1:], comparisons, strict=True)
        for note in cmp.notes
        if note not in _reference_notes(arms[0], cand)
    ]
    return [*shared, *own]


def holm_over_candidates(comparisons: Sequence[Comparison]) -> None:
    """Decide every comparison again (``decide``) at its strata's McNemar p, Holm-adjusted within each stratum
    over the candidates: one candidate keeps its own p."""
    cells: dict[str, list[tuple[int, int]]] = {}
    for i, cmp in enumerate(comparisons):
        for j, row in enumerate(cmp.table.to_dict("records")):
            cells.setdefault(str(row.get("stratum", "")), []).append((i, j))
    adjusted = [[float(p) for p in cmp.table["mcnemar_p"]] for cmp in comparisons]
    for members in cells.values():
        for (i, j), p in zip(members, verdicts.holm([adjusted[i][j] for i, j in members]), strict=True):
            adjusted[i][j] = p
    for cmp, ps in zip(comparisons, adjusted, strict=True):
        decide(cmp, ps)
        cmp.notes.extend(_holm_notes(cmp, len(comparisons)))


def _holm_notes(cmp: Comparison, candidates: int) -> list[str]:
    """A note per stratum whose success loss is significant on its own but not after Holm's correction."""
    lost = cmp.table[
        (cmp.table["mcnemar_p"] < cmp.alpha)
        & (cmp.table["p_adjusted"] >= cmp.alpha)
        & (cmp.table["cand_successes"] < cmp.table["base_successes"])
    ]
    return [
        f"{r['stratum'] + ': ' if r.get('stratum') else ''}the loss in success is significant alone "
        f"(McNemar p={r['mcnemar_p']:.3g}) but not after Holm's correction over {candidates} candidates "
        f"(p={r['p_adjusted']:.3g}): run more instances"
        for r in lost.to_dict("records")
    ]


def arm_labels(arms: Sequence[pd.DataFrame], names: Sequence[str]) -> list[str]:
    """One distinct label per arm: its configuration's name among all the arms' (``config_names``) when it holds
    one configuration, else its folder's name (``names``); a label given twice gets its folder name too, then
    its position."""
    combined = pd.concat(list(arms), ignore_index=True)
    by_id = config_names(combined)
    labels = [
        by_id[str(arm["config_id"].iloc[0])] if arm["config_id"].nunique() == 1 else str(name)
        for arm, name in zip(arms, names, strict=True)
    ]
    labels = [f"{lab} [{name}]" if labels.count(lab) > 1 else lab for lab, name in zip(labels, names, strict=True)]
    return [f"{lab} #{i + 1}" if labels.count(lab) > 1 else lab for i, lab in enumerate(labels)]


def _with_arm(arms: Sequence[pd.DataFrame], labels: Sequence[str]) -> pd.DataFrame:
    """The arms' trials in one frame with an ``arm`` column."""
    return pd.concat([arm.assign(arm=label) for arm, label in zip(arms, labels, strict=True)], ignore_index=True)


ARM_COLUMNS = [
    "arm",
    "trials",
    "successes",
    "success_rate",
    "success_ci_low",
    "success_ci_high",
    "mean_cost",
    "cost_per_success",
    "mean_total_input_tokens",
    "reread_rate",
    "mean_compactions",
]
"""The columns of ``arm_table``."""


def arm_table(arms: Sequence[pd.DataFrame], labels: Sequence[str]) -> pd.DataFrame:
    """One row per arm, in the order given (``ARM_COLUMNS``): trials, successes, success rate with its Wilson
    interval, mean cost per trial and cost per success (what the calls cost: ``cost_uncached``, as ``paired``
    compares; NaN without a success), mean input tokens of all calls, mean re-read rate and compactions."""
    summary = summarize(_with_arm(arms, labels), by=["arm"]).set_index("arm").loc[list(labels)].reset_index()
    summary["mean_cost"] = summary["mean_cost_uncached"]
    summary["cost_per_success"] = [
        total / k if k else math.nan
        for total, k in zip(summary["total_cost_uncached"], summary["successes"], strict=True)
    ]
    return summary[ARM_COLUMNS]


def family_table(arms: Sequence[pd.DataFrame], labels: Sequence[str]) -> pd.DataFrame:
    """Success per task family per arm, long form: ``family``, ``arm``, ``successes``, ``trials``,
    ``success_rate``; families sorted, arms in the order given."""
    trials = _with_arm(arms, labels)
    rows = [
        {
            "family": family,
            "arm": label,
            "successes": int(g["success"].astype(bool).sum()),
            "trials": len(g),
            "success_rate": float(g["success"].astype(bool).mean()),
        }
        for family in sorted(trials["family"].unique())
        for label in labels
        if len(g := trials[(trials["family"] == family) & (trials["arm"] == label)])
    ]
    return pd.DataFrame(rows, columns=["family", "arm", "successes", "trials", "success_rate"])


def pareto_frontier(
    rows: pd.DataFrame,
    label: str = "arm",
    cost: str = "mean_cost",
    tokens: str = "mean_total_input_tokens",
) -> pd.DataFrame:
    """The Pareto frontier of success rate against cost per trial over ``rows`` (``arm_table``, or
    ``summarize(trials, by=CONFIG_KEYS)`` with ``label="config"``): mean input tokens of all calls instead of
    cost when every row costs 0. Columns: the label, ``success_rate``, ``measure`` (``cost`` or ``input
    tokens``), ``value``, ``frontier`` (no other row has at least its success at no more cost, better in one)
    and ``dominated_by`` (the rows that do); frontier rows first, by cost."""
    measure, column = ("cost", cost) if (rows[cost].astype(float).fillna(0) > 0).any() else ("input tokens", tokens)
    points = [verdicts.Point(str(r[label]), float(r["success_rate"]), float(r[column])) for _, r in rows.iterrows()]
    dominated = verdicts.pareto_frontier(points)
    out = pd.DataFrame(
        {
            label: [p.arm for p in points],
            "success_rate": [p.success for p in points],
            "measure": measure,
            "value": [p.cost for p in points],
            "frontier": [not dominated[p.arm] for p in points],
            "dominated_by": [", ".join(dominated[p.arm]) for p in points],
        }
    )
    return out.sort_values(["frontier", "value"], ascending=[False, True], kind="stable").reset_index(drop=True)


# ---------------------------------------------------------------- markdown


def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "–"
        magnitude = abs(float(value))  # a float for the comparisons: numpy's stubs type abs() of its floats loosely
        if magnitude >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}g}" if magnitude < 1 else f"{value:,.{digits}g}"
    return str(value)


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured markdown table of ``frame`` (no extra dependency)."""
    if frame.empty:
        return "(no rows)\n"
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, row in frame.iterrows():
        lines.append("| " + " | ".join(_fmt(row[c]).replace("|", "\\|") for c in frame.columns) + " |")
    return "\n".join(lines) + "\n"


def _held(row) -> str:
    """``yes (max 0.98x)`` / ``no: 3/14 trials, max 1.31x`` for the main table."""
    if row.get("budget") == 0:  # imported results (harness/importer.py) carry no budget
        return "n/a"
    ratio = row.get("max_budget_ratio")
    most = "" if ratio is None or pd.isna(ratio) else f"max {ratio:.2f}x"
    if row.get("held_budget"):
        return f"yes ({most})" if most else "yes"
    return f"no: {int(row['over_budget_trials'])}/{int(row['trials'])} trials" + (f", {most}" if most else "")


def main_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The compact table ``report`` prints: one row per configuration x family, intervals inline."""
    if summary.empty:
        return summary
    name = summary["config"] if "config" in summary else summary["strategy"]
    out = pd.DataFrame(
        {
            "config": name,
            "params": summary["params"],
            "budget": summary["budget"].map(lambda b: format_budget(int(b))),
            "family": summary["family"],
            "model": summary["model"],
            "trials": summary["trials"],
            "success [95% CI]": [
                f"{r:.2f} [{lo:.2f}, {hi:.2f}]"
                for r, lo, hi in zip(
                    summary["success_rate"], summary["success_ci_low"], summary["success_ci_high"], strict=False
                )
            ],
            "input tok, all calls [95% CI]": [
                f"{m:,.0f} [{lo:,.0f}, {hi:,.0f}]"
                for m, lo, hi in zip(
                    summary["mean_total_input_tokens"],
                    summary["total_input_tokens_ci_low"],
                    summary["total_input_tokens_ci_high"],
                    strict=False,
                )
            ],
            "cache hit": summary["cache_hit_ratio"].map(lambda v: f"{v:.0%}"),
            "cost $": summary["mean_cost"].map(lambda v: f"{v:.4f}"),
            "held budget": [_held(r) for _, r in summary.iterrows()] if "held_budget" in summary else "-",
            "re-read": summary["reread_rate"].map(lambda v: f"{v:.0%}"),
            "peak ctx": summary["mean_peak_context"].map(lambda v: f"{v:,.0f}"),
            "compactions": summary["mean_compactions"].map(lambda v: f"{v:.1f}"),
            "steps": summary["mean_steps"].map(lambda v: f"{v:.1f}"),
            "curve": summary.get("curve_shapes", "-"),
            "thrashing": summary.get("thrashing_trials", 0),
        }
    )
    if (out["params"] == "-").all() or "config" in summary:
        out = out.drop(columns="params")
    return out

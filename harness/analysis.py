"""Loading run folders into tidy pandas frames, aggregating and comparing them.

Notebooks and the CLI (``report``, ``compare``) use these functions; they never
re-implement them. Column names are documented in docs/analysis.md.

- ``load_trials(paths)`` / ``load_steps(paths)``: one row per trial / per model call, from
  any mix of run folders and sweep folders (searched recursively).
- ``summarize(trials)``: aggregates per strategy x params x task family x budget x model.
- ``paired(base, cand)``: the paired comparison of two configurations.
- ``curves(steps, trials)``, ``trial_events(run_dir, trial_id)``: token curves and strategy events.

All intervals are 95%. Bootstraps use a fixed seed on sorted data, so the same records give
the same numbers whatever order the runs were loaded in.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from harness.curves import SHAPES, classify, is_thrashing
from harness.records import STEPS, TRANSCRIPTS, TRIALS, read_jsonl

GROUP_KEYS = ["strategy", "params", "family", "budget", "model"]
CONFIG_KEYS = ["strategy", "params", "budget", "model"]
PAIR_KEYS = ["family", "instance_id", "seed", "trial"]
OUTCOMES = ("submitted", "step_limit", "context_overflow", "model_error", "strategy_error")
BOOTSTRAP_SEED = 20240601
BOOTSTRAP_RESAMPLES = 2000
Z95 = 1.959963984540054
# columns later backends may add to trial rows; aggregated as means when present
OPTIONAL_MEANS = ("sim_cached_tokens", "reasoning_tokens", "summarizer_cached_tokens")
REFERENCE_NOTE = "scripted reference agent, not an LLM"


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


def load_trials(paths: Iterable[str | Path], curves: bool = True) -> pd.DataFrame:
    """One row per trial across the given runs, with ``run_dir``, ``params`` and derived columns.

    Derived: ``params`` (the strategy parameters as ``k=v,...``), ``total_input_tokens`` (agent +
    summarizer), ``cache_hit_ratio`` (cached / input, agent calls). Records written before
    ``curve_shape`` existed get it (and ``thrashing``) computed from ``steps.jsonl`` when
    ``curves`` is true.
    """
    dirs = run_dirs(paths)
    frames = []
    for run in dirs:
        rows = read_jsonl(run / TRIALS)
        if rows:
            frame = pd.DataFrame(rows)
            frame["run_dir"] = str(run)
            frames.append(frame)
    if not frames:
        return pd.DataFrame()
    trials = pd.concat(frames, ignore_index=True)
    trials["params"] = trials["strategy_params"].map(_params_label) if "strategy_params" in trials else "-"
    for col in ("summarizer_input_tokens", "cached_tokens", "output_tokens", "cost", "reads", "rereads",
                "reread_rate", "compactions", "peak_context"):
        if col not in trials:
            trials[col] = 0
    trials["total_input_tokens"] = trials["input_tokens"] + trials["summarizer_input_tokens"].fillna(0)
    trials["cache_hit_ratio"] = np.where(trials["input_tokens"] > 0,
                                         trials["cached_tokens"] / trials["input_tokens"].where(trials["input_tokens"] > 0, 1), 0.0)
    if "reference_agent" not in trials:
        trials["reference_agent"] = False
    if curves and ("curve_shape" not in trials or trials["curve_shape"].isna().any()):
        steps = load_steps(dirs)
        shapes = diagnose(steps, trials)
        if "curve_shape" not in trials:
            trials["curve_shape"] = None
            trials["thrashing"] = False
        missing = trials["curve_shape"].isna()
        trials.loc[missing, "curve_shape"] = shapes.loc[missing, "curve_shape"]
        trials.loc[missing, "thrashing"] = shapes.loc[missing, "thrashing"]
    return trials


def load_steps(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per model call across the given runs, with a ``run_dir`` column."""
    frames = []
    for run in run_dirs(paths):
        rows = read_jsonl(run / STEPS)
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


def diagnose(steps: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    """``curve_shape`` and ``thrashing`` of every trial, computed from its agent steps (index of ``trials``)."""
    shapes, thrash = [], []
    agent = steps[steps["kind"] == "agent"] if not steps.empty else steps
    curves_by = {key: g.sort_values("step")["request_tokens"].tolist()
                 for key, g in agent.groupby(["run_dir", "trial_id"])} if not agent.empty else {}
    for _, row in trials.iterrows():
        shape = classify(curves_by.get((row["run_dir"], row["trial_id"]), []), row["budget"])
        shapes.append(shape)
        thrash.append(is_thrashing(shape, row.get("reread_rate")))
    return pd.DataFrame({"curve_shape": shapes, "thrashing": thrash}, index=trials.index)


def trial_events(run_dir: str | Path, trial_id: str) -> pd.DataFrame:
    """Strategy events of one trial from its transcript: ``step``, ``name``, ``data``."""
    rows = read_jsonl(Path(run_dir) / TRANSCRIPTS / f"{trial_id}.jsonl")
    events = [{"step": r.get("step"), "name": r.get("name"), "data": r.get("data")} for r in rows if r.get("event") == "strategy"]
    return pd.DataFrame(events, columns=["step", "name", "data"])


def cumulative_input(steps: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    """Cumulative input tokens (agent + summarizer calls) by step, one row per trial x step.

    Columns: the trial's config keys, ``trial_id``, ``run_dir``, ``step``, ``cum_input_tokens``.
    """
    if steps.empty:
        return pd.DataFrame()
    per_step = steps.groupby(["run_dir", "trial_id", "step"], as_index=False)["prompt_tokens"].sum()
    per_step = per_step.sort_values(["run_dir", "trial_id", "step"])
    per_step["cum_input_tokens"] = per_step.groupby(["run_dir", "trial_id"])["prompt_tokens"].cumsum()
    keys = trials[["run_dir", "trial_id", *GROUP_KEYS]]
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


def bootstrap_mean(values: Sequence[float], seed: int = BOOTSTRAP_SEED,
                   resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float]:
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
    tail = sum(math.comb(n, i) for i in range(0, min(b, c) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def paired_bootstrap_ratio(base: Sequence[float], cand: Sequence[float], seed: int = BOOTSTRAP_SEED,
                           resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float, float]:
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


def paired_bootstrap_diff(base: Sequence[float], cand: Sequence[float], seed: int = BOOTSTRAP_SEED,
                          resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float, float]:
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
    for name, col in (("input_tokens", "input_tokens"), ("cached_tokens", "cached_tokens"),
                      ("output_tokens", "output_tokens"), ("total_input_tokens", "total_input_tokens"),
                      ("cost", "cost")):
        values = group[col].astype(float)
        row[f"mean_{name}"] = float(values.mean())
        row[f"{name}_ci_low"], row[f"{name}_ci_high"] = bootstrap_mean(values)
    row["mean_summarizer_input_tokens"] = float(group["summarizer_input_tokens"].astype(float).mean())
    total_input = float(group["input_tokens"].sum())
    row["cache_hit_ratio"] = float(group["cached_tokens"].sum()) / total_input if total_input else 0.0
    for col in OPTIONAL_MEANS:
        if col in group and group[col].notna().any():
            row[f"mean_{col}"] = float(group[col].astype(float).mean())
            if col == "sim_cached_tokens":
                row["sim_cache_hit_ratio"] = float(group[col].sum()) / total_input if total_input else 0.0
    row["total_cost"] = float(group["cost"].sum())
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
    row["reference_agent"] = bool(group["reference_agent"].fillna(False).astype(bool).all())
    return row


def summarize(trials: pd.DataFrame, by: Sequence[str] = GROUP_KEYS) -> pd.DataFrame:
    """Aggregates per ``by`` (default strategy x params x task family x budget x model); see docs/analysis.md."""
    if trials.empty:
        return pd.DataFrame()
    if "params" not in trials:
        trials = trials.assign(params=trials.get("strategy_params", pd.Series("-", index=trials.index)).map(_params_label))
    if "total_input_tokens" not in trials:
        trials = trials.assign(total_input_tokens=trials["input_tokens"] + trials.get("summarizer_input_tokens", 0))
    for col in ("summarizer_input_tokens", "reads", "rereads"):
        if col not in trials:
            trials = trials.assign(**{col: 0})
    rows = []
    for key, group in trials.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), **_group_row(group)})
    out = pd.DataFrame(rows)
    pass_cols = sorted((c for c in out.columns if c.startswith("pass^")), key=lambda c: int(c[5:]))
    others = [c for c in out.columns if not c.startswith("pass^")]
    at = others.index("success_ci_high") + 1
    return out[others[:at] + pass_cols + others[at:]]


def config_label(row) -> str:
    """``strategy@budget`` (plus params and model when they are not the defaults)."""
    from harness.budget import format_budget

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
        """True when any stratum is significantly worse in success or costlier beyond the tolerance."""
        return bool(self.table["regression"].any()) if not self.table.empty else False


def _side_label(trials: pd.DataFrame, fixed: Sequence[str]) -> str:
    parts = []
    for key in fixed:
        values = trials[key].unique()
        if len(values) == 1:
            value = values[0]
            if key == "budget":
                from harness.budget import format_budget

                value = format_budget(int(value))
            if key == "params" and value == "-":
                continue
            parts.append(f"{key}={value}")
    return " ".join(parts)


def paired(base: pd.DataFrame, cand: pd.DataFrame, tolerance: float = 0.10, alpha: float = 0.05) -> Comparison:
    """Compare ``cand`` against ``base`` on the same (family, instance, seed, trial) pairs.

    Config keys (strategy, params, budget, model) that take the same several values on both
    sides (two matching sweeps) become strata: pairs are matched within a stratum and each is
    tested on its own. A key that differs between the sides is what is being compared; it must
    hold one value per side. Per stratum: McNemar's exact test on success, the paired-bootstrap
    interval of the success difference, and the paired-bootstrap ratios of total input tokens
    and of cost (cand / base). ``regression`` is true when (p < alpha and fewer candidate
    successes) or (a ratio > 1 + tolerance and its interval's lower bound > 1).
    """
    if base.empty or cand.empty:
        raise CompareError("no trials to compare on one side")
    strata, notes = [], []
    for key in CONFIG_KEYS:
        bv, cv = set(base[key].astype(str)), set(cand[key].astype(str))
        if len(bv) > 1 or len(cv) > 1:
            if bv == cv:
                strata.append(key)
            else:
                raise CompareError(f"cannot pair: {key} takes several values ({', '.join(sorted(bv))} vs "
                                   f"{', '.join(sorted(cv))}); give one configuration per side or matching sweeps")
    keys = strata + PAIR_KEYS
    cols = keys + ["success", "total_input_tokens", "cost"]
    b = base[cols].astype({k: str for k in strata})
    c = cand[cols].astype({k: str for k in strata})
    for side, frame in (("base", b), ("candidate", c)):
        if frame.duplicated(keys).any():
            raise CompareError(f"the {side} holds the same (instance, seed, trial) twice; give one configuration per side")
    merged = b.merge(c, on=keys, suffixes=("_base", "_cand"))
    if merged.empty:
        raise CompareError("no common (task instance, seed, trial) pairs between base and candidate")
    unpaired = len(b) + len(c) - 2 * len(merged)
    if unpaired:
        notes.append(f"{unpaired} trials without a partner were left out")
    rows = []
    groups = merged.groupby(strata, sort=True) if strata else [((), merged)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        sb, sc = g["success_base"].astype(bool).to_numpy(), g["success_cand"].astype(bool).to_numpy()
        n_b = int((sb & ~sc).sum())  # base succeeded, candidate failed
        n_c = int((~sb & sc).sum())
        p = mcnemar_exact(n_b, n_c)
        diff, dlo, dhi = paired_bootstrap_diff(sb.astype(float), sc.astype(float))
        tok, tlo, thi = paired_bootstrap_ratio(g["total_input_tokens_base"], g["total_input_tokens_cand"])
        cost, clo, chi = paired_bootstrap_ratio(g["cost_base"], g["cost_cand"])
        worse_success = p < alpha and sc.sum() < sb.sum()
        costlier_tokens = not math.isnan(tok) and tok > 1 + tolerance and tlo > 1
        costlier_cost = not math.isnan(cost) and cost > 1 + tolerance and clo > 1
        if not worse_success and n_b > n_c and n_b + n_c < 6:
            notes.append(f"{'/'.join(map(str, key)) or 'all'}: the candidate lost {n_b - n_c} more pairs than it won, but "
                         "with fewer than 6 discordant pairs McNemar's test cannot reach p < 0.05: run more instances")
        reasons = []
        if worse_success:
            reasons.append(f"success {int(sc.sum())}/{len(g)} vs {int(sb.sum())}/{len(g)} (McNemar p={p:.3g})")
        if costlier_tokens:
            reasons.append(f"input tokens x{tok:.2f} [{tlo:.2f}, {thi:.2f}]")
        if costlier_cost:
            reasons.append(f"cost x{cost:.2f} [{clo:.2f}, {chi:.2f}]")
        rows.append({
            **dict(zip(strata, key)), "pairs": len(g),
            "base_successes": int(sb.sum()), "cand_successes": int(sc.sum()),
            "base_only": n_b, "cand_only": n_c, "mcnemar_p": p,
            "success_diff": diff, "success_diff_ci_low": dlo, "success_diff_ci_high": dhi,
            "input_ratio": tok, "input_ratio_ci_low": tlo, "input_ratio_ci_high": thi,
            "cost_ratio": cost, "cost_ratio_ci_low": clo, "cost_ratio_ci_high": chi,
            "regression": bool(reasons), "reasons": "; ".join(reasons),
        })
    fixed = [k for k in CONFIG_KEYS if k not in strata]
    if all_reference(base) and all_reference(cand):
        notes.append(f"all trials come from the {REFERENCE_NOTE}: it is deterministic, so repeated trials of an "
                     "instance are not independent evidence")
    return Comparison(pd.DataFrame(rows), strata, _side_label(base, fixed), _side_label(cand, fixed),
                      tolerance, alpha, notes)


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
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}g}" if abs(value) < 1 else f"{value:,.{digits}g}"
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


def main_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The compact table ``report`` prints: one row per configuration x family, intervals inline."""
    from harness.budget import format_budget

    if summary.empty:
        return summary
    out = pd.DataFrame({
        "strategy": summary["strategy"],
        "params": summary["params"],
        "budget": summary["budget"].map(lambda b: format_budget(int(b))),
        "family": summary["family"],
        "model": summary["model"],
        "trials": summary["trials"],
        "success [95% CI]": [f"{r:.2f} [{lo:.2f}, {hi:.2f}]" for r, lo, hi in
                             zip(summary["success_rate"], summary["success_ci_low"], summary["success_ci_high"])],
        "input tok [95% CI]": [f"{m:,.0f} [{lo:,.0f}, {hi:,.0f}]" for m, lo, hi in
                               zip(summary["mean_total_input_tokens"], summary["total_input_tokens_ci_low"],
                                   summary["total_input_tokens_ci_high"])],
        "cache hit": summary["cache_hit_ratio"].map(lambda v: f"{v:.0%}"),
        "cost $": summary["mean_cost"].map(lambda v: f"{v:.4f}"),
        "re-read": summary["reread_rate"].map(lambda v: f"{v:.0%}"),
        "peak ctx": summary["mean_peak_context"].map(lambda v: f"{v:,.0f}"),
        "compactions": summary["mean_compactions"].map(lambda v: f"{v:.1f}"),
        "steps": summary["mean_steps"].map(lambda v: f"{v:.1f}"),
        "curve": summary.get("curve_shapes", "-"),
        "thrashing": summary.get("thrashing_trials", 0),
    })
    if (out["params"] == "-").all():
        out = out.drop(columns="params")
    return out

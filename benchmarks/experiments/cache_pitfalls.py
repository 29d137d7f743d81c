"""Preset cache_pitfalls: the prefix-cache anti-patterns (source 002 exp 2-3, source 004) and select_tools."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .claims import claims, judge, verdict_table
from .common import NOTE, cells, fmt_int, pct, pricing, table, trials
from .status_cost_model import STATUS_ALPHA

LABELS = {
    "none": "append-only baseline",
    "pitfall_timestamp": "timestamp at the head of the system prompt",
    "pitfall_tool_order": "tools re-sorted by use frequency",
    "pitfall_window": "window of the last 10 rounds",
    "pitfall_flatten": 'flattened "USER: … ASSISTANT: …" text',
    "pitfall_user_config": "live account state at the head of the task message",
    "pitfall_json_keys": "JSON keys re-serialized in a random order",
    "pitfall_tool_churn": "a helper tool loaded, another unloaded, every turn",
    "select_tools": "dynamic tool exposure (source 003 SelectTools; not a pitfall)",
}
HEADER = [
    "strategy",
    "cache-hit ratio",
    "hit loss vs `none` (points)",
    "mean input tok",
    "mean cached tok",
    "mean cost (USD, {pricing})",
    "success",
    "steps",
    "re-read rate",
    "cached_source",
]
SIDES_HEADER = [
    "family",
    "tool-schema tok per call (`none` → `select_tools`)",
    "schema tok saved per trial",
    "cached tok lost at breaks",
    "cache breaks",
    "calls a set must last to repay a break",
    "calls to a hidden tool",
    "steps",
    "input tok",
    "cost (USD)",
]


def hit_ratio(g: pd.DataFrame) -> float:
    """Cached (simulated when recorded) over input tokens of the agent's calls, pooled over the trials of ``g``."""
    cached = g["sim_cached_tokens"] if "sim_cached_tokens" in g else g["cached_tokens"]
    return cached.sum() / g["input_tokens"].sum() if g["input_tokens"].sum() else 0.0


def _row(cell: str, g: pd.DataFrame, base: float, sim: bool) -> list[str]:
    """One strategy's cache figures."""
    cached = g["sim_cached_tokens"] if sim else g["cached_tokens"]
    hit = hit_ratio(g)
    return [
        f"`{cell}` {LABELS.get(cell, '')}",
        pct(hit),
        f"{100 * (base - hit):+.0f}",
        fmt_int(g["input_tokens"].mean()),
        fmt_int(cached.mean()),
        f"{g['cost'].mean():.4f}",
        f"{int(g['success'].sum())}/{len(g)}",
        f"{g['steps'].mean():.0f}",
        f"{g['reread_rate'].mean():.2f}",
        ", ".join(sorted(set(map(str, g["cached_source"])))),
    ]


def cache_pitfalls(results: Path) -> str:
    """Every anti-pattern's cache-hit ratio against the append-only baseline."""
    t = trials("cache_pitfalls", results)
    sim = "sim_cached_tokens" in t
    base = hit_ratio(t[t["cell"] == "none"]) if (t["cell"] == "none").any() else float("nan")
    rows = [_row(cell, t[t["cell"] == cell], base, sim) for cell in cells(t, list(LABELS))]
    header = [h.format(pricing=pricing(t)) for h in HEADER]
    return table(header, rows) + (
        f"\n\n{NOTE} Cached tokens: "
        + (
            "the harness's prefix-cache simulator (`sim_cached_tokens`)."
            if sim
            else "PENDING: this checkout has no prefix-cache simulator yet, so cached tokens "
            "are 0 for every row (the scripted backend reports none)."
        )
    )


def pair(t: pd.DataFrame, family: str, cell: str) -> pd.DataFrame:
    """The trials of one family and cell."""
    return t[(t["family"] == family) & (t["cell"] == cell)]


def _sides_row(family: str, none: pd.DataFrame, sel: pd.DataFrame) -> list[str]:
    """select_tools against none in one family."""
    per_call = lambda g: g["tool_schema_tokens"].sum() / g["steps"].sum()  # noqa: E731
    saved_per_call = sel["tool_schema_tokens_saved"].sum() / sel["steps"].sum()
    lost_per_break = sel["cache_lost_tokens"].sum() / sel["cache_breaks"].sum() if sel["cache_breaks"].sum() else 0
    repay = (1 - STATUS_ALPHA) * lost_per_break / (STATUS_ALPHA * saved_per_call) if saved_per_call else float("nan")
    return [
        family,
        f"{per_call(none):.0f} → {per_call(sel):.0f}",
        fmt_int(sel["tool_schema_tokens_saved"].mean()),
        fmt_int(sel["cache_lost_tokens"].mean()),
        f"{sel['cache_breaks'].mean():.0f}",
        "-" if repay != repay else fmt_int(repay),
        f"{sel['unoffered_calls'].mean():.0f}",
        f"{none['steps'].mean():.0f} → {sel['steps'].mean():.0f}",
        f"{fmt_int(none['input_tokens'].mean())} → {fmt_int(sel['input_tokens'].mean())}",
        f"{none['cost'].mean():.4f} → {sel['cost'].mean():.4f}",
    ]


def select_tools_sides(results: Path) -> str:
    """``select_tools`` beside ``none`` per family: schema tokens saved against cache hits lost (source 003 vs 004)."""
    t = trials("cache_pitfalls", results)
    rows = []
    for family in sorted(set(t["family"])):
        none, sel = pair(t, family, "none"), pair(t, family, "select_tools")
        if not (none.empty or sel.empty):
            rows.append(_sides_row(family, none, sel))
    return table(SIDES_HEADER, rows) + (
        f'\n\n{NOTE} Both sides of dynamic tool exposure: source 003 ("better to expose 10 tools dynamically than '
        'to put 50 tool definitions in the context") counts the schema tokens saved; source 004 ("tool definitions '
        'usually sit at the very front of the context; one change invalidates the whole cache") the cache hits lost '
        "at each change of the offered set and the calls to a tool no longer offered (answered with an error, not "
        f"executed). A schema left out would have been cached in `none`, so each call saves only α = {STATUS_ALPHA} "
        "of its price, while a break re-prices the lost tokens at 1 − α: a set must last (1 − α) x (tokens lost per "
        "break) / (α x schema tokens saved per call) calls to repay one break."
    )


def families_hit(t: pd.DataFrame, cell: str) -> list[str]:
    """The families where ``cell`` loses at least one point of cache hits against ``none``."""
    return [f for f in sorted(set(t["family"])) if hit_ratio(pair(t, f, "none")) - hit_ratio(pair(t, f, cell)) >= 0.01]


def schema_range(t: pd.DataFrame) -> str:
    """The smallest and largest tool-schema tokens per call of ``none`` over the families (``150-460``)."""
    none = t[t["cell"] == "none"]
    per_call = [g["tool_schema_tokens"].sum() / g["steps"].sum() for _, g in none.groupby("family")]
    return f"{min(per_call):.0f}-{max(per_call):.0f}"


def _behaviour(g: pd.DataFrame, none: pd.DataFrame) -> str:
    """Steps and successes of ``g`` against ``none``'s."""
    if g["steps"].sum() == none["steps"].sum() and g["success"].sum() == none["success"].sum():
        return "same steps and answers as `none`"
    return (
        f"{g['steps'].mean():.0f} steps and {int(g['success'].sum())}/{len(g)} successes against `none`'s "
        f"{none['steps'].mean():.0f} and {int(none['success'].sum())}/{len(none)}"
    )


def _select_tools_reason(t: pd.DataFrame, g: pd.DataFrame, none: pd.DataFrame) -> str:
    """Both sides of select_tools per trial, and why the saving does not win when it does not."""
    cheaper = g["cost"].mean() < none["cost"].mean()
    return (
        f"per trial it saves {g['tool_schema_tokens_saved'].mean():,.0f} schema tokens, loses "
        f"{g['cache_lost_tokens'].mean():,.0f} cached tokens at {g['cache_breaks'].mean():.1f} breaks and makes "
        f"{g['unoffered_calls'].mean():.1f} calls to hidden tools ({g['steps'].mean() - none['steps'].mean():+.1f} "
        f"steps); cost {g['cost'].mean() / none['cost'].mean():.2f}x `none`'s"
        + (
            ""
            if cheaper
            else f"; these tasks' schemas are {schema_range(t)} tokens a call, too few for the published saving to "
            "outweigh the breaks"
        )
    )


def _loss_reason(t: pd.DataFrame, cell: str, loss: float, behaviour: str, partly: bool) -> str:
    """Where ``cell`` loses cache hits, and what a break costs."""
    families = families_hit(t, cell)
    every = len(families) == len(set(t["family"]))
    where = "every family" if every else ("only " + ", ".join(families) if families else "no family")
    reason = f"hits {100 * loss:.0f} points below `none` ({where}); {behaviour}"
    if cell in ("pitfall_tool_order", "pitfall_tool_churn") and partly:
        reason += (
            "; a break costs only the requests since that tool list was last sent "
            "(the cache keeps every earlier prefix)"
        )
    if cell == "pitfall_json_keys" and not every:
        reason += "; only objects with two keys or more can change order (one-argument calls, text results are immune)"
    return reason


def pitfall_verdict(t: pd.DataFrame, cell: str, loss: float) -> tuple[str, str]:
    """The verdict on one row of ``cache_pitfalls`` and why, from the measured figures."""
    g, none = t[t["cell"] == cell], t[t["cell"] == "none"]
    claim = claims("cache_pitfalls").get(cell) or claims("cache_pitfalls")["pitfall_timestamp"]
    behaviour = _behaviour(g, none)
    if cell == "pitfall_flatten":
        reason = f"the damage is to the agent, not the cache (hits {100 * loss:+.0f} points): {behaviour}"
        v = judge(claim, g["success"].sum() - none["success"].sum(), reason=reason)
    elif cell == "select_tools":
        v = judge(claim, g["cost"].mean() / none["cost"].mean(), reason=_select_tools_reason(t, g, none))
    else:
        found = judge(claim, 100 * loss)
        v = judge(claim, 100 * loss, reason=_loss_reason(t, cell, loss, behaviour, found.verdict == "partly"))
    return v.verdict, v.reason


def cache_pitfalls_verdict(results: Path) -> str:
    """Published figure | ours | verdict | reason, for every row of ``cache_pitfalls`` but the baseline."""
    t = trials("cache_pitfalls", results)
    base = hit_ratio(t[t["cell"] == "none"])
    rows = []
    for cell in [c for c in cells(t, list(LABELS)) if c != "none"]:
        hit = hit_ratio(t[t["cell"] == cell])
        verdict, reason = pitfall_verdict(t, cell, base - hit)
        text = claims("cache_pitfalls")[cell].shown if cell in claims("cache_pitfalls") else "breaks the prefix cache"
        rows.append((f"`{cell}`: {text}", f"hits {pct(hit)} (`none` {pct(base)})", verdict, reason))
    return verdict_table(rows) + (
        f"\n\n{NOTE} Verdicts are computed: `reproduced` when the cache-hit ratio falls by 50 points or more (the "
        "sources say the cache is lost), `partly` from 1 point, `not` below; `pitfall_flatten` is judged on success, "
        "`select_tools` on both sides."
    )

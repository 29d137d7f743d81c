"""Preset strategy_zoo: every strategy at 8K and 25K on the default suite (strategies/README.md), and what it shows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .common import NOTE, NOTE_REALISTIC, fmt_int, pct, table, trials

ZOO = [
    "none",
    "sliding_window",
    "headtail",
    "clear_tool_results",
    "summarize",
    "layered",
    "offload",
    "adaptive_window",
    "status_bar",
    "notes",
    "isolate",
]
BUDGETS = ("8k", "25k")
HEADER = [
    "strategy",
    "budget",
    "success",
    "pass^k (k = trials)",
    "mean input tok (all calls)",
    "re-read rate",
    "held the budget (trials over, max ratio)",
    "thrashing trials",
]
BEFORE_AFTER_HEADER = [
    "strategy",
    "budget",
    "success before",
    "success after",
    "input tok before (all calls)",
    "input tok after (all calls)",
    "held the budget",
    "rank (success, then tokens)",
]


def zoo_trials(results: Path, curves: bool = False) -> pd.DataFrame:
    """The strategy_zoo sweep's trials with a ``budget_label`` column (``8k``, ``25k``)."""
    t = trials("strategy_zoo", results, curves=curves)
    t["budget_label"] = t["budget"].map(lambda b: f"{int(b) // 1000}k")
    return t


def zoo_cell(g: pd.DataFrame) -> list[str]:
    """Success, mean tokens of all calls, re-read rate and budget adherence of one strategy x budget cell."""
    from harness.analysis import pass_hat_k

    over = int((g["over_budget_steps"] > 0).sum()) if "over_budget_steps" in g else 0
    ratio = g["max_budget_ratio"].max() if "max_budget_ratio" in g else float("nan")
    held = "yes" if over == 0 else f"no ({over}/{len(g)}, max {ratio:.2f}x)"
    per_task = [(len(t), int(t["success"].sum())) for _, t in g.groupby("instance_id")]
    k = min(n for n, _ in per_task)
    return [
        f"{int(g['success'].sum())}/{len(g)}",
        f"{pass_hat_k(per_task, k):.2f}" if k > 1 else "–",
        fmt_int(g["total_input_tokens"].mean()),
        pct(g["pooled_rr"].iloc[0]),
        held,
        f"{int(g['thrashing'].fillna(False).astype(bool).sum())}",
    ]


def suite_size(t: pd.DataFrame) -> str:
    """``Default suite (F families x I instances, T trials)``, counted from the trial rows."""
    families = t["family"].nunique()
    instances = t.groupby("family")["instance_id"].nunique().max()
    per_cell = t.groupby(["strategy", "budget", "instance_id"]).size().max()
    return f"Default suite ({families} families x {instances} instances, {per_cell} trials)"


def strategy_zoo(results: Path) -> str:
    """Every strategy x budget: success, pass^k, tokens, re-reads, budget adherence, thrashing."""
    t = zoo_trials(results, curves=True)  # older records get today's curve and budget rules
    rows = []
    for strategy in [s for s in ZOO if s in set(t["strategy"])]:
        for budget in BUDGETS:
            g = t[(t["strategy"] == strategy) & (t["budget_label"] == budget)].copy()
            if g.empty:
                continue
            g["pooled_rr"] = g["rereads"].sum() / g["reads"].sum() if g["reads"].sum() else 0.0
            rows.append([f"`{strategy}`", budget, *zoo_cell(g)])
    return table(HEADER, rows) + (
        f"\n\n{NOTE_REALISTIC} {suite_size(t)}. Input tokens count every model call of a "
        "trial: agent, summarizer, sub-agents and stop hook. A trial did not hold the budget when any of its "
        "requests was larger than the budget (`over_budget_steps` > 0)."
    )


def strategy_peaks(results: Path) -> str:
    """The largest request each strategy sent at 8K on invoice_audit (the family with the largest pages) and on
    the whole suite: the peaks strategies/README.md's budget column cites."""
    t = zoo_trials(results)
    t = t[t["budget_label"] == "8k"]
    rows = []
    for strategy in [s for s in ZOO if s in set(t["strategy"])]:
        g = t[t["strategy"] == strategy]
        audit = g[g["family"] == "invoice_audit"]["peak_context"]
        budget = float(g["budget"].iloc[0])
        rows.append(
            [
                f"`{strategy}`",
                f"{fmt_int(audit.max())} ({audit.max() / budget:.1f}x)" if len(audit) else "-",
                f"{fmt_int(g['peak_context'].max())} ({g['peak_context'].max() / budget:.1f}x)",
            ]
        )
    header = ["strategy", "invoice_audit: largest request (x budget)", "any family: largest request (x budget)"]
    return table(header, rows) + (
        "\n\nReference agent (scripted, not an LLM), profile realistic. Budget 8K, default suite; each cell is the "
        "largest prepared request (`peak_context`) over every trial, not a mean, and its multiple of the budget."
    )


def _discrimination_row(family: str, budget: str, g: pd.DataFrame, strategies: list[str]) -> list[str]:
    """One family and budget: each strategy's successes, and how many fall below ``none``."""
    rate = {s: g[g["strategy"] == s]["success"].mean() for s in strategies}
    worse = [s for s in strategies[1:] if rate[s] < rate["none"]]
    shown = [f"{int(g[g['strategy'] == s]['success'].sum())}/{len(g[g['strategy'] == s])}" for s in strategies]
    return [family, budget, *shown, str(len(worse))]


def discrimination(results: Path) -> str:
    """Family x strategy x budget success of the strategy_zoo sweep, and which strategies fail where ``none``
    succeeds."""
    t = zoo_trials(results)
    strategies = [s for s in ZOO if s in set(t["strategy"])]
    rows = [
        _discrimination_row(family, budget, t[(t["family"] == family) & (t["budget_label"] == budget)], strategies)
        for family in sorted(set(t["family"]))
        for budget in BUDGETS
    ]
    return table(["family", "budget", *[f"`{s}`" for s in strategies], "strategies below `none`"], rows) + (
        f"\n\n{NOTE_REALISTIC} A family discriminates when strategies fail where `none` succeeds; the last column "
        "counts the strategies whose success rate is below `none`'s in that family and budget."
    )


def zoo_summary(results: Path) -> dict[tuple[str, str], tuple[int, int, float, int]]:
    """(strategy, budget) -> (successes, trials, mean input tokens of all calls, trials over budget)."""
    t = zoo_trials(results)
    return {
        (s, b): (
            int(g["success"].sum()),
            len(g),
            float(g["total_input_tokens"].mean()),
            int((g["over_budget_steps"] > 0).sum()),
        )
        for (s, b), g in t.groupby(["strategy", "budget_label"])
    }


def zoo_ranks(summary: dict, budget: str) -> dict[str, int]:
    """Rank of each strategy at ``budget``: most successes first, then fewest input tokens."""
    ranked = sorted(
        (k[0] for k in summary if k[1] == budget), key=lambda s: (-summary[s, budget][0], summary[s, budget][2])
    )
    return {s: i + 1 for i, s in enumerate(ranked)}


def zoo_before_after(before: Path, after: Path) -> str:
    """The strategy_zoo table of two sweeps side by side: success, input tokens (all calls) and rank."""
    old, new = zoo_summary(before), zoo_summary(after)
    rows = []
    for budget in BUDGETS:
        old_rank, new_rank = zoo_ranks(old, budget), zoo_ranks(new, budget)
        for strategy in sorted(new_rank, key=new_rank.get):
            o, n = old.get((strategy, budget)), new[strategy, budget]
            moved = "" if old_rank.get(strategy) == new_rank[strategy] else " *"
            rows.append(
                [
                    f"`{strategy}`",
                    budget,
                    f"{o[0]}/{o[1]}" if o else "-",
                    f"{n[0]}/{n[1]}",
                    fmt_int(o[2]) if o else "-",
                    fmt_int(n[2]),
                    "yes" if n[3] == 0 else f"no ({n[3]}/{n[1]})",
                    f"{old_rank.get(strategy, '-')} → {new_rank[strategy]}{moved}",
                ]
            )
    return table(BEFORE_AFTER_HEADER, rows) + f"\n\n{NOTE} * = the rank changed."

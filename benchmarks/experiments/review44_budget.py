"""Preset review44_budget: source 000's budget rule of thumb on review44's hooked headtail, 8K to 70K."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .claims import claims, judge, verdict_row, verdict_table
from .common import NOTE, col, fmt_int, frac, outcomes, pct, table, trials

HEADER = [
    "budget",
    "x working set",
    "published re-read",
    "ours re-read",
    "success (score)",
    "steps",
    "mean input tok (all calls)",
    "hook refusals",
    "outcomes",
]


def working_set(seed: int, files: int = 44, bugs: int = 6) -> int:
    """Source 000's per-step working set of a review44 instance, in tokens: the prompt (system, task, tool schemas)
    plus the two largest files as read_file returns them (a module and the helper module it is checked against)."""
    from harness.tokens import encoding
    from tasks.code_review import CodeReview

    instance = CodeReview(files=files, bugs=bugs).generate(seed)
    count = lambda text: len(encoding().encode(text))  # noqa: E731
    head = count(instance.system_prompt) + count(instance.user_prompt) + count(json.dumps(instance.tools))
    reads = sorted(count(instance.call("read_file", {"path": p}).content) for p in instance.files)
    return head + sum(reads[-2:])


def published_reread(budget: int) -> str:
    """review44's published re-read rate at ``budget`` (8K, 15K), blank at the others."""
    found = claims("review44").get({8_000: "headtail_8k.reread", 15_000: "headtail_15k.reread"}.get(budget, ""))
    return pct(found.figure) if found else ""


def budget_rows(t: pd.DataFrame) -> list[dict]:
    """Per budget: the trials, the budget in multiples of the mean working set, and the pooled re-read rate."""
    seeds = sorted(set(t["seed"]))
    w = sum(working_set(int(s)) for s in seeds) / len(seeds)
    rows = []
    for budget, g in sorted(t.groupby("budget"), key=lambda x: int(x[0])):
        reads, rereads = g["reads"].sum(), g["rereads"].sum()
        rows.append(
            {"budget": int(budget), "x": int(budget) / w, "w": w, "g": g, "rr": rereads / reads if reads else 0.0}
        )
    return rows


def review44_budget(results: Path) -> str:
    """Success and re-read rate of review44's hooked headtail across budgets, in multiples of the working set."""
    t = trials("review44_budget", results)
    rows = []
    budgets = budget_rows(t)
    for r in budgets:
        g = r["g"]
        rows.append(
            [
                f"{r['budget'] // 1000}K",
                f"{r['x']:.1f}x",
                published_reread(r["budget"]),
                pct(r["rr"]),
                f"{frac(g)} ({g['score'].mean():.2f})",
                f"{g['steps'].mean():.0f}",
                fmt_int(g["total_input_tokens"].mean()),
                fmt_int(col(g, "hook_continues").mean()),
                outcomes(g),
            ]
        )
    w = budgets[0]["w"] if len(t) else 0
    return table(HEADER, rows) + (
        f"\n\n{NOTE} `code_review` 44 files, 6 bugs, seeds 0-2; `headtail` with the completion-check hook. Working "
        "set (source 000's per-step working set) = the prompt with tool schemas plus the two largest files as read "
        f"(a module and the helper module it is checked against): {fmt_int(w)} tokens on average over the seeds."
    )


def _rule(rows: list[dict], smallest: dict | None) -> tuple:
    """2-3x the working set."""
    in_rule = [r for r in rows if 2 <= r["x"] <= 3]
    ours = (f"2-3x is {fmt_int(2 * rows[0]['w'])}-{fmt_int(3 * rows[0]['w'])} tokens; " if rows else "") + (
        f"the smallest budget with full success is {smallest['budget'] // 1000}K ({smallest['x']:.1f}x)"
        if smallest
        else "no swept budget reaches full success"
    )
    if in_rule and not any(r["g"]["success"].all() for r in in_rule):
        ours += f"; at {', '.join(str(r['budget'] // 1000) + 'K' for r in in_rule)} (inside 2-3x) no trial succeeds"
    reason = (
        "with the completion-check hook the reference reviewer re-lists and re-reads whenever a refusal meets a "
        "context that no longer shows its work; it needs room for most of the review, not for one step"
        if not smallest or smallest["x"] > 3
        else "the rule's budget holds the step's files and the notes"
    )
    claim = claims("review44_budget")["working_set_rule"]
    return verdict_row(claim, ours, judge(claim, smallest["x"] if smallest else float("nan"), reason=reason))


def _start_range(rows: list[dict], smallest: dict | None) -> tuple:
    """25K-50K for multi-file tasks."""
    in_range = smallest is not None and 25_000 <= smallest["budget"] <= 50_000
    ours = ", ".join(f"{r['budget'] // 1000}K {frac(r['g'])}" for r in rows if 25_000 <= r["budget"] <= 50_000)
    reason = (
        "the smallest budget that works lies in the source's starting range" if in_range else "part of the range fails"
    )
    claim = claims("review44_budget")["start_range"]
    return verdict_row(claim, ours, judge(claim, smallest["budget"] if smallest else float("nan"), reason=reason))


def _widen(rows: list[dict]) -> tuple:
    """Re-reads fall as the budget widens; below 15% while compaction still acts?"""
    falling = all(x["rr"] >= y["rr"] for x, y in zip(rows, rows[1:], strict=False))
    below = [r for r in rows if r["rr"] <= 0.15]
    whole = bool(below) and not below[0]["g"]["compactions"].any()
    upto = [r for r in rows if not below or r["budget"] <= below[0]["budget"]]
    compacting = min((r["rr"] for r in upto if r["g"]["compactions"].any()), default=float("inf"))
    if not (falling and below):
        reason = "widening does not bring the re-read rate under 15% here"
    elif whole:
        reason = (
            "re-reads fall as the budget widens, but stay above 15% until the budget holds the whole review "
            f"({below[0]['budget'] // 1000}K: no compaction at all); success comes earlier, with re-reads still high"
        )
    else:
        reason = "re-reads fall below 15% as the budget widens"
    ours = "; ".join(f"{r['budget'] // 1000}K {pct(r['rr'])}" for r in rows)
    claim = claims("review44_budget")["widen_on_rereads"]
    return verdict_row(claim, ours, judge(claim, compacting, gate=falling, partly=whole, reason=reason))


def review44_budget_verdict(results: Path) -> str:
    """The source's rule of thumb: 2-3x the working set; start multi-file tasks at 25K-50K; widen above 15%
    re-reads."""
    rows = budget_rows(trials("review44_budget", results))
    ok = [r for r in rows if r["g"]["success"].all()]
    smallest = ok[0] if ok else None
    return verdict_table([_rule(rows, smallest), _start_range(rows, smallest), _widen(rows)])

"""Preset context_growth: 50K at round 10, 150K at round 30, and a constraint forgotten (source 003)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .claims import claims, judge, verdict_row, verdict_table
from .common import NOTE, cells, fmt_int, frac, outcomes, rate, table, trials

LABELS = {
    "none": "whole history",
    "sliding_window": "last messages that fit 25K; notes restate the window",
    "sliding_window_terse": 'last messages that fit 25K; notes say "last week"',
    "headtail_terse": 'head (system + task) and tail at 25K; notes say "last week"',
}
HEADER = [
    "arm",
    "request at round 10",
    "request at round 30",
    "peak context",
    "task statement in the last request",
    "success (score)",
    "negative mentions counted / true (all brands, all trials)",
    "outcomes",
]


def trial_requests(run_dir: str, trial_id: str) -> list[tuple[int, list[str]]]:
    """(tokens, message refs) of every agent request of one trial, from its transcript."""
    from harness.records import read_transcript

    return [(int(e["tokens"]), list(e["refs"])) for e in read_transcript(run_dir, trial_id, only=("request",))]


def growth_row(g: pd.DataFrame) -> dict[str, str]:
    """Request sizes at rounds 10 and 30, and whether the last request still held the task statement (ref m1)."""
    at10, at30, task_kept, overflow, lost_at = [], [], 0, [], []
    for _, row in g.iterrows():
        requests = trial_requests(row["run_dir"], f"{row['instance_id']}-t{int(row['trial'])}")
        at10 += [requests[9][0]] if len(requests) >= 10 else []
        at30 += [requests[29][0]] if len(requests) >= 30 else []
        task_kept += int(bool(requests) and "m1" in requests[-1][1])
        lost_at += [next((i + 1 for i, (_, refs) in enumerate(requests) if "m1" not in refs), None)]
        if row["outcome"] == "context_overflow":
            overflow.append(f"{requests[-1][0]:,} at round {len(requests)}")
    given = sum(sum((d or {}).get("given", {}).values()) for d in g["grade_detail"])
    expected = sum(sum((d or {}).get("expected", {}).values()) for d in g["grade_detail"] if d)
    return {
        "at10": fmt_int(sum(at10) / len(at10)) if at10 else "-",
        "at30": fmt_int(sum(at30) / len(at30)) if at30 else ("overflow: " + "; ".join(overflow) if overflow else "-"),
        "task_kept": f"{task_kept}/{len(g)}"
        + (f" (gone from round {min(x for x in lost_at if x)})" if any(lost_at) else ""),
        "given": f"{given:,} / {expected:,}" if expected else "-",
    }


def context_growth(results: Path) -> str:
    """Source 003's growth (request size at rounds 10 and 30) and constraint forgetting, per arm."""
    t = trials("context_growth", results)
    rows = []
    for cell in cells(t, list(LABELS)):
        g = t[t["cell"] == cell]
        r = growth_row(g)
        rows.append(
            [
                f"`{cell}` {LABELS.get(cell, '')}",
                r["at10"],
                r["at30"],
                fmt_int(g["peak_context"].mean()),
                r["task_kept"],
                f"{frac(g)} ({g['score'].mean():.2f})",
                r["given"],
                outcomes(g),
            ]
        )
    return table(HEADER, rows) + (
        f"\n\n{NOTE} `brand_report`, 32 feed pages of ~5K tokens, one page a round; window of the scripted model: "
        "131,072 tokens. Source 003: about 50K at round 10 and 150K at round 30 for the simplest agent, then "
        '"context length exceeded"; after 10+ rounds the opening constraints are "forgotten".'
    )


def _growth(g: pd.DataFrame) -> list[tuple]:
    """The unmanaged arm: its request at round 10, and the overflow before round 30."""
    r, found = growth_row(g), claims("context_growth")
    overflowed = bool((g["outcome"] == "context_overflow").all())
    at10 = float(r["at10"].replace(",", "")) if r["at10"] != "-" else float("nan")
    reason10 = (
        "the feed pages are sized for ~5K tokens a round, so the growth rate is the source's by design; "
        "what is measured is that nothing else adds to it"
    )
    reason30 = (
        "the unmanaged request passes the 131,072-token window before round 30 and the trial ends in `context_overflow`"
        if overflowed
        else "the unmanaged history fit the window"
    )
    share = float((g["outcome"] == "context_overflow").mean())
    return [
        verdict_row(found["round10"], f"{r['at10']} at round 10", judge(found["round10"], at10, reason=reason10)),
        verdict_row(
            found["round30_overflow"],
            f"round 30: {r['at30']}",
            judge(found["round30_overflow"], share, reason=reason30),
        ),
    ]


def _forgotten(forgot: pd.DataFrame, kept: pd.DataFrame) -> tuple:
    """The window drops the task statement; headtail keeps it."""
    ours = (
        f"sliding window, terse notes: {frac(forgot)} (score {forgot['score'].mean():.2f}); "
        f"headtail (keeps the task), terse notes: {frac(kept)} (score {kept['score'].mean():.2f})"
    )
    reason = (
        "the window drops the task statement and the agent then counts every date; keeping the head "
        '(the source\'s "controlled system zone") keeps the constraint. The mechanism is a strategy '
        "removing the statement: the reference agent never forgets what it can see"
    )
    claim = claims("context_growth")["constraint_forgotten"]
    return verdict_row(claim, ours, judge(claim, rate(forgot) - rate(kept), reason=reason))


def _restated(restated: pd.DataFrame, forgot: pd.DataFrame) -> tuple:
    """Notes that restate the window: the remedy, as far as it goes."""
    ours = (
        f"sliding window, notes restate the window: {frac(restated)} (score {restated['score'].mean():.2f}) "
        f"against {forgot['score'].mean():.2f} with terse notes"
    )
    reason = (
        "restating the window keeps the date rule, but the brands' nicknames were also stated once, in "
        "the task, and are lost: every constraint has to be restated, not one"
    )
    better = restated["score"].mean() > forgot["score"].mean() and rate(restated) < 1
    claim = claims("context_growth")["restate_remedy"]
    return verdict_row(claim, ours, judge(claim, rate(restated), partly=bool(better), reason=reason))


def context_growth_verdict(results: Path) -> str:
    """Growth, overflow and forgetting against source 003's figures."""
    t = trials("context_growth", results)
    c = {cell: t[t["cell"] == cell] for cell in set(t["cell"])}
    rows = _growth(c["none"]) if "none" in c else []
    forgot, kept, restated = (c.get(k) for k in ("sliding_window_terse", "headtail_terse", "sliding_window"))
    if forgot is not None and kept is not None:
        rows.append(_forgotten(forgot, kept))
    if restated is not None and forgot is not None:
        rows.append(_restated(restated, forgot))
    return verdict_table(rows)

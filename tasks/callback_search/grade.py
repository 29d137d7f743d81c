"""``callback_search`` grading: the target, then the exact set of call sites under src/."""

from __future__ import annotations

from tasks.base import Grade
from tasks.kit.grading import set_scores


def grade_answer(target: dict, sites: list[dict], answer: dict) -> Grade:
    """Right target and exact call-site set for success; 0.4 target + 0.6 call-site F1 for the score
    (call sites count only with the right target)."""
    answer = answer if isinstance(answer, dict) else {}
    target_ok = (
        str(answer.get("file", "")).strip() == target["file"]
        and str(answer.get("function", "")).strip() == target["function"]
    )
    raw = answer.get("call_sites")
    given = set()
    if isinstance(raw, list):
        for site in raw:
            if isinstance(site, dict):
                given.add((str(site.get("file", "")).strip(), str(site.get("function", "")).strip()))
    truth = {(s["file"], s["function"]) for s in sites}
    f1 = set_scores(given, truth, hits=len(given & truth) if target_ok else 0).f1
    score = 0.4 * target_ok + 0.6 * f1
    return Grade(
        target_ok and given == truth,
        round(score, 4),
        {
            "target_ok": target_ok,
            "expected": target,
            "expected_sites": sites,
            "missed": sorted(map(list, truth - given)),
            "wrong": sorted(map(list, given - truth)),
        },
    )


def search_metrics(tool_log: list[dict]) -> dict:
    """``files_read`` (distinct files read) and ``greps``."""
    read = {e["resource"] for e in tool_log if e["name"] == "read_file" and not e["is_error"]}
    return {"files_read": len(read), "greps": sum(1 for e in tool_log if e["name"] == "grep")}

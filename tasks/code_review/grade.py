"""``code_review`` grading: the exact set of buggy functions in scope, the stop-hook check, file coverage."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasks.base import Grade
from tasks.code_review.formats import LISTING_HEADER, LISTING_LINE, VERDICT
from tasks.kit.grading import set_grade
from tasks.kit.messages import texts, tool_texts

if TYPE_CHECKING:
    from tasks.code_review.world import Bug


def grade_findings(bugs: list[Bug], answer: dict) -> Grade:
    """Exact set of (file, function) for success; F1 for the score. Out-of-scope bugs are not in ``bugs``."""
    raw = answer.get("findings") if isinstance(answer, dict) else None
    given: set[tuple[str, str]] = set()
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict) and isinstance(item.get("file"), str) and isinstance(item.get("function"), str):
                given.add((item["file"].strip().lstrip("./"), item["function"].strip()))
    truth = {(b.file, b.function) for b in bugs}
    return set_grade(given, truth, label="::".join)


def missing_reviews(messages: list[dict], out_of_scope: tuple[str, ...]) -> str | None:
    """Stop-hook check (source 000 §7.4): every in-scope file in the visible listing needs a visible review.

    It judges what the agent can show for its work in the request it submitted from,
    like a checker reading the same context would, so after compaction it may send the
    agent back to files it did review (the seed's hook-induced re-reads).
    """
    listed: list[str] = []
    for text in tool_texts(messages):
        if text.startswith(LISTING_HEADER):
            listed = LISTING_LINE.findall(text)
    reviewed = {path for text in texts(messages) for path, _ in VERDICT.findall(text)}
    missing = [path for path in listed if path not in reviewed and not path.startswith(out_of_scope)]
    if not missing:
        return None
    return f"{len(missing)} listed files have no visible review: {', '.join(missing)}"


def file_metrics(tool_log: list[dict], paths: list[str], out_of_scope: tuple[str, ...]) -> dict:
    """File coverage: distinct in-scope files read / in-scope files (sub-agents' reads included).

    With sub-agents (strategy ``isolate``) also ``files_read_summed``: distinct files read per
    context (the main agent and each sub-agent), summed, as source 000 §7.3 reports isolation.
    """
    read = {
        e["resource"] for e in tool_log if e.get("name") == "read_file" and not e.get("is_error") and e.get("resource")
    }
    per_context: dict = {}
    for e in tool_log:
        if e.get("name") == "read_file" and not e.get("is_error") and e.get("resource"):
            per_context.setdefault(e.get("subagent"), set()).add(e["resource"])
    in_scope = {f"file:{p}" for p in paths if not p.startswith(out_of_scope)}
    metrics = {
        "files_read": len(read),
        "files_total": len(paths),
        "files_in_scope": len(in_scope),
        "file_coverage": round(len(read & in_scope) / len(in_scope), 4),
    }
    if any(key is not None for key in per_context):
        # source 000 §7.3 counts isolation's coverage summed over the contexts (48 of 44 there)
        metrics["files_read_summed"] = sum(len(files) for files in per_context.values())
    return metrics

"""Delegation under ``isolate`` (source 002 §2.7.6, source 000 §7.3): the reference agents that split their work."""

from __future__ import annotations


import pytest

from harness.records import read_jsonl, read_transcript
from reference_agent.policies.callback_search import CallbackSearchPolicy
from reference_agent.policies.code_review import ReviewPolicy
from reference_agent.policy_kit import make_call, reply
from strategies.isolate import Isolate
from tasks.callback_search import CallbackSearch
from tasks.code_review import CodeReview
from tasks.people_tracker import PeopleTracker
from tests.family_helpers import run


def _sub_steps(tmp_path, trial_id, seed):
    return [s for s in read_jsonl(tmp_path / f"{trial_id}-{seed}" / "steps.jsonl") if s["kind"] == "subagent"]


def _sub_tool_events(tmp_path, trial_id, seed):
    events = read_transcript(tmp_path / f"{trial_id}-{seed}", trial_id)
    return [e for e in events if e.get("event") == "tool" and e.get("subagent")]


# Most tests here give sub-agents a roomy budget (subagent_budget="1M") to test the delegation logic
# itself; the last tests check sub-agents managed at the trial's budget (isolate's default).


def test_code_review_delegates_file_chunks(tmp_path):
    family = CodeReview(files=20, bugs=5)
    row, instance = run(tmp_path, family, strategy=Isolate(subagent_budget="1M"), budget=8_000, trial_id="iso")
    assert row["outcome"] == "submitted" and row["success"], row["grade_detail"]
    assert row["subagent_runs"] == 3, "20 files in chunks of at most 8: 7 + 7 + 6"
    assert row["reads"] == 1 and row["rereads"] == 0, "the main agent only lists the files"
    assert row["peak_context"] < 3_000, "no file text enters the main context"
    sub = _sub_steps(tmp_path, "iso", 0)
    assert sum(s["prompt_tokens"] for s in sub) == row["subagent_input_tokens"] > 10 * row["input_tokens"]
    assert row["file_coverage"] == 1.0
    assert row["files_read_summed"] > row["files_read"], "sub-agents re-read the helper modules they need"


def test_code_review_subagent_reads_the_helper_of_a_cross_file_bug(tmp_path):
    family = CodeReview(files=20, bugs=5)
    row, instance = run(tmp_path, family, strategy=Isolate(subagent_budget="1M"), budget=8_000, trial_id="iso")
    bug = next(b for b in instance.bugs if b.kind == "wrong_arg_order")
    events = _sub_tool_events(tmp_path, "iso", 0)
    reader = next(e["subagent"] for e in events if e["name"] == "read_file" and e["args"]["path"] == bug.file)
    helpers = {
        e["args"]["path"] for e in events if e["subagent"] == reader and e["args"]["path"].startswith("app/common/")
    }
    assert helpers, "the sub-agent with the arg-order bug read a helper module itself"
    transcript = read_transcript(tmp_path / "iso-0", "iso")
    conclusion = next(
        e["conclusion"] for e in transcript if e.get("event") == "subagent_end" and e["subagent"] == reader
    )
    task = next(e["task"] for e in transcript if e.get("event") == "subagent_start" and e["subagent"] == reader)
    assert any(h not in task for h in helpers), "the helper module belongs to another sub-agent's chunk"
    assert f"{bug.file}::{bug.function} (wrong_arg_order)" in conclusion
    assert row["success"]


def test_code_review_redelegates_a_chunk_whose_report_is_gone():
    instance = CodeReview(files=20, bugs=5, other_teams=0).generate(0)  # every file in scope: 20 = 7 + 7 + 6
    policy = ReviewPolicy()
    order = list(instance.files)
    messages = [
        {"role": "system", "content": instance.system_prompt},
        {"role": "user", "content": instance.user_prompt},
        reply("", dict(make_call("list_files"), id="c1")),
        {"role": "tool", "tool_call_id": "c1", "content": instance.listing()},
    ]
    first = policy.delegate_plan(messages)
    assert first and f"Files to review (7): {', '.join(order[:7])}" in first
    report = (
        f"Sub-agent report: reviewed 7 files: {', '.join(order[7:14])}\n"
        "Bugs found: none\nHelper modules also read: none"
    )
    messages += [
        reply("", dict(make_call("delegate", task="..."), id="c2")),
        {"role": "tool", "tool_call_id": "c2", "content": report},
    ]
    assert f"Files to review (7): {', '.join(order[:7])}" in policy.delegate_plan(messages), (
        "chunk 1's report is not visible"
    )
    failed = messages + [
        reply("", dict(make_call("delegate", task="..."), id="c3")),
        {"role": "tool", "tool_call_id": "c3", "content": "[sub-agent failed: boom]"},
    ]
    assert policy.delegate_plan(failed) is None, "a failed sub-agent ends delegation"


def test_callback_search_delegates_the_whole_search_to_one_subagent(tmp_path):
    family = CallbackSearch(files=40, functions_per_file=8)
    row, instance = run(tmp_path, family, strategy=Isolate(subagent_budget="1M"), budget=8_000, trial_id="iso")
    assert row["outcome"] == "submitted" and row["success"], row["grade_detail"]
    assert row["subagent_runs"] == 1 and row["steps"] == 2, "delegate, then submit the conclusion"
    assert row["reads"] == 0 and row["subagent_reads"] >= 3
    assert row["peak_context"] < 1_500, "the main context gains only the task and the conclusion"
    sub = _sub_steps(tmp_path, "iso", 0)
    assert sum(s["prompt_tokens"] for s in sub) == row["subagent_input_tokens"] > row["input_tokens"]


def test_callback_search_searches_itself_when_the_subagent_fails():
    instance = CallbackSearch(files=40, functions_per_file=8).generate(0)
    policy = CallbackSearchPolicy()
    messages = [
        {"role": "system", "content": instance.system_prompt},
        {"role": "user", "content": instance.user_prompt},
    ]
    assert policy.delegate_plan(messages)
    messages += [
        reply("", dict(make_call("delegate", task="x"), id="c1")),
        {"role": "tool", "tool_call_id": "c1", "content": "[sub-agent stopped after 60 steps without a conclusion]"},
    ]
    assert policy.delegate_plan(messages) is None
    action = policy.act(messages, instance.tools)
    assert action["tool_calls"][0]["function"]["name"] == "list_files"


def test_people_tracker_delegates_one_person_per_subagent(tmp_path):
    family = PeopleTracker()
    row, instance = run(tmp_path, family, strategy=Isolate(subagent_budget="1M"), budget=8_000, trial_id="iso")
    assert row["outcome"] == "submitted" and row["success"], row["grade_detail"]
    assert row["subagent_runs"] == len(instance.names) and row["steps"] == len(instance.names) + 1
    assert row["reads"] == 0 and row["peak_context"] < 3_000
    sub = _sub_steps(tmp_path, "iso", 0)
    assert sum(s["prompt_tokens"] for s in sub) == row["subagent_input_tokens"] > 10 * row["input_tokens"]


@pytest.mark.parametrize(
    "family", [CodeReview(files=20, bugs=5), CallbackSearch(files=40, functions_per_file=8), PeopleTracker()]
)
def test_without_isolate_nothing_is_delegated(tmp_path, family):
    row, _ = run(tmp_path, family, trial_id="none")
    assert row["success"] and row["subagent_runs"] == 0 and row["subagent_input_tokens"] == 0
    assert "files_read_summed" not in row


def test_subagents_run_under_the_trial_budget_by_default(tmp_path):
    """Sub-agents get a fresh headtail at the trial budget: their peaks are recorded and held near it."""
    family = CodeReview(files=20, bugs=5)
    managed, _ = run(tmp_path / "managed", family, strategy=Isolate(), budget=8_000, trial_id="iso")
    roomy, _ = run(tmp_path / "roomy", family, strategy=Isolate(subagent_budget="1M"), budget=8_000, trial_id="iso")
    assert managed["subagent_budget"] == 8_000 and roomy["subagent_budget"] == 1_000_000
    assert roomy["subagent_peak_context"] > 8_000, "an unmanaged chunk of 7 files does not fit 8K"
    assert managed["subagent_peak_context"] < roomy["subagent_peak_context"]
    assert managed["subagent_max_budget_ratio"] <= 1.0 and managed["subagent_over_budget_steps"] == 0
    sub = _sub_steps(tmp_path / "managed", "iso", 0)
    assert max(s["request_tokens"] for s in sub) == managed["subagent_peak_context"]
    assert sum(s["over_budget"] for s in sub) == managed["subagent_over_budget_steps"]
    assert managed["subagent_compactions"] > 0, "the sub-agents' headtail had to cut"
    assert managed["success"] and managed["subagent_runs"] == roomy["subagent_runs"]
    assert managed["subagent_calls"] < 1.5 * roomy["subagent_calls"], "verdicts restated in replies survive the cuts"


def test_a_failed_subagent_ends_invoice_delegation(tmp_path):
    """A sub-agent that cannot finish its chunk is not replaced by another that would fail the same way."""
    from tasks.invoice_audit import InvoiceAudit

    row, _ = run(tmp_path, InvoiceAudit(pages=30), strategy=Isolate(subagent_max_steps=3), budget=8_000, trial_id="iso")
    assert row["subagent_runs"] == 1, "one failure, then the main agent audits the rest itself"
    assert row["outcome"] == "submitted" and row["reads"] > 0


def test_trial_totals_include_every_kind_of_call(tmp_path):
    """total_input_tokens and cost cover the agent, its summarizer, its sub-agents and the stop hook."""
    family = CallbackSearch(files=40, functions_per_file=8)
    row, _ = run(tmp_path, family, strategy=Isolate(), budget=8_000, trial_id="iso")
    parts = ("input_tokens", "summarizer_input_tokens", "subagent_input_tokens", "stop_hook_input_tokens")
    assert row["subagent_input_tokens"] > 10 * row["input_tokens"]
    assert row["total_input_tokens"] == sum(row[p] for p in parts)
    steps = read_jsonl(tmp_path / "iso-0" / "steps.jsonl")
    assert row["total_input_tokens"] == sum(s["prompt_tokens"] for s in steps)
    assert row["total_calls"] == len(steps)

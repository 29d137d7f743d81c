"""Batching hooks of the reader families (invoice_audit, brand_report, code_review) and their sub-agents.

``parallel_calls`` returns only calls whose arguments are known from the visible messages;
``act`` notes every result of a round that holds several; a rate-limited result is issued
again, never taken as done; ``early_answer`` says what it would submit now. The realistic
profile at the calibration size stays within 1.5x of the frontier LLM's steps and input
tokens (../shared/calibration, skipped when absent).
"""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from harness.loop import TrialSettings, run_trial
from harness.models.profiles import REALISTIC, ProfiledPolicy
from harness.models.scripted import ScriptedModel
from harness.records import RunWriter
from strategies.none import NoManagement
from tasks.brand_report import BrandReport
from tasks.code_review import LISTING_LINE, CodeReview
from tasks.invoice_audit import InvoiceAudit
from tasks.policy_kit import RATE_LIMITED, latest_results, make_call, next_page, pending_pages

CALIBRATION = Path(__file__).resolve().parents[2] / "shared" / "calibration"
SMALL = {
    "invoice_audit": lambda: InvoiceAudit(pages=6, invoices_per_page=5, duplicates=2, min_distance=1, max_distance=3),
    "brand_report": lambda: BrandReport(pages=5, posts_per_page=8, weeks=2),
    "code_review": lambda: CodeReview(files=10, bugs=3),
}


def start(instance) -> list[dict]:
    """The first request: system prompt and task."""
    return [{"role": "system", "content": instance.system_prompt}, {"role": "user", "content": instance.user_prompt}]


def args_of(call: dict) -> dict:
    """A call's parsed arguments."""
    return json.loads(call["function"]["arguments"])


def name_of(call: dict) -> str:
    return call["function"]["name"]


def drive(instance, policy, batch: int = 8, limit: int | None = None, max_steps: int = 60):
    """Run ``policy`` on ``instance`` without a strategy, issuing ``act``'s call plus ``parallel_calls``.

    ``batch``: most calls per turn (the policy's own call first); ``limit``: the task accepts
    that many calls per turn and answers the rest ``ERROR: rate limited``. Returns the final
    answer, the assistant messages and the executed and rejected calls as (name, args) pairs.
    """
    messages, ids = start(instance), itertools.count(1)
    replies, executed, rejected = [], [], []
    for _ in range(max_steps):
        message = dict(policy.act(messages, instance.tools))
        calls = list(message.get("tool_calls") or [])
        if len(calls) == 1 and name_of(calls[0]) not in ("submit", "report"):
            calls += policy.parallel_calls(messages, instance.tools, calls[0])[: batch - 1]
        calls = [{**c, "id": f"call_{next(ids)}"} for c in calls]
        message["tool_calls"] = calls
        replies.append(message)
        messages.append(message)
        for index, call in enumerate(calls):
            if name_of(call) in ("submit", "report"):
                return args_of(call), replies, executed, rejected
            if limit is not None and index >= limit:
                content = f"{RATE_LIMITED}: at most {limit} calls per turn; this call was not executed"
                rejected.append((name_of(call), args_of(call)))
            else:
                content = instance.call(name_of(call), args_of(call)).content
                executed.append((name_of(call), args_of(call)))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    raise AssertionError("no answer within max_steps")


# --- parallel_calls: only calls whose arguments are known now -------------------------------------------------

def test_invoice_parallel_calls_are_the_other_pages_of_the_prompts_page_count():
    instance = InvoiceAudit(pages=6, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
    policy = instance.reference_policy()
    messages = start(instance)
    first = policy.act(messages, instance.tools)["tool_calls"][0]
    assert args_of(first) == {"page": 1}
    assert [args_of(c)["page"] for c in policy.parallel_calls(messages, instance.tools, first)] == [2, 3, 4, 5, 6]
    unknown = [messages[0], {"role": "user", "content": "Audit the invoices with get_invoice_page."}]
    assert policy.parallel_calls(unknown, instance.tools, make_call("get_invoice_page", page=1)) == []


def test_brand_parallel_calls_are_the_other_feed_pages():
    instance = BrandReport(pages=5, posts_per_page=8, weeks=2).generate(0)
    policy = instance.reference_policy()
    messages = start(instance)
    first = policy.act(messages, instance.tools)["tool_calls"][0]
    calls = policy.parallel_calls(messages, instance.tools, first)
    assert {name_of(c) for c in calls} == {"get_posts"} and [args_of(c)["page"] for c in calls] == [2, 3, 4, 5]


def test_code_review_parallel_calls_wait_for_the_listing_then_follow_it():
    instance = CodeReview(files=10, bugs=3).generate(0)
    policy = instance.reference_policy()
    messages = start(instance)
    first = policy.act(messages, instance.tools)["tool_calls"][0]
    assert name_of(first) == "list_files" and policy.parallel_calls(messages, instance.tools, first) == []
    messages += [{"role": "assistant", "content": "", "tool_calls": [{**first, "id": "c1"}]},
                 {"role": "tool", "tool_call_id": "c1", "content": instance.call("list_files", {}).content}]
    first = policy.act(messages, instance.tools)["tool_calls"][0]
    paths = [args_of(c)["path"] for c in policy.parallel_calls(messages, instance.tools, first)]
    order = [p for p in LISTING_LINE.findall(messages[-1]["content"]) if not p.startswith(instance.out_of_scope)]
    assert args_of(first)["path"] == order[0] and paths == order[1:], "the listing's files in the task's scope"


def test_code_review_parallel_calls_add_a_helper_module_a_visible_file_needs():
    instance = CodeReview(files=10, bugs=3).generate(0)
    policy = instance.reference_policy()
    # a request where a domain file calling a helper is visible but the helper module is not
    listing = instance.call("list_files", {}).content
    caller = next(p for p, text in instance.files.items()
                  if not p.startswith("app/common/") and "from app.common." in text
                  and policy._judge(p, {p: text})[1] is not None)
    needed = policy._judge(caller, {caller: instance.files[caller]})[1]
    messages = start(instance) + [
        {"role": "assistant", "content": "", "tool_calls": [{**make_call("list_files"), "id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": listing},
        {"role": "assistant", "content": "", "tool_calls": [{**make_call("read_file", path=caller), "id": "c2"}]},
        {"role": "tool", "tool_call_id": "c2", "content": instance.call("read_file", {"path": caller}).content},
    ]
    first = policy.act(messages, instance.tools)["tool_calls"][0]
    paths = [args_of(first)["path"]] + [args_of(c)["path"] for c in policy.parallel_calls(messages, instance.tools, first)]
    assert needed in paths and caller not in paths  # the helper is known to be needed; the caller is in view


# --- a round with several results ----------------------------------------------------------------------------

@pytest.mark.parametrize("family", sorted(SMALL))
def test_batched_run_succeeds_in_fewer_steps_and_notes_every_result(family):
    instance = SMALL[family]().generate(0)
    one, one_replies, one_exec, _ = drive(instance, instance.reference_policy(), batch=1)
    many, replies, executed, _ = drive(instance, instance.reference_policy(), batch=8)
    assert instance.grade(one).success and instance.grade(many).success
    assert len(replies) < len(one_replies)
    assert len(set(map(json.dumps, (a for _, a in executed)))) == len(executed)  # nothing read twice
    batched = next(r for r in replies if len(r["tool_calls"]) > 1)
    after = replies[replies.index(batched) + 1]["content"]
    if family == "invoice_audit":
        assert after.count("Ledger p") == len(batched["tool_calls"])
    elif family == "brand_report":
        assert after.count("Tally p") == len(batched["tool_calls"])
    else:
        assert after.count("Reviewed ") >= len(batched["tool_calls"]) - 1  # a helper module may wait for its callers


def test_act_notes_every_result_of_a_round_and_reads_its_notes_back():
    instance = InvoiceAudit(pages=6, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
    policy = instance.reference_policy()
    calls = [{**make_call("get_invoice_page", page=p), "id": f"c{p}"} for p in (3, 1, 2)]
    messages = start(instance) + [{"role": "assistant", "content": "Duplicates so far: none", "tool_calls": calls}]
    messages += [{"role": "tool", "tool_call_id": c["id"], "content": instance.call(name_of(c), args_of(c)).content}
                 for c in calls]
    assert len(latest_results(messages)) == 3
    message = policy.act(messages, instance.tools)
    assert [line.split(":")[0] for line in message["content"].splitlines()[:3]] == ["Ledger p3", "Ledger p1", "Ledger p2"]
    assert args_of(message["tool_calls"][0]) == {"page": 4}
    # the page texts are cut; the ledgers written in the reply carry the knowledge forward
    cut = start(instance) + [{**message, "tool_calls": [{**message["tool_calls"][0], "id": "c4"}]},
                             {"role": "tool", "tool_call_id": "c4", "content": instance.call("get_invoice_page", {"page": 4}).content}]
    later = policy.act(cut, instance.tools)
    assert args_of(later["tool_calls"][0]) == {"page": 5}
    assert [args_of(c)["page"] for c in policy.parallel_calls(cut, instance.tools, later["tool_calls"][0])] == [6]


# --- rate limits ---------------------------------------------------------------------------------------------

def test_pending_pages_agrees_with_next_page_and_retries_rate_limited_pages():
    calls = [{**make_call("get", page=p), "id": f"c{p}"} for p in (1, 2, 3, 4)]
    results = {1: "page 1", 2: "page 2", 3: f"{RATE_LIMITED}: try later", 4: f"{RATE_LIMITED}: try later"}
    messages = [{"role": "assistant", "content": "", "tool_calls": calls}]
    messages += [{"role": "tool", "tool_call_id": f"c{p}", "content": r} for p, r in results.items()]
    assert pending_pages(messages, "get", {1, 2}, 6) == [("retry", 3), ("retry", 4), ("read", 5), ("read", 6)]
    ok = [m if m.get("role") != "tool" else {**m, "content": "ok"} for m in messages]
    for covered, total in [({1, 2, 3, 4}, 6), ({1, 3}, 6), ({1, 2, 3, 4}, 4), ({1}, None), (set(), None)]:
        plan = pending_pages(ok, "get", covered, total)
        assert (plan[0] if plan else None) == next_page(ok, "get", covered, total)


@pytest.mark.parametrize("family", sorted(SMALL))
def test_rate_limited_calls_are_issued_again_and_never_counted_as_done(family):
    instance = SMALL[family]().generate(0)
    answer, replies, executed, rejected = drive(instance, instance.reference_policy(), batch=5, limit=2)
    assert rejected and instance.grade(answer).success
    for call in rejected:
        assert call in executed  # every rejected call was issued again and done
    limited_reply = next(r for r in replies if "Rate limited, not done" in r["content"])
    assert "issuing again" in limited_reply["content"]
    assert not any("no longer in view" in r["content"] for r in replies)  # not mistaken for a lost page


def test_sub_agents_batch_their_range_and_retry_rate_limited_calls():
    instance = InvoiceAudit(pages=6, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
    task = instance.reference_policy().delegate_plan(start(instance) + [])
    assert task and "Audit pages 1-6 of 6" in task
    sub = instance.reference_policy().subagent_policy(task)
    sub_start = [{"role": "system", "content": "sub-agent"}, {"role": "user", "content": task}]
    first = sub.act(sub_start, instance.tools)["tool_calls"][0]
    assert [args_of(c)["page"] for c in sub.parallel_calls(sub_start, instance.tools, first)] == [2, 3, 4, 5, 6]
    assert sub.early_answer(sub_start) is None

    review = CodeReview(files=10, bugs=3).generate(0)
    listing = [{"role": "assistant", "content": "", "tool_calls": [{**make_call("list_files"), "id": "c1"}]},
               {"role": "tool", "tool_call_id": "c1", "content": review.call("list_files", {}).content}]
    review_task = review.reference_policy().delegate_plan(start(review) + listing)
    sub = review.reference_policy().subagent_policy(review_task)
    sub_start = [{"role": "system", "content": "sub-agent"}, {"role": "user", "content": review_task}]
    first = sub.act(sub_start, review.tools)["tool_calls"][0]
    files = review_task.split("): ", 1)[1].split("\n")[0].split(", ")
    assert [args_of(first)["path"]] + [args_of(c)["path"] for c in sub.parallel_calls(sub_start, review.tools, first)] == files
    assert sub.early_answer(sub_start) is None


@pytest.mark.parametrize("factory", ["invoice", "review"])
def test_sub_agent_reissues_rate_limited_reads(factory):
    if factory == "invoice":
        instance = InvoiceAudit(pages=6, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
        task = instance.reference_policy().delegate_plan(start(instance))
    else:
        instance = CodeReview(files=10, bugs=3).generate(0)
        listing = [{"role": "assistant", "content": "", "tool_calls": [{**make_call("list_files"), "id": "c1"}]},
                   {"role": "tool", "tool_call_id": "c1", "content": instance.call("list_files", {}).content}]
        task = instance.reference_policy().delegate_plan(start(instance) + listing)
    sub = instance.reference_policy().subagent_policy(task)

    class SubInstance:  # the sub-agent's context: its task as the first user message
        tools = instance.tools
        system_prompt, user_prompt, call = "sub-agent", task, instance.call

    report, _, executed, rejected = drive(SubInstance, sub, batch=6, limit=2)
    assert rejected and all(call in executed for call in rejected)
    assert report["conclusion"].startswith("Sub-agent report")


# --- early answers -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("family", sorted(SMALL))
def test_early_answer_is_none_before_any_result_then_what_is_visible(family):
    instance = SMALL[family]().generate(0)
    policy = instance.reference_policy()
    assert policy.early_answer(start(instance)) is None
    answer, replies, _, _ = drive(instance, policy, batch=8)
    assert instance.grade(answer).success
    # from the notes of its replies alone (every tool result cut) it can still say what it has
    notes_only = start(instance) + [{"role": "assistant", "content": r["content"]} for r in replies]
    early = policy.early_answer(notes_only)
    assert early is not None and set(early) == set(instance.answer_schema["required"])


# --- the realistic profile against the calibration LLM ---------------------------------------------------------

def _realistic_row(tmp_path, instance, trial: int = 0) -> dict:
    writer = RunWriter(tmp_path)
    settings = TrialSettings(budget=1_000_000, max_steps=40, strategy_name="none", strategy_params={},
                             model_name="scripted")
    row = run_trial(trial_id=f"t{trial}", trial_index=trial, instance=instance, strategy=NoManagement(),
                    model=ScriptedModel(context_window=65_536, profile="realistic"), summarizer=None,
                    settings=settings, writer=writer)
    writer.close()
    return row


def test_realistic_profile_matches_the_calibration_llm_on_invoice_audit(tmp_path):
    trials = CALIBRATION / "invoice_audit_none" / "trials.jsonl"
    if not trials.exists():
        pytest.skip("no calibration trajectories beside the clone (../shared/calibration)")
    llm = json.loads(trials.read_text(encoding="utf-8").splitlines()[0])
    instance = InvoiceAudit(pages=4, invoices_per_page=5, duplicates=2, min_distance=1, max_distance=3).generate(0)
    row = _realistic_row(tmp_path, instance)
    assert row["success"] == llm["success"]
    assert row["steps"] <= 1.5 * llm["steps"]
    assert row["input_tokens"] <= 1.5 * llm["input_tokens"]


def test_realistic_profile_batches_through_the_wrapper():
    instance = InvoiceAudit(pages=6, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
    wrapped = ProfiledPolicy(instance.reference_policy(), REALISTIC, seed=0, trial=0)
    message = wrapped.act(start(instance), instance.tools)
    pages = sorted(args_of(c)["page"] for c in message["tool_calls"])
    assert len(pages) >= 4 and pages == list(range(1, len(pages) + 1))


def test_code_review_reads_one_file_per_turn_once_its_listing_was_cut():
    instance = CodeReview(files=10, bugs=3).generate(0)
    policy = instance.reference_policy()
    listing = instance.call("list_files", {}).content
    relist = policy.act(start(instance), instance.tools)  # "The file listing is not in view; listing ..."
    fresh = start(instance) + [{**relist, "tool_calls": [{**relist["tool_calls"][0], "id": "c1"}]},
                               {"role": "tool", "tool_call_id": "c1", "content": listing}]
    first = policy.act(fresh, instance.tools)["tool_calls"][0]
    assert policy.parallel_calls(fresh, instance.tools, first)  # the first listing: batch the next files
    cut = start(instance) + [{"role": "user", "content": "[context note] 3 earlier rounds were cut."}] + fresh[2:]
    assert policy.parallel_calls(cut, instance.tools, first) == []  # listed again after a cut: one read per turn

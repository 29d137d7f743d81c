"""Batching hooks of the reader families (invoice_audit, brand_report, code_review) and their sub-agents.

``parallel_calls`` returns only calls whose arguments are known from the visible messages
(for the cursor-paginated families, invoice_audit and brand_report, only pages whose cursor
is in view); ``act`` notes every result of a round that holds several; a rate-limited result
is issued again, never taken as done; ``early_answer`` says what it would submit now.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from harness.trial import TrialSettings, run_trial
from harness.records import RunWriter
from reference_agent.policies import reference_policy
from reference_agent.policy_kit import latest_results, make_call, next_page, pending_pages
from reference_agent.profiles import REALISTIC, ProfiledPolicy
from reference_agent.scripted import ScriptedModel
from strategies.none import NoManagement
from tasks.base import RATE_LIMITED
from tasks.brand_report import BrandReport
from tasks.code_review import CodeReview
from tasks.invoice_audit import InvoiceAudit
from tasks.kit.cursors import next_cursor

CALIBRATION = Path(__file__).resolve().parents[2] / "shared" / "calibration"
SMALL = {
    "invoice_audit": lambda: InvoiceAudit(pages=6, invoices_per_page=5, duplicates=2, min_distance=1, max_distance=3),
    "brand_report": lambda: BrandReport(pages=5, posts_per_page=8, weeks=2),
    "code_review": lambda: CodeReview(files=10, bugs=3),
}
CURSOR_READERS = {"invoice_audit": "get_invoice_page", "brand_report": "get_posts"}


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


def _cursor_of(page_text: str) -> str:
    return next_cursor(page_text)


def _round(instance, tool: str, calls: list[tuple[str, str | None]], first_id: int = 1) -> list[dict]:
    """One assistant turn calling ``tool`` with each cursor, and its results (``None``: the real page)."""
    ids = [f"c{first_id + n}" for n in range(len(calls))]
    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{**make_call(tool, cursor=c), "id": i} for (c, _), i in zip(calls, ids, strict=False)],
    }
    results = [
        {
            "role": "tool",
            "tool_call_id": i,
            "content": r if r is not None else instance.call(tool, {"cursor": c}).content,
        }
        for (c, r), i in zip(calls, ids, strict=False)
    ]
    return [message] + results


@pytest.mark.parametrize("family", sorted(CURSOR_READERS))
def test_cursor_readers_offer_only_pages_whose_cursor_is_in_view(family):
    """A batching agent cannot fetch a page before the page before it named its cursor: one read per turn,
    plus the pages it must read again (their cursors are in its own visible calls)."""
    instance, tool = SMALL[family]().generate(0), CURSOR_READERS[family]
    policy = reference_policy(instance)
    messages = start(instance)
    first = policy.act(messages, instance.tools)["tool_calls"][0]
    assert (name_of(first), args_of(first)) == (tool, {"cursor": ""})
    assert policy.parallel_calls(messages, instance.tools, first) == []
    page1 = instance.call(tool, {"cursor": ""}).content
    page2 = instance.call(tool, {"cursor": _cursor_of(page1)}).content
    read = messages + _round(instance, tool, [("", None)]) + _round(instance, tool, [(_cursor_of(page1), None)], 2)
    first = policy.act(read, instance.tools)["tool_calls"][0]
    assert args_of(first) == {"cursor": _cursor_of(page2)} and policy.parallel_calls(read, instance.tools, first) == []
    # page 2's result is cut (its call and page 1's footer still name its cursor): re-read it with page 3
    lost = (
        messages + _round(instance, tool, [("", None)]) + _round(instance, tool, [(_cursor_of(page1), "[cleared]")], 2)
    )
    first = policy.act(lost, instance.tools)["tool_calls"][0]
    assert args_of(first) == {"cursor": _cursor_of(page1)}
    assert policy.parallel_calls(lost, instance.tools, first) == []  # page 3's cursor was on the lost page


@pytest.mark.parametrize("family", sorted(CURSOR_READERS))
def test_a_lost_cursor_is_found_by_walking_from_the_first_page(family):
    """Notes say pages 1-2 were done but no cursor is in view: the agent re-reads page 1, then page 2, to
    find page 3's cursor (the honest cost of losing it), never guessing one."""
    instance, tool = SMALL[family]().generate(0), CURSOR_READERS[family]
    policy = reference_policy(instance)
    _, replies, _, _ = drive(instance, reference_policy(instance), batch=8)
    notes = [r["content"] for r in replies[1:3]]  # the notes written on pages 1 and 2
    messages = start(instance) + [
        {"role": "assistant", "content": "\n".join(line for line in note.splitlines() if "next_cursor" not in line)}
        for note in notes
    ]
    first = policy.act(messages, instance.tools)
    assert args_of(first["tool_calls"][0]) == {"cursor": ""} and "no longer in view" in first["content"]
    page1 = instance.call(tool, {"cursor": ""}).content
    walked = messages + _round(instance, tool, [("", None)])
    assert args_of(policy.act(walked, instance.tools)["tool_calls"][0]) == {"cursor": _cursor_of(page1)}


def test_code_review_searches_first_then_reads_the_candidates_the_searches_name():
    """The first turn lists the files and starts the searches (batched up to the stated limit); the reads come
    from the searches' matching lines, and the helper modules are read before their calls are searched."""
    from reference_agent.policies.code_review_ledger import HELPER_SEARCH, SEARCHES, review_state

    instance = CodeReview(files=10, bugs=3).generate(0)
    policy = reference_policy(instance)
    messages = start(instance)
    first = policy.act(messages, instance.tools)["tool_calls"][0]
    batch = [first, *policy.parallel_calls(messages, instance.tools, first)]
    assert name_of(batch[0]) == "list_files" and {name_of(c) for c in batch[1:]} == {"grep"}
    assert [args_of(c)["pattern"] for c in batch[1:]] == list(SEARCHES.values())[: len(batch) - 1]
    for step in range(12):
        calls = [{**c, "id": f"c{step}-{i}"} for i, c in enumerate(batch[:4])]
        messages = messages + [{"role": "assistant", "content": "", "tool_calls": calls}]
        messages += [
            {"role": "tool", "tool_call_id": c["id"], "content": instance.call(name_of(c), args_of(c)).content}
            for c in calls
        ]
        state = review_state(messages)
        reads = {args_of(c)["path"] for c in calls if name_of(c) == "read_file"}
        assert reads <= set(state.reviewed) | set(state.modules or []), "only candidates and helper modules are read"
        if HELPER_SEARCH in state.searched:
            assert all(any(m == module for _, module in state.helpers.values()) for m in state.modules)
        reply = policy.act(messages, instance.tools)
        if name_of(reply["tool_calls"][0]) == "submit":
            assert instance.grade(args_of(reply["tool_calls"][0])).success
            break
        batch = [reply["tool_calls"][0], *policy.parallel_calls(messages, instance.tools, reply["tool_calls"][0])]
    else:
        raise AssertionError("the review did not submit")


# --- a round with several results ----------------------------------------------------------------------------


@pytest.mark.parametrize("family", sorted(CURSOR_READERS))
def test_batched_cursor_run_is_one_round_per_page(family):
    instance = SMALL[family]().generate(0)
    one, one_replies, one_exec, _ = drive(instance, reference_policy(instance), batch=1)
    many, replies, executed, _ = drive(instance, reference_policy(instance), batch=1000)
    assert instance.grade(one).success and instance.grade(many).success
    assert len(replies) == len(one_replies) == instance.pages + 1 and executed == one_exec


def test_batched_run_succeeds_in_fewer_steps_and_notes_every_result():
    family = "code_review"
    instance = SMALL[family]().generate(0)
    one, one_replies, one_exec, _ = drive(instance, reference_policy(instance), batch=1)
    many, replies, executed, _ = drive(instance, reference_policy(instance), batch=8)
    assert instance.grade(one).success and instance.grade(many).success
    assert len(replies) < len(one_replies)
    assert len(set(map(json.dumps, (a for _, a in executed)))) == len(executed)  # nothing read twice
    batched = next(r for r in replies if sum(name_of(c) == "read_file" for c in r["tool_calls"]) > 1)
    after = replies[replies.index(batched) + 1]["content"]
    reads = [args_of(c)["path"] for c in batched["tool_calls"] if name_of(c) == "read_file"]
    assert all(f"Reviewed {p}: " in after or "Helper: " in after for p in reads)  # each read is in the next ledger


def test_act_notes_every_result_of_a_round_and_reads_its_notes_back():
    instance = InvoiceAudit(pages=6, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
    policy = reference_policy(instance)
    cursors = [instance.listing.cursor_for(p) for p in (3, 1, 2)]
    calls = [{**make_call("get_invoice_page", cursor=c), "id": f"c{n}"} for n, c in enumerate(cursors)]
    messages = start(instance) + [{"role": "assistant", "content": "Duplicates so far: none", "tool_calls": calls}]
    messages += [
        {"role": "tool", "tool_call_id": c["id"], "content": instance.call(name_of(c), args_of(c)).content}
        for c in calls
    ]
    assert len(latest_results(messages)) == 3
    message = policy.act(messages, instance.tools)
    shown = [instance.call("get_invoice_page", {"cursor": c}).content for c in cursors]
    ids = {i for text in shown for i in re.findall(r"Invoice (INV-\d{4}-\d{5})", text)}
    assert ids and all(f"#{i}" in message["content"] for i in ids), (
        "the ledger's index holds every invoice of the round"
    )
    assert "pages reviewed: 1-3 of 6" in message["content"]
    assert args_of(message["tool_calls"][0]) == {"cursor": instance.listing.cursor_for(4)}
    # the page texts are cut; the ledgers and the copied next_cursor lines carry the knowledge forward
    cut = start(instance) + [
        {**message, "tool_calls": [{**message["tool_calls"][0], "id": "c4"}]},
        {
            "role": "tool",
            "tool_call_id": "c4",
            "content": instance.call("get_invoice_page", {"cursor": instance.listing.cursor_for(4)}).content,
        },
    ]
    later = policy.act(cut, instance.tools)
    assert args_of(later["tool_calls"][0]) == {"cursor": instance.listing.cursor_for(5)}
    assert policy.parallel_calls(cut, instance.tools, later["tool_calls"][0]) == []


@pytest.mark.parametrize("family", sorted(CURSOR_READERS))
def test_cursor_readers_issue_a_rate_limited_page_again(family):
    instance, tool = SMALL[family]().generate(0), CURSOR_READERS[family]
    policy = reference_policy(instance)
    page1 = instance.call(tool, {"cursor": ""}).content
    page2 = instance.call(tool, {"cursor": _cursor_of(page1)}).content
    limited = f"{RATE_LIMITED}: at most 1 tool calls per turn; this call was not executed. Retry it in a later turn."
    messages = (
        start(instance)
        + _round(instance, tool, [("", None)])
        + _round(instance, tool, [(_cursor_of(page1), "[cleared]")], 2)
        + _round(instance, tool, [(_cursor_of(page1), None), (_cursor_of(page2), limited)], 3)
    )
    message = policy.act(messages, instance.tools)
    assert (
        "Rate limited, not done; issuing again" in message["content"] and "no longer in view" not in message["content"]
    )
    assert args_of(message["tool_calls"][0]) == {"cursor": _cursor_of(page2)}


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


@pytest.mark.parametrize("family", ["code_review"])  # the cursor readers never batch more than one new page
def test_rate_limited_calls_are_issued_again_and_never_counted_as_done(family):
    instance = SMALL[family]().generate(0)
    answer, replies, executed, rejected = drive(instance, reference_policy(instance), batch=5, limit=2)
    assert rejected and instance.grade(answer).success
    for call in rejected:
        assert call in executed  # every rejected call was issued again and done
    assert not any("no longer in view" in r["content"] for r in replies)  # not mistaken for a lost page


def test_sub_agents_batch_their_range_and_retry_rate_limited_calls():
    instance = InvoiceAudit(pages=6, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
    task = reference_policy(instance).delegate_plan(start(instance) + [])
    assert (
        task and 'Audit pages 1-10 of ? of the invoice history with get_invoice_page, starting with cursor ""' in task
    )
    sub = reference_policy(instance).subagent_policy(task)
    sub_start = [{"role": "system", "content": "sub-agent"}, {"role": "user", "content": task}]
    first = sub.act(sub_start, instance.tools)["tool_calls"][0]
    assert args_of(first) == {"cursor": ""} and sub.parallel_calls(sub_start, instance.tools, first) == []
    assert sub.early_answer(sub_start) is None

    review = CodeReview(files=10, bugs=3).generate(0)
    listing = [
        {"role": "assistant", "content": "", "tool_calls": [{**make_call("list_files"), "id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": review.call("list_files", {}).content},
    ]
    review_task = reference_policy(review).delegate_plan(start(review) + listing)
    sub = reference_policy(review).subagent_policy(review_task)
    sub_start = [{"role": "system", "content": "sub-agent"}, {"role": "user", "content": review_task}]
    first = sub.act(sub_start, review.tools)["tool_calls"][0]
    files = review_task.split("): ", 1)[1].split("\n")[0].split(", ")
    assert [args_of(first)["path"]] + [
        args_of(c)["path"] for c in sub.parallel_calls(sub_start, review.tools, first)
    ] == files
    assert sub.early_answer(sub_start) is None


def test_invoice_sub_agent_reads_its_range_by_cursor_and_reports_where_to_go_on():
    instance = InvoiceAudit(pages=12, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
    task = reference_policy(instance).delegate_plan(start(instance))
    sub = reference_policy(instance).subagent_policy(task)

    class SubInstance:  # the sub-agent's context: its task as the first user message
        tools = instance.tools
        system_prompt, user_prompt, call = "sub-agent", task, instance.call

    report, replies, executed, rejected = drive(SubInstance, sub, batch=6, limit=1)
    assert not rejected and len(executed) == 10
    assert report["conclusion"].startswith("Sub-agent report: pages reviewed: 1-10 of 12")
    assert report["conclusion"].endswith(f"next_cursor: {instance.listing.cursor_for(11)} (page 11 of 12)")


@pytest.mark.parametrize("factory", ["review"])
def test_sub_agent_reissues_rate_limited_reads(factory):
    if factory == "invoice":
        instance = InvoiceAudit(pages=6, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
        task = reference_policy(instance).delegate_plan(start(instance))
    else:
        instance = CodeReview(files=10, bugs=3).generate(0)
        listing = [
            {"role": "assistant", "content": "", "tool_calls": [{**make_call("list_files"), "id": "c1"}]},
            {"role": "tool", "tool_call_id": "c1", "content": instance.call("list_files", {}).content},
        ]
        task = reference_policy(instance).delegate_plan(start(instance) + listing)
    sub = reference_policy(instance).subagent_policy(task)

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
    policy = reference_policy(instance)
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
    settings = TrialSettings(
        budget=1_000_000, max_steps=40, strategy_name="none", strategy_params={}, model_name="scripted"
    )
    row = run_trial(
        trial_id=f"t{trial}",
        trial_index=trial,
        instance=instance,
        strategy=NoManagement(),
        model=ScriptedModel(context_window=65_536, profile="realistic"),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    return row


def test_realistic_profile_on_the_calibration_size_of_invoice_audit(tmp_path):
    """The calibration LLM read the 4 numbered pages in one turn (2 steps). Issue 13 replaced page numbers by
    cursors, so no agent can batch them any more: the realistic agent needs a round per page, as the LLM would
    now, and succeeds like it."""
    trials = CALIBRATION / "invoice_audit_none" / "trials.jsonl"
    if not trials.exists():
        pytest.skip("no calibration trajectories beside the clone (../shared/calibration)")
    llm = json.loads(trials.read_text(encoding="utf-8").splitlines()[0])
    instance = InvoiceAudit(pages=4, invoices_per_page=5, duplicates=2, min_distance=1, max_distance=3).generate(0)
    row = _realistic_row(tmp_path, instance)
    assert row["success"] == llm["success"]
    assert row["steps"] == instance.pages + 1 > llm["steps"]


def test_realistic_profile_batches_through_the_wrapper_only_what_it_can_name():
    instance = InvoiceAudit(pages=6, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
    wrapped = ProfiledPolicy(reference_policy(instance), REALISTIC, seed=0, trial=0)
    message = wrapped.act(start(instance), instance.tools)
    assert [args_of(c) for c in message["tool_calls"]] == [{"cursor": ""}]

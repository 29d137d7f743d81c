"""Batched turns of ``call_budget`` and ``failure_memory`` (profile ``realistic``).

``parallel_calls`` offers only calls whose arguments are known from the visible messages and
that do not depend on an unseen result; ``act`` reads a round of several results; a result
``ERROR: rate limited`` is a call not made (re-issued, neither a failure nor a placed call);
and at the calibration sizes the realistic reference agent lands within 1.5x of the frontier
LLM's steps and input tokens (shared/calibration), succeeding where it did.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.conversation import render_history
from harness.trial import TrialSettings, run_trial
from harness.records import RunWriter
from reference_agent.policies import reference_policy
from reference_agent.policies.call_budget import CallBudgetPolicy
from reference_agent.policies.failure_memory import FailureMemoryPolicy
from reference_agent.policy_kit import is_rate_limited, make_call
from reference_agent.profiles import ProfiledPolicy, make_profile
from reference_agent.scripted import ScriptedModel
from strategies.headtail import HeadTail
from strategies.none import NoManagement
from tasks.base import RATE_LIMITED
from tasks.call_budget import MAX_CALLS, CallBudget
from tasks.failure_memory import FailureMemory

CB_SMOKE = dict(merchants=4, noise=2)
FM_SMOKE = dict(tickets=3, ticket_messages=2, rows=12, page_rows=6)
CALIBRATION = Path(__file__).resolve().parents[2] / "shared" / "calibration"
# every call it knows, in its own order: no noise, so the tests see the policy's batches
STEADY = make_profile(
    "realistic",
    shuffle=False,
    early_submit=0.0,
    batch_min_share=1.0,
    attention={"base": 0.0, "rot": 0.0, "middle": 0.0},
)
LIMIT_TEXT = f"{RATE_LIMITED}: at most 2 calls per turn; this call was not made, call again."


def start(instance) -> list[dict]:
    """The first request of a trial."""
    return [{"role": "system", "content": instance.system_prompt}, {"role": "user", "content": instance.user_prompt}]


def play(messages: list[dict], instance, message: dict, turn: int, limit: int | None = None) -> list[dict]:
    """``messages`` plus the assistant ``message`` and its results (calls beyond ``limit`` rate limited)."""
    calls = [{**call, "id": f"c{turn}-{i}"} for i, call in enumerate(message.get("tool_calls") or [])]
    out = messages + [{"role": "assistant", "content": message.get("content", ""), "tool_calls": calls}]
    for index, call in enumerate(calls):
        if limit is not None and index >= limit:
            content = LIMIT_TEXT
        else:
            content = instance.call(call["function"]["name"], json.loads(call["function"]["arguments"])).content
        out.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    return out


def batch(messages: list[dict]) -> dict:
    """The family policy's reply with its call plus every parallel call it knows (no profile noise)."""
    policy = ProfiledPolicy(_policy_for(messages), STEADY)
    return policy.act(messages, [])


def _policy_for(messages: list[dict]):
    return CallBudgetPolicy() if "merchants" in messages[1]["content"] else FailureMemoryPolicy()


def names(message: dict) -> list[tuple[str, dict]]:
    """(name, arguments) of each call of ``message``."""
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls") or []]


def drive(instance, policy, limit: int | None = None, max_steps: int = 40) -> tuple[dict, int]:
    """Run ``policy`` on ``instance`` until it submits; return (submitted answer, steps)."""
    messages = start(instance)
    for step in range(1, max_steps + 1):
        message = policy.act(messages, instance.tools)
        submitted = [args for name, args in names(message) if name == "submit"]
        if submitted:
            return submitted[0], step
        messages = play(messages, instance, message, step, limit)
    raise AssertionError("no submit")


# -- call_budget -------------------------------------------------------------------------------


def test_call_budget_first_round_calls_every_merchant_once():
    instance = CallBudget(**CB_SMOKE).generate(0)
    messages = start(instance)
    first = CallBudgetPolicy().act(messages, instance.tools)["tool_calls"][0]
    more = CallBudgetPolicy().parallel_calls(messages, instance.tools, first)
    merchants = [args["merchant"] for _, args in names({"tool_calls": [first] + more})]
    assert merchants == ["M01", "M02", "M03", "M04"]
    assert all(args["offer"] == 15 for _, args in names({"tool_calls": more}))
    assert CallBudgetPolicy().parallel_calls(messages, instance.tools, make_call("submit", accepted=[])) == []


def test_call_budget_multi_result_round_is_noted_and_counted():
    instance = CallBudget(**CB_SMOKE).generate(0)
    policy = CallBudgetPolicy()
    messages = play(start(instance), instance, batch(start(instance)), 1)
    reply = policy.act(messages, instance.tools)
    for m in ("M01", "M02", "M03", "M04"):
        assert f"Call note: {m} call #1 of {MAX_CALLS}" in reply["content"]
    assert "M01, M02, M03, M04 have each used 1 of 3 calls" in reply["content"]
    # round 2; then the first round is cut (headtail): only round 2's turn, its notes and results remain
    second = batch(messages)
    messages = play(messages, instance, second, 2)
    cut = start(instance) + messages[-(1 + len(second["tool_calls"])) :]
    _, state, counts = policy._state(cut)
    assert all(counts[m] == 2 for m in ("M01", "M02", "M03", "M04")), counts
    third = policy.act(cut, instance.tools)
    more = policy.parallel_calls(cut, instance.tools, third["tool_calls"][0])
    called = [args["merchant"] for _, args in names({"tool_calls": third["tool_calls"] + more})]
    assert len(called) == len(set(called)), "one call per merchant and turn"
    assert all(counts[m] < MAX_CALLS for m in called)


def test_call_budget_offers_a_visible_counter_offer_and_skips_settled_merchants():
    instance = CallBudget(**CB_SMOKE).generate(0)
    messages = start(instance)
    for turn in range(1, 4):
        messages = play(messages, instance, batch(messages), turn)
        policy = CallBudgetPolicy()
        _, state, counts = policy._state(messages)
        message = policy.act(messages, instance.tools)
        if names(message)[0][0] == "submit":
            break
        more = policy.parallel_calls(messages, instance.tools, message["tool_calls"][0])
        for _, args in names({"tool_calls": message["tool_calls"] + more}):
            outcome, rate = state.get(args["merchant"], (None, None))
            assert outcome in (None, "CALL BACK LATER", "COUNTER-OFFER") and counts[args["merchant"]] < MAX_CALLS
            assert args["offer"] == (rate if outcome == "COUNTER-OFFER" else 15)


def test_call_budget_rate_limited_calls_are_made_again_and_not_counted():
    instance = CallBudget(**CB_SMOKE).generate(0)
    messages = play(start(instance), instance, batch(start(instance)), 1, limit=2)
    assert sum(is_rate_limited(m["content"]) for m in messages if m["role"] == "tool") == 2
    policy = CallBudgetPolicy()
    _, _, counts = policy._state(messages)
    assert sorted(counts.elements()) == ["M01", "M02"]
    reply = policy.act(messages, instance.tools)
    assert "Rate limited, so not placed and not counted: M03, M04" in reply["content"]
    assert "M01, M02 have each used 1 of 3 calls" in reply["content"]
    more = policy.parallel_calls(messages, instance.tools, reply["tool_calls"][0])
    assert [a["merchant"] for _, a in names({"tool_calls": reply["tool_calls"] + more})][:2] == ["M03", "M04"]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_call_budget_under_a_rate_limit_succeeds_without_a_fourth_call(seed):
    instance = CallBudget(**CB_SMOKE).generate(seed)
    answer, _ = drive(instance, ProfiledPolicy(reference_policy(instance), STEADY), limit=2)
    assert instance.grade(answer).success and not instance.violations
    assert max(instance.calls.values()) <= MAX_CALLS


def test_call_budget_early_answer():
    instance = CallBudget(**CB_SMOKE).generate(0)
    policy = CallBudgetPolicy()
    assert policy.early_answer(start(instance)) is None
    messages = play(start(instance), instance, batch(start(instance)), 1)
    assert policy.early_answer(messages) == {"accepted": []}


# -- failure_memory ----------------------------------------------------------------------------


def test_failure_memory_batches_follow_the_calibration_llm():
    """The API query and every ticket; then both exports; then every page; then submit."""
    instance = FailureMemory(**FM_SMOKE).generate(0)
    messages, shapes = start(instance), []
    for turn in range(1, 10):
        message = batch(messages)
        shapes.append(sorted({name for name, _ in names(message)}))
        if shapes[-1] == ["submit"]:
            break
        messages = play(messages, instance, message, turn)
    assert shapes == [["query_api", "read_ticket"], ["export_report"], ["read_export"], ["submit"]]
    grade = instance.grade(names(message)[0][1])
    assert grade.success and grade.detail["repeated_failed_calls"] == 0


def test_failure_memory_parallel_calls_need_no_unseen_result():
    instance = FailureMemory(**FM_SMOKE).generate(0)
    policy = FailureMemoryPolicy()
    messages = start(instance)
    first = policy.act(messages, instance.tools)["tool_calls"][0]
    more = policy.parallel_calls(messages, instance.tools, first)
    assert names({"tool_calls": [first]})[0][0] == "query_api"
    assert [name for name, _ in names({"tool_calls": more})] == ["read_ticket"] * 3, "one API query per turn"
    messages = play(messages, instance, {"tool_calls": [first] + more}, 1)
    first = policy.act(messages, instance.tools)["tool_calls"][0]
    more = policy.parallel_calls(messages, instance.tools, first)
    calls = names({"tool_calls": [first] + more})
    assert calls == [
        ("export_report", {"dataset": "refunds", "period": instance.first}),
        ("export_report", {"dataset": "refunds", "period": instance.second}),
    ], "no page of an unseen export"
    messages = play(messages, instance, {"tool_calls": [first] + more}, 2)
    first = policy.act(messages, instance.tools)["tool_calls"][0]
    more = policy.parallel_calls(messages, instance.tools, first)
    pages = [(a["export_id"], a["page"]) for _, a in names({"tool_calls": [first] + more})]
    assert len(pages) == 4 and len(set(pages)) == 4
    assert policy.parallel_calls(messages, instance.tools, make_call("submit")) == []


def test_failure_memory_multi_result_round_is_noted():
    instance = FailureMemory(**FM_SMOKE).generate(0)
    messages = play(start(instance), instance, batch(start(instance)), 1)
    reply = FailureMemoryPolicy().act(messages, instance.tools)
    assert "FAILED: query_api" in reply["content"]
    assert reply["content"].count("Ticket T-") == 3
    assert f"escalated_ticket={instance.escalated}, second_period={instance.second}" in reply["content"]


def test_failure_memory_rate_limited_query_is_not_a_failure():
    instance = FailureMemory(**FM_SMOKE).generate(0)
    policy = FailureMemoryPolicy()
    first = policy.act(start(instance), instance.tools)
    messages = start(instance) + [
        {"role": "assistant", "content": first["content"], "tool_calls": [{**first["tool_calls"][0], "id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": LIMIT_TEXT},
    ]
    assert not policy._knowledge(messages)["api_failed"]
    again = policy.act(messages, instance.tools)
    assert names(again) == names(first), "the query was not made: it is made again"
    assert "Rate limited, so not done (not a failure): query_api" in again["content"]
    assert "FAILED" not in again["content"]
    summary = policy.summarize(render_history(messages))
    assert "rate limited" not in summary
    assert not policy._knowledge(start(instance) + [{"role": "user", "content": summary}])["api_failed"]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_failure_memory_under_a_rate_limit_succeeds_without_a_repeated_failure(seed):
    instance = FailureMemory(**FM_SMOKE).generate(seed)
    answer, _ = drive(instance, ProfiledPolicy(reference_policy(instance), STEADY), limit=2)
    graded = instance.grade(answer)
    assert graded.success and graded.detail["repeated_failed_calls"] == 0, graded.detail
    assert sum(1 for name, _, _ in instance.log if name == "query_api") == 1


def test_failure_memory_rate_limited_ticket_is_read_again():
    instance = FailureMemory(**FM_SMOKE).generate(0)
    call = make_call("read_ticket", ticket_id=instance.ticket_ids[0])
    messages = start(instance) + [
        {"role": "assistant", "content": "", "tool_calls": [{**call, "id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": LIMIT_TEXT},
    ]
    policy = FailureMemoryPolicy()
    lost, _ = policy._ticket_plan(messages, policy._knowledge(messages))
    assert lost == [instance.ticket_ids[0]]


def test_failure_memory_early_answer():
    instance = FailureMemory(**FM_SMOKE).generate(0)
    policy = FailureMemoryPolicy()
    assert policy.early_answer(start(instance)) is None
    messages = play(start(instance), instance, batch(start(instance)), 1)
    answer = policy.early_answer(messages)
    assert answer["escalated_ticket"] == instance.escalated and answer["second_period"] == instance.second


# -- the calibration targets -------------------------------------------------------------------

RUNS = {  # folder: (family, knobs, strategy)
    "call_budget_none": (CallBudget, CB_SMOKE, NoManagement, 1_000_000),
    "call_budget_headtail_2k": (CallBudget, CB_SMOKE, lambda: HeadTail(min_recent_rounds=1), 2_000),
    "failure_memory_none": (FailureMemory, FM_SMOKE, NoManagement, 1_000_000),
    "failure_memory_headtail_2k": (FailureMemory, FM_SMOKE, lambda: HeadTail(min_recent_rounds=1), 2_000),
}


def realistic_row(tmp_path: Path, folder: str) -> dict:
    """The realistic reference agent's trial at the calibration settings of ``folder``."""
    family, knobs, strategy, budget = RUNS[folder]
    writer = RunWriter(tmp_path / folder)
    settings = TrialSettings(
        budget=budget, max_steps=40, strategy_name="calibration", strategy_params={}, model_name="scripted"
    )
    row = run_trial(
        trial_id=f"{folder}-t0",
        trial_index=0,
        instance=family(**knobs).generate(0),
        strategy=strategy(),
        model=ScriptedModel(context_window=65536, profile="realistic"),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    return row


@pytest.mark.parametrize("folder", sorted(RUNS))
def test_realistic_is_within_1_5x_of_the_calibration_llm(tmp_path, folder):
    trials = CALIBRATION / folder / "trials.jsonl"
    if not trials.exists():
        pytest.skip(f"no calibration trajectories at {trials}")
    llm = json.loads(trials.read_text(encoding="utf-8").splitlines()[0])
    row = realistic_row(tmp_path, folder)
    assert row["success"] or not llm["success"], row["grade_detail"]
    for key in ("steps", "input_tokens"):
        ratio = row[key] / llm[key]
        assert 1 / 1.5 <= ratio <= 1.5, f"{folder} {key}: {row[key]} vs the LLM's {llm[key]} ({ratio:.2f}x)"

import json
import re

import pytest

from reference_agent.policies import reference_policy
from tasks.base import KnobError
from tasks.call_budget import MAX_CALLS, CallBudget
from tests.family_helpers import run_reference

SMOKE = dict(merchants=4, noise=2)


@pytest.mark.parametrize("knobs,seeds", [(SMOKE, [0, 1, 2]), ({}, [0, 1])])
def test_reference_agent_succeeds_unmanaged(tmp_path, knobs, seeds):
    for seed in seeds:
        instance = CallBudget(**knobs).generate(seed)
        row = run_reference(tmp_path / str(seed), instance)
        assert row["outcome"] == "submitted" and row["success"] and row["score"] == 1.0, row["grade_detail"]
        assert row["call_violations"] == 0 and row["max_calls_per_merchant"] == MAX_CALLS


def test_generation_identical_per_seed_and_differs_across_seeds():
    family = CallBudget(merchants=10)
    assert family.generate(5).fingerprint() == family.generate(5).fingerprint()
    assert family.generate(5).fingerprint() != family.generate(6).fingerprint()
    a, b = family.generate(5), family.generate(5)
    assert a.call("call_merchant", {"merchant": "M03", "offer": 15}) == b.call(
        "call_merchant", {"merchant": "M03", "offer": 15}
    )


def test_empty_and_wrong_answers_fail():
    instance = CallBudget(**SMOKE).generate(0)
    assert not instance.grade({"accepted": []}).success
    assert not instance.grade({}).success
    # the right set, claimed without closing a single deal, is not a success either
    guess = instance.grade({"accepted": instance.answer_ids})
    assert not guess.success and guess.score == 0
    everyone = instance.grade({"accepted": sorted(instance.merchants)})
    assert not everyone.success


def test_fourth_call_is_a_violation_and_fails_the_trial():
    instance = CallBudget(**SMOKE).generate(0)
    for _ in range(MAX_CALLS + 1):
        result = instance.call("call_merchant", {"merchant": "M01", "offer": 15})
        assert not result.is_error and "disposition:" in result.content
    assert instance.violations == ["M01"]
    assert not instance.grade({"accepted": instance.answer_ids}).success


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"merchant": "M99", "offer": 15},
        {"merchant": "M01"},
        {"merchant": "M01", "offer": 0},
        {"merchant": "M01", "offer": "lots"},
        {"merchant": 3, "offer": 15},
    ],
)
def test_bad_arguments_are_tool_errors(args):
    instance = CallBudget(**SMOKE).generate(0)
    result = instance.call("call_merchant", args)
    assert result.is_error and result.content.startswith("ERROR")
    assert instance.call("nope", {}).is_error
    assert not instance.calls, "an error is not a placed call"


def test_transcripts_are_long_and_noisy():
    instance = CallBudget().generate(0)
    text = instance.call("call_merchant", {"merchant": "M02", "offer": 15}).content
    assert len(text) > 1500 and "IVR" in text and text.rstrip().endswith("]")


@pytest.mark.parametrize("knobs", [dict(merchants=2), dict(merchants=100), dict(noise=-1)])
def test_knobs_out_of_range(knobs):
    with pytest.raises(KnobError):
        CallBudget(**knobs)


class HideEarlierCalls:
    """Shows only the latest call to one merchant: earlier calls and the notes about them (the call notes, the
    numbered ``Calling ...`` lines and the ledger's count line) vanish."""

    def __init__(self, merchant):
        self.merchant = merchant

    def prepare(self, messages):
        mine = [m for m in messages if m.get("role") == "tool" and m.get("_args", {}).get("merchant") == self.merchant]
        hidden_ids = {m["tool_call_id"] for m in mine[:-1]}
        out = []
        for m in messages:
            if m.get("role") == "tool" and m.get("tool_call_id") in hidden_ids:
                continue
            if m.get("role") == "assistant":
                calls = [c for c in m.get("tool_calls") or [] if c["id"] not in hidden_ids]
                content = re.sub(
                    rf"(Call note: {self.merchant} |Calling {self.merchant} \(call #|- {self.merchant}: \d+/)"
                    r"[^\n]*",
                    "",
                    m.get("content") or "",
                )
                m = {**m, "content": content}
                if m.get("tool_calls"):
                    if not calls:
                        continue
                    m["tool_calls"] = calls
            out.append(m)
        return out


def test_hiding_earlier_calls_leads_to_a_fourth_call_and_failure(tmp_path):
    instance = CallBudget(**SMOKE).generate(0)
    stubborn = next(m for m, spec in instance.merchants.items() if spec["script"] == "CCC")
    row = run_reference(tmp_path, instance, strategy=HideEarlierCalls(stubborn))
    assert row["outcome"] == "submitted"
    assert row["call_violations"] >= 1 and row["max_calls_per_merchant"] > MAX_CALLS
    assert not row["success"] and stubborn in row["grade_detail"]["violations"]


def test_a_cut_call_note_carries_the_running_count():
    """Only the notes of the first calls survive (a notes block); the second call's message and result are
    visible: its note says call #2, not call #1 again (the count carries forward from the notes)."""
    instance = CallBudget(**SMOKE).generate(0)
    policy = reference_policy(instance)
    head = [{"role": "system", "content": instance.system_prompt}, {"role": "user", "content": instance.user_prompt}]
    notes = {
        "role": "user",
        "content": "[notes] Your notes so far (written with write_note):\n"
        + "\n".join(f"- Call note: {m} call #1 of 3: CALL BACK LATER" for m in sorted(instance.merchants)),
    }
    why = policy.act([*head, notes], instance.tools)
    call = why["tool_calls"][0]
    merchant = json.loads(call["function"]["arguments"])["merchant"]
    assert f"Calling {merchant} (call #2 of 3)" in why["content"]
    result = instance.call("call_merchant", json.loads(call["function"]["arguments"]))
    history = [
        *head,
        notes,
        {**why, "tool_calls": [{**call, "id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": result.content},
    ]
    assert f"Call note: {merchant} call #2 of 3: " in policy.act(history, instance.tools)["content"]


@pytest.mark.parametrize("seed", [0, 1])
def test_notes_over_headtail_keep_within_three_calls(tmp_path, seed):
    """Strategy notes (base headtail) at a tight budget: earlier calls are cut, their notes are not."""
    from strategies.headtail import HeadTail
    from strategies.notes import Notes
    from tests.family_helpers import run

    row, _ = run(tmp_path, CallBudget(), seed=seed, strategy=Notes(base=HeadTail()), budget=8_000, max_steps=150)
    assert row["call_violations"] == 0 and row["max_calls_per_merchant"] == MAX_CALLS, row["grade_detail"]
    assert row["outcome"] == "submitted" and row["success"], row["grade_detail"]


# -- ground truth rules (issue 13 §3; tasks/README.md, call_budget) -----------------------------------------------

from tasks.call_budget import ACC, CB, CTR, DEC, DISPOSITION, STANDARD_OFFER  # noqa: E402

SAID = {
    ACC: ("works for us", "deal at", "We accept"),
    DEC: ("No, thank you", "it's a no", "stop calling"),
    CB: ("call back later", "try again later", "call back later, please"),
    CTR: ("We could do",),
}


def _careful_calls(instance, merchant):
    """The calls of an agent that offers the standard rate, takes every counter-offer and stops at 3 calls or a
    final answer; yields (attempt, transcript)."""
    offer = STANDARD_OFFER
    for attempt in range(1, MAX_CALLS + 1):
        text = instance.call("call_merchant", {"merchant": merchant, "offer": offer}).content
        yield attempt, text
        outcome = DISPOSITION.search(text)
        if outcome.group(1) in (ACC, DEC):
            return
        if outcome.group(1) == CTR:
            offer = int(outcome.group(2))


def test_rule_each_call_has_one_disposition_and_the_contact_says_the_same():
    for knobs in (SMOKE, {}):
        for seed in range(30):
            instance = CallBudget(**knobs).generate(seed)
            for merchant in instance.merchants:
                for _attempt, text in _careful_calls(instance, merchant):
                    lines = text.splitlines()
                    assert len(DISPOSITION.findall(text)) == 1 and DISPOSITION.search(lines[-1])
                    outcome = DISPOSITION.search(lines[-1]).group(1)
                    assert any(words in lines[-2] for words in SAID[outcome]), (instance.id, merchant, lines[-2])
                    # hearsay about other merchants names another merchant and is never a disposition
                    for line in lines[:-1]:
                        if "I heard" in line:
                            assert merchant not in line and not DISPOSITION.search(line)


def test_rule_the_closable_merchants_are_those_a_careful_agent_closes_within_three_calls():
    """``accepted`` is unambiguous: a merchant is in the answer exactly when its third call at the latest ends
    ACCEPTED for an agent that takes every counter-offer; a counter-offer on the third call cannot be taken."""
    for knobs in (SMOKE, {}):
        for seed in range(30):
            instance = CallBudget(**knobs).generate(seed)
            closed = {
                m
                for m in instance.merchants
                if DISPOSITION.search(list(_careful_calls(instance, m))[-1][1]).group(1) == ACC
            }
            assert closed == set(instance.answer_ids) == instance.closed, instance.id
            assert instance.grade({"accepted": sorted(closed)}).success


def test_rule_an_accepted_call_refers_only_to_what_the_earlier_calls_said():
    """ "As we agreed on your earlier call" only when an earlier call closed the deal; "as we proposed" only after
    a counter-offer; otherwise a plain acceptance of this call's offer."""
    for seed in range(30):
        instance = CallBudget().generate(seed)
        for merchant in instance.merchants:
            history = []
            for _attempt, text in _careful_calls(instance, merchant):
                said = text.splitlines()[-2]
                if "as we agreed on your earlier call" in said.lower():
                    assert ACC in history
                if "as we proposed" in said:
                    assert CTR in history
                history.append(DISPOSITION.search(text).group(1))
            again = instance.call("call_merchant", {"merchant": merchant, "offer": STANDARD_OFFER}).content
            if history[-1] == ACC and len(history) < MAX_CALLS:
                assert "As we agreed on your earlier call" in again.splitlines()[-2]


def test_rule_a_fourth_call_is_declined_and_recorded_as_a_violation():
    instance = CallBudget(**SMOKE).generate(0)
    for _ in range(MAX_CALLS):
        instance.call("call_merchant", {"merchant": "M01", "offer": STANDARD_OFFER})
    text = instance.call("call_merchant", {"merchant": "M01", "offer": STANDARD_OFFER}).content
    assert DISPOSITION.search(text).group(1) == DEC and "call number 4" in text and instance.violations == ["M01"]

"""``one_shot_queue``: a consuming queue of one-time tickets beside re-readable order and policy pages."""

from __future__ import annotations

import pytest

from harness.conversation import strip_private
from reference_agent.policies import reference_policy
from reference_agent.policies.one_shot_queue import NOT_NOTED
from reference_agent.scripted import ScriptedModel
from strategies.clear_tool_results import ClearToolResults
from strategies.sliding_window import SlidingWindow
from tasks.base import KnobError
from tasks.one_shot_queue import OneShotQueue
from tasks.one_shot_queue.tools import QUEUE_EMPTY, TICKET_HEADER
from tasks.one_shot_queue.world import REFERENCE_KIND, TICKET_REFERENCES
from tests.family_helpers import run
from tests.test_policy_purity import essence, exchanges

SMALL = dict(tickets=6, ticket_sentences=6, order_lines=4, order_events=4, policy_paragraphs=3)


def small() -> OneShotQueue:
    return OneShotQueue(**SMALL)


def right_batch(instance) -> dict:
    return {
        "actions": [
            {"ticket": t, "auth_code": code, "action": action, "reference": reference}
            for t, (code, action, reference) in instance.world.expected.items()
        ]
    }


def test_generation_is_deterministic():
    assert OneShotQueue().generate(3).fingerprint() == OneShotQueue().generate(3).fingerprint()
    assert OneShotQueue().generate(3).fingerprint() != OneShotQueue().generate(4).fingerprint()


def test_knobs_are_checked():
    with pytest.raises(KnobError):
        OneShotQueue(tickets=0)


def test_grade_right_partial_empty_and_malformed():
    instance = small().generate(0)
    assert instance.grade(right_batch(instance)).success
    partial = right_batch(instance)
    partial["actions"][0]["reference"] = NOT_NOTED
    grade = instance.grade(partial)
    assert not grade.success and 0 < grade.score < 1 and grade.detail["tickets_right"] == len(partial["actions"]) - 1
    assert instance.grade({}).score == 0 and not instance.grade({"actions": []}).success
    for bad in (None, [], {"actions": "x"}, {"actions": [1, {"ticket": 3}]}, {"actions": [None]}):
        assert not instance.grade(bad).success
    padded = right_batch(instance)
    padded["actions"].append("junk")
    assert not instance.grade(padded).success


def test_bad_arguments_are_error_results():
    instance = small().generate(0)
    for name, args in [
        ("pop_ticket", {"n": 2}),
        ("lookup_order", {}),
        ("lookup_order", {"order_id": 5}),
        ("lookup_order", {"order_id": "SO-1"}),
        ("get_policy", {"section": "returns"}),
        ("get_policy", {"section": None}),
        ("refund", {}),
    ]:
        assert instance.call(name, args).is_error
    assert instance.claimed == 0  # a bad pop consumes nothing


def test_a_popped_ticket_is_gone_for_good():
    instance = small().generate(0)
    seen = []
    for _ in range(SMALL["tickets"]):
        result = instance.call("pop_ticket", {})
        seen.append(TICKET_HEADER.search(result.content).group(1))
    assert seen == [t.id for t in instance.world.tickets] and len(set(seen)) == len(seen)
    again = instance.call("pop_ticket", {})
    assert again.content == QUEUE_EMPTY and not again.is_error
    assert instance.trial_metrics([{"name": "pop_ticket", "is_error": False}] * 7)["pops_after_empty"] == 1


def test_ticket_references_are_stated_only_in_the_ticket_and_order_references_only_on_the_order_page():
    for seed in range(10):
        instance = small().generate(seed)
        for ticket in instance.world.tickets:
            order = instance.world.orders[ticket.order]
            kind = REFERENCE_KIND[order.program]
            reference = instance.world.expected[ticket.id][2]
            page = instance.call("lookup_order", {"order_id": order.id}).content
            text = "\n".join(ticket.paragraphs)
            if kind in TICKET_REFERENCES:
                assert reference in text and reference not in page
            else:
                assert reference in page and reference not in text
            policy = instance.call("get_policy", {"section": order.program}).content
            assert instance.world.expected[ticket.id][1] in policy


def test_reference_run_under_none_succeeds(tmp_path):
    row, _ = run(tmp_path, small(), seed=0)
    assert row["success"], row["grade_detail"]


def test_a_strategy_that_drops_the_tickets_loses_their_references(tmp_path):
    row, instance = run(tmp_path, small(), seed=0, strategy=SlidingWindow(), budget=3_000)
    needed = sum(
        1 for t in instance.world.tickets if REFERENCE_KIND[instance.world.orders[t.order].program] in TICKET_REFERENCES
    )
    assert needed and not row["success"]
    assert row["pops_after_empty"] == 0  # the careful agent does not pop again to get a ticket back
    assert len(row["grade_detail"]["missed"]) >= 1


def test_clearing_keeps_order_side_references_recoverable(tmp_path):
    row, instance = run(tmp_path, small(), seed=0, strategy=ClearToolResults(), budget=3_000)
    expected = instance.world.expected
    order_side = {t for t in expected if expected[t][2].startswith(("PL-", "SUB-"))}
    missed = {line.split()[0] for line in row["grade_detail"]["missed"]}
    assert order_side and not order_side & missed  # re-read where cleared
    assert missed  # a ticket-only reference is gone


def test_the_policy_depends_on_the_request_alone(tmp_path):
    run(tmp_path, small(), seed=0, strategy=SlidingWindow(), budget=3_000, trial_id="t")
    stranger = small().generate(1)
    steps = exchanges(tmp_path / "t-0")
    assert len(steps) >= 5
    for request, tools, reply in steps:
        fresh = ScriptedModel(profile="perfect").for_trial(stranger)
        assert essence(fresh.complete([strip_private(m) for m in request], tools).message) == essence(reply)


def test_the_reference_policy_is_registered():
    instance = small().generate(0)
    assert type(reference_policy(instance)).__name__ == "OneShotQueuePolicy"

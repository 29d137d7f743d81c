"""The ``late_question`` family: a one-pass inspection feed, and a question that arrives after it."""

import pytest

from harness.conversation import render_history
from reference_agent.policies import reference_policy
from reference_agent.policies.late_question import NOTE, condensed, note_line, parse_note
from strategies.clear_tool_results import ClearToolResults
from strategies.headtail import HeadTail
from strategies.sliding_window import SlidingWindow
from tasks.base import KnobError
from tasks.late_question import QUESTION_KINDS, LateQuestion
from tasks.late_question.tools import parse_record, record_blocks, render_record
from tasks.late_question.world import matches, middle_range, parse_question, question_text, record_fields
from tests.family_helpers import run, run_reference, unmanaged_requests

SMALL = dict(records=12, records_per_batch=3, remarks=1)


def drain(instance) -> list[str]:
    """Read the whole feed as an agent does; the batch texts."""
    batches, ack = [], ""
    while True:
        text = instance.call("read_next", {"ack": ack}).content
        batches.append(text)
        if "ack: " not in text:
            return batches
        ack = text.rsplit("ack: ", 1)[1].split()[0]


def test_generation_is_deterministic_and_seeds_differ():
    family = LateQuestion(**SMALL)
    assert family.generate(3).fingerprint() == family.generate(3).fingerprint() != family.generate(4).fingerprint()


@pytest.mark.parametrize("kind", QUESTION_KINDS)
def test_every_kind_has_an_answer_in_the_middle_of_the_night(kind):
    for seed in range(15):
        family = LateQuestion(question=kind)
        instance = family.generate(seed)
        records = instance.night.records
        answer = [r for r in records if matches(instance.question, record_fields(r))]
        assert sorted(r.container for r in answer) == instance.answer and answer
        middle = middle_range(len(records), family.records_per_batch)
        assert any(records.index(r) in middle for r in answer)
        assert len({r.container for r in records}) == len({r.seal for r in records}) == len(records)
        assert parse_question(question_text(instance.question)) == instance.question


def test_printed_records_read_back_to_their_fields():
    instance = LateQuestion(**SMALL).generate(0)
    for record in instance.night.records:
        assert parse_record(render_record(record)) == record_fields(record)


def test_overweight_has_no_borderline_record():
    for seed in range(10):
        for record in LateQuestion(question="overweight").generate(seed).night.records:
            ratio = record.weighed_kg / record.declared_kg
            assert ratio > 1.055 or ratio < 1.046


def test_the_grader_right_partial_empty_and_malformed():
    instance = LateQuestion(question="shipper").generate(0)
    truth = instance.answer
    assert instance.grade({"values": truth}).success
    assert instance.grade({"values": [c.lower().replace(" ", "-") for c in truth]}).success  # letters and digits
    partial = instance.grade({"values": truth[:1]})
    assert not partial.success and 0 < partial.score < 1
    assert instance.grade({"values": []}).score == 0 and not instance.grade({}).success
    for bad in (None, "x", {"values": "MSKU 1"}, {"values": [1, None, {}, ""]}):
        assert not instance.grade(bad).success


def test_bad_tool_arguments_are_errors():
    instance = LateQuestion(**SMALL).generate(0)
    assert instance.call("read_next", {"ack": "cur_0000000000"}).is_error
    assert instance.call("read_next", {"ack": 7}).is_error
    assert instance.call("read_next", {"page": 2}).is_error
    assert instance.call("get_request", {"x": 1}).is_error
    assert instance.call("nope", {}).is_error


def test_a_delivered_batch_is_gone_and_the_request_comes_last():
    instance = LateQuestion(**SMALL).generate(0)
    assert "No request yet" in instance.call("get_request", {}).content
    first = instance.call("read_next", {"ack": ""})
    assert not first.is_error and len(record_blocks(first.content)) == 3
    again = instance.call("read_next", {"ack": ""})
    assert again.is_error and "cannot be delivered again" in again.content
    instance = LateQuestion(**SMALL).generate(0)
    batches = drain(instance)
    assert len(batches) == 4 and "End of feed" in batches[-1]
    assert instance.call("read_next", {"ack": ""}).is_error  # drained: nothing is delivered twice
    request = instance.call("get_request", {}).content
    assert parse_question(request) == instance.question


def test_the_reference_agent_answers_under_none(tmp_path):
    for kind in QUESTION_KINDS:
        row, _ = run(tmp_path / kind, LateQuestion(records=24, records_per_batch=3, remarks=2, question=kind), seed=1)
        assert row["success"] and row["refused_reads"] == 0


def test_a_window_loses_the_middle_records_and_the_queue_refuses_them(tmp_path):
    instance = LateQuestion(records=40, records_per_batch=4, remarks=3, question="truck").generate(2)
    row = run_reference(tmp_path, instance, strategy=SlidingWindow(), budget=8_000)
    assert not row["success"] and row["refused_reads"] == 1


def test_a_note_line_reads_back_to_every_field_of_its_record():
    instance = LateQuestion(remarks=3).generate(1)
    for number, record in enumerate(instance.night.records, 1):
        fields = {**record_fields(record), "remarks": condensed(" ".join(record.remarks))}
        assert parse_note(note_line(number, fields)) == (number, fields)
        assert parse_note("- " + note_line(number, fields)) == (number, fields)  # as a summary lists it


def test_each_reply_appends_full_notes_of_the_batch_just_read_and_nothing_older():
    instance = LateQuestion(records=12, records_per_batch=3, remarks=2, question="truck").generate(0)
    requests = list(unmanaged_requests(instance))
    replies = [m for m in requests[-1] if m["role"] == "assistant"]
    by_id = {r.id: (n, record_fields(r)) for n, r in enumerate(instance.night.records, 1)}
    assert not NOTE.search(replies[0]["content"])  # nothing read yet
    for batch, reply in enumerate(replies[1:], 1):
        notes = [parse_note(line) for line in reply["content"].splitlines() if NOTE.match(line)]
        assert reply["content"].startswith(f"Notes, batch {batch} of 4")
        expected = instance.night.records[(batch - 1) * 3 : batch * 3]
        assert [fields["id"] for _, fields in notes] == [r.id for r in expected]
        for number, fields in notes:
            assert (number, {k: v for k, v in fields.items() if k != "remarks"}) == by_id[fields["id"]]


def test_a_summary_keeps_every_note_in_full():
    instance = LateQuestion(records=12, records_per_batch=3, remarks=2).generate(0)
    messages = list(unmanaged_requests(instance))[-1]
    summary = reference_policy(instance).summarize(render_history(messages))
    assert [parse_note(line)[1]["id"] for line in summary.splitlines() if NOTE.match(line)] == [
        r.id for r in instance.night.records
    ]
    assert "Request: " in summary


def test_clearing_tool_results_keeps_the_notes_and_the_answer(tmp_path):
    instance = LateQuestion(records=40, records_per_batch=4, remarks=3, question="truck").generate(2)
    row = run_reference(tmp_path, instance, strategy=ClearToolResults(), budget=8_000)
    assert row["success"] and row["refused_reads"] == 0


def test_dropped_rounds_take_the_notes_and_it_submits_after_one_refused_re_read(tmp_path):
    instance = LateQuestion(records=40, records_per_batch=4, remarks=3, question="shipper").generate(0)
    row = run_reference(tmp_path, instance, strategy=HeadTail(), budget=8_000)
    assert (
        not row["success"] and row["refused_reads"] == 1 and row["steps"] == 10 + 3
    )  # reads, request, re-read, submit


@pytest.mark.parametrize("knobs", [{"records": 1}, {"records_per_batch": 0}, {"remarks": 13}, {"question": "cargo"}])
def test_bad_knobs(knobs):
    with pytest.raises(KnobError):
        LateQuestion(**knobs)

import json
import re

import pytest

from reference_agent.policies import reference_policy
from tasks.base import KnobError
from tasks.failure_memory import FailureMemory
from tests.family_helpers import run_reference

SMOKE = dict(tickets=3, ticket_messages=2, rows=12, page_rows=6)


@pytest.mark.parametrize("knobs,seeds", [(SMOKE, [0, 1, 2]), ({}, [0, 1])])
def test_reference_agent_succeeds_unmanaged(tmp_path, knobs, seeds):
    for seed in seeds:
        instance = FailureMemory(**knobs).generate(seed)
        row = run_reference(tmp_path / str(seed), instance)
        assert row["outcome"] == "submitted" and row["success"] and row["score"] == 1.0, row["grade_detail"]
        assert row["api_calls"] == 1 and row["repeated_failed_calls"] == 0


def test_generation_identical_per_seed_and_differs_across_seeds():
    family = FailureMemory(**SMOKE)
    assert family.generate(2).fingerprint() == family.generate(2).fingerprint()
    assert family.generate(2).fingerprint() != family.generate(3).fingerprint()


def test_empty_and_wrong_answers_fail():
    instance = FailureMemory(**SMOKE).generate(0)
    assert instance.grade(dict(instance.expected)).success
    assert not instance.grade({}).success and instance.grade({}).score == 0
    wrong = dict(instance.expected, second_total=instance.expected["second_total"] + 10)
    graded = instance.grade(wrong)
    assert not graded.success and graded.score == 0.75


def test_the_api_fails_with_a_long_stack_trace_and_retries_are_counted():
    instance = FailureMemory(**SMOKE).generate(0)
    args = {"endpoint": f"/v2/refunds?account={instance.account}&period={instance.first}", "auth": "token"}
    error = instance.call("query_api", args)
    assert error.is_error and error.content.startswith("ERROR") and "Traceback" in error.content
    assert len(error.content) > 2000  # ~600+ tokens
    assert instance.grade(dict(instance.expected)).success, "one failed try is fine"
    instance.call("query_api", {"endpoint": "/v2/refunds?period=" + instance.second, "auth": "token"})
    graded = instance.grade(dict(instance.expected))
    assert not graded.success and graded.detail["repeated_failed_calls"] == 1 and graded.score == 0.5


@pytest.mark.parametrize(
    "name,args",
    [
        ("query_api", {}),
        ("query_api", {"endpoint": "/v2/x", "auth": "basic"}),
        ("export_report", {"dataset": "sales", "period": "2026-Q1"}),
        ("export_report", {"dataset": "refunds", "period": "Q5"}),
        ("read_export", {"export_id": "EXP-000000", "page": 1}),
        ("read_ticket", {"ticket_id": "T-0"}),
        ("read_ticket", {}),
        ("nope", {}),
    ],
)
def test_bad_arguments_are_tool_errors(name, args):
    instance = FailureMemory(**SMOKE).generate(0)
    result = instance.call(name, args)
    assert result.is_error and result.content.startswith("ERROR")


def test_export_pages_and_resources():
    instance = FailureMemory(**SMOKE).generate(0)
    ready = instance.call("export_report", {"dataset": "refunds", "period": instance.first}).content
    export_id = re.search(r"Export (EXP-\w+) ready", ready).group(1)
    page = instance.call("read_export", {"export_id": export_id, "page": 1})
    assert page.resource == f"export:{export_id}:1" and "refund_id | date" in page.content
    assert instance.call("read_export", {"export_id": export_id, "page": 99}).is_error
    ticket = instance.call("read_ticket", {"ticket_id": instance.ticket_ids[0]})
    assert ticket.resource == f"ticket:{instance.ticket_ids[0]}"


@pytest.mark.parametrize("knobs", [dict(tickets=1), dict(rows=2), dict(page_rows=0), dict(ticket_messages=0)])
def test_knobs_out_of_range(knobs):
    with pytest.raises(KnobError):
        FailureMemory(**knobs)


FAILURE_LINES = re.compile(r"(FAILED: query_api|The billing API is known to fail)[^\n]*")


class CompactTheFailure:
    """Compacts old error results to a short placeholder (the latest result stays whole, as compaction
    spares the recent turn) and drops the agent's lines about the failure (its note, its reason for exporting)."""

    def prepare(self, messages):
        out = []
        for m in messages:
            if m.get("role") == "tool" and m.get("_error") and m is not messages[-1]:
                m = {**m, "content": "[auth error]"}
            elif m.get("role") == "assistant" and FAILURE_LINES.search(m.get("content") or ""):
                m = {**m, "content": FAILURE_LINES.sub("", m["content"])}
            out.append(m)
        return out


def test_compacting_the_failure_away_leads_to_a_repeated_failed_call(tmp_path):
    instance = FailureMemory(**SMOKE).generate(0)
    row = run_reference(tmp_path, instance, strategy=CompactTheFailure())
    assert row["outcome"] == "submitted"
    assert row["repeated_failed_calls"] >= 1 and row["api_calls"] >= 2
    assert not row["success"] and row["grade_detail"]["repeated_failed_calls"] >= 1


def test_summary_keeps_the_failed_attempt():
    from harness.conversation import render_history

    instance = FailureMemory(**SMOKE).generate(0)
    policy = reference_policy(instance)
    messages = [
        {"role": "system", "content": instance.system_prompt},
        {"role": "user", "content": instance.user_prompt},
    ]
    for _ in range(3):
        message = policy.act(messages, instance.tools)
        call = message["tool_calls"][0]
        message["tool_calls"][0] = {**call, "id": f"c{len(messages)}"}
        messages.append(message)
        import json

        result = instance.call(call["function"]["name"], json.loads(call["function"]["arguments"]))
        messages.append({"role": "tool", "tool_call_id": f"c{len(messages) - 1}", "content": result.content})
    summary = policy.summarize(render_history(messages[1:]))
    assert "Failed attempts:\n- query_api: ERROR" in summary
    assert "Export for " in summary


def test_the_policy_recognises_each_line_it_writes_about_the_failure():
    """Right after the API fails, the reply notes the failure (FAILED: ...), its ledger keeps it as a fact, and it
    says why it exports instead; any of these lines alone, as a notes block keeps it when the error is cut, must
    stop it querying the API (the task's own sentences, quoted in the ledger's rules, are not about the failure)."""
    from strategies.notes import NOTES_HEADER

    instance = FailureMemory(**SMOKE).generate(0)
    policy = reference_policy(instance)
    head = [{"role": "system", "content": instance.system_prompt}, {"role": "user", "content": instance.user_prompt}]
    first = policy.act(head, instance.tools)
    call = first["tool_calls"][0]
    assert call["function"]["name"] == "query_api"
    error = instance.call("query_api", json.loads(call["function"]["arguments"]))
    history = [
        *head,
        {**first, "tool_calls": [{**call, "id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": error.content},
    ]
    content = policy.act(history, instance.tools)["content"]
    lines = [
        line
        for line in content.splitlines()
        if ("API" in line or "api" in line) and line.removeprefix("- ") not in instance.user_prompt
    ]
    assert len(lines) == 3, lines
    for line in lines:
        action = policy.act([*head, {"role": "user", "content": f"{NOTES_HEADER}\n- {line}"}], instance.tools)
        assert [c["function"]["name"] for c in action["tool_calls"]] == ["export_report"], line


def test_notes_over_headtail_keep_the_failure(tmp_path):
    """Strategy notes (base headtail) at a tight budget: the warning survives in the notes, no retry."""
    from strategies.headtail import HeadTail
    from strategies.notes import Notes
    from tests.family_helpers import run

    row, _ = run(tmp_path, FailureMemory(), seed=0, strategy=Notes(base=HeadTail()), budget=8_000)
    assert row["repeated_failed_calls"] == 0 and row["api_calls"] == 1, row["grade_detail"]
    assert row["success"], row["grade_detail"]


@pytest.mark.parametrize("field", ["first_total", "second_total"])
def test_a_one_cent_error_fails_for_every_seed(field):
    """Totals are compared in exact cents: float arithmetic must not let a one-cent error pass."""
    family = FailureMemory(**SMOKE)
    for seed in range(60):
        instance = family.generate(seed)
        expected = dict(instance.expected)
        assert instance.grade(expected).success
        assert instance.grade({**expected, field: str(expected[field])}).success, "a number as a string is fine"
        for error in (0.01, -0.01):
            wrong = {**expected, field: round(expected[field] + error, 2)}
            graded = instance.grade(wrong)
            assert not graded.success and not graded.detail["fields"][field], (seed, expected[field], wrong[field])
    assert not instance.grade({**expected, field: float("nan")}).success
    assert not instance.grade({**expected, field: True}).success


# -- ground truth rules (issue 13 §3; tasks/README.md, failure_memory) --------------------------------------------

from decimal import Decimal  # noqa: E402

from tasks.failure_memory import EXPORT_READY, PERIODS  # noqa: E402

FULL_ROW = re.compile(
    r"^RF-\d+ \| (\d{4})-(\d{2})-\d{2} \| (ACC-\d{5}) \| [^|]+\| [^|]+\| ([\d,]+\.\d{2}) \| (\w+)$", re.M
)


def _rule_instances():
    for knobs in (SMOKE, {}):
        for seed in range(40):
            yield FailureMemory(**knobs).generate(seed)


def _rows(instance, dataset, period):
    """Every row of an export, read through the tools as an agent reads it."""
    ready = EXPORT_READY.search(instance.call("export_report", {"dataset": dataset, "period": period}).content)
    rows = []
    for page in range(1, int(ready.group(4)) + 1):
        rows += FULL_ROW.findall(instance.call("read_export", {"export_id": ready.group(1), "page": page}).content)
    return rows


def _cents(rows, account, statuses):
    return sum(int(Decimal(a.replace(",", "")) * 100) for _, _, acct, a, s in rows if acct == account and s in statuses)


def test_rule_a_total_is_the_accounts_settled_and_pending_refunds_of_the_quarter():
    """The expected totals are the account's refund rows of the quarter's refunds export, settled and pending, in
    exact cents; every row is dated in its quarter; the voided rule changes the answer whenever the account has
    two rows or more; chargebacks and credits are other datasets."""
    for instance in _rule_instances():
        for period, key in ((instance.first, "first_total"), (instance.second, "second_total")):
            rows = _rows(instance, "refunds", period)
            year, quarter = int(period[:4]), int(period[-1])
            assert all(int(y) == year and (int(m) - 1) // 3 + 1 == quarter for y, m, *_ in rows)
            assert {s for *_, s in rows} <= {"settled", "pending", "voided"}
            total = _cents(rows, instance.account, {"settled", "pending"})
            assert total == round(instance.expected[key] * 100), (instance.id, period)
            if sum(1 for r in rows if r[2] == instance.account) >= 2:
                assert _cents(rows, instance.account, {"settled", "pending", "voided"}) != total


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_rule_other_accounts_are_never_the_account():
    for instance in _rule_instances():
        rows = _rows(instance, "refunds", instance.first) + _rows(instance, "chargebacks", instance.second)
        others = {acct for _, _, acct, _, _ in rows} - {instance.account}
        assert others and instance.account in {acct for _, _, acct, _, _ in rows}
        for tid in instance.ticket_ids:
            text = instance.call("read_ticket", {"ticket_id": tid}).content
            assert not re.search(rf"They say {instance.account}\b", text)


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_rule_exactly_one_ticket_is_escalated_and_the_withdrawn_one_is_cancelled_in_so_many_words():
    for instance in _rule_instances():
        headers = [instance.call("read_ticket", {"ticket_id": t}).content.splitlines()[1] for t in instance.ticket_ids]
        finance = [h for h in headers if "Escalation: FINANCE" in h]
        assert len(finance) == 1 and f"compare refunds for {instance.second}" in finance[0]
        assert instance.ticket_ids[[i for i, h in enumerate(headers) if h in finance][0]] == instance.escalated
        assert instance.second != instance.first and instance.second in PERIODS
        withdrawn = [h for h in headers if "withdrawn" in h]
        assert len(withdrawn) <= 1
        for h in withdrawn:
            assert "was cancelled" in h and instance.second not in h and instance.first not in h
        assert all(h.endswith("Escalation: none") for h in headers if h not in finance + withdrawn)

import pytest
from harness.records import read_transcript
from reference_agent.policies.invoice_audit_recall import POINTER
from strategies.clear_tool_results import ClearToolResults
from strategies.headtail import HeadTail
from strategies.sliding_window import SlidingWindow
from tasks.base import KnobError
from tasks.invoice_audit import InvoiceAudit
from tasks.invoice_audit.world import SUBSCRIPTION
from tasks.kit.cursors import next_cursor
from tests.family_helpers import run

SMOKE = dict(pages=4, invoices_per_page=5, duplicates=2, min_distance=1, max_distance=3)
AUDIT_SIZES = [SMOKE, dict(pages=10, invoices_per_page=10, duplicates=5, min_distance=2, max_distance=6), {}]


def test_generation_is_byte_identical_per_seed_and_differs_across_seeds():
    family = InvoiceAudit(pages=6, invoices_per_page=8, duplicates=3, max_distance=4)
    assert family.generate(3).fingerprint() == family.generate(3).fingerprint()
    assert family.generate(3).fingerprint() != family.generate(4).fingerprint()


def test_planted_pairs_are_real_duplicates_at_the_right_distance():
    family = InvoiceAudit(pages=10, invoices_per_page=10, duplicates=5, min_distance=2, max_distance=6)
    instance = family.generate(0)
    by_id = {inv.id: (i, inv) for i, inv in enumerate(instance.invoices)}
    assert len(instance.invoices) == 100
    keys = {}
    for inv in instance.invoices:
        keys.setdefault(inv.key, []).append(inv.id)
    dup_ids = {i for ids in keys.values() if len(ids) > 1 for i in ids}
    assert dup_ids == set(instance.answer_ids)
    for a, b in instance.pairs:
        pa, pb = by_id[a][0] // 10, by_id[b][0] // 10
        assert 1 <= pb - pa <= 7  # inserts can shift a copy by one page


# --- ground truth (issue 13 §3): one test per template rule (tasks/README.md, invoice_audit) ------------------


def _instances(knobs, seeds=range(40)):
    family = InvoiceAudit(**knobs)
    return [family.generate(seed) for seed in seeds]


@pytest.mark.parametrize("knobs", AUDIT_SIZES)
def test_rule_duplicates_are_exactly_the_pairs_under_the_stated_rule(knobs):
    """Every group of invoices with one (vendor, service date, amount) is a planted pair of exactly two."""
    for instance in _instances(knobs):
        groups = {}
        for invoice in instance.invoices:
            groups.setdefault(invoice.key, []).append(invoice.id)
        repeated = sorted(sorted(ids) for ids in groups.values() if len(ids) > 1)
        assert repeated == sorted(sorted(pair) for pair in instance.pairs), instance.id
        assert len(instance.answer_ids) == 2 * len(instance.pairs)


@pytest.mark.parametrize("knobs", AUDIT_SIZES)
def test_rule_a_duplicate_is_the_same_order_billed_twice(knobs):
    """Both copies share description, tax and purchase order: a duplicate under the "same order" rule too."""
    for instance in _instances(knobs):
        by_id = {i.id: i for i in instance.invoices}
        for a, b in instance.pairs:
            first, second = by_id[a], by_id[b]
            assert (first.description, first.tax, first.po, first.city) == (
                second.description,
                second.tax,
                second.po,
                second.city,
            )
            assert first.id != second.id and first.payment_ref != second.payment_ref


@pytest.mark.parametrize("knobs", AUDIT_SIZES)
def test_rule_no_near_duplicate_one_off_charges(knobs):
    """No two one-off charges share vendor and amount (on any dates): under a rule that ignores the date or
    the description, the planted pairs are still the only duplicates."""
    for instance in _instances(knobs):
        planted = set(instance.answer_ids)
        seen = {}
        for invoice in instance.invoices:
            if invoice.description == SUBSCRIPTION or invoice.id in planted:
                continue
            key = (invoice.vendor, invoice.amount)
            assert key not in seen, (instance.id, invoice.id, seen.get(key))
            seen[key] = invoice.id
        pair_keys = [(i.vendor, i.amount) for i in instance.invoices if i.id in planted]
        assert not set(pair_keys) & set(seen), "a planted pair's vendor and amount appear nowhere else"


@pytest.mark.parametrize("knobs", AUDIT_SIZES)
def test_rule_subscriptions_recur_monthly_and_are_never_duplicates(knobs):
    """A subscription is billed on the 1st, at one amount per vendor, at most once per vendor and month,
    never copied, and its amount is never a one-off charge of that vendor."""
    for instance in _instances(knobs):
        subscriptions = [i for i in instance.invoices if i.description == SUBSCRIPTION]
        assert not {i.id for i in subscriptions} & set(instance.answer_ids)
        months = [(i.vendor, i.date[:7]) for i in subscriptions]
        assert len(months) == len(set(months)) and all(i.date.endswith("-01") for i in subscriptions)
        amounts = {}
        for invoice in subscriptions:
            assert amounts.setdefault(invoice.vendor, invoice.amount) == invoice.amount
        assert not any(i.description != SUBSCRIPTION and amounts.get(i.vendor) == i.amount for i in instance.invoices)


def test_rule_subscriptions_and_same_day_charges_exist_as_distractors():
    """The distractors the prompt warns about are there: recurring subscriptions, and other vendors' charges
    on a duplicate's service date."""
    instance = InvoiceAudit().generate(0)
    subscriptions = [i for i in instance.invoices if i.description == SUBSCRIPTION]
    assert len({i.vendor for i in subscriptions}) >= 2 and len(subscriptions) > len({i.vendor for i in subscriptions})
    dates = {i.date for i in instance.invoices if i.id in instance.answer_ids}
    assert any(i.date in dates and i.id not in instance.answer_ids for i in instance.invoices)


# --- the tool: cursor pagination (issue 13 §1) -----------------------------------------------------------------


def test_pages_are_read_by_following_cursors():
    instance = InvoiceAudit(**SMOKE).generate(0)
    cursor, pages = "", []
    while cursor is not None:
        result = instance.call("get_invoice_page", {"cursor": cursor})
        assert not result.is_error
        pages.append(result.resource)
        cursor = next_cursor(result.content)
    assert pages == ["page:1", "page:2", "page:3", "page:4"]
    assert result.content.endswith("next_cursor: none (end of results)")
    other = InvoiceAudit(**SMOKE).generate(1).call("get_invoice_page", {"cursor": ""}).content
    assert next_cursor(other) != next_cursor(instance.call("get_invoice_page", {"cursor": ""}).content)


def test_the_prompt_names_no_page_count():
    instance = InvoiceAudit().generate(0)
    assert "30" not in instance.user_prompt and "empty cursor" in instance.user_prompt


def test_grading():
    instance = InvoiceAudit(pages=4, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
    assert instance.grade({"invoice_ids": instance.answer_ids}).success
    empty = instance.grade({"invoice_ids": []})
    assert not empty.success and empty.score == 0
    partial = instance.grade({"invoice_ids": instance.answer_ids[:2] + ["INV-2026-00000"]})
    assert not partial.success and 0 < partial.score < 1
    assert not instance.grade({}).success


@pytest.mark.parametrize(
    "args", [{"page": 2}, {"cursor": "cur_0123456789"}, {"cursor": 3}, {"cursor": "page 2"}, {"cursor": "", "page": 1}]
)
def test_bad_arguments_are_tool_errors(args):
    instance = InvoiceAudit(pages=4, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
    result = instance.call("get_invoice_page", args)
    assert result.is_error and result.content.startswith("ERROR")
    assert instance.call("nope", {}).is_error


def test_page_has_resource_and_noise():
    instance = InvoiceAudit().generate(0)
    first = instance.call("get_invoice_page", {"cursor": ""})
    result = instance.call("get_invoice_page", {"cursor": next_cursor(first.content)})
    assert result.resource == "page:2" and "page 2 of 30" in result.content and "Privacy" in result.content


@pytest.mark.parametrize(
    "knobs", [dict(pages=1), dict(duplicates=0), dict(pages=5, max_distance=9), dict(invoices_per_page=1)]
)
def test_knobs_out_of_range(knobs):
    with pytest.raises(KnobError):
        InvoiceAudit(**knobs)


# --- the reference agent ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_reference_agent_succeeds_unmanaged_one_page_per_round(tmp_path, seed):
    row, instance = run(tmp_path, InvoiceAudit(), seed)
    assert row["outcome"] == "submitted" and row["success"] and row["steps"] == instance.pages + 1


def test_a_sliding_window_keeps_the_newest_ledger_and_finds_far_duplicates(tmp_path):
    """A sliding window keeps the newest reply, whose ledger indexes every invoice seen and carries the next
    cursor (as the calibration LLM's did): every page is read once and far duplicates are still found."""
    row, instance = run(
        tmp_path,
        InvoiceAudit(pages=8, invoices_per_page=5, duplicates=3, max_distance=6),
        0,
        strategy=SlidingWindow(max_messages=4),
        max_steps=60,
    )
    assert row["outcome"] == "submitted" and row["success"]
    assert row["reads"] == instance.pages and row["rereads"] == 0


def _pointing_replies(run_dir, trial_id="t") -> list[int]:
    """The steps whose reply points back to an earlier ledger instead of restating it."""
    events = read_transcript(run_dir, trial_id)
    bodies = {e["ref"]: e["message"] for e in events if e.get("event") == "message"}
    return [
        e["step"]
        for e in events
        if e.get("event") == "reply" and POINTER.search(str(bodies[e["ref"]].get("content") or ""))
    ]


def test_a_long_ledger_points_back_where_replies_are_kept(tmp_path):
    """clear_tool_results keeps the replies: past 17,000 characters the ledger names the pages its earlier full
    ledger indexes instead of restating them (the calibration LLM did at step 27), so the run fits the 131K window
    (restating, it overflowed at request 28) and reads each page once."""
    row, instance = run(tmp_path, InvoiceAudit(), 0, strategy=ClearToolResults(), budget=8_000, max_steps=40)
    assert row["outcome"] == "submitted" and row["success"] and row["steps"] == instance.pages + 1
    assert row["rereads"] == 0 and row["peak_context"] < 131_072
    assert _pointing_replies(tmp_path / "t-0")[0] == 25


def test_a_sliding_window_drops_the_ledger_a_reply_points_to_and_the_lost_pages_are_read_again(tmp_path):
    """As the calibration LLM did: at step 12 its page-1-10 ledger is most of what it sees, so it writes page 11
    alone and points back; the window drops that ledger, so pages 1-10 are re-read after page 30 (41 steps: past
    the calibration's limit of 40) and the duplicates across the gap are still found."""
    row, instance = run(tmp_path, InvoiceAudit(), 0, strategy=SlidingWindow(), budget=8_000, max_steps=60)
    assert row["outcome"] == "submitted" and row["success"]
    assert row["rereads"] == 10 and row["steps"] == instance.pages + 10 + 1
    assert _pointing_replies(tmp_path / "t-0") == [12]


def test_a_cut_note_in_view_keeps_the_ledger_restated(tmp_path):
    """headtail says that rounds were cut: the ledger is restated in full however long it grows, as the LLM's was."""
    row, instance = run(tmp_path, InvoiceAudit(), 0, strategy=HeadTail(), budget=8_000, max_steps=40)
    assert row["outcome"] == "submitted" and row["success"] and row["steps"] == instance.pages + 1
    assert _pointing_replies(tmp_path / "t-0") == []


# --- every seed generates (issue 36) ---------------------------------------------------------------------------


def test_a_distance_that_leaves_nothing_to_copy_falls_back_to_a_shorter_one():
    """The smoke-size world of seed 4723 raised "no one-off charge left to copy": its second duplicate drew distance 3,
    and page 1, the one page that leaves, held subscriptions and a charge copied already. The copy now lands
    at the longest shorter distance that has a source, and the instance obeys every rule of the template."""
    instance = InvoiceAudit(**SMOKE).generate(4723)
    position = {invoice.id: n for n, invoice in enumerate(instance.invoices)}
    assert len(instance.invoices) == 20 and len(instance.pairs) == SMOKE["duplicates"]
    for a, b in instance.pairs:
        distance = position[b] // 5 - position[a] // 5
        assert SMOKE["min_distance"] <= distance <= SMOKE["max_distance"] + 1  # inserts can shift a copy by one
    groups: dict = {}
    for invoice in instance.invoices:
        groups.setdefault(invoice.key, []).append(invoice.id)
    assert sorted(sorted(g) for g in groups.values() if len(g) > 1) == sorted(sorted(p) for p in instance.pairs)
    assert instance.grade({"invoice_ids": instance.answer_ids}).success


def test_knobs_that_leave_nothing_to_copy_at_any_distance_are_a_knob_error():
    """Five duplicates, each copied 9 pages later, need five one-off charges on page 1 of 2 invoices: no seed can
    place them, and the error names the knobs to lower (the runner prints it as one line, exit 2)."""
    with pytest.raises(KnobError, match="lower duplicates or min_distance"):
        InvoiceAudit(pages=10, invoices_per_page=2, duplicates=5, min_distance=9, max_distance=9).generate(0)

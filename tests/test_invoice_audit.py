import pytest

from tasks.base import KnobError
from tasks.invoice_audit import InvoiceAudit


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
        keys.setdefault((inv.vendor, inv.date, inv.amount), []).append(inv.id)
    dup_ids = {i for ids in keys.values() if len(ids) > 1 for i in ids}
    assert dup_ids == set(instance.answer_ids)
    for a, b in instance.pairs:
        pa, pb = by_id[a][0] // 10, by_id[b][0] // 10
        assert 1 <= pb - pa <= 7  # inserts can shift a copy by one page


def test_grading():
    instance = InvoiceAudit(pages=4, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
    assert instance.grade({"invoice_ids": instance.answer_ids}).success
    empty = instance.grade({"invoice_ids": []})
    assert not empty.success and empty.score == 0
    partial = instance.grade({"invoice_ids": instance.answer_ids[:2] + ["INV-2026-00000"]})
    assert not partial.success and 0 < partial.score < 1
    assert not instance.grade({}).success


@pytest.mark.parametrize("args", [{}, {"page": 0}, {"page": 99}, {"page": "x"}, {"page": 1.5}])
def test_bad_arguments_are_tool_errors(args):
    instance = InvoiceAudit(pages=4, invoices_per_page=5, duplicates=2, max_distance=3).generate(0)
    result = instance.call("get_invoice_page", args)
    assert result.is_error and result.content.startswith("ERROR")
    assert instance.call("nope", {}).is_error


def test_page_has_resource_and_noise():
    instance = InvoiceAudit().generate(0)
    result = instance.call("get_invoice_page", {"page": 2})
    assert result.resource == "page:2" and "page 2 of 30" in result.content and "Privacy" in result.content


@pytest.mark.parametrize("knobs", [dict(pages=1), dict(duplicates=0), dict(pages=5, max_distance=9), dict(invoices_per_page=1)])
def test_knobs_out_of_range(knobs):
    with pytest.raises(KnobError):
        InvoiceAudit(**knobs)

"""The generated invoice history of ``invoice_audit``: invoices, subscriptions and planted duplicates.

Templates, and the rule each obeys (tasks/README.md, "invoice_audit"; tested in
tests/test_invoice_audit.py):

* one-off charge: a vendor's invoice for one of its services. No two one-off charges share
  a vendor and an amount, so no pair of them is a duplicate under any rule that ignores the
  date or the description (a late re-bill of the same amount would be one);
* monthly subscription: four vendors bill a fixed amount on the 1st of a month, described
  ``Monthly subscription``, at most once per vendor and month. Same vendor and amount on
  other dates: recurring on purpose, never a duplicate (the prompt says so);
* duplicate charge: a one-off charge billed a second time under a new invoice id
  ``min_distance``..``max_distance`` pages later, with the same vendor, service date,
  description, amount, tax and purchase order (the same order billed twice), so it is a
  duplicate under the stated rule and under the "same purchase order" rule alike. A
  subscription charge is never copied (a second subscription charge in one month would
  blur the subscription rule), no charge is copied twice, and a copy is never copied.
  A drawn distance whose earlier pages hold nothing left to copy shrinks to the longest
  one that has a source (``_nearer_source``; before, seed 4723 at smoke size raised).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from tasks.base import KnobError

VENDORS = [
    ("Acme Cloud Services Ltd.", ["Compute instances (eu-west)", "Object storage", "Egress bandwidth"]),
    ("Northwind Telecom", ["Business fibre 1 Gbps", "Mobile fleet plan", "SIP trunk"]),
    ("Globex Office Supply", ["Printer toner", "Ergonomic chairs", "Paper, A4, 40 boxes"]),
    ("Initech Software", ["CRM seats (25)", "Support plan Gold", "API overage"]),
    ("Umbrella Facilities", ["Cleaning services", "HVAC maintenance", "Security patrol"]),
    ("Stark Logistics", ["Courier, next day", "Pallet freight", "Customs brokerage"]),
    ("Wayne Consulting Group", ["Advisory retainer", "Workshop facilitation", "Audit preparation"]),
    ("Hooli Analytics", ["Dashboard licences", "Data warehouse credits", "Training session"]),
    ("Soylent Catering", ["Team lunch", "Event catering", "Coffee service"]),
    ("Cyberdyne Security", ["Endpoint protection", "Pen test", "SOC monitoring"]),
    ("Vandelay Imports", ["Hardware import duty", "Freight insurance", "Warehouse fee"]),
    ("Tyrell Hosting", ["Dedicated server", "Backup storage", "DDoS protection"]),
    ("Oceanic Travel", ["Flights, sales team", "Hotel, offsite", "Rail passes"]),
    ("Pied Piper Compression", ["Storage optimisation", "Enterprise licence", "Consulting hours"]),
    ("Dunder Paper Co.", ["Copy paper", "Envelopes", "Business cards"]),
]
STATUSES = ["paid", "paid", "paid", "paid (card ending 4417)", "paid (ACH)", "pending", "disputed"]
CITIES = ["Berlin", "Lisbon", "Austin", "Toronto", "Singapore", "Dublin", "Nairobi", "Osaka"]
SUBSCRIPTION = "Monthly subscription"


@dataclass(frozen=True)
class Invoice:
    """One invoice line of the history."""

    id: str
    date: str
    vendor: str
    description: str
    amount: float
    tax: float
    status: str
    payment_ref: str
    po: str
    city: str

    @property
    def key(self) -> tuple[str, str, float]:
        """What makes two invoices one charge under the task's rule: vendor, service date, amount."""
        return self.vendor, self.date, self.amount


@dataclass(frozen=True)
class History:
    """The invoices in listing order and the planted (original id, copy id) pairs."""

    invoices: list[Invoice]
    pairs: list[tuple[str, str]]


class _Billing:
    """Draws invoices from one seeded generator, each with a fresh id."""

    def __init__(self, rng: random.Random, total: int) -> None:
        self.rng = rng
        self.serials = iter(rng.sample(range(10000, 99999), total))

    def invoice(self, vendor: str, description: str, amount: float, date: str) -> Invoice:
        rng = self.rng
        return Invoice(
            id=f"INV-2026-{next(self.serials)}",
            date=date,
            vendor=vendor,
            description=description,
            amount=amount,
            tax=round(amount * rng.choice([0.0, 0.07, 0.19, 0.2]), 2),
            status=rng.choice(STATUSES),
            payment_ref=f"TX-{rng.randrange(16**8):08X}",
            po=f"PO-{rng.randrange(100000):05d}",
            city=rng.choice(CITIES),
        )

    def rebill(self, source: Invoice) -> Invoice:
        """The same order billed again: a new id, payment reference and status; everything else the same."""
        rng = self.rng
        return replace(
            source,
            id=f"INV-2026-{next(self.serials)}",
            status=rng.choice(STATUSES),
            payment_ref=f"TX-{rng.randrange(16**8):08X}",
        )


def _originals(billing: _Billing, count: int) -> list[Invoice]:
    """``count`` invoices: one-off charges with unique (vendor, amount), and monthly subscriptions."""
    rng = billing.rng
    subscriptions = {vendor: round(rng.uniform(40, 900), 2) for vendor, _ in rng.sample(VENDORS, 4)}
    billed_months: set[tuple[str, int]] = set()
    one_off_amounts: set[tuple[str, float]] = set(subscriptions.items())
    invoices: list[Invoice] = []
    while len(invoices) < count:
        vendor, descriptions = rng.choice(VENDORS)
        month, day = rng.randint(1, 12), rng.randint(1, 28)
        if vendor in subscriptions and rng.random() < 0.35:
            if (vendor, month) in billed_months:
                continue
            billed_months.add((vendor, month))
            invoices.append(billing.invoice(vendor, SUBSCRIPTION, subscriptions[vendor], f"2026-{month:02d}-01"))
            continue
        amount = round(rng.uniform(12, 4800), 2)
        if (vendor, amount) in one_off_amounts:
            continue
        one_off_amounts.add((vendor, amount))
        invoices.append(billing.invoice(vendor, rng.choice(descriptions), amount, f"2026-{month:02d}-{day:02d}"))
    return invoices


def generate_history(
    rng: random.Random, pages: int, per_page: int, duplicates: int, min_distance: int, max_distance: int
) -> History:
    """The history of ``pages`` x ``per_page`` invoices with ``duplicates`` planted duplicate charges."""
    billing = _Billing(rng, pages * per_page)
    invoices = _originals(billing, pages * per_page - duplicates)
    pairs: list[tuple[str, str]] = []
    used: set[str] = set()  # ids already in a pair: never copied again
    for _ in range(duplicates):
        distance = rng.randint(min_distance, max_distance)
        picked = _pick_source(rng, invoices, used, pages - distance, per_page)
        if picked is None:  # nothing left to copy that far back: the longest shorter distance that has a source
            distance, picked = _nearer_source(rng, invoices, used, pages, per_page, distance - 1, min_distance)
        source_page, position = picked
        source = invoices[position]
        copy = billing.rebill(source)
        target = min(len(invoices), (source_page + distance) * per_page + rng.randrange(per_page))
        invoices.insert(target, copy)
        used.update((source.id, copy.id))
        pairs.append((source.id, copy.id))
    return History(invoices, pairs)


def _eligible(invoice: Invoice, used: set[str]) -> bool:
    """Whether ``invoice`` may be copied: a one-off charge not yet in a pair."""
    return invoice.id not in used and invoice.description != SUBSCRIPTION


def _candidates(invoices: list[Invoice], used: set[str], first_pages: int, per_page: int) -> list[int]:
    """The positions of every invoice on the first ``first_pages`` pages that may be copied."""
    return [p for p in range(min(len(invoices), first_pages * per_page)) if _eligible(invoices[p], used)]


def _pick_source(
    rng: random.Random, invoices: list[Invoice], used: set[str], first_pages: int, per_page: int
) -> tuple[int, int] | None:
    """A one-off charge on one of the first ``first_pages`` pages not yet in a pair: (its page, its position);
    ``None`` when those pages hold none."""
    for _ in range(1000):
        page = rng.randrange(0, first_pages)
        position = page * per_page + rng.randrange(per_page)
        if position < len(invoices) and _eligible(invoices[position], used):
            return page, position
    candidates = _candidates(invoices, used, first_pages, per_page)
    if not candidates:
        return None
    position = rng.choice(candidates)
    return position // per_page, position


def _nearer_source(
    rng: random.Random, invoices: list[Invoice], used: set[str], pages: int, per_page: int, longest: int, shortest: int
) -> tuple[int, tuple[int, int]]:
    """The longest distance from ``longest`` down to ``shortest`` that leaves a source that may be copied, and
    a source drawn for it: (distance, (its page, its position)).

    Only a draw that found no source at its distance comes here (issue 36: seed 4723 at smoke size drew
    distance 3, and the one page that leaves held subscriptions and a charge copied already), so every
    instance that generated before keeps its bytes. ``KnobError`` when no distance down to ``shortest``
    (``min_distance``) has one: the knobs ask for more duplicates than the first pages can supply."""
    for distance in range(longest, shortest - 1, -1):
        candidates = _candidates(invoices, used, pages - distance, per_page)
        if candidates:
            position = rng.choice(candidates)
            return distance, (position // per_page, position)
    raise KnobError(
        f"task knobs duplicates and min_distance={shortest}: the first {pages - shortest} page(s) hold no one-off "
        "charge left to copy; lower duplicates or min_distance"
    )

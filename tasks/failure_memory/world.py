"""The world of ``failure_memory``: the account, its quarters, the tickets and the quarterly exports.

Every template and the rule that makes it correct in its own context is in tasks/README.md (failure_memory).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Callable, Protocol

DATASETS = ("refunds", "chargebacks", "credits")
CALLS_PER_TURN = 4  # the documented concurrency limit of the support and reporting APIs
PERIODS = [f"{y}-Q{q}" for y in (2025, 2026) for q in (1, 2, 3, 4)]
REASONS = [
    "duplicate charge",
    "service outage credit",
    "cancelled order",
    "damaged goods",
    "price adjustment",
    "goodwill gesture",
    "billing error",
    "late delivery",
]
STATUSES = ["settled", "settled", "settled", "pending", "voided"]
COMPANIES = [
    "Brightwave Media",
    "Keller & Sons Logistics",
    "Nordlicht Apparel",
    "Quanta Dental Group",
    "Harbourside Hotels",
    "Vireo Analytics",
    "Ostara Foods",
    "Pinecrest Schools",
]
AGENTS = ["Dana (Tier 1)", "Malik (Tier 2)", "Sofia (Billing)", "Ren (Tier 1)", "Ilse (Account mgmt)"]
FILLER = [
    "Thanks for your patience while we look into this. I've attached the screenshots you sent to the case.",
    "Per our SLA, priority P3 tickets get a first response within one business day.",
    "Customer replied from mobile; signature block and legal disclaimer removed for brevity.",
    "I checked the status page: no incident on the payments cluster on the dates mentioned.",
    "Could you confirm the last four digits of the card on file so that we can match the charge?",
    "Macro applied: 'Refund timelines' (refunds take 5-10 business days to appear on a statement).",
    "Internal: please do not promise credits above the goodwill threshold without a manager's approval.",
    "The customer mentions they will evaluate other providers at renewal if this is not resolved.",
]

EXPORT_HEADER = re.compile(
    r"=== Export (EXP-[0-9A-F]{6}) · dataset (\w+) · period (\d{4}-Q\d) · page (\d+) of (\d+) ==="
)
EXPORT_READY = re.compile(r"Export (EXP-[0-9A-F]{6}) ready: dataset (\w+), period (\d{4}-Q\d), \d+ rows in (\d+) pages")
ROW = re.compile(r"^RF-\d+ \| [\d-]+ \| (ACC-\d{5}) \| [^|]+\| [^|]+\| ([\d,]+\.\d{2}) \| (\w+)", re.M)
TICKET_HEADER = re.compile(r"=== Ticket (T-\d+) · ")
ESCALATED = re.compile(r"Escalation: FINANCE . compare refunds for (\d{4}-Q\d)")


@dataclass(frozen=True)
class World:
    """One generated escalation: what the tools serve and the grader checks."""

    account: str
    company: str
    first: str
    second: str
    tickets: list[dict]
    escalated: str
    exports: dict[str, list[list]]


class Knobs(Protocol):
    """The size knobs generation reads (``FailureMemory``'s)."""

    tickets: int
    rows: int
    ticket_messages: int


SUBJECTS = [
    "Refund not received",
    "Charged twice",
    "Question about credit note",
    "Invoice discrepancy",
    "Cancel add-on",
    "Outage compensation",
]


def generate_world(knobs: Knobs, seed: int) -> World:
    """Account, quarters, tickets and the quarterly refund exports for ``seed`` (deterministic)."""
    rng = random.Random(f"failure_memory:{seed}")
    digits = rng.sample("0123456789", 5)
    account = "ACC-" + "".join(digits)
    lookalikes = {"ACC-" + "".join(rng.sample(digits, 5)) for _ in range(6)} - {account}
    others = sorted(lookalikes) + [f"ACC-{rng.randint(10000, 99999)}" for _ in range(12)]
    others = [a if a != account else f"ACC-{int(account[4:]) % 89999 + 10001}" for a in others]  # never the account
    first, second = rng.sample(PERIODS, 2)
    withdrawn = rng.choice([p for p in PERIODS if p not in (first, second)])
    ids = [f"T-{n}" for n in sorted(rng.sample(range(1000, 9999), knobs.tickets))]
    escalated = rng.randrange(knobs.tickets * 3 // 4, knobs.tickets)  # late: the failure is far back by then
    decoy = rng.randrange(0, max(1, escalated))
    exports = {
        f"{dataset}:{period}": _export_rows(seed, dataset, period, account, others, knobs.rows)
        for dataset in DATASETS
        for period in PERIODS
    }
    escalations = {  # the escalated ticket's line wins when the decoy is the same ticket (one ticket only)
        decoy: lambda _: f"Escalation: withdrawn (the earlier request to compare {withdrawn} was cancelled)",
        escalated: lambda trng: (
            f"Escalation: FINANCE — compare refunds for {second} (approved by {trng.choice(AGENTS)})"
        ),
    }
    tickets = [
        _ticket(seed, tid, ids, others, knobs.ticket_messages, escalations.get(index, lambda _: "Escalation: none"))
        for index, tid in enumerate(ids)
    ]
    return World(account, rng.choice(COMPANIES), first, second, tickets, ids[escalated], exports)


def _export_rows(seed: int, dataset: str, period: str, account: str, others: list[str], count: int) -> list[list]:
    """The ``count`` rows of one quarterly export (``dataset``, ``period``), seeded by both."""
    prng = random.Random(f"failure_memory:{seed}:{dataset}:{period}")
    year, quarter = int(period[:4]), int(period[-1])
    rows = []
    mine = prng.randint(3, 7) if dataset == "refunds" else prng.randint(0, 3)
    for index in range(count):
        acct = account if index < mine else prng.choice(others)
        month = (quarter - 1) * 3 + prng.randint(1, 3)
        rows.append(
            [
                f"RF-{prng.randint(100000, 999999)}",
                f"{year}-{month:02d}-{prng.randint(1, 28):02d}",
                acct,
                f"ORD-{prng.randint(10000, 99999)}",
                prng.choice(REASONS),
                round(prng.uniform(5, 2500), 2),
                prng.choice(STATUSES),
            ]
        )
    # the account's rows have at least one counted and one voided row when there are several
    if mine >= 2:
        rows[0][6], rows[1][6] = "settled", "voided"
    prng.shuffle(rows)
    return rows


def _ticket(
    seed: int, tid: str, ids: list[str], others: list[str], count: int, escalation: Callable[[random.Random], str]
) -> dict:
    """Ticket ``tid`` with ``count`` messages, seeded by it; ``escalation`` writes its escalation line."""
    trng = random.Random(f"failure_memory:{seed}:{tid}")
    line = escalation(trng)
    messages = []
    for _ in range(count):
        who = trng.choice(AGENTS + ["Customer"])
        extra = trng.choice(
            [
                (
                    f"They say {trng.choice(others)} was refunded USD {trng.uniform(50, 3000):,.2f} "
                    f"in {trng.choice(PERIODS)}, why not them?"
                ),
                f"Attached: statement for {trng.choice(PERIODS)} (PDF, 3 pages).",
                f"See also ticket {trng.choice(ids)}.",
                "",
            ]
        )
        messages.append([who, trng.choice(FILLER) + " " + trng.choice(FILLER) + (" " + extra if extra else "")])
    return {
        "id": tid,
        "subject": trng.choice(SUBJECTS),
        "escalation": line,
        "messages": messages,
        "priority": trng.choice(["P2", "P3", "P3", "P4"]),
    }


def total_refunds(rows: list[list], account: str) -> float:
    """The account's refunds of an export's rows: settled and pending count, voided do not."""
    return round(sum(r[5] for r in rows if r[2] == account and r[6] != "voided"), 2)

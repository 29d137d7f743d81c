"""The world of ``one_shot_queue``: the claimed tickets, the orders they name and the fulfilment policy.

Generation only (plain data and the templates it fills); ``tools.py`` renders it and ``family.py`` serves it.
A ticket holds one request (what the customer wants changed) and, in passing, the references the customer
mentions. Which reference an action must cite is decided by the order's fulfilment program, which only the
order page states, and by that program's policy section, which only ``get_policy`` states.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

CALLS_PER_TURN = 4  # the documented limit of the order desk's API (one pop is one call)
QUEUE = "ops-changes"
PROGRAMS = ("standard", "made_to_order", "freight", "marketplace", "subscription")
KINDS = ("address", "quantity", "date")
KIND_LABELS = {"address": "delivery address change", "quantity": "quantity change", "date": "delivery date change"}
ACTIONS = {  # program -> request kind -> the action code the policy section prescribes
    "standard": {"address": "amend_address", "quantity": "amend_quantity", "date": "amend_delivery_date"},
    "made_to_order": {"address": "amend_address", "quantity": "requote", "date": "reschedule_production"},
    "freight": {"address": "rebook_freight", "quantity": "amend_quantity", "date": "rebook_freight"},
    "marketplace": {"address": "forward_to_seller", "quantity": "forward_to_seller", "date": "forward_to_seller"},
    "subscription": {"address": "update_subscription", "quantity": "update_subscription", "date": "skip_cycle"},
}
REFERENCE_KIND = {  # program -> the reference every action on its orders cites
    "standard": "pick_list",
    "made_to_order": "proof",
    "freight": "callback",
    "marketplace": "seller_case",
    "subscription": "subscription",
}
TICKET_REFERENCES = ("proof", "callback", "seller_case")  # stated only in the customer's message
MENTIONED_IN_PASSING = ("proof", "dock_booking", "seller_case")  # the references an aside names
ORDER_REFERENCES = ("pick_list", "subscription")  # stated on the order page (re-readable)
REFERENCE_RULES = {  # the sentence of each policy section that names its reference
    "pick_list": "cite the pick list number printed on the order page (PL-nnnnnn)",
    "proof": "cite the proof number the customer says they approved (PRF-nnnnn), as their message states it",
    "callback": "cite the callback number the customer gives in their message (0nnnn nnnnnn), exactly as they "
    "write it (the carrier's booking line calls it before collection)",
    "seller_case": "cite the seller case number the customer opened with the seller (MKT-nnnnn), as their message "
    "states it",
    "subscription": "cite the subscription id printed on the order page (SUB-nnnnnn)",
}
STATUSES = {
    "standard": ("awaiting pick", "picked", "packed"),
    "made_to_order": ("awaiting proof sign-off", "in production", "finishing"),
    "freight": ("awaiting collection", "booked with carrier", "palletised"),
    "marketplace": ("with seller", "seller confirmed", "seller dispatching"),
    "subscription": ("active", "next cycle scheduled", "active (paused once)"),
}
FIRST = ["Marta", "Jonas", "Aisha", "Tomasz", "Grace", "Ravi", "Elena", "Kwame", "Ines", "Oskar", "Leila", "Dmitri"]
LAST = ["Okafor", "Lindqvist", "Moreau", "Novak", "Haddad", "Brennan", "Sato", "Ferreira", "Keller", "Adeyemi"]
COMPANIES = [
    "Harbourline Foods",
    "Kestrel Print Works",
    "Northgate Dental",
    "Pinecrest Schools Trust",
    "Blue Fern Cafes",
    "Atlas Bike Co-op",
    "Meridian Hotels",
    "Quarry Lane Brewing",
    "Solace Care Homes",
    "Vantage Labs",
    "Willow & Hart Interiors",
    "Osprey Sports Club",
]
STREETS = ["Harbour Road", "Mill Lane", "Station Parade", "Kingsway", "Canal Street", "Orchard Close", "Dock Road"]
TOWNS = ["Leith", "Salford", "Gateshead", "Bristol", "Cardiff", "Derby", "Norwich", "Preston"]
PRODUCTS = [
    "branded paper cups 12oz",
    "stainless gastronorm pans",
    "A5 menu cards, matt",
    "compostable lids",
    "printed tote bags",
    "nitrile gloves (box of 100)",
    "mesh office chairs",
    "LED panel lights 600x600",
    "kraft mailer boxes",
    "embroidered polo shirts",
    "folding banquet tables",
    "thermal receipt rolls",
]
OPENINGS = [
    "Hello team, I hope you can help us with an order that is already in your system.",
    "Hi, writing on behalf of our purchasing team about an open order.",
    "Good morning. We need a change on one of our orders and your portal would not let us make it.",
    "Hello, sorry for the short notice, but something has changed on our side.",
    "Hi there, following up on the order we placed with your account manager last month.",
]
FILLER = [
    "We have ordered from you for several years and the service has always been reliable.",
    "Our finance office has already approved the purchase order, so nothing changes on the invoicing side.",
    "The site manager will be on leave next week, so please copy me on anything you send.",
    "We tried to make this change through the portal but the order is locked for editing.",
    "If there is an extra charge for this, please let us know before you go ahead.",
    "Our previous order arrived in good condition, so please pack this one the same way.",
    "I spoke to someone on your phone line yesterday who said an email would be the quickest route.",
    "We are opening a second site in the spring and will probably order more then.",
    "Please do not split the delivery; the team can only receive one consignment.",
    "The goods are for an event, so timing matters more to us than usual.",
    "Apologies if this has already been raised by my colleague; we share the mailbox.",
    "Could you confirm by email once the change is made? Our auditors like a paper trail.",
    "The rest of the order is fine as it is; only this one thing needs to change.",
    "We noticed the tracking page still shows the old details, which is why we are writing.",
]
CLOSINGS = ["Many thanks,", "Kind regards,", "Thanks in advance,", "Best wishes,", "Cheers,"]
EVENTS = [
    "payment authorised (purchase order)",
    "credit check passed",
    "allocated to warehouse {warehouse}",
    "customer service note: customer asked about lead time",
    "stock reserved",
    "label printed",
    "carrier slot requested",
    "address validated by postcode service",
    "invoice draft generated",
    "order locked for editing (fulfilment started)",
    "account manager note: key account, handle with care",
]
POLICY_PROSE = [
    "Change requests arrive through the claimed-ticket queue and are actioned in the nightly batch; the desk never "
    "edits an order by hand outside the batch.",
    "Every action in the batch carries the one-time authorisation code issued with the customer's ticket. A code "
    "authorises exactly one action on the order its ticket names and expires when the batch runs.",
    "Agents check the order page before choosing an action: the fulfilment program on the order decides which "
    "section of this policy applies, and the status line decides nothing on its own.",
    "Requests that combine several changes are actioned as the change the customer describes first; any second "
    "change is raised by the customer in a new ticket.",
    "Customers are not charged for a change made before dispatch. Where a change creates a cost, the account "
    "manager contacts the customer after the batch; the desk does not quote prices.",
    "The batch rejects any action whose reference does not match the records of the team that fulfils the order, "
    "so the reference must be copied exactly, including its prefix.",
    "Tickets that ask for something this section does not cover are returned to the customer service team with the "
    "action return_to_cs; this is rare and should not be used to avoid reading the request.",
    "Audit: the batch log keeps the ticket id, the code, the action and the reference of every line for seven years; "
    "write them exactly as the ticket and the order state them.",
    "Holidays and stocktakes do not change the actions of this section; they only change when the batch runs.",
    "Where the order page and the customer disagree about a detail, the order page is the record, except for the "
    "references this section says the customer's message states.",
    "The nightly batch is the only place where an action is taken. Notes written on the order page are for "
    "colleagues and are not read by the batch.",
    "Questions about this section go to the fulfilment standards channel; do not guess an action code.",
]


@dataclass(frozen=True)
class Ticket:
    """One claimed ticket: its one-time code, its order, the request and the customer's message."""

    id: str
    code: str
    order: str
    kind: str
    customer: str
    company: str
    subject: str
    paragraphs: list[str]
    references: dict[str, str]


@dataclass(frozen=True)
class Order:
    """One order page: its program, status, lines and history, and the references it prints."""

    id: str
    company: str
    program: str
    status: str
    warehouse: str
    pick_list: str
    subscription: str
    lines: list[list]
    events: list[str]


@dataclass(frozen=True)
class World:
    """One generated shift: the queue's tickets in order, their orders, and the expected batch."""

    tickets: list[Ticket]
    orders: dict[str, Order]
    expected: dict[str, tuple[str, str, str]]  # ticket id -> (code, action, reference)


class Knobs(Protocol):
    """The size knobs generation reads (``OneShotQueue``'s)."""

    tickets: int
    ticket_sentences: int
    order_lines: int
    order_events: int


def generate_world(knobs: Knobs, seed: int) -> World:
    """The queue, the orders and the expected batch for ``seed`` (deterministic)."""
    rng = random.Random(f"one_shot_queue:{seed}")
    ids = [f"TK-{n}" for n in rng.sample(range(4000, 9999), knobs.tickets)]
    order_ids = [f"SO-{n}" for n in rng.sample(range(50000, 99999), knobs.tickets)]
    programs = [PROGRAMS[(index + seed) % len(PROGRAMS)] for index in range(knobs.tickets)]
    rng.shuffle(programs)
    tickets, orders, expected = [], {}, {}
    codes: set[str] = set()
    for tid, oid, program in zip(ids, order_ids, programs, strict=True):
        company = rng.choice(COMPANIES)
        order = _order(rng, oid, company, program, knobs)
        ticket = _ticket(rng, tid, _code(rng, codes), order, knobs.ticket_sentences)
        tickets.append(ticket)
        orders[oid] = order
        expected[tid] = (ticket.code, ACTIONS[program][ticket.kind], reference_of(ticket, order))
    return World(tickets, orders, expected)


def reference_of(ticket: Ticket, order: Order) -> str:
    """The reference the policy section of ``order``'s program requires (from the ticket or the order page)."""
    kind = REFERENCE_KIND[order.program]
    if kind == "pick_list":
        return order.pick_list
    if kind == "subscription":
        return order.subscription
    return ticket.references[kind]


def _code(rng: random.Random, taken: set[str]) -> str:
    """A fresh one-time authorisation code ``AUTH-XXXX-XXXX`` (no 0/O or 1/I)."""
    alphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
    while True:
        code = "AUTH-" + "".join(rng.choices(alphabet, k=4)) + "-" + "".join(rng.choices(alphabet, k=4))
        if code not in taken:
            taken.add(code)
            return code


def _order(rng: random.Random, oid: str, company: str, program: str, knobs: Knobs) -> Order:
    warehouse = rng.choice(["DC-North", "DC-Midlands", "DC-South", "Print Hall B", "Cross-dock 3"])
    lines = [
        [f"SKU-{rng.randint(10000, 99999)}", rng.choice(PRODUCTS), rng.randint(2, 400), round(rng.uniform(0.4, 180), 2)]
        for _ in range(knobs.order_lines)
    ]
    events = []
    for number, day in enumerate(sorted(rng.sample(range(1, 28), min(knobs.order_events, 27)))):
        if number == 0:
            events.append(f"2026-04-{day:02d} {rng.randint(7, 18):02d}:{rng.randint(0, 59):02d}  order received")
            continue
        event = rng.choice(EVENTS).format(warehouse=warehouse)
        events.append(f"2026-04-{day:02d} {rng.randint(7, 18):02d}:{rng.randint(0, 59):02d}  {event}")
    return Order(
        oid,
        company,
        program,
        rng.choice(STATUSES[program]),
        warehouse,
        f"PL-{rng.randint(100000, 999999)}",
        f"SUB-{rng.randint(100000, 999999)}" if program == "subscription" else "",
        lines,
        events,
    )


def _ticket(rng: random.Random, tid: str, code: str, order: Order, sentences: int) -> Ticket:
    kind = rng.choice(KINDS)
    customer = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    references = {
        "proof": f"PRF-{rng.randint(10000, 99999)}",
        "dock_booking": f"DCK-{rng.randint(1000, 9999)}",
        "seller_case": f"MKT-{rng.randint(10000, 99999)}",
    }
    needed = REFERENCE_KIND[order.program]
    mentioned = [needed] if needed in MENTIONED_IN_PASSING else []
    others = [r for r in MENTIONED_IN_PASSING if r != needed]
    mentioned += rng.sample(others, rng.randint(1, 2))  # every ticket mentions references of other kinds too
    rng.shuffle(mentioned)
    body = [rng.choice(OPENINGS), _request(rng, kind, order)]
    filler = rng.sample(FILLER, min(len(FILLER), max(0, sentences - 2 - len(mentioned))))
    asides = [_aside(rng, ref, references[ref]) for ref in mentioned]
    middle = filler + asides
    rng.shuffle(middle)
    body += middle
    callback = f"0{rng.randint(1000, 9999)} {rng.randint(100000, 999999)}"
    body.append(
        f"You can reach me on {callback} if anything is unclear; "
        f"our purchase order number is PO-{rng.randint(1000, 99999)}."
    )
    paragraphs = [" ".join(body[i : i + 3]) for i in range(0, len(body), 3)]
    subject = {"address": "Change of delivery address", "quantity": "Change to quantities", "date": "New delivery date"}
    return Ticket(
        tid,
        code,
        order.id,
        kind,
        customer,
        order.company,
        f"{subject[kind]} - {order.id}",
        paragraphs,
        {**{ref: references[ref] for ref in mentioned}, "callback": callback},
    )


def _request(rng: random.Random, kind: str, order: Order) -> str:
    """The sentence that states the requested change (the ticket's one request)."""
    if kind == "address":
        address = f"{rng.randint(2, 180)} {rng.choice(STREETS)}, {rng.choice(TOWNS)}"
        return f"Please deliver order {order.id} to our new unit at {address} instead of the address on the order."
    if kind == "quantity":
        line = rng.randrange(len(order.lines))
        sku, product, quantity = order.lines[line][0], order.lines[line][1], order.lines[line][2]
        new = quantity + rng.choice([-1, 1]) * rng.randint(1, max(1, quantity // 2))
        return f"We need {max(1, new)} of {sku} ({product}) on order {order.id} rather than the {quantity} we ordered."
    day = rng.randint(4, 29)
    return f"Could order {order.id} be delivered on 2026-05-{day:02d} instead of the date we were given?"


def _aside(rng: random.Random, kind: str, value: str) -> str:
    """A sentence that mentions a reference in passing (the customer does not say it matters)."""
    name = rng.choice(FIRST)
    if kind == "proof":
        return rng.choice(
            [
                f"For your records, {name} in our marketing team signed off the artwork on proof {value} last week.",
                f"The artwork is unchanged: it is still proof {value}, which we approved on the call with your studio.",
            ]
        )
    if kind == "dock_booking":
        return rng.choice(
            [
                f"Our gatehouse will ask the driver for our dock booking reference, {value}, so keep it handy.",
                f"We have booked a dock slot for the delivery on our side under reference {value}.",
            ]
        )
    return rng.choice(
        [
            f"I also opened case {value} with the seller through the marketplace before writing to you.",
            f"The seller's reply to our message came back under their case number {value}, for what it is worth.",
        ]
    )

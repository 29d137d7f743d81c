"""The tools of ``one_shot_queue``: prompts, tool schemas and the texts the tools return (rendering only)."""

from __future__ import annotations

import random
import re

from tasks.base import tool_schema
from tasks.kit.limits import limit_sentence
from tasks.one_shot_queue.world import (
    ACTIONS,
    CALLS_PER_TURN,
    CLOSINGS,
    KIND_LABELS,
    KINDS,
    POLICY_PROSE,
    PROGRAMS,
    QUEUE,
    REFERENCE_KIND,
    REFERENCE_RULES,
    Order,
    Ticket,
)

TOOL_NAMES = ("pop_ticket", "lookup_order", "get_policy")
# what the texts say, for the reference policy and the tests
TICKET_HEADER = re.compile(r"=== Ticket (TK-\d+) · claimed from queue ")
TICKET_CODE = re.compile(r"^Authorisation code: (AUTH-[0-9A-Z]{4}-[0-9A-Z]{4})", re.M)
TICKET_ORDER = re.compile(r"^Order: (SO-\d+)$", re.M)
TICKET_SUBJECT = re.compile(r"^Subject: ([^\n]*)$", re.M)
QUEUE_LEFT = re.compile(r"--- (\d+) tickets? left in the queue ---")
QUEUE_EMPTY = f"The queue {QUEUE} is empty: every ticket has been claimed."
ORDER_HEADER = re.compile(r"=== Order (SO-\d+) · ")
ORDER_PROGRAM = re.compile(r"^Fulfilment program: (\w+) \(policy section: (\w+)\)$", re.M)
POLICY_HEADER = re.compile(r"=== Fulfilment policy · section (\w+) ")
POLICY_ACTION = re.compile(r"^- (delivery address change|quantity change|delivery date change): action (\w+)$", re.M)
POLICY_REFERENCE = re.compile(r"^Reference: every action on an? \w+ order must ([^\n]*)$", re.M)

SYSTEM_PROMPT = (
    "You are a fulfilment operations agent on the order desk of Northwind Supply. You work only through the tools "
    "you are given. When the nightly batch is ready, call submit."
)


def user_prompt() -> str:
    """The task statement."""
    return (
        f"Your shift works the change-request queue {QUEUE}. Claim the queue first: call pop_ticket until it says "
        "the queue is empty, before anything else (tickets still queued when the shift starts are reassigned to "
        "another team). pop_ticket hands you the next ticket and acknowledges it: the ticket leaves the queue and "
        "cannot be fetched again. Each ticket carries a one-time authorisation code for its action. Then, for each "
        "claimed ticket, look up its order (lookup_order) and read the policy section of the order's fulfilment "
        "program (get_policy); order pages and policy sections can be read as often as you like. Submit the "
        'nightly batch as submit(actions=[{"ticket": "TK-...", "auth_code": "AUTH-...", "action": "...", '
        '"reference": "..."}, ...]), one line per claimed ticket, with the action code and the reference that the '
        "policy section prescribes. " + limit_sentence(CALLS_PER_TURN)
    )


def tool_schemas() -> list[dict]:
    """The three task tools."""
    return [
        tool_schema("pop_ticket", f"Claim the next ticket of the queue {QUEUE} (it leaves the queue).", {}),
        tool_schema("lookup_order", "Read an order page.", {"order_id": {"type": "string", "description": "SO-nnnnn"}}),
        tool_schema(
            "get_policy",
            "Read one section of the fulfilment policy.",
            {"section": {"type": "string", "description": f"one of {', '.join(PROGRAMS)}"}},
        ),
    ]


def answer_schema() -> dict:
    """The nightly batch: one line per claimed ticket."""
    line = {
        "type": "object",
        "properties": {
            "ticket": {"type": "string"},
            "auth_code": {"type": "string"},
            "action": {"type": "string"},
            "reference": {"type": "string"},
        },
        "required": ["ticket", "auth_code", "action", "reference"],
    }
    return {
        "type": "object",
        "required": ["actions"],
        "properties": {"actions": {"type": "array", "items": line}},
    }


def render_ticket(ticket: Ticket, left: int) -> str:
    """A claimed ticket, with how many tickets the queue still holds."""
    closing = CLOSINGS[sum(map(ord, ticket.id)) % len(CLOSINGS)]
    lines = [
        f"=== Ticket {ticket.id} · claimed from queue {QUEUE} · acknowledged (removed from the queue) ===",
        f"Authorisation code: {ticket.code} (one-time; valid for one action on the order below)",
        f"Order: {ticket.order}",
        f"From: {ticket.customer}, {ticket.company}",
        f"Subject: {ticket.subject}",
        "",
        *[p + "\n" for p in ticket.paragraphs],
        closing,
        ticket.customer,
        f"--- {left} ticket{'' if left == 1 else 's'} left in the queue ---",
    ]
    return "\n".join(lines)


def render_order(order: Order) -> str:
    """An order page."""
    lines = [
        f"=== Order {order.id} · {order.company} ===",
        f"Fulfilment program: {order.program} (policy section: {order.program})",
        f"Status: {order.status} · warehouse {order.warehouse}",
        f"Pick list: {order.pick_list}",
    ]
    if order.subscription:
        lines.append(f"Subscription: {order.subscription} (monthly cycles)")
    lines.append("Lines:")
    lines += [
        f"  {i}. {sku} | {product} | qty {qty} | unit {price:.2f} GBP"
        for i, (sku, product, qty, price) in enumerate(order.lines, 1)
    ]
    lines.append("History:")
    lines += [f"  {event}" for event in order.events]
    lines.append(f"--- end of order {order.id} ---")
    return "\n".join(lines)


def render_policy(section: str, seed: int, paragraphs: int) -> str:
    """One policy section: prose around the action table and the reference rule of ``section``'s program."""
    rng = random.Random(f"one_shot_queue:{seed}:policy:{section}")
    prose = [POLICY_PROSE[i % len(POLICY_PROSE)] for i in range(paragraphs)]
    rng.shuffle(prose)
    half = len(prose) // 2
    article = "an" if section[0] in "aeiou" else "a"
    rules = [f"How change requests on {section} orders are actioned:"]
    rules += [f"- {KIND_LABELS[kind]}: action {ACTIONS[section][kind]}" for kind in KINDS]
    rules.append(
        f"Reference: every action on {article} {section} order must {REFERENCE_RULES[REFERENCE_KIND[section]]}."
    )
    blocks = [
        f"=== Fulfilment policy · section {section} (rev {10 + len(section)}, effective 2026-01-05) ===",
        *prose[:half],
        "\n".join(rules),
        *prose[half:],
    ]
    return "\n\n".join(blocks) + f"\n--- end of section {section} · sections: {', '.join(PROGRAMS)} ---"

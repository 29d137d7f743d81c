"""The reference policy of ``one_shot_queue``: the careful desk agent who claims the queue, then batches.

It claims the whole queue first, as the task says, noting for each ticket at claiming time what is plainly the
ticket's business: its id, its one-time code, its order and the kind of change asked (``TK-...: code ...;
order ...; request ...``). It does not copy the customer's whole message: at claiming time nothing says
which of the references the customer mentions in passing will matter. Then it looks up each ticket's order,
reads the policy section of the order's program (noting the section's action table and which reference it
requires, ``Policy <section>: ...``) and decides the ticket's line. A reference the order page prints is read
again when that page is out of view (order pages can be re-read); a reference only the ticket stated is taken
from the ticket if its text is still in view, and is otherwise lost: popping again would claim nothing, so
the line goes into the batch with ``NOT NOTED`` and the agent says so. Every reply restates the whole ledger
(``reference_agent/kit/ledger.py``), and the state is rebuilt each turn from the visible messages only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reference_agent.kit.ledger import Ledger, LedgerPolicy, Plan, quoted_rules
from reference_agent.policy_kit import format_summary, make_call, real_failures, texts, tool_texts, tools_used
from tasks.one_shot_queue.world import CALLS_PER_TURN
from tasks.one_shot_queue.tools import (
    ORDER_HEADER,
    ORDER_PROGRAM,
    POLICY_ACTION,
    POLICY_HEADER,
    POLICY_REFERENCE,
    QUEUE_EMPTY,
    QUEUE_LEFT,
    TICKET_CODE,
    TICKET_HEADER,
    TICKET_ORDER,
    TICKET_SUBJECT,
)

RULES = (
    re.compile(r"Claim the queue first: [^\n]*?reassigned to another team\)\."),
    re.compile(r"pop_ticket hands you the next ticket and acknowledges it: [^\n]*?cannot be fetched again\."),
    re.compile(r"Submit the nightly batch as [^\n]*?policy section prescribes\."),
    re.compile(r"The API allows at most \d+ [^\n]*? per turn[^\n]*?\."),
)
SUBJECT_KINDS = {
    "Change of delivery address": "address",
    "Change to quantities": "quantity",
    "New delivery date": "date",
}
LABEL_KINDS = {"delivery address change": "address", "quantity change": "quantity", "delivery date change": "date"}
# the reference a policy section requires: a phrase of its rule -> (name, where it is printed, its pattern)
REFERENCE_SOURCES = {
    "pick list number": ("pick list", "order page", re.compile(r"^Pick list: (PL-\d+)$", re.M)),
    "subscription id": ("subscription id", "order page", re.compile(r"^Subscription: (SUB-\d+)", re.M)),
    "proof number": ("approved proof", "ticket", re.compile(r"\b(PRF-\d{5})\b")),
    "dock booking reference": ("dock booking", "ticket", re.compile(r"\b(DCK-\d{4})\b")),
    "seller case number": ("seller case", "ticket", re.compile(r"\b(MKT-\d{5})\b")),
    "callback number": ("callback number", "ticket", re.compile(r"\breach me on (0\d{4} \d{6})\b")),
}
STORED_TICKET = re.compile(r"\[offloaded to memory: id=(mem-\d+) \| pop_ticket \{\} \| resource ticket:(TK-\d+) \|")
MENTIONED = re.compile(r"\b((?:PRF|DCK|MKT|PO)-\d+)\b")  # the references a careful agent copies from a ticket
BY_NAME = {name: (phrase, where) for phrase, (name, where, _) in REFERENCE_SOURCES.items()}
NOT_NOTED = "NOT NOTED"
TICKET_NOTE = re.compile(
    r"(TK-\d+): code (\S+); order (SO-\d+); request (\w+)(?:; mentions ([A-Z0-9, -]+))?(?:; tel (0\d{4} \d{6}))?"
    r"(?:; program (\w+))?(?:; action (\w+); reference ([^\n;]+))?"
)
POLICY_NOTE = re.compile(
    r"Policy (\w+): address -> (\w+), quantity -> (\w+), date -> (\w+); reference: ([a-z ]+) \((ticket|order page)\)"
)
QUEUE_NOTE = re.compile(r"Queue: (\d+) tickets claimed, (\d+) left")


@dataclass
class TicketState:
    """What the agent knows of one claimed ticket."""

    id: str
    code: str
    order: str
    kind: str
    mentions: tuple[str, ...] = ()
    tel: str | None = None  # the customer's callback number: kept by a summary, not by the agent's own notes
    program: str | None = None
    action: str | None = None
    reference: str | None = None

    def noted(self) -> str:
        """What the notes keep of the ticket's text: the references it mentions and, if a summary kept it, the
        callback number (in the ticket's own words, so the reference patterns read both)."""
        return ", ".join(self.mentions) + (f"; reach me on {self.tel}" if self.tel else "")

    def line(self) -> str:
        """The ledger line (``TICKET_NOTE`` reads it back)."""
        text = f"{self.id}: code {self.code}; order {self.order}; request {self.kind}"
        if self.mentions:
            text += f"; mentions {', '.join(self.mentions)}"
        if self.tel:
            text += f"; tel {self.tel}"
        if self.program:
            text += f"; program {self.program}"
        if self.action and self.reference:
            text += f"; action {self.action}; reference {self.reference}"
        return text


@dataclass
class PolicyState:
    """A policy section's action table and the reference it requires."""

    section: str
    actions: dict[str, str]
    reference: str  # a name of ``BY_NAME``

    def line(self) -> str:
        """The ledger line (``POLICY_NOTE`` reads it back)."""
        where = BY_NAME[self.reference][1]
        table = ", ".join(f"{kind} -> {self.actions[kind]}" for kind in ("address", "quantity", "date"))
        return f"Policy {self.section}: {table}; reference: {self.reference} ({where})"


@dataclass
class Desk:
    """The agent's state: tickets in claiming order, policies, the queue, and the visible pages."""

    tickets: dict[str, TicketState] = field(default_factory=dict)
    policies: dict[str, PolicyState] = field(default_factory=dict)
    claimed: int = 0
    left: int | None = None
    ticket_texts: dict[str, str] = field(default_factory=dict)
    order_texts: dict[str, str] = field(default_factory=dict)
    stored: dict[str, str] = field(default_factory=dict)  # ticket id -> memory id of its offloaded text

    def read_note(self, text: str) -> None:
        """Ledger lines and summary lines: tickets, policies, the queue."""
        for groups in TICKET_NOTE.findall(text):
            tid, code, order, kind, mentions, tel, program, action, reference = groups
            known = self.tickets.get(tid) or TicketState(tid, code, order, kind)
            known.mentions = known.mentions or tuple(m.strip() for m in mentions.split(",") if m.strip())
            known.tel = known.tel or tel or None
            known.program = program or known.program
            if action:
                known.action, known.reference = action, reference.strip()
            self.tickets[tid] = known
        for section, address, quantity, date, reference, _ in POLICY_NOTE.findall(text):
            if reference in BY_NAME:
                actions = {"address": address, "quantity": quantity, "date": date}
                self.policies[section] = PolicyState(section, actions, reference)
        for claimed, left in QUEUE_NOTE.findall(text):
            self.claimed, self.left = max(self.claimed, int(claimed)), int(left)

    def read_result(self, text: str) -> None:
        """A visible tool result: a ticket, an order page, a policy section, the empty queue, or the placeholder of a
        ticket the ``offload`` strategy stored (``read_memory`` returns its text)."""
        for memory_id, resource in STORED_TICKET.findall(text):
            self.stored[resource] = memory_id
        if text.startswith(QUEUE_EMPTY):
            self.left = 0
        ticket = TICKET_HEADER.search(text)
        if ticket:
            self._read_ticket(ticket.group(1), text)
        order = ORDER_HEADER.search(text)
        if order:
            self.order_texts[order.group(1)] = text
        policy = POLICY_HEADER.search(text)
        if policy:
            self._read_policy(policy.group(1), text)

    def _read_ticket(self, tid: str, text: str) -> None:
        code, order, subject = TICKET_CODE.search(text), TICKET_ORDER.search(text), TICKET_SUBJECT.search(text)
        kind = next((k for s, k in SUBJECT_KINDS.items() if subject and subject.group(1).startswith(s)), "unknown")
        if tid not in self.tickets:
            mentions = tuple(dict.fromkeys(MENTIONED.findall(text)))
            self.tickets[tid] = TicketState(
                tid, code.group(1) if code else "unknown", order.group(1) if order else "unknown", kind, mentions
            )
        self.ticket_texts[tid] = text
        left = QUEUE_LEFT.search(text)
        if left:
            self.left = int(left.group(1)) if self.left is None else min(self.left, int(left.group(1)))
        self.claimed = max(self.claimed, len(self.tickets))

    def _read_policy(self, section: str, text: str) -> None:
        actions = {LABEL_KINDS[label]: action for label, action in POLICY_ACTION.findall(text)}
        rule = POLICY_REFERENCE.search(text)
        reference = next(
            (name for phrase, (name, _, _) in REFERENCE_SOURCES.items() if rule and phrase in rule.group(1)), None
        )
        if len(actions) == 3 and reference:
            self.policies[section] = PolicyState(section, actions, reference)

    @property
    def drained(self) -> bool:
        """Whether the queue is claimed to the end."""
        return self.left == 0


def read_desk(notes: list[str], results: list[str]) -> Desk:
    """The state the visible notes and results give (notes first, then results, which are newer or equal)."""
    desk = Desk()
    for text in notes:
        desk.read_note(text)
    for text in results:
        desk.read_result(text)
    return desk


def decide(desk: Desk) -> list[dict]:
    """Fill in every ticket's line the visible pages allow; the calls still needed, in ticket order."""
    calls: list[dict] = []
    for ticket in desk.tickets.values():
        if ticket.action and ticket.reference:
            continue
        order_text = desk.order_texts.get(ticket.order)
        if order_text and not ticket.program:
            program = ORDER_PROGRAM.search(order_text)
            ticket.program = program.group(1) if program else None
        if not ticket.program:
            calls.append(make_call("lookup_order", order_id=ticket.order))
            continue
        policy = desk.policies.get(ticket.program)
        if policy is None:
            calls.append(make_call("get_policy", section=ticket.program))
            continue
        phrase, where = BY_NAME[policy.reference]
        pattern = REFERENCE_SOURCES[phrase][2]
        source = desk.ticket_texts.get(ticket.id, ticket.noted()) if where == "ticket" else order_text
        found = pattern.search(source) if source else None
        if found:
            ticket.action, ticket.reference = policy.actions.get(ticket.kind, "unknown"), found.group(1)
        elif where == "ticket" and ticket.id in desk.stored:
            calls.append(make_call("read_memory", id=desk.stored[ticket.id]))  # offload kept the ticket's text
        elif where == "ticket":
            ticket.action, ticket.reference = policy.actions.get(ticket.kind, "unknown"), NOT_NOTED
        else:
            calls.append(make_call("lookup_order", order_id=ticket.order))  # re-readable: read it again
    unique: list[dict] = []
    for call in calls:
        if call not in unique:
            unique.append(call)
    return unique


def ledger_of(desk: Desk, rules: list[str], calls: list[dict]) -> Ledger:
    """The whole ledger: the task's rules, one line per ticket and policy, the queue, what remains."""
    facts = [t.line() for t in desk.tickets.values()] + [p.line() for p in desk.policies.values()]
    left = desk.left if desk.left is not None else "?"
    checked = [f"Queue: {len(desk.tickets)} tickets claimed, {left} left"]
    remaining = [f"{c['function']['name']} {c['function']['arguments']}" for c in calls] or ["submit the nightly batch"]
    lost = [t.id for t in desk.tickets.values() if t.reference == NOT_NOTED]
    if lost:
        checked.append(
            f"References I did not note and cannot fetch again (the tickets left the queue): {', '.join(lost)}"
        )
    return Ledger(rules=rules, facts=facts, checked=checked, remaining=remaining)


class OneShotQueuePolicy(LedgerPolicy):
    """Reference policy for ``one_shot_queue`` (see the module docstring)."""

    consuming_tools = frozenset({"pop_ticket"})
    """Tools whose repeated call is a new action (the next ticket), never a re-read: under ``offload`` a pop is
    not swapped for ``read_memory`` of an earlier pop's stored result (``policy_kit``)."""

    def plan(self, messages: list[dict]) -> Plan:
        """Claim until the queue is empty; then look up, read the policy, decide; then submit."""
        desk = read_desk(texts(messages), tool_texts(messages))
        rules = quoted_rules(messages, RULES)
        if not desk.drained:
            pops = [make_call("pop_ticket", _repeat=n) for n in range(min(CALLS_PER_TURN, desk.left or CALLS_PER_TURN))]
            ledger = ledger_of(desk, rules, pops[:1])
            return Plan(ledger, pops, note="Claiming the next tickets.")
        calls = decide(desk)
        ledger = ledger_of(desk, rules, calls)
        if calls:
            return Plan(ledger, calls)
        return Plan(ledger, answer={"actions": _batch(desk)}, note="Every claimed ticket has its line; submitting.")

    def summarize(self, history_text: str) -> str:
        """The ledger's facts as findings (tickets, policies, decisions); not the customers' messages."""
        blocks = history_text.split("\n[")
        results = [b.split("]: ", 1)[1] for b in blocks if b.startswith("tool ") and "]: " in b]
        notes = [b for b in blocks if not b.startswith("tool ")]
        desk = read_desk(notes, results)
        for ticket in desk.tickets.values():  # a summary keeps the callback number the ticket states (recorded LLM)
            found = REFERENCE_SOURCES["callback number"][2].search(desk.ticket_texts.get(ticket.id, ""))
            ticket.tel = ticket.tel or (found.group(1) if found else None)
        calls = decide(desk) if desk.drained else [make_call("pop_ticket")]
        ledger = ledger_of(desk, [], calls)
        return format_summary(
            ledger.facts + ledger.checked,
            tools_used(history_text),
            real_failures(history_text),
            ledger.remaining,
        )


def _batch(desk: Desk) -> list[dict]:
    """One line per ticket whose reference is known; a ticket whose reference was lost is left out (the recorded
    LLM left those lines out and said why, rather than submit a line it knew to be wrong)."""
    return [
        {"ticket": t.id, "auth_code": t.code, "action": t.action or "unknown", "reference": t.reference or NOT_NOTED}
        for t in desk.tickets.values()
        if t.reference != NOT_NOTED
    ]

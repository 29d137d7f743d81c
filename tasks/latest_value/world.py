"""The generated ops channel of ``latest_value``: shipments, their fields, and the messages that change them.

Templates, and the rule each obeys (tested in tests/test_latest_value.py, ``test_rule_*``):

* plan of record (message #1, page 1): every shipment's four fields (ETA, carrier, dock, pallets);
* direct update: one line that states one field's new value (``DIRECT``); it supersedes every earlier value;
* copy: "same carrier/dock/ETA as SHP-x" (``COPY``): the other shipment's value at that moment; a field that
  is copied from is never reverted afterwards, so the copied value is settled when the copy is read;
* revert (``REVERT``): "update #N on SHP-x was entered in error: the FIELD from #M stands again"; #N is the
  field's latest change, #M the change before it (the plan of record or a direct update, both of which state
  the value), and the revert restates no value. A reverted field never changes again;
* chatter, proposals ("X could take SHP-y from DATE ... not confirmed"), questions and attachments (packing
  lists) change nothing and never match an update template;
* adoption (``ADOPT``, second half of the channel only): "SHP-x: go ahead with the FIELD proposed in #P"; #P is
  a proposal for that shipment and field at least ``retention`` + 1 pages back (archived), its value differs
  from the field's value then, and the adoption restates no value. An adopted field never changes again, and
  a proposal is adopted at most once;
* the request (the channel's last message) names the asked (shipment, field) pairs: every adopted field first
  (the oldest proposal first), then every reverted field (those whose #M is oldest first), then fields that
  changed, up to ``asked``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date, timedelta

FIELDS = ("eta", "carrier", "dock", "pallets")
LABELS = {"eta": "ETA", "carrier": "carrier", "dock": "dock", "pallets": "pallet count"}
FIELD_OF_LABEL = {label: name for name, label in LABELS.items()}
CARRIERS = [
    "Maersk",
    "Hapag-Lloyd",
    "MSC",
    "CMA CGM",
    "Evergreen",
    "DB Schenker",
    "Kuehne Nagel",
    "DSV",
    "Yang Ming",
    "ONE",
]
PORTS = [
    "Lisbon",
    "Rotterdam",
    "Antwerp",
    "Hamburg",
    "Valencia",
    "Gdansk",
    "Felixstowe",
    "Genoa",
    "Le Havre",
    "Piraeus",
    "Bremerhaven",
    "Algeciras",
]
CUSTOMERS = ["Brightwater Tiles", "Norrland Timber", "Castellan Foods", "Okafor Textiles", "Meridian Glassworks"]
PEOPLE = [
    "Priya Nair (ops lead)",
    "Tomasz Wrobel (yard)",
    "Ines Duarte (carrier desk)",
    "Kwame Mensah (warehouse)",
    "Lena Vogt (customs)",
    "Marco Bellini (planning)",
]
REQUESTER = "Dana Whitfield (account manager)"
VALUE_PATTERNS = {
    "eta": r"\d{4}-\d{2}-\d{2}",
    "carrier": "|".join(re.escape(c) for c in sorted(CARRIERS, key=len, reverse=True)),
    "dock": r"D\d{1,2}",
    "pallets": r"\d{1,3}",
}
SHIPMENT = r"SHP-\d{4}"
REASONS = {
    "eta": ["the vessel lost its berth slot", "customs hold in transit", "the feeder was rolled", "weather at sea"],
    "carrier": ["the first booking was cancelled", "better rate on the lane", "space freed up", "the agent asked"],
    "dock": ["dock under repair", "the cold-chain bay is needed", "yard re-plan", "forklift shortage on that side"],
    "pallets": ["two cartons consolidated", "the customer added an order line", "a damaged pallet was split out"],
}
DIRECT = {
    "eta": [
        "{sid}: ETA is now {value} ({reason}).",
        "Heads-up: {sid} will now arrive on {value} ({reason}).",
        "Confirmed with the carrier: the new ETA for {sid} is {value}.",
    ],
    "carrier": [
        "{sid} is rebooked with {value} ({reason}).",
        "Carrier change: {sid} now goes with {value}.",
    ],
    "dock": [
        "{sid} is reassigned to dock {value} ({reason}).",
        "Yard update: {sid} will unload at dock {value}.",
    ],
    "pallets": [
        "{sid} now ships {value} pallets ({reason}).",
        "Revised count from the warehouse: {sid} is {value} pallets.",
    ],
}
COPY = [
    "{sid}: same {label} as {other} from now on (they travel together).",
    "Please give {sid} the same {label} as {other}; the customer wants them handled as one.",
]
REVERT = [
    "Update #{n} on {sid} was entered in error: the {label} from #{m} stands again.",
    "Please disregard #{n} for {sid}; we are back to the {label} given in #{m}.",
]
PLAN_HEADER = "Plan of record for the spring consolidation (as of Monday 6 April):"
PLAN_ROW = (
    "  {sid} {origin} -> {destination} for {customer} | ETA {eta} | carrier {carrier} | dock {dock} | {pallets} pallets"
)
REQUEST = (
    "I am on a call with the customer in ten minutes. Could someone send me the current values of: {items}? "
    "Only what is in force now, please."
)
CHATTER = [
    "Reminder: stand-up moves to 10:30 tomorrow because of the fire drill.",
    "Has anyone seen the spare label printer? It was on the yard desk yesterday.",
    "The customs portal will be down for maintenance on Saturday night.",
    "Thanks all, great job on the Valencia backlog last week.",
    "New starters on the yard team this week, please show them the safety walk.",
    "The coffee machine on the second floor is fixed again.",
    "Finance asks that all demurrage invoices are forwarded by Friday.",
    "Weather warning for the North Sea on Thursday; expect slow pilot boarding.",
]
QUESTIONS = [
    "Does anyone know whether {sid} still needs a fumigation certificate?",
    "Who is the contact at the destination warehouse for {sid}?",
    "Is the commercial invoice for {sid} signed yet?",
]
PROPOSALS = [
    "{carrier} could take {sid} from {date} if we confirm by Thursday - not confirmed yet, nothing changes for now.",
    "Idea for later: dock {dock} might suit {sid} better; let us discuss at stand-up, no change yet.",
    "The warehouse thinks {sid} may end up near {pallets} pallets, but that is only an estimate for now.",
]
PROPOSED_FIELD = ("carrier", "dock", "pallets")  # the field each proposal template names a value for, in order
ADOPT = [
    "{sid}: go ahead with the {label} proposed in #{p}; it is confirmed now.",
    "Decision on #{p}: yes, the {label} proposed there for {sid} stands from today.",
]
GOODS = [
    "ceramic floor tiles, 60x60",
    "pine boards, kiln dried",
    "olive oil, 5 l tins",
    "cotton yarn, dyed",
    "float glass sheets",
    "canned tomatoes",
    "porcelain wall tiles",
    "birch plywood",
]
REVERT_SHARE = 0.2  # of the changes after the first third of the channel: withdrawals
ADOPT_SHARE = 0.3  # of the changes in the second half of the channel: adoptions of an archived proposal
COPY_SHARE = 0.12  # of the changes: copies of another shipment's value
START = date(2026, 4, 6)  # a Monday


@dataclass(frozen=True)
class Message:
    """One channel message: its number, page, when and who, its one-line text, and any attachment lines."""

    id: int
    page: int
    stamp: str
    author: str
    text: str
    attachment: tuple[str, ...] = ()


@dataclass(frozen=True)
class Shipment:
    """A shipment of the consolidation and its route."""

    id: str
    origin: str
    destination: str
    customer: str


@dataclass
class Channel:
    """The generated channel: shipments, messages in order, the final values, the asked pairs and the reverts
    (revert id, shipment, field, the restored update's id, the page that holds it)."""

    shipments: list[Shipment]
    messages: list[Message]
    final: dict[tuple[str, str], str]
    asked: list[tuple[str, str]]
    reverts: list[tuple[int, str, str, int, int]] = field(default_factory=list)
    adoptions: list[tuple[int, str, str, int, int]] = field(default_factory=list)
    """(adoption id, shipment, field, the proposal's id, the page that holds it)."""


@dataclass
class _Entry:
    """One change of a field: the message id, the value it gave, and its kind (plan, direct, copy, revert)."""

    id: int
    value: str
    kind: str


class _Writer:
    """Generates the channel message by message from one seeded generator."""

    def __init__(self, rng: random.Random, shipments: list[Shipment], retention: int, attachment_lines: int) -> None:
        self.rng = rng
        self.shipments = shipments
        self.retention = retention
        self.attachment_lines = attachment_lines
        self.history: dict[tuple[str, str], list[_Entry]] = {}
        self.frozen: set[tuple[str, str]] = set()
        self.copied: set[tuple[str, str]] = set()
        self.page_of: dict[int, int] = {}
        self.reverts: list[tuple[int, str, str, int, int]] = []
        self.proposals: list[tuple[int, str, str, str]] = []  # (message id, shipment, field, value) not adopted yet
        self.adoptions: list[tuple[int, str, str, int, int]] = []

    def current(self, key: tuple[str, str]) -> str:
        return self.history[key][-1].value

    def stamp(self, page: int, slot: int, per_page: int) -> str:
        """Two pages a working day from Monday 6 April, the messages of a page in time order."""
        day = START + timedelta(days=page // 2 + 2 * (page // 10))  # ten pages a week: weekends skipped
        span = 240 // per_page
        minutes = 8 * 60 + (page % 2) * 240 + slot * span + self.rng.randrange(max(1, span))
        return f"{day:%a} {day.day} {day:%b} {minutes // 60:02d}:{minutes % 60:02d}"

    def value(self, name: str) -> str:
        rng = self.rng
        if name == "eta":
            return f"2026-{rng.choice(['04', '05'])}-{rng.randrange(1, 29):02d}"
        if name == "carrier":
            return rng.choice(CARRIERS)
        if name == "dock":
            return f"D{rng.randrange(1, 19)}"
        return str(rng.randrange(6, 41))

    def plan(self, message_id: int) -> str:
        rows = [PLAN_HEADER]
        for shipment in self.shipments:
            values = {name: self.value(name) for name in FIELDS}
            for name in FIELDS:
                self.history[(shipment.id, name)] = [_Entry(message_id, values[name], "plan")]
            rows.append(
                PLAN_ROW.format(
                    sid=shipment.id,
                    origin=shipment.origin,
                    destination=shipment.destination,
                    customer=shipment.customer,
                    **values,
                )
            )
        return "\n".join(rows)

    def update(self, message_id: int, page: int, revert_share: float, adopt_share: float, copy_share: float) -> str:
        """One update line (a revert, an adoption, a copy or a direct change), recorded in the history."""
        roll = self.rng.random()
        if roll < revert_share:
            text = self._revert(message_id, page)
            if text:
                return text
        if roll < revert_share + adopt_share:
            text = self._adopt(message_id, page)
            if text:
                return text
        if roll < revert_share + adopt_share + copy_share:
            text = self._copy(message_id)
            if text:
                return text
        return self._direct(message_id)

    def _direct(self, message_id: int) -> str:
        rng = self.rng
        open_keys = [k for k in sorted(self.history) if k not in self.frozen]
        sid, name = rng.choice(open_keys)
        value = self.value(name)
        while value == self.current((sid, name)):
            value = self.value(name)
        self.history[(sid, name)].append(_Entry(message_id, value, "direct"))
        return rng.choice(DIRECT[name]).format(sid=sid, value=value, reason=rng.choice(REASONS[name]))

    def _copy(self, message_id: int) -> str | None:
        rng = self.rng
        name = rng.choice(["eta", "carrier", "dock"])
        pairs = [
            (a.id, b.id)
            for a in self.shipments
            for b in self.shipments
            if a.id != b.id
            and (a.id, name) not in self.frozen
            and (b.id, name) not in self.frozen
            and self.current((a.id, name)) != self.current((b.id, name))
        ]
        if not pairs:
            return None
        sid, other = rng.choice(pairs)
        self.copied.add((other, name))
        self.history[(sid, name)].append(_Entry(message_id, self.current((other, name)), "copy"))
        return rng.choice(COPY).format(sid=sid, label=LABELS[name], other=other)

    def _revert(self, message_id: int, page: int) -> str | None:
        rng = self.rng
        candidates = []
        for key, entries in sorted(self.history.items()):
            if key in self.frozen or key in self.copied or len(entries) < 2:
                continue
            last, before = entries[-1], entries[-2]
            if last.kind == "direct" and before.kind in ("plan", "direct") and before.value != last.value:
                candidates.append((key, last, before))
        if not candidates:
            return None
        deep = [c for c in candidates if self.page_of[c[2].id] < page - self.retention]
        restated = [c for c in deep if c[2].kind == "direct"]  # an earlier change, not the plan of record
        key, last, before = rng.choice(restated or deep or candidates)
        self.history[key].append(_Entry(message_id, before.value, "revert"))
        self.frozen.add(key)
        self.reverts.append((message_id, key[0], key[1], before.id, self.page_of[before.id]))
        return rng.choice(REVERT).format(n=last.id, sid=key[0], label=LABELS[key[1]], m=before.id)

    def _adopt(self, message_id: int, page: int) -> str | None:
        """Adopt an archived proposal: its value becomes the field's, and the field is settled for good."""
        candidates = [
            proposal
            for proposal in self.proposals
            if self.page_of[proposal[0]] < page - self.retention
            and (proposal[1], proposal[2]) not in self.frozen
            and (proposal[1], proposal[2]) not in self.copied
            and self.current((proposal[1], proposal[2])) != proposal[3]
        ]
        if not candidates:
            return None
        proposal = self.rng.choice(candidates)
        self.proposals.remove(proposal)
        proposal_id, sid, name, value = proposal
        key = (sid, name)
        self.history[key].append(_Entry(message_id, value, "adopt"))
        self.frozen.add(key)
        self.adoptions.append((message_id, sid, name, proposal_id, self.page_of[proposal_id]))
        return self.rng.choice(ADOPT).format(sid=sid, label=LABELS[name], p=proposal_id)

    def filler(self, message_id: int) -> tuple[str, tuple[str, ...]]:
        """A message that changes nothing: chatter, a question, a proposal or an attachment."""
        rng = self.rng
        sid = rng.choice(self.shipments).id
        kind = rng.random()
        if kind < 0.3:
            return self.attachment(sid)
        if kind < 0.5:
            return rng.choice(CHATTER), ()
        if kind < 0.7:
            return rng.choice(QUESTIONS).format(sid=sid), ()
        which = rng.randrange(len(PROPOSALS))
        values = {"carrier": rng.choice(CARRIERS), "date": self.value("eta")}
        values.update(dock=self.value("dock"), pallets=self.value("pallets"))
        name = PROPOSED_FIELD[which]
        self.proposals.append((message_id, sid, name, values[name]))
        return PROPOSALS[which].format(sid=sid, **values), ()

    def attachment(self, sid: str) -> tuple[str, tuple[str, ...]]:
        rng = self.rng
        lines = [
            f"  line {i + 1:02d} | SKU {rng.randrange(10, 99)}-{rng.randrange(1000, 9999)} | "
            f"{rng.choice(GOODS)} | {rng.randrange(4, 90)} cartons | {rng.uniform(80, 950):.1f} kg | "
            f"HS {rng.randrange(3900, 9900)}.{rng.randrange(10, 99)}"
            for i in range(self.attachment_lines)
        ]
        return f"Attached: packing list for {sid} (customs copy), for reference.", tuple(lines)


def generate_channel(
    rng: random.Random,
    shipments: int,
    pages: int,
    per_page: int,
    updates_per_page: int,
    retention: int,
    asked: int,
    attachment_lines: int,
) -> Channel:
    """The whole channel: page 1 opens with the plan of record, the last page ends with the request."""
    codes = rng.sample(range(1000, 9999), shipments)
    fleet = []
    for code in codes:
        origin, destination = rng.sample(PORTS, 2)
        fleet.append(Shipment(f"SHP-{code}", origin, destination, rng.choice(CUSTOMERS)))
    writer = _Writer(rng, fleet, retention, attachment_lines)
    messages: list[Message] = []
    for page in range(1, pages + 1):
        first = len(messages) + 1
        slots = set(rng.sample(range(per_page), min(updates_per_page, per_page))) if 1 < page < pages else set()
        for slot in range(per_page):
            message_id = first + slot
            writer.page_of[message_id] = page
            attachment: tuple[str, ...] = ()
            if page == 1 and slot == 0:
                text, author = writer.plan(message_id), PEOPLE[0]
            elif page == pages and slot == per_page - 1:
                text, author = "", REQUESTER  # the request, written once the asked pairs are known
            elif slot in slots:
                share = REVERT_SHARE if page > pages // 3 else 0.0  # withdrawals once the changes have piled up
                adopt = ADOPT_SHARE if page > pages // 2 else 0.0  # adoptions once proposals are archived
                text, author = writer.update(message_id, page, share, adopt, COPY_SHARE), rng.choice(PEOPLE)
            else:
                (text, attachment), author = writer.filler(message_id), rng.choice(PEOPLE)
            messages.append(Message(message_id, page, writer.stamp(page, slot, per_page), author, text, attachment))
    final = {key: entries[-1].value for key, entries in writer.history.items()}
    chosen = _asked(rng, writer, asked)
    items = ", ".join(f"{sid} {LABELS[name]}" for sid, name in chosen)
    last = messages[-1]
    messages[-1] = Message(last.id, last.page, last.stamp, last.author, REQUEST.format(items=items))
    return Channel(fleet, messages, final, chosen, writer.reverts, writer.adoptions)


def _asked(rng: random.Random, writer: _Writer, count: int) -> list[tuple[str, str]]:
    """Every adopted field first (the oldest proposal first), then every reverted field (the oldest restored update
    first), then fields that changed, then others; adopted and reverted fields fill at most two thirds."""
    adopted = [(sid, name) for _, sid, name, _, _ in sorted(writer.adoptions, key=lambda a: (a[4], a[3]))]
    reverted = [(sid, name) for _, sid, name, _, _ in sorted(writer.reverts, key=lambda r: (r[4], r[0]))]
    settled = adopted + reverted
    changed = [k for k, entries in sorted(writer.history.items()) if len(entries) > 1 and k not in settled]
    rest = [k for k in sorted(writer.history) if k not in settled and k not in changed]
    rng.shuffle(changed)
    rng.shuffle(rest)
    chosen = (settled[: max(1, count * 2 // 3)] + changed + rest)[:count]
    rng.shuffle(chosen)
    return chosen


def template_regex(template: str, name: str | None = None) -> re.Pattern:
    """The regular expression that reads a template's lines back (named groups: sid, value, other, n, m, p, label)."""
    groups = {
        "sid": f"(?P<sid>{SHIPMENT})",
        "other": f"(?P<other>{SHIPMENT})",
        "value": f"(?P<value>{VALUE_PATTERNS[name]})" if name else "",
        "reason": "[^()]+",
        "label": "(?P<label>" + "|".join(sorted(FIELD_OF_LABEL, key=len, reverse=True)) + ")",
        "n": r"(?P<n>\d+)",
        "m": r"(?P<m>\d+)",
        "p": r"(?P<p>\d+)",
    }
    parts = re.split(r"\{(\w+)\}", template)
    return re.compile("".join(re.escape(p) if i % 2 == 0 else groups[p] for i, p in enumerate(parts)) + "$")


DIRECT_PATTERNS = [(name, template_regex(t, name)) for name, templates in DIRECT.items() for t in templates]
COPY_PATTERNS = [template_regex(t) for t in COPY]
REVERT_PATTERNS = [template_regex(t) for t in REVERT]
ADOPT_PATTERNS = [template_regex(t) for t in ADOPT]
PROPOSAL_PATTERNS = {  # field -> the proposal template's line, read back (groups: sid, value)
    "carrier": re.compile(rf"^(?P<value>{VALUE_PATTERNS['carrier']}) could take (?P<sid>{SHIPMENT}) from "),
    "dock": re.compile(rf"^Idea for later: dock (?P<value>{VALUE_PATTERNS['dock']}) might suit (?P<sid>{SHIPMENT}) "),
    "pallets": re.compile(rf"^The warehouse thinks (?P<sid>{SHIPMENT}) may end up near (?P<value>\d{{1,3}}) pallets"),
}
PLAN_PATTERN = re.compile(
    rf"^  (?P<sid>{SHIPMENT}) .+? \| ETA (?P<eta>{VALUE_PATTERNS['eta']})"
    rf" \| carrier (?P<carrier>{VALUE_PATTERNS['carrier']})"
    rf" \| dock (?P<dock>{VALUE_PATTERNS['dock']}) \| (?P<pallets>\d+) pallets$"
)
MESSAGE_LINE = re.compile(r"^#(?P<id>\d+) \[[^\]]+\] [^:]+: (?P<text>.*)$")
REQUEST_ITEM = re.compile(
    rf"(?P<sid>{SHIPMENT}) (?P<label>" + "|".join(sorted(FIELD_OF_LABEL, key=len, reverse=True)) + ")"
)


def render_message(message: Message) -> str:
    """A message as the channel prints it: ``#id [stamp] author: text``, then its attachment lines."""
    return "\n".join([f"#{message.id} [{message.stamp}] {message.author}: {message.text}", *message.attachment])

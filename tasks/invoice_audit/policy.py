"""``invoice_audit``: find every duplicate charge in a customer's year of invoices (seed 004).

The agent pages through the invoice history with ``get_invoice_page(page)``. Some charges
were billed twice: the same vendor, service date and amount under two invoice ids,
the copies ``min_distance``..``max_distance`` pages apart. Monthly subscriptions (same
vendor and amount, other dates) and same-day charges of other vendors are distractors.

Answer: ``submit(invoice_ids=[...])``, every id involved in a duplicate (both copies).
Grade: success = the exact set; score = F1 against it.

Reference policy: reads pages in order; after each page it writes a compact ledger of
that page's invoices in its reply (as a careful agent takes notes) and recites the
duplicates found so far; it compares everything visible. A page whose call is still
visible but whose content and ledger are gone is re-read; rounds that vanished without
a trace are not (the agent moves on from the latest page it can see). Batching (profile
``realistic``): ``parallel_calls`` offers every other page still to fetch once the page count
is known; a rate-limited page is requested again (tasks/README.md).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

from tasks.base import Grade, KnobError, TaskFamily, TaskInstance, ToolResult, tool_schema
from tasks.policy_kit import (
    REPORT_PREFIX,
    delegation_failed,
    failed_attempts,
    format_summary,
    latest_results,
    make_call,
    other_calls,
    parse_ranges,
    pending_pages,
    ranges,
    rate_limit_note,
    reply,
    submit,
    texts,
    tool_texts,
    tools_used,
)

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

PAGE_HEADER = re.compile(r"=== Invoice history . customer (\S+) . page (\d+) of (\d+) ===")
INVOICE_BLOCK = re.compile(
    r"Invoice (INV-\d{4}-\d{5})\n\s+Date: (\d{4}-\d{2}-\d{2})\s+Vendor: ([^\n]+?)\n\s+Description: [^\n]*\n\s+Amount: USD ([\d,]+\.\d{2})"
)
LEDGER = re.compile(r"Ledger p(\d+): ([^\n]*)")
LEDGER_ITEM = re.compile(r"(INV-\d{4}-\d{5})\|([^|;]+)\|(\d{4}-\d{2}-\d{2})\|([\d.]+)")
DUPS_LINE = re.compile(r"(?:Duplicates so far|duplicate charges found): ([^\n]*)")
REVIEWED = re.compile(r"pages reviewed: ([\d,\- none]+) of (\d+)")
INVOICE_ID = re.compile(r"INV-\d{4}-\d{5}")


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


class InvoiceAudit(TaskFamily):
    """Family generator. Knobs: ``pages``, ``invoices_per_page``, ``duplicates``,
    ``min_distance`` and ``max_distance`` (pages between the two copies of a duplicate)."""

    name = "invoice_audit"

    def __init__(self, pages: int = 30, invoices_per_page: int = 20, duplicates: int = 6,
                 min_distance: int = 1, max_distance: int = 12) -> None:
        self.pages = self.check_knob("pages", pages, 2, 2000)
        self.invoices_per_page = self.check_knob("invoices_per_page", invoices_per_page, 2, 200)
        self.duplicates = self.check_knob("duplicates", duplicates, 1, 500)
        self.min_distance = self.check_knob("min_distance", min_distance, 0, pages - 1)
        self.max_distance = self.check_knob("max_distance", max_distance, min_distance, pages - 1)
        if duplicates * 2 > pages * invoices_per_page // 2:
            raise KnobError(f"task knob duplicates={duplicates} is too many for {pages} pages x {invoices_per_page} invoices")

    def generate(self, seed: int) -> "InvoiceAuditInstance":
        """Generate the invoice history for ``seed``."""
        rng = random.Random(f"invoice_audit:{seed}")
        total = self.pages * self.invoices_per_page
        originals = total - self.duplicates
        used_keys: set[tuple[str, str, float]] = set()
        serials = rng.sample(range(10000, 99999), total)
        invoices: list[Invoice] = []
        subscriptions = {vendor: round(rng.uniform(40, 900), 2) for vendor, _ in rng.sample(VENDORS, 4)}

        def new_invoice(index: int, vendor: str, description: str, amount: float, date: str) -> Invoice:
            return Invoice(
                id=f"INV-2026-{serials[index]}",
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

        while len(invoices) < originals:
            vendor, descriptions = rng.choice(VENDORS)
            month, day = rng.randint(1, 12), rng.randint(1, 28)
            date = f"2026-{month:02d}-{day:02d}"
            if vendor in subscriptions and rng.random() < 0.35:
                amount, description, date = subscriptions[vendor], "Monthly subscription", f"2026-{month:02d}-01"
            else:
                amount, description = round(rng.uniform(12, 4800), 2), rng.choice(descriptions)
            key = (vendor, date, amount)
            if key in used_keys:
                continue
            used_keys.add(key)
            invoices.append(new_invoice(len(invoices), vendor, description, amount, date))

        # Plant duplicates: copy an invoice to a position `distance` pages later.
        per = self.invoices_per_page
        pairs: list[tuple[str, str]] = []
        chosen: set[int] = set()
        for _ in range(self.duplicates):
            distance = rng.randint(self.min_distance, self.max_distance)
            while True:
                source_page = rng.randrange(0, self.pages - distance)
                position = source_page * per + rng.randrange(per)
                if position < len(invoices) and position not in chosen:
                    break
            chosen.add(position)
            source = invoices[position]
            target = min(len(invoices), (source_page + distance) * per + rng.randrange(per))
            copy = new_invoice(len(invoices), source.vendor, source.description, source.amount, source.date)
            invoices.insert(target, copy)
            chosen = {c + 1 if c >= target else c for c in chosen}
            pairs.append((source.id, copy.id))
        return InvoiceAuditInstance(self, seed, invoices, pairs)


class InvoiceAuditInstance(TaskInstance):
    """One generated invoice history."""

    family = InvoiceAudit.name

    def __init__(self, family: InvoiceAudit, seed: int, invoices: list[Invoice], pairs: list[tuple[str, str]]) -> None:
        self.seed = seed
        self.id = f"invoice_audit-p{family.pages}-s{seed}"
        self.pages = family.pages
        self.per_page = family.invoices_per_page
        self.invoices = invoices
        self.pairs = pairs
        self.answer_ids = sorted({i for pair in pairs for i in pair})
        self.customer = f"C{seed % 1000:03d}"
        self.system_prompt = (
            "You are a billing-audit agent for the CloudLedger support team. You work only through "
            "the tools you are given. Be thorough: a missed duplicate charge costs the customer money, "
            "a false accusation costs the vendor relationship. When you are done, call submit."
        )
        self.user_prompt = (
            f"Audit customer {self.customer}'s invoice history for 2026. It has {self.pages} pages "
            f"(get_invoice_page, pages 1 to {self.pages}, {self.per_page} invoices each). Find every "
            "duplicate charge: the same vendor, service date and amount billed under two different "
            "invoice ids. Monthly subscriptions recur on purpose and are not duplicates. Submit the ids "
            "of every invoice involved in a duplicate charge, both copies, with submit(invoice_ids=[...])."
        )
        self.tools = [
            tool_schema("get_invoice_page", "Fetch one page of the customer's invoice history.",
                        {"page": {"type": "integer", "description": f"1..{self.pages}"}})
        ]
        self.answer_schema = {
            "type": "object",
            "properties": {"invoice_ids": {"type": "array", "items": {"type": "string"},
                                           "description": "ids of every invoice in a duplicate charge"}},
            "required": ["invoice_ids"],
        }

    def page_text(self, page: int) -> str:
        """The text of one page, as the portal prints it."""
        lines = [
            f"=== Invoice history · customer {self.customer} · page {page} of {self.pages} ===",
            "CloudLedger Billing Portal | Home > Customers > Invoices | Export CSV | Filters: year=2026, status=any",
        ]
        start = (page - 1) * self.per_page
        for invoice in self.invoices[start : start + self.per_page]:
            lines += [
                f"Invoice {invoice.id}",
                f"  Date: {invoice.date}   Vendor: {invoice.vendor}",
                f"  Description: {invoice.description}",
                f"  Amount: USD {invoice.amount:,.2f}   Tax: USD {invoice.tax:,.2f}   Status: {invoice.status}",
                f"  Payment ref: {invoice.payment_ref}   PO: {invoice.po}   Billed to: CloudLedger GmbH, {invoice.city} office",
            ]
        lines.append(
            f"Showing {start + 1}-{min(start + self.per_page, len(self.invoices))} of {len(self.invoices)} invoices · "
            "Need help? support@cloudledger.example · Terms · Privacy · © 2026 CloudLedger"
        )
        return "\n".join(lines)

    def call(self, name: str, args: dict) -> ToolResult:
        """``get_invoice_page(page)``."""
        if name != "get_invoice_page":
            return ToolResult(f"ERROR: unknown tool {name!r}; available: get_invoice_page", is_error=True)
        page = args.get("page")
        if isinstance(page, str) and page.strip().isdigit():
            page = int(page)
        if not isinstance(page, int) or isinstance(page, bool) or not 1 <= page <= self.pages:
            return ToolResult(f"ERROR: page must be an integer from 1 to {self.pages}, got {page!r}", is_error=True)
        return ToolResult(self.page_text(page), resource=f"page:{page}")

    def grade(self, answer: dict) -> Grade:
        """Exact set for success, F1 for the score."""
        raw = answer.get("invoice_ids") if isinstance(answer, dict) else None
        given = {str(x).strip() for x in raw} if isinstance(raw, list) else set()
        truth = set(self.answer_ids)
        hits = len(given & truth)
        precision = hits / len(given) if given else 0.0
        recall = hits / len(truth) if truth else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return Grade(given == truth, round(f1, 4), {"expected": len(truth), "given": len(given), "correct": hits,
                                                     "missed": sorted(truth - given), "wrong": sorted(given - truth)})

    def reference_policy(self) -> "InvoicePolicy":
        """The careful page-by-page auditor."""
        return InvoicePolicy()

    def data_fingerprint(self) -> list:
        """Every invoice and the planted pairs."""
        return [[vars(i) for i in self.invoices], self.pairs]


def _money(text: str) -> float:
    return float(text.replace(",", ""))


SUBTASK = re.compile(r"Audit pages (\d+)-(\d+) of (\d+) ")


class InvoicePolicy:
    """Reference policy for ``invoice_audit`` (see the module docstring).

    With the ``isolate`` strategy it delegates the audit in chunks of ``chunk`` pages;
    each sub-agent reports the duplicates inside its chunk only, so pairs that straddle
    two chunks are missed: the honest cost of isolation on this task.
    """

    chunk = 10

    def _knowledge(self, tool_outputs: list[str], notes: list[str]):
        known: dict[str, tuple[str, str, float]] = {}
        content_pages: set[int] = set()
        noted_pages: set[int] = set()
        reviewed: set[int] = set()
        dups: set[str] = set()
        total = None
        for text in tool_outputs:
            header = PAGE_HEADER.search(text)
            if not header:
                continue
            content_pages.add(int(header.group(2)))
            total = int(header.group(3))
            for inv_id, date, vendor, amount in INVOICE_BLOCK.findall(text):
                known[inv_id] = (vendor.strip(), date, _money(amount))
        for text in notes:
            for page, items in LEDGER.findall(text):
                noted_pages.add(int(page))
                for inv_id, vendor, date, amount in LEDGER_ITEM.findall(items):
                    known[inv_id] = (vendor.strip(), date, float(amount))
            for line in DUPS_LINE.findall(text):
                dups.update(INVOICE_ID.findall(line))
            for pages, of in REVIEWED.findall(text):
                reviewed |= parse_ranges(pages)
                total = int(of)
            match = re.search(r"It has (\d+) pages", text)
            if match:
                total = int(match.group(1))
        by_key: dict[tuple, list[str]] = {}
        for inv_id, key in known.items():
            by_key.setdefault(key, []).append(inv_id)
        for ids in by_key.values():
            if len(ids) > 1:
                dups.update(ids)
        return content_pages, noted_pages, reviewed, dups, total, known

    def _notes(self, messages: list[dict]) -> list[str]:
        return texts(messages) + [t for t in tool_texts(messages) if t.startswith(REPORT_PREFIX)]

    def delegate_plan(self, messages: list[dict]) -> str | None:
        """The next chunk of pages to hand to a sub-agent, or None when all are covered."""
        _, _, reviewed, _, total, _ = self._knowledge([], self._notes(messages))
        if not total or delegation_failed(messages):
            return None  # nothing to split yet, or a sub-agent failed: audit the rest in this context
        missing = [p for p in range(1, total + 1) if p not in reviewed]
        if not missing:
            return None
        start = missing[0]
        end = min(start + self.chunk - 1, total)
        return (f"Audit pages {start}-{end} of {total} of the invoice history with get_invoice_page. Find every "
                "duplicate charge among these pages: the same vendor, service date and amount billed under two "
                "different invoice ids (monthly subscriptions are not duplicates). Report the pages reviewed and "
                "the ids of every invoice in a duplicate charge.")

    def subagent_policy(self, task: str) -> "InvoiceSubPolicy":
        """The policy of a sub-agent given ``task``."""
        return InvoiceSubPolicy()

    def _plan(self, messages: list[dict]) -> tuple[list[tuple[str, int]], set[str]]:
        """The pages still to fetch (``pending_pages``) and the duplicates found so far."""
        content_pages, noted, reviewed, dups, total, _ = self._knowledge(tool_texts(messages), self._notes(messages))
        return pending_pages(messages, "get_invoice_page", content_pages | noted | reviewed, total), dups

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Read the next page, re-read a lost one, re-issue a rate-limited one, or submit."""
        plan, dups = self._plan(messages)
        note = self._ledger_note(messages, dups)
        move = plan[0] if plan else None
        if move and move[0] == "reread":
            return reply(note + f"\nPage {move[1]} is no longer in view and I have no notes on it; reading it again.",
                         make_call("get_invoice_page", page=move[1]))
        if move:
            return reply(note, make_call("get_invoice_page", page=move[1]))
        return submit(note + "\nAll pages reviewed; submitting the duplicate charges found.", invoice_ids=sorted(dups))

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """Every other page still to fetch (lost, rate limited, or not read yet up to the known page count).

        The page count comes from the prompt or a page header; while it is unknown, only the
        next page is known to exist, so nothing is added.
        """
        plan, _ = self._plan(messages)
        return other_calls((make_call("get_invoice_page", page=p) for _, p in plan), first)

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The duplicates visible now (from pages and ledgers), or None before any page was seen."""
        content_pages, noted, reviewed, dups, _, _ = self._knowledge(tool_texts(messages), self._notes(messages))
        if not content_pages | noted | reviewed:
            return None
        return {"invoice_ids": sorted(dups)}

    def _ledger_note(self, messages: list[dict], dups: set[str]) -> str:
        """Notes on the page just read (the last visible tool result) and the running findings."""
        lines = []
        for text in latest_results(messages):
            header = PAGE_HEADER.search(text)
            if header:
                items = [f"{i}|{v.strip()}|{d}|{_money(a):.2f}" for i, d, v, a in INVOICE_BLOCK.findall(text)]
                lines.append(f"Ledger p{header.group(2)}: " + "; ".join(items))
        limited = rate_limit_note(messages)
        if limited:
            lines.append(limited)
        lines.append("Duplicates so far: " + (", ".join(sorted(dups)) or "none"))
        return "\n".join(lines)

    def summarize(self, history_text: str) -> str:
        """Keep findings and progress; the per-invoice ledger is not carried (summaries are lossy)."""
        blocks = history_text.split("\n[")
        tool_outputs = [b for b in blocks if PAGE_HEADER.search(b)]
        content_pages, noted, reviewed, dups, total, _ = self._knowledge(tool_outputs, [history_text])
        done = content_pages | noted | reviewed
        total_text = str(total) if total else "?"
        remaining = sorted(set(range(1, (total or 0) + 1)) - done)
        findings = [f"duplicate charges found: {', '.join(sorted(dups)) or 'none yet'}"]
        progress = [f"pages reviewed: {ranges(done)} of {total_text}", f"remaining pages: {ranges(remaining)}"]
        return format_summary(findings, tools_used(history_text), failed_attempts(history_text), progress)


class InvoiceSubPolicy(InvoicePolicy):
    """A sub-agent auditing the page range named in its task, then reporting."""

    def _todo(self, messages: list[dict]) -> tuple[tuple[int, int, int] | None, list[int], set[int], set[str]]:
        """The task's (start, end, total), its pages still to read in order, those done, and the duplicates."""
        task = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
        match = SUBTASK.search(task)
        if not match:
            return None, [], set(), set()
        start, end, total = (int(g) for g in match.groups())
        content_pages, noted, reviewed, dups, _, _ = self._knowledge(tool_texts(messages), texts(messages))
        done = {p for p in content_pages | noted | reviewed if start <= p <= end}
        todo = [p for p in range(start, end + 1) if p not in done]  # a rate-limited page is not done: read again
        return (start, end, total), todo, done, dups

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Read the pages of the range in order, then ``report``."""
        scope, todo, done, dups = self._todo(messages)
        if scope is None:
            return reply("I cannot tell which pages to audit.", make_call("report", conclusion="no page range given"))
        start, end, total = scope
        note = self._ledger_note(messages, dups)
        if todo:  # the running progress line lets a cut sub-agent go on where it was
            progress = f"\nSub-task progress: pages reviewed: {ranges(sorted(done)) or 'none'} of {total}"
            return reply(note + progress, make_call("get_invoice_page", page=todo[0]))
        conclusion = (f"{REPORT_PREFIX}: pages reviewed: {start}-{end} of {total}; "
                      f"duplicate charges found: {', '.join(sorted(dups)) or 'none'}")
        return reply(note, make_call("report", conclusion=conclusion))

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The other pages of the task's range not read yet, in order."""
        _, todo, _, _ = self._todo(messages)
        return other_calls((make_call("get_invoice_page", page=p) for p in todo), first)

    def early_answer(self, messages: list[dict]) -> dict | None:
        """None: a sub-agent reports its range; it never submits the task's answer."""
        return None

"""The reference policy of ``invoice_audit`` and its sub-agent (strategy ``isolate``).

The auditor reads the history page by page, following each page's ``next_cursor``; after
each page it writes a compact ledger of that page's invoices in its reply (as a careful
agent takes notes), copies the page's ``next_cursor`` line, and recites the duplicates
found so far; it compares everything visible. A page whose call is still visible but
whose content and ledger are gone is re-read (its cursor is in the call); a page whose
cursor is nowhere in view is reached by re-reading pages from the furthest cursor it still
knows (``kit.cursor_reading``); rounds that vanished without a trace are not re-read (the
agent moves on from the latest page it can see). Batching (profiles ``realistic`` and
``greedy``): ``parallel_calls`` offers the other reads whose cursors are in view (lost or
rate-limited pages besides the next one), so a run still takes one round per page.
"""
from __future__ import annotations

import re

from tasks.invoice_audit.tools import TOOL
from tasks.kit.cursor_reading import FOOTER, RangeReader, footer_line, known_cursors, onward, plan_reads
from tasks.kit.ledger import Ledger, quoted_rules
from tasks.policy_kit import (
    REPORT_PREFIX,
    delegation_failed,
    failed_attempts,
    format_summary,
    latest_results,
    make_call,
    other_calls,
    parse_ranges,
    ranges,
    rate_limit_note,
    reply,
    submit,
    texts,
    tool_texts,
    tools_used,
)

PAGE_HEADER = re.compile(r"=== Invoice history . customer (\S+) . page (\d+) of (\d+) ===")
INVOICE_BLOCK = re.compile(
    r"Invoice (INV-\d{4}-\d{5})\n\s+Date: (\d{4}-\d{2}-\d{2})\s+Vendor: ([^\n]+?)\n\s+Description: [^\n]*\n\s+Amount: USD ([\d,]+\.\d{2})"
)
LEDGER = re.compile(r"Ledger p(\d+): ([^\n]*)")
LEDGER_ITEM = re.compile(r"(INV-\d{4}-\d{5})\|([^|;]+)\|(\d{4}-\d{2}-\d{2})\|([\d.]+)")
DUPS_LINE = re.compile(r"(?:Duplicates so far|duplicate charges found): ([^\n]*)")
REVIEWED = re.compile(r"pages reviewed: ([\d,\- none]+) of (\d+)")
INVOICE_ID = re.compile(r"INV-\d{4}-\d{5}")
# the ledger's compact index, one line per month (as the calibration LLM kept it): "Index 2026-03: 17 Tyrell 2050.53
# #INV-2026-71535; ..." (day, the vendor's first word, amount, id)
INDEX_LINE = re.compile(r"Index (\d{4})-(\d{2}): ([^\n]*)")
INDEX_ITEM = re.compile(r"(\d{2}) (\S+) ([\d.]+) #(INV-\d{4}-\d{5})")
SUBTASK = re.compile(r"Audit pages (\d+)-(\d+) of (\d+|\?) of the invoice history with get_invoice_page, starting "
                     r"with cursor \"([^\"]*)\"")


# the task's sentences its ledger quotes, so that they survive a cut of the task statement
RULES = (re.compile(r"Audit customer \S+ invoice history for \d{4}[^.]*\."),
         re.compile(r"Find every duplicate charge: [^.]*\."),
         re.compile(r"Monthly subscriptions recur on purpose and are not duplicates\."),
         re.compile(r"Submit the ids of every invoice involved in a duplicate charge[^\n]*?\)\."))


def _vendor(name: str) -> str:
    """A vendor as the ledger names it: its first word (the generated vendors differ in their first words)."""
    return name.strip().split()[0] if name.strip() else name


def index_lines(invoices: dict[str, tuple[str, str, float]]) -> list[str]:
    """The ledger's index of every invoice seen: one line per month, sorted by day."""
    months: dict[str, list[tuple[str, str]]] = {}
    for inv_id, (vendor, date, amount) in invoices.items():
        months.setdefault(date[:7], []).append((date[8:], f"{date[8:]} {vendor} {amount:.2f} #{inv_id}"))
    return [f"Index {month}: " + "; ".join(item for _, item in sorted(items)) for month, items in sorted(months.items())]


def _money(text: str) -> float:
    return float(text.replace(",", ""))


class Knowledge:
    """What the visible pages and notes say: invoices, pages covered, cursors, duplicates, page count."""

    def __init__(self, tool_outputs: list[str], notes: list[str]) -> None:
        self.invoices: dict[str, tuple[str, str, float]] = {}
        self.content_pages: set[int] = set()
        self.noted_pages: set[int] = set()
        self.reviewed: set[int] = set()
        self.dups: set[str] = set()
        self.cursors, self.total = known_cursors(tool_outputs + notes)
        for text in tool_outputs:
            self._read_page(text)
        for text in notes:
            self._read_note(text)
        by_key: dict[tuple, list[str]] = {}
        for inv_id, key in self.invoices.items():
            by_key.setdefault(key, []).append(inv_id)
        self.dups.update(i for ids in by_key.values() if len(ids) > 1 for i in ids)

    def _read_page(self, text: str) -> None:
        header = PAGE_HEADER.search(text)
        if not header:
            return
        self.content_pages.add(int(header.group(2)))
        self.total = int(header.group(3))
        for inv_id, date, vendor, amount in INVOICE_BLOCK.findall(text):
            self.invoices[inv_id] = (_vendor(vendor), date, _money(amount))

    def _read_note(self, text: str) -> None:
        for page, items in LEDGER.findall(text):
            self.noted_pages.add(int(page))
            for inv_id, vendor, date, amount in LEDGER_ITEM.findall(items):
                self.invoices[inv_id] = (_vendor(vendor), date, float(amount))
        for year, month, items in INDEX_LINE.findall(text):
            for day, vendor, amount, inv_id in INDEX_ITEM.findall(items):
                self.invoices[inv_id] = (vendor, f"{year}-{month}-{day}", float(amount))
        for line in DUPS_LINE.findall(text):
            self.dups.update(INVOICE_ID.findall(line))
        for pages, of in REVIEWED.findall(text):
            self.reviewed |= parse_ranges(pages)
            self.total = int(of)

    @property
    def covered(self) -> set[int]:
        """Pages whose content, ledger or review is visible."""
        return self.content_pages | self.noted_pages | self.reviewed

    def next_cursor_line(self) -> str | None:
        """The footer line of the furthest covered page, if its next page's cursor is known."""
        after = max(self.covered, default=0) + 1
        if self.total is not None and after > self.total or after not in self.cursors or after == 1:
            return None
        return f"next_cursor: {self.cursors[after]} (page {after} of {self.total or '?'})"


def page_notes(messages: list[dict]) -> list[str]:
    """A ledger line and the footer line of every page among the newest results."""
    lines = []
    for text in latest_results(messages):
        header = PAGE_HEADER.search(text)
        if header:
            items = [f"{i}|{v.strip()}|{d}|{_money(a):.2f}" for i, d, v, a in INVOICE_BLOCK.findall(text)]
            lines.append(f"Ledger p{header.group(2)}: " + "; ".join(items))
            footer = footer_line(text)
            if footer and FOOTER.search(footer):
                lines.append(f"After p{header.group(2)}: {footer}")
    return lines


class InvoicePolicy:
    """Reference policy for ``invoice_audit`` (see the module docstring).

    With the ``isolate`` strategy it delegates the audit in chunks of ``chunk`` pages, each
    starting at the cursor the previous sub-agent reported; each sub-agent reports the
    duplicates inside its chunk only, so pairs that straddle two chunks are missed: the
    honest cost of isolation on this task.
    """

    chunk = 10

    def _notes(self, messages: list[dict]) -> list[str]:
        return texts(messages) + [t for t in tool_texts(messages) if t.startswith(REPORT_PREFIX)]

    def knowledge(self, messages: list[dict]) -> Knowledge:
        """What the visible messages say."""
        return Knowledge(tool_texts(messages), self._notes(messages))

    def delegate_plan(self, messages: list[dict]) -> str | None:
        """The next chunk of pages to hand to a sub-agent, or None when all are covered (or it cannot start one)."""
        if delegation_failed(messages):
            return None  # a sub-agent failed: audit the rest in this context
        known = Knowledge([], self._notes(messages))
        missing = [p for p in range(1, (known.total or 0) + 1) if p not in known.reviewed]
        if known.total is not None and not missing:
            return None
        start = missing[0] if missing else 1
        if start not in known.cursors:
            return None  # the cursor of the next chunk is not in view: read on in this context
        end = start + self.chunk - 1 if known.total is None else min(start + self.chunk - 1, known.total)
        return (f"Audit pages {start}-{end} of {known.total or '?'} of the invoice history with get_invoice_page, "
                f"starting with cursor \"{known.cursors[start]}\" (page {start}) and following each page's "
                "next_cursor. Find every duplicate charge among these pages: the same vendor, service date and "
                "amount billed under two different invoice ids (monthly subscriptions are not duplicates). Report "
                "the pages reviewed, the ids of every invoice in a duplicate charge, and the next_cursor after "
                "your last page.")

    def subagent_policy(self, task: str) -> "InvoiceSubPolicy":
        """The policy of a sub-agent given ``task``."""
        return InvoiceSubPolicy()

    def _moves(self, messages: list[dict], known: Knowledge):
        return plan_reads(messages, TOOL, known.covered, known.cursors, known.total)

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Read the next page, re-read a lost one, walk back to a lost cursor, retry a rate-limited one, or submit."""
        known = self.knowledge(messages)
        moves = self._moves(messages, known)
        note = self._note(messages, known)
        if not moves:
            return submit(note + "\nAll pages reviewed; submitting the duplicate charges found.",
                          invoice_ids=sorted(known.dups))
        move = moves[0]
        if move.kind == "reread":
            note += f"\nPage {move.page} is no longer in view and I have no notes on it; reading it again."
        elif move.kind == "walk":
            note += (f"\nThe cursor of the next page is no longer in view; reading page {move.page} again to "
                     "follow the cursors from there.")
        return reply(note, move.call(TOOL))

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The other reads whose cursors are in view (lost or rate-limited pages besides the next one)."""
        moves = self._moves(messages, self.knowledge(messages))
        return other_calls((m.call(TOOL) for m in moves), first)

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The duplicates visible now (from pages and ledgers), or None before any page was seen."""
        known = self.knowledge(messages)
        return {"invoice_ids": sorted(known.dups)} if known.covered else None

    def _note(self, messages: list[dict], known: Knowledge) -> str:
        """A note on rate-limited calls, then the whole ledger (tasks/README.md): the task's rules, every page's
        invoices and the duplicates (facts), the pages reviewed (checked), the next page's cursor (remaining)."""
        limited = rate_limit_note(messages)
        facts = index_lines(known.invoices)
        facts.append("Duplicates so far: " + (", ".join(sorted(known.dups)) or "none"))
        checked = [f"pages reviewed: {ranges(known.covered)} of {known.total or '?'}"] if known.covered else []
        footers = [line for line in page_notes(messages) if line.startswith("After p")]
        cursor = known.next_cursor_line()
        remaining = footers[-1:] or ([f"read on with {cursor}"] if cursor else [])
        ledger = Ledger(rules=quoted_rules(messages, RULES), facts=facts, checked=checked, remaining=remaining)
        return "\n".join([line for line in [limited] if line] + [ledger.render()])

    def summarize(self, history_text: str) -> str:
        """Keep findings, progress and the next cursor; the per-invoice ledger is not carried (summaries are lossy)."""
        blocks = history_text.split("\n[")
        known = Knowledge([b for b in blocks if PAGE_HEADER.search(b)], [history_text])
        done = known.covered
        remaining = sorted(set(range(1, (known.total or 0) + 1)) - done)
        findings = [f"duplicate charges found: {', '.join(sorted(known.dups)) or 'none yet'}"]
        progress = [f"pages reviewed: {ranges(done)} of {known.total or '?'}", f"remaining pages: {ranges(remaining)}"]
        cursor = known.next_cursor_line()
        if cursor:
            progress.append(f"read on with {cursor}")
        return format_summary(findings, tools_used(history_text), failed_attempts(history_text), progress)


class InvoiceSubPolicy(RangeReader, InvoicePolicy):
    """A sub-agent auditing the page range named in its task from the cursor it names, then reporting."""

    listing = TOOL

    def _scope(self, messages: list[dict]) -> tuple[int, int, str] | None:
        task = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
        match = SUBTASK.search(task)
        if not match:
            return None
        return int(match.group(1)), int(match.group(2)), match.group(4)

    def _range(self, messages: list[dict]):
        """(start, last page of the range, known, reads still to make), or None without a task."""
        scope = self._scope(messages)
        if scope is None:
            return None
        start, end, cursor = scope
        known = Knowledge(tool_texts(messages), texts(messages))
        known.cursors.setdefault(start, cursor)
        last = end if known.total is None else min(end, known.total)
        covered = {p for p in known.covered if start <= p <= last} | set(range(1, start))
        moves = [m for m in plan_reads(messages, TOOL, covered, known.cursors, last) if m.page <= last]
        return start, last, known, covered, moves

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Read the pages of the range in order, then ``report``."""
        state = self._range(messages)
        if state is None:
            return reply("I cannot tell which pages to audit.", make_call("report", conclusion="no page range given"))
        start, last, known, covered, moves = state
        note = self._note(messages, known)
        done = sorted(p for p in covered if p >= start)
        if moves:  # the running progress line lets a cut sub-agent go on where it was
            progress = f"\nSub-task progress: pages reviewed: {ranges(done) or 'none'} of {known.total or '?'}"
            return reply(note + progress, moves[0].call(TOOL))
        conclusion = (f"{REPORT_PREFIX}: pages reviewed: {start}-{last} of {known.total or '?'}; "
                      f"duplicate charges found: {', '.join(sorted(known.dups)) or 'none'}"
                      f"{onward(known.cursors, known.total, last)}")
        return reply(note, make_call("report", conclusion=conclusion))


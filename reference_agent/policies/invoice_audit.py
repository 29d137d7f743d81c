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

When restating its ledger grows costly, the auditor writes only the pages since its newest
full ledger and points back to it, as the calibration LLM did; if that ledger then leaves
the view, the pages it alone indexed are lost: the auditor restates in full from then on and
reads them again after the last page (``invoice_audit_recall``).
"""

from __future__ import annotations

import re

from reference_agent.kit.cursor_reading import FOOTER, CursorMove, RangeReader, footer_line, onward, plan_reads
from reference_agent.kit.incremental import PrefixFold, TextMemo, per_request
from reference_agent.kit.ledger import Ledger, quoted_rules
from reference_agent.policies.invoice_audit_recall import (
    Anchor,
    pointed_pages,
    pointer_line,
    points_back,
    recheck_line,
    recheck_moves,
    recheck_pages,
)
from reference_agent.policy_kit import (
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
from tasks.invoice_audit.tools import TOOL

PAGE_HEADER = re.compile(r"=== Invoice history . customer (\S+) . page (\d+) of (\d+) ===")
INVOICE_BLOCK = re.compile(
    r"Invoice (INV-\d{4}-\d{5})\n\s+Date: (\d{4}-\d{2}-\d{2})\s+Vendor: ([^\n]+?)\n"
    r"\s+Description: [^\n]*\n\s+Amount: USD ([\d,]+\.\d{2})"
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
SUBTASK = re.compile(
    r"Audit pages (\d+)-(\d+) of (\d+|\?) of the invoice history with get_invoice_page, starting "
    r"with cursor \"([^\"]*)\""
)


# the task's sentences its ledger quotes, so that they survive a cut of the task statement
RULES = (
    re.compile(r"Audit customer \S+ invoice history for \d{4}[^.]*\."),
    re.compile(r"Find every duplicate charge: [^.]*\."),
    re.compile(r"Monthly subscriptions recur on purpose and are not duplicates\."),
    re.compile(r"Submit the ids of every invoice involved in a duplicate charge[^\n]*?\)\."),
)


def _vendor(name: str) -> str:
    """A vendor as the ledger names it: its first word (the generated vendors differ in their first words)."""
    return name.strip().split()[0] if name.strip() else name


def index_lines(invoices: dict[str, tuple[str, str, float]]) -> list[str]:
    """The ledger's index of every invoice seen: one line per month, sorted by day."""
    months: dict[str, list[tuple[str, str]]] = {}
    for inv_id, (vendor, date, amount) in invoices.items():
        months.setdefault(date[:7], []).append((date[8:], f"{date[8:]} {vendor} {amount:.2f} #{inv_id}"))
    return [
        f"Index {month}: " + "; ".join(item for _, item in sorted(items)) for month, items in sorted(months.items())
    ]


def _money(text: str) -> float:
    return float(text.replace(",", ""))


def _page_facts(text: str) -> tuple:
    """What one tool result says: its footers ``(page, cursor, of)``, its header ``(page, of)`` and its invoices."""
    footers = tuple((int(page), cursor, int(of)) for cursor, page, of in FOOTER.findall(text))
    header = PAGE_HEADER.search(text)
    if not header:
        return footers, None, ()
    invoices = tuple(
        (inv_id, (_vendor(vendor), date, _money(amount)))
        for inv_id, date, vendor, amount in INVOICE_BLOCK.findall(text)
    )
    return footers, (int(header.group(2)), int(header.group(3))), invoices


def _index_items(year: str, month: str, items: str) -> list[tuple[str, tuple[str, str, float]]]:
    """The invoices of an index line's items (``INDEX_ITEM``)."""
    return [
        (inv_id, (vendor, f"{year}-{month}-{day}", float(amount)))
        for day, vendor, amount, inv_id in INDEX_ITEM.findall(items)
    ]


def _line_facts(line: str, index_items=_index_items) -> tuple | None:
    """What one line of a note says (``None``: nothing): footers, ledger pages and invoices, index invoices,
    duplicates, reviews, pages pointed back to and pages to re-check. Every pattern a note is read with matches
    within one line."""
    footers = tuple((int(page), cursor, int(of)) for cursor, page, of in FOOTER.findall(line))
    ledger = tuple(
        (
            int(page),
            tuple(
                (inv_id, (_vendor(vendor), date, float(amount)))
                for inv_id, vendor, date, amount in LEDGER_ITEM.findall(items)
            ),
        )
        for page, items in LEDGER.findall(line)
    )
    index = tuple(item for year, month, items in INDEX_LINE.findall(line) for item in index_items(year, month, items))
    dups = tuple(i for found in DUPS_LINE.findall(line) for i in INVOICE_ID.findall(found))
    reviewed = tuple((frozenset(parse_ranges(pages)), int(of)) for pages, of in REVIEWED.findall(line))
    pointed, recheck = frozenset(pointed_pages(line)), frozenset(recheck_pages(line))
    facts = (footers, ledger, index, dups, reviewed, pointed, recheck)
    return facts if any(facts) else None


class _Read:
    """What a stream of texts says, folded text by text: the tool results (``pages``) or the notes."""

    def __init__(self) -> None:
        self.cursors: dict[int, str] = {}
        self.footer_total: int | None = None  # the page count of the last footer
        self.pages: set[int] = set()  # pages whose content is in view (tool results)
        self.page_total: int | None = None  # the page count of the last page header
        self.invoices: dict[str, tuple[str, str, float]] = {}
        self.noted: set[int] = set()  # pages with a ledger line (notes)
        self.dups: set[str] = set()
        self.reviewed: set[int] = set()
        self.reviewed_total: int | None = None  # the page count of the last "pages reviewed" line
        self.indexed: set[int] = set()  # pages whose invoices a note's ledger holds
        self.missing: set[int] = set()  # pages a note says it does not index (pointed back to, to re-check)
        self.rechecks: set[int] = set()  # pages a note says to re-check (a loss seen)

    def footers(self, footers: tuple) -> None:
        for page, cursor, of in footers:
            self.cursors[page] = cursor
            self.footer_total = of

    def read_page(self, facts: tuple) -> None:
        footers, header, invoices = facts
        self.footers(footers)
        if header is not None:
            self.pages.add(header[0])
            self.page_total = header[1]
            self.invoices.update(invoices)

    def read_note(self, lines: list[tuple]) -> None:
        """A note's lines' facts, in the order the note is read: footers, ledger lines, index, duplicates, reviews;
        then which of its reviewed pages its index holds (all but those it points back to or must re-check)."""
        for footers, *_ in lines:
            self.footers(footers)
        for _, ledger, *_ in lines:
            for page, items in ledger:
                self.noted.add(page)
                self.invoices.update(items)
        for _, _, index, *_ in lines:
            self.invoices.update(index)
        for _, _, _, dups, *_ in lines:
            self.dups.update(dups)
        reviewed: set[int] = set()
        for *_, pages_of, _, _ in lines:
            for pages, of in pages_of:
                reviewed |= pages
                self.reviewed_total = of
        self.reviewed |= reviewed
        missing = {p for *_, pointed, recheck in lines for p in pointed | recheck}
        self.rechecks.update(p for *_, recheck in lines for p in recheck)
        self.missing |= missing
        if any(ledger or index for _, ledger, index, *_ in lines):
            self.indexed |= reviewed - missing


class Reader:
    """Folds texts into ``_Read`` states, each page and each note line parsed once (``kit.incremental``)."""

    LONG = 2000  # a line longer than this (a month of the index) is not kept whole: its items are

    def __init__(self) -> None:
        self.page_facts = TextMemo(_page_facts)
        self.line_facts = TextMemo(_line_facts)
        self.items: dict[tuple[str, str], dict[str, tuple]] = {}  # (year, month) -> index item text -> invoice
        self.tools = PrefixFold(_Read, self.read_page)
        self.notes = PrefixFold(_Read, self.read_note)

    def read_page(self, state: _Read, text: str) -> None:
        state.read_page(self.page_facts(text))

    def read_note(self, state: _Read, text: str) -> None:
        lines = [
            _line_facts(line, self.index_items) if len(line) > self.LONG else self.line_facts(line)
            for line in text.split("\n")
        ]
        state.read_note([facts for facts in lines if facts is not None])

    def index_items(self, year: str, month: str, items: str) -> list[tuple[str, tuple[str, str, float]]]:
        """``_index_items``, each item parsed once: the month's index is restated in every reply.

        When every ``; ``-separated part is one whole item, the items are the parts' (a match cannot span a
        separator then); otherwise the line is read as a whole."""
        parts = items.split("; ")
        known = self.items.setdefault((year, month), {})
        for part in set(parts).difference(known):
            match = INDEX_ITEM.fullmatch(part)
            if match is None:
                return _index_items(year, month, items)
            day, vendor, amount, inv_id = match.groups()
            known[part] = (inv_id, (vendor, f"{year}-{month}-{day}", float(amount)))
        return list(map(known.__getitem__, parts))

    def fold(self, texts: list[str], page: bool) -> _Read:
        """The state of ``texts`` read from the start (no fold kept)."""
        state = _Read()
        for text in texts:
            (self.read_page if page else self.read_note)(state, text)
        return state


class Knowledge:
    """What the visible pages and notes say: invoices, pages covered, cursors, duplicates, page count.

    ``tool_outputs`` are read as pages and ``notes`` as notes (the notes of every source in order: the
    agent's texts, then the sub-agents' reports); or ``reads``: the states of those streams, already
    folded (``Reader``), the tool results' first. Either way the result is the same.
    """

    def __init__(self, tool_outputs: list[str], notes: list[str], reads: list[_Read] | None = None) -> None:
        if reads is None:
            reader = Reader()
            reads = [reader.fold(tool_outputs, True), reader.fold(notes, False)]
        tools, notes_read = reads[0], reads[1:]
        self.cursors = {1: ""}
        totals: list[int | None] = [tools.footer_total]
        for read in reads:
            self.cursors.update(read.cursors)
        totals += [read.footer_total for read in notes_read]
        footer_total = next((t for t in reversed(totals) if t is not None), None)
        reviewed_total = next((r.reviewed_total for r in reversed(notes_read) if r.reviewed_total is not None), None)
        self.total = (
            reviewed_total
            if reviewed_total is not None
            else (tools.page_total if tools.page_total is not None else footer_total)
        )
        self.content_pages: set[int] = set(tools.pages)
        self.invoices: dict[str, tuple[str, str, float]] = dict(tools.invoices)
        self.noted_pages: set[int] = set()
        self.reviewed: set[int] = set()
        self.dups: set[str] = set()
        indexed: set[int] = set()
        missing: set[int] = set()
        self.rechecks: set[int] = set()
        for read in notes_read:
            self.invoices.update(read.invoices)
            self.noted_pages |= read.noted
            self.reviewed |= read.reviewed
            self.dups |= read.dups
            indexed |= read.indexed
            missing |= read.missing
            self.rechecks |= read.rechecks
        # pages a note does not index (pointed back to, to re-check) that no visible ledger or page holds
        self.lost: set[int] = missing - indexed - self.content_pages - self.noted_pages
        by_key: dict[tuple, list[str]] = {}
        for inv_id, key in self.invoices.items():
            by_key.setdefault(key, []).append(inv_id)
        self.dups.update(i for ids in by_key.values() if len(ids) > 1 for i in ids)

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

    @per_request
    def knowledge(self, messages: list[dict]) -> Knowledge:
        """What the visible messages say (once per request; only the messages new since the last one are read)."""
        reader = self.__dict__.get("_reader")
        if reader is None:
            reader = self._reader = Reader()
        tools = tool_texts(messages)
        reports = [t for t in tools if t.startswith(REPORT_PREFIX)]
        return Knowledge([], [], [reader.tools(tools), reader.notes(texts(messages)), reader.fold(reports, False)])

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
        return (
            f"Audit pages {start}-{end} of {known.total or '?'} of the invoice history with get_invoice_page, "
            f'starting with cursor "{known.cursors[start]}" (page {start}) and following each page\'s '
            "next_cursor. Find every duplicate charge among these pages: the same vendor, service date and "
            "amount billed under two different invoice ids (monthly subscriptions are not duplicates). Report "
            "the pages reviewed, the ids of every invoice in a duplicate charge, and the next_cursor after "
            "your last page."
        )

    def subagent_policy(self, task: str) -> "InvoiceSubPolicy":
        """The policy of a sub-agent given ``task``."""
        return InvoiceSubPolicy()

    @per_request
    def _moves(self, messages: list[dict], known: Knowledge) -> list[CursorMove]:
        """The reads still to make: the pages on (``plan_reads``), then the pages whose index was lost."""
        return plan_reads(messages, TOOL, known.covered, known.cursors, known.total) or recheck_moves(
            known.lost, known.cursors
        )

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Read the next page, re-read a lost one, walk back to a lost cursor, retry a rate-limited one, or submit."""
        known = self.knowledge(messages)
        moves = self._moves(messages, known)
        note = self._note(messages, known)
        anchor = points_back(messages, note, bool(known.lost or known.rechecks))
        if anchor is not None:
            note = self._note(messages, known, anchor)
        if not moves:
            return submit(
                note + "\nAll pages reviewed; submitting the duplicate charges found.", invoice_ids=sorted(known.dups)
            )
        move = moves[0]
        if move.kind == "reread":
            note += f"\nPage {move.page} is no longer in view and I have no notes on it; reading it again."
        elif move.kind == "walk":
            note += (
                f"\nThe cursor of the next page is no longer in view; reading page {move.page} again to "
                "follow the cursors from there."
            )
        elif move.kind == "recheck":
            note += f"\nMy index of page {move.page} is gone; reading it again to compare it with the later pages."
        return reply(note, move.call(TOOL))

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The other reads whose cursors are in view (lost or rate-limited pages besides the next one)."""
        moves = self._moves(messages, self.knowledge(messages))
        return other_calls((m.call(TOOL) for m in moves), first)

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The duplicates visible now (from pages and ledgers), or None before any page was seen."""
        known = self.knowledge(messages)
        return {"invoice_ids": sorted(known.dups)} if known.covered else None

    def _note(self, messages: list[dict], known: Knowledge, anchor: Anchor | None = None) -> str:
        """A note on rate-limited calls, then the whole ledger (tasks/README.md): the task's rules, every page's
        invoices and the duplicates (facts), the pages reviewed (checked), the pages to re-check and the next
        page's cursor (remaining). With ``anchor`` (``points_back``) the index holds only the invoices that
        ledger does not, and a line names the pages it indexes instead."""
        limited = rate_limit_note(messages)
        held = anchor.ids if anchor is not None else frozenset()
        invoices = {k: v for k, v in known.invoices.items() if k not in held}
        facts = index_lines(invoices) + ([pointer_line(set(anchor.pages))] if anchor is not None else [])
        facts.append("Duplicates so far: " + (", ".join(sorted(known.dups)) or "none"))
        checked = [f"pages reviewed: {ranges(known.covered)} of {known.total or '?'}"] if known.covered else []
        footers = [line for line in page_notes(messages) if line.startswith("After p")]
        cursor = known.next_cursor_line()
        remaining = [recheck_line(known.lost)] if known.lost else []
        remaining += footers[-1:] or ([f"read on with {cursor}"] if cursor else [])
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
        conclusion = (
            f"{REPORT_PREFIX}: pages reviewed: {start}-{last} of {known.total or '?'}; "
            f"duplicate charges found: {', '.join(sorted(known.dups)) or 'none'}"
            f"{onward(known.cursors, known.total, last)}"
        )
        return reply(note, make_call("report", conclusion=conclusion))

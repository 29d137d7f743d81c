"""The reference policy of ``failure_memory``: the agent who tries the API first, then the exports."""

from __future__ import annotations

import itertools
import re
from typing import Iterable

from reference_agent.kit.incremental import KeyedMemo, PrefixFold, TextMemo, per_request
from reference_agent.kit.ledger import Ledger
from reference_agent.kit.limits import prompt_limit, within_limit
from reference_agent.policy_kit import (
    exchanges,
    failed_attempts,
    format_summary,
    is_rate_limited,
    latest_results,
    make_call,
    rate_limited_calls,
    reply,
    submit,
    tools_used,
)
from tasks.base import RATE_LIMITED
from tasks.failure_memory.world import ESCALATED, EXPORT_HEADER, EXPORT_READY, ROW, TICKET_HEADER

API_BROKEN = "The billing API is known to fail (authentication)"  # the policy's reason for exporting
# the API is known broken: its own notes (FAILED line, reason for exporting), a summary's failed attempt, the error
API_FAILED = re.compile(
    r"FAILED: query_api|"
    + re.escape(API_BROKEN)
    + r"|query_api: ERROR(?!: rate limited)|\[tool query_api\]: ERROR(?!: rate limited)"
)
# notes and recitation
PAGE_NOTE = re.compile(r"Export (EXP-[0-9A-F]{6}) \((\d{4}-Q\d)\) page (\d+)/(\d+): (ACC-\d{5}) amounts: ([^\n]*)")
EXPORT_NOTE = re.compile(r"Export for (\d{4}-Q\d): (EXP-[0-9A-F]{6}) \((\d+) pages\)")
TICKET_NOTE = re.compile(r"Ticket (T-\d+): (not escalated|ESCALATED)")
FINDING = re.compile(r"(first_total|escalated_ticket|second_period|second_total)=([\w.\-]+)")
TICKETS_DONE = re.compile(r"tickets reviewed up to (T-\d+)")
PROMPT_ACCOUNT = re.compile(r"account (ACC-\d{5})")
PROMPT_FIRST = re.compile(r"total refunds in (\d{4}-Q\d)")
PROMPT_TICKETS = re.compile(r"open tickets ((?:T-\d+(?:, )?)+)")
# the task's sentences its ledger quotes (reference_agent/kit/ledger.py), so that they
# survive a cut of the task statement
RULES = (
    re.compile(r"Escalation for account ACC-\d{5}[^.]*\."),
    re.compile(
        r"\(1\) Find the account's total refunds[^\n]*?voided refunds do not; "
        r"chargebacks and credits are not refunds\)\."
    ),
    re.compile(r"\(2\) Read the open tickets [^\n]*?\(read_ticket\)\."),
    re.compile(r"Exactly one of them is escalated to finance[^.]*\."),
    re.compile(r"\(3\) Find the account's total refunds in that quarter[^.]*\."),
    re.compile(r"The API allows at most \d+ [^\n]*? per turn[^\n]*?\."),
)


class FailureMemoryPolicy:
    """Reference policy for ``failure_memory`` (see the module docstring).

    Every reply restates the findings (``Findings: ...``), as the calibration LLM did. The failure
    is written where that LLM wrote it (the older, unverified calibration runs; docs/reference_agent.md): in the
    replies right after it (``FAILED: query_api ...``) and as the reason of each export (``The
    billing API is known to fail ...``), not in every reply, so a strategy can cut it.
    """

    @per_request
    def _knowledge(self, messages: list[dict]) -> dict:
        """What the visible messages say, folded in order (once per request; only the messages new since the
        last one are read, ``kit.incremental``). Read it, never change it: it is the fold's own state."""
        fold = self.__dict__.get("_fold")
        if fold is None:
            fold = self._fold = PrefixFold(_start, self._read_message)
        return fold(messages)

    def _read_message(self, k: dict, message: dict) -> None:
        role, text = message.get("role"), str(message.get("content") or "")
        if role == "user" and k["account"] is None and PROMPT_ACCOUNT.search(text):
            self._read_task(text, k)
            return
        if role == "assistant" and k["account"] is None and RULES[0].search(text):
            self._read_task(text, k)  # the task statement is cut; its ledger quotes it
        if role == "tool":
            self._read_tool(text, k)
        elif role in ("user", "assistant"):
            self._read_text(text, k)

    @staticmethod
    def _read_task(text: str, k: dict) -> None:
        """The account, the first quarter and the tickets, from the task's sentences (the prompt or a ledger)."""
        k["account"] = PROMPT_ACCOUNT.search(text).group(1)
        first = PROMPT_FIRST.search(text)
        k["first"] = first.group(1) if first else None
        tickets = PROMPT_TICKETS.search(text)
        k["tickets"] = re.findall(r"T-\d+", tickets.group(1)) if tickets else []
        k["rules"] = [m.group(0) for rule in RULES for m in [rule.search(text)] if m]

    def _read_tool(self, text: str, k: dict) -> None:
        failed, ready, header, amounts, ticket = _tool_facts(text, k["account"])
        if failed:
            k["api_failed"] = True
        if ready is not None:
            k["exports"][ready[0]] = ready[1]
        if header is not None:
            export_id, period, page, pages = header
            k["exports"].setdefault(period, (export_id, pages))
            k["pages"].setdefault(period, {})[page] = amounts
        if ticket is not None:
            k["tickets_seen"][ticket[0]] = ticket[1]

    def _read_text(self, text: str, k: dict) -> None:
        failed, exports, pages, tickets, findings, done = _text_facts(text)
        if failed:
            k["api_failed"] = True
        for period, export in exports:
            k["exports"][period] = export
        for period, export, page, values in pages:
            k["exports"].setdefault(period, export)
            k["pages"].setdefault(period, {})[page] = values
        for ticket, period in tickets:
            k["tickets_seen"][ticket] = period
        for key, value in findings:
            k["findings"][key] = value
        if done is not None:
            k["furthest"] = done

    def _total(self, k: dict, period: str) -> float | None:
        """The period's total if known (a finding) or computable (every page visible or noted)."""
        key = "first_total" if period == k["first"] else "second_total"
        if key in k["findings"]:
            return float(k["findings"][key])
        if period in k["exports"]:
            pages = k["exports"][period][1]
            got = k["pages"].get(period, {})
            if all(p in got for p in range(1, pages + 1)):
                return round(sum(sum(v) for v in got.values()), 2)
        return None

    def _fetch(self, k: dict, messages: list[dict], period: str) -> tuple[str, dict]:
        """The next call that gets ``period``'s data."""
        if period in k["exports"]:
            export_id, pages = k["exports"][period]
            got = k["pages"].get(period, {})
            missing = [p for p in range(1, pages + 1) if p not in got]
            return f"Reading page {missing[0]} of export {export_id} ({period}).", make_call(
                "read_export", export_id=export_id, page=missing[0]
            )
        if k["api_failed"]:
            return (
                f"{API_BROKEN}; using a refunds export for {period}.",
                make_call("export_report", dataset="refunds", period=period),
            )
        endpoint = f"/v2/refunds?account={k['account']}&period={period}"
        return f"Querying the billing API for {period}.", make_call("query_api", endpoint=endpoint, auth="token")

    def _findings(self, k: dict) -> dict:
        """The findings known from notes, plus the totals and the escalation the visible data gives."""
        findings = dict(k["findings"])
        first_total = self._total(k, k["first"]) if k["first"] else None
        if first_total is not None:
            findings["first_total"] = f"{first_total:.2f}"
        escalated = next((t for t, p in k["tickets_seen"].items() if p), None)
        if escalated:
            findings["escalated_ticket"] = escalated
            findings["second_period"] = k["tickets_seen"][escalated]
        second = findings.get("second_period")
        if second:
            second_total = self._total(k, second)
            if second_total is not None:
                findings["second_total"] = f"{second_total:.2f}"
        return findings

    @staticmethod
    def _ticket_plan(messages: list[dict], k: dict) -> tuple[list[str], list[str]]:
        """Tickets to read again (called, but neither their thread nor a note on them is visible; in
        order) and tickets not read yet (after the furthest one known, in order)."""
        seen = set(k["tickets_seen"])
        called = {str(e.args.get("ticket_id")) for e in exchanges(messages) if e.name == "read_ticket"}
        lost = [t for t in k["tickets"] if t in called and t not in seen]
        position = _positions(k["tickets"])
        known = [position[t] for t in seen | called if t in position]
        if k["furthest"] in position:
            known.append(position[k["furthest"]])
        return lost, k["tickets"][max(known, default=-1) + 1 :]

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """First quarter, tickets, second quarter, submit."""
        k = self._knowledge(messages)
        findings = self._findings(k)
        second = findings.get("second_period")
        note = self._note(messages, k, findings)
        if "first_total" not in findings:
            why, call = self._fetch(k, messages, k["first"])
            return reply(note + "\n" + why, call)
        if "second_period" not in findings:
            lost, unread = self._ticket_plan(messages, k)
            if lost:
                why = (
                    "was rate limited (not read)"
                    if _rate_limited_ticket(messages, lost[0])
                    else "is out of view and I have no note on it"
                )
                return reply(
                    note + f"\nTicket {lost[0]} {why}; reading it again.", make_call("read_ticket", ticket_id=lost[0])
                )
            if unread:
                return reply(note, make_call("read_ticket", ticket_id=unread[0]))
            return submit(note + "\nNo escalated ticket found; submitting what I have.", **_answer(findings))
        if "second_total" not in findings:
            why, call = self._fetch(k, messages, second)
            return reply(note + "\n" + why, call)
        return submit(note + "\nAll three parts done; submitting.", **_answer(findings))

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """Every other call whose arguments are known now, in the order of the work.

        The first quarter's data (the API query, or its export, or all its missing pages),
        every ticket to read again or not read yet (while the escalated one is unknown), and
        the second quarter's data once its period is known. Nothing that needs an unseen
        result: pages only of an export whose id is visible, and at most one ``query_api``
        per turn (a second one after an unseen failure would retry a broken approach).
        """
        if (first.get("function") or {}).get("name") == "submit":
            return []
        k = self._knowledge(messages)
        findings = self._findings(k)
        calls: list[dict] = []
        if "first_total" not in findings and k["first"]:
            calls += self._fetches(k, k["first"])
        tickets: Iterable[dict] = ()
        if "second_period" not in findings:
            lost, unread = self._ticket_plan(messages, k)
            tickets = (make_call("read_ticket", ticket_id=t) for t in lost + unread)
        second = findings.get("second_period")
        later = self._fetches(k, second) if second and "second_total" not in findings else []
        api = (first.get("function") or {}).get("name") == "query_api"
        limit = prompt_limit(messages)
        more = []
        for call in itertools.chain(calls, tickets, later):
            if limit is not None and len(more) >= limit - 1:
                break  # the turn is full (``within_limit``): the other calls are not written out
            if call["function"]["name"] == "query_api":
                if api:
                    continue
                api = True
            if call != first:
                more.append(call)
        return within_limit(messages, more)

    def _fetches(self, k: dict, period: str) -> list[dict]:
        """Every call that gets ``period``'s data now: all its missing pages, else its export or the API."""
        if period in k["exports"]:
            export_id, pages = k["exports"][period]
            got = k["pages"].get(period, {})
            return [make_call("read_export", export_id=export_id, page=p) for p in range(1, pages + 1) if p not in got]
        return [self._fetch(k, [], period)[1]]

    def early_answer(self, messages: list[dict]) -> dict | None:
        """What it would submit now: the findings so far (``None`` before any)."""
        findings = self._findings(self._knowledge(messages))
        return _answer(findings) if findings else None

    def _note(self, messages: list[dict], k: dict, findings: dict) -> str:
        lines = []
        for text in latest_results(messages):  # the newest results, even with a status bar or notes after them
            if is_rate_limited(text):
                continue
            if text.startswith("ERROR: query_api"):
                lines.append(
                    "FAILED: query_api returned HTTP 401 (token refresh failed, credentials revoked, token "
                    "mode disabled for /v2/*); retrying cannot work. Switching to the reporting exports."
                )
            ready = EXPORT_READY.search(text)
            if ready:
                lines.append(f"Export for {ready.group(3)}: {ready.group(1)} ({ready.group(4)} pages)")
            header = EXPORT_HEADER.search(text)
            if header and header.group(2) == "refunds":
                export_id, _, period, page, pages = header.groups()
                values = k["pages"].get(period, {}).get(int(page), [])
                lines.append(
                    f"Export {export_id} ({period}) page {page}/{pages}: {k['account']} amounts: "
                    + (", ".join(f"{v:.2f}" for v in values) or "none")
                )
            ticket = TICKET_HEADER.search(text)
            if ticket:
                esc = ESCALATED.search(text)
                lines.append(
                    f"Ticket {ticket.group(1)}: "
                    + (f"ESCALATED to finance, second quarter {esc.group(1)}" if esc else "not escalated")
                )
        limited = [
            f"{e.name} {' '.join(str(v) for _, v in sorted(e.args.items()))}" for e in rate_limited_calls(messages)
        ]
        if limited:
            lines.append(f"Rate limited, so not done (not a failure): {'; '.join(limited)}; making them again.")
        return "\n".join([*lines, self._ledger(messages, k, findings)])

    def _ledger(self, messages: list[dict], k: dict, findings: dict) -> str:
        """The whole ledger: the task quoted; the findings, the API failure, the exports and the amounts of a
        quarter not totalled yet (facts); how far the tickets are read (checked); the parts still to do."""
        facts = [
            "Findings: "
            + (
                ", ".join(
                    f"{key}={findings[key]}"
                    for key in ("first_total", "escalated_ticket", "second_period", "second_total")
                    if key in findings
                )
                or "none yet"
            )
        ]
        if k["api_failed"]:
            facts.append(
                f"{API_BROKEN}: query_api returned HTTP 401 (token mode disabled for /v2/*); I use the exports."
            )
        for period, (export_id, pages) in sorted(k["exports"].items()):
            facts.append(f"Export for {period}: {export_id} ({pages} pages)")
            key = "first_total" if period == k["first"] else "second_total"
            if key not in findings:
                facts += [
                    f"Export {export_id} ({period}) page {page}/{pages}: {k['account']} amounts: "
                    + (", ".join(f"{v:.2f}" for v in values) or "none")
                    for page, values in sorted(k["pages"].get(period, {}).items())
                ]
        position = _positions(k["tickets"])
        seen = [position[t] for t in k["tickets_seen"] if t in position]
        if k["furthest"] in position:
            seen.append(position[k["furthest"]])
        checked = (
            [f"tickets reviewed up to {k['tickets'][max(seen)]}"] if seen and "second_period" not in findings else []
        )
        remaining = [
            part
            for part, key in (
                ("the first quarter's total", "first_total"),
                ("the escalated ticket", "second_period"),
                ("the second quarter's total", "second_total"),
            )
            if key not in findings
        ]
        return Ledger(rules=list(k["rules"]), facts=facts, checked=checked, remaining=remaining or ["submit"]).render()

    def summarize(self, history_text: str) -> str:
        """Findings, export ids and failures; not per-page amounts nor the list of tickets read."""
        k: dict = {
            "account": None,
            "first": None,
            "tickets": [],
            "api_failed": False,
            "exports": {},
            "pages": {},
            "tickets_seen": {},
            "findings": {},
            "furthest": None,
        }
        account = PROMPT_ACCOUNT.search(history_text)
        k["account"] = account.group(1) if account else None
        first = PROMPT_FIRST.search(history_text)
        k["first"] = first.group(1) if first else None
        tickets = PROMPT_TICKETS.search(history_text)
        k["tickets"] = re.findall(r"T-\d+", tickets.group(1)) if tickets else []
        for block in history_text.split("\n["):
            body = block.split("]: ", 1)[1] if block.startswith("tool ") and "]: " in block else block
            if block.startswith("tool "):
                self._read_tool(body, k)
            else:
                self._read_text(block, k)
        findings = dict(k["findings"])
        for period, key in ((k["first"], "first_total"), (findings.get("second_period"), "second_total")):
            if period and key not in findings:
                total = self._total(k, period)
                if total is not None:
                    findings[key] = f"{total:.2f}"
        escalated = next((t for t, p in k["tickets_seen"].items() if p), None)
        if escalated:
            findings["escalated_ticket"], findings["second_period"] = escalated, k["tickets_seen"][escalated]
        key_findings = ["Findings: " + (", ".join(f"{a}={b}" for a, b in findings.items()) or "none yet")]
        key_findings += [f"Export for {p}: {e} ({n} pages)" for p, (e, n) in sorted(k["exports"].items())]
        indices = [k["tickets"].index(t) for t in k["tickets_seen"] if t in k["tickets"]]
        progress = []
        if indices:
            progress.append(f"tickets reviewed up to {k['tickets'][max(indices)]}")
        progress.append(
            "remaining: "
            + ", ".join(
                part
                for part, key in (
                    ("first quarter total", "first_total"),
                    ("find the escalated ticket", "second_period"),
                    ("second quarter total", "second_total"),
                )
                if key not in findings
            )
            or "submit"
        )
        failed = [f for f in failed_attempts(history_text) if RATE_LIMITED not in f]  # not done, not failed
        if k["api_failed"] and not any(f.startswith("query_api") for f in failed):
            failed.append("query_api: ERROR: HTTP 401, token mode disabled; do not retry")
        return format_summary(key_findings, tools_used(history_text), failed, progress)


def _positions(tickets: list[str]) -> dict[str, int]:
    """Each ticket's first place in the task's list (``list.index`` of every ticket at once)."""
    position: dict[str, int] = {}
    for index, ticket in enumerate(tickets):
        position.setdefault(ticket, index)
    return position


def _start() -> dict:
    return {
        "account": None,
        "first": None,
        "tickets": [],
        "api_failed": False,
        "exports": {},
        "pages": {},
        "tickets_seen": {},
        "findings": {},
        "furthest": None,
        "rules": [],
    }


def _parse_tool(text: str, account: str | None) -> tuple:
    """What a tool result says: the API failed, an export is ready, an export page of ``account`` and its
    amounts (voided refunds left out), a ticket and the quarter it escalates to."""
    ready = EXPORT_READY.search(text)
    header = EXPORT_HEADER.search(text)
    page, amounts = None, []
    if header and header.group(2) == "refunds" and account:
        export_id, _, period, number, pages = header.groups()
        page = (export_id, period, int(number), int(pages))
        amounts = [
            float(a.replace(",", "")) for acct, a, status in ROW.findall(text) if acct == account and status != "voided"
        ]
    ticket = TICKET_HEADER.search(text)
    escalated = ESCALATED.search(text) if ticket else None
    return (
        text.startswith("ERROR: query_api"),
        (ready.group(3), (ready.group(1), int(ready.group(4)))) if ready and ready.group(2) == "refunds" else None,
        page,
        amounts,
        (ticket.group(1), escalated.group(1) if escalated else None) if ticket else None,
    )


_tool_facts = KeyedMemo(_parse_tool, size=5_000)  # ``_parse_tool``, once per result text and account


def _parse_text(text: str) -> tuple:
    """What a free text says: the API failed, exports, export pages and their amounts, tickets, findings and
    how far the tickets are reviewed."""
    exports = [(period, (export_id, int(pages))) for period, export_id, pages in EXPORT_NOTE.findall(text)]
    pages = [
        (
            period,
            (export_id, int(pages)),
            int(page),
            [float(a) for a in re.findall(r"[\d.]+", amounts) if a != "."] if amounts.strip() != "none" else [],
        )
        for export_id, period, page, pages, _acct, amounts in PAGE_NOTE.findall(text)
    ]
    tickets = []
    for line in text.splitlines():
        note = TICKET_NOTE.search(line)
        if note:
            period = re.search(r"second quarter (\d{4}-Q\d)", line)
            tickets.append((note.group(1), period.group(1) if period else None))
    done = TICKETS_DONE.search(text)
    return (
        bool(API_FAILED.search(text)),
        exports,
        pages,
        tickets,
        FINDING.findall(text),
        done.group(1) if done else None,
    )


_text_facts = TextMemo(_parse_text)


def _rate_limited_ticket(messages: list[dict], ticket: str) -> bool:
    """Whether the latest visible ``read_ticket`` call for ``ticket`` was rate limited (not executed)."""
    results = [
        e.result for e in exchanges(messages) if e.name == "read_ticket" and str(e.args.get("ticket_id")) == ticket
    ]
    return bool(results) and is_rate_limited(results[-1])


def _answer(findings: dict) -> dict:
    def number(key: str) -> float:
        try:
            return float(findings.get(key, 0))
        except ValueError:
            return 0.0

    return {
        "first_total": number("first_total"),
        "escalated_ticket": findings.get("escalated_ticket", ""),
        "second_period": findings.get("second_period", ""),
        "second_total": number("second_total"),
    }

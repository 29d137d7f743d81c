"""``failure_memory``: keep failures in context so they are not retried (seeds 000 §7.3, 004 §6).

An escalation for one account: (1) its total refunds in a first quarter, (2) read the open
support tickets to find the one escalated to finance, which names a second quarter, (3) the
account's total refunds in that quarter. The refunds data has two ways in:

* ``query_api(endpoint, auth)``: the billing API, the natural first choice. Every call fails
  with a long (~600-token) authentication error stack trace: the service credentials were
  rotated and the ``token`` mode is disabled. Retrying cannot help.
* ``export_report(dataset, period)`` then ``read_export(export_id, page)``: works.

Between the first and the second quarter the agent reads ``tickets`` long ticket threads
(distractors: other accounts' refund figures, other quarters, a withdrawn escalation), so
the failure scrolls far back.

Answer: ``submit(first_total, escalated_ticket, second_period, second_total)``.
Grade: success = all four fields right (the totals in exact cents: a one-cent error is wrong)
AND no repeated failed call; score = the fraction of right fields, halved for each repeated
failed call.

``repeated_failed_calls`` (also a ``trial_metrics`` column) counts the calls that either
(a) are identical in name and arguments to an earlier call that returned an error, or
(b) call ``query_api`` after an earlier ``query_api`` call failed with the authentication
error (a retry of the known-broken approach, whatever the arguments). A call matching both
counts once.

Reference policy (context-faithful): to get a quarter's data it calls ``query_api`` unless it
can see that the API failed: the error result, its own notes (``FAILED: query_api ...``,
written once, right after the failure, and ``The billing API is known to fail ...``, its
reason for each export it creates afterwards) or a summary's failed-attempts line naming
``query_api``. It then exports and reads the pages, noting the account's amounts per page;
it reads the tickets in order, noting each, until it finds the escalated one. Its running
recitation carries the findings (totals, ticket, period) but not the failure: a strategy
that compacts the error away and drops the note makes it try the API again for the second
quarter, which is the incident the seed describes.

Batched turns (profile ``realistic``): ``parallel_calls`` adds every ticket still to read to
the first quarter's query, the second quarter's export to the first's, and every missing page
of both exports to one page: the calibration LLM's four turns. At most one ``query_api`` per
turn; no page of an export whose id is not visible. A rate-limited result (``ERROR: rate
limited``) is a call not done: made again, never taken for the API's failure.

Summaries (``summarize``) keep the findings, the export ids and the failed attempts, but not
the per-page amounts of an export still being read (that export is read again) nor the list
of tickets already reviewed (only the furthest one).
"""
from __future__ import annotations

import hashlib
import json
import random
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from tasks.base import Grade, TaskFamily, TaskInstance, ToolResult, tool_schema
from tasks.kit.limits import limit_sentence, within_limit
from tasks.policy_kit import (RATE_LIMITED, exchanges, failed_attempts, format_summary, latest_results,
                              make_call, is_rate_limited, rate_limited_calls, reply, submit, tools_used)

DATASETS = ("refunds", "chargebacks", "credits")
CALLS_PER_TURN = 4  # the documented concurrency limit of the support and reporting APIs (issue 13 §1)
PERIODS = [f"{y}-Q{q}" for y in (2025, 2026) for q in (1, 2, 3, 4)]
REASONS = ["duplicate charge", "service outage credit", "cancelled order", "damaged goods", "price adjustment",
           "goodwill gesture", "billing error", "late delivery"]
STATUSES = ["settled", "settled", "settled", "pending", "voided"]
COMPANIES = ["Brightwave Media", "Keller & Sons Logistics", "Nordlicht Apparel", "Quanta Dental Group",
             "Harbourside Hotels", "Vireo Analytics", "Ostara Foods", "Pinecrest Schools"]
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

EXPORT_HEADER = re.compile(r"=== Export (EXP-[0-9A-F]{6}) · dataset (\w+) · period (\d{4}-Q\d) · page (\d+) of (\d+) ===")
EXPORT_READY = re.compile(r"Export (EXP-[0-9A-F]{6}) ready: dataset (\w+), period (\d{4}-Q\d), \d+ rows in (\d+) pages")
ROW = re.compile(r"^RF-\d+ \| [\d-]+ \| (ACC-\d{5}) \| [^|]+\| [^|]+\| ([\d,]+\.\d{2}) \| (\w+)", re.M)
TICKET_HEADER = re.compile(r"=== Ticket (T-\d+) · ")
ESCALATED = re.compile(r"Escalation: FINANCE . compare refunds for (\d{4}-Q\d)")
API_BROKEN = "The billing API is known to fail (authentication)"  # the policy's reason for exporting
# the API is known broken: its own notes (FAILED line, reason for exporting), a summary's failed attempt, the error
API_FAILED = re.compile(r"FAILED: query_api|" + re.escape(API_BROKEN)
                        + r"|query_api: ERROR(?!: rate limited)|\[tool query_api\]: ERROR(?!: rate limited)")
# notes and recitation
PAGE_NOTE = re.compile(r"Export (EXP-[0-9A-F]{6}) \((\d{4}-Q\d)\) page (\d+)/(\d+): (ACC-\d{5}) amounts: ([^\n]*)")
EXPORT_NOTE = re.compile(r"Export for (\d{4}-Q\d): (EXP-[0-9A-F]{6}) \((\d+) pages\)")
TICKET_NOTE = re.compile(r"Ticket (T-\d+): (not escalated|ESCALATED)")
FINDING = re.compile(r"(first_total|escalated_ticket|second_period|second_total)=([\w.\-]+)")
TICKETS_DONE = re.compile(r"tickets reviewed up to (T-\d+)")
PROMPT_ACCOUNT = re.compile(r"account (ACC-\d{5})")
PROMPT_FIRST = re.compile(r"total refunds in (\d{4}-Q\d)")
PROMPT_TICKETS = re.compile(r"open tickets ((?:T-\d+(?:, )?)+)")


class FailureMemory(TaskFamily):
    """Family generator. Knobs: ``tickets`` (long ticket threads between the two data pulls),
    ``rows`` (rows per quarterly export), ``page_rows`` (rows per export page) and
    ``ticket_messages`` (messages per ticket thread)."""

    name = "failure_memory"

    def __init__(self, tickets: int = 22, rows: int = 90, page_rows: int = 30, ticket_messages: int = 32) -> None:
        self.tickets = self.check_knob("tickets", tickets, 2, 200)
        self.rows = self.check_knob("rows", rows, 5, 5000)
        self.page_rows = self.check_knob("page_rows", page_rows, 5, 500)
        self.ticket_messages = self.check_knob("ticket_messages", ticket_messages, 1, 100)

    def generate(self, seed: int) -> "FailureMemoryInstance":
        """Account, quarters, tickets and the quarterly refund exports for ``seed``."""
        rng = random.Random(f"failure_memory:{seed}")
        digits = rng.sample("0123456789", 5)
        account = "ACC-" + "".join(digits)
        lookalikes = {"ACC-" + "".join(rng.sample(digits, 5)) for _ in range(6)} - {account}
        others = sorted(lookalikes) + [f"ACC-{rng.randint(10000, 99999)}" for _ in range(12)]
        others = [a if a != account else f"ACC-{int(account[4:]) % 89999 + 10001}" for a in others]  # never the account
        first, second = rng.sample(PERIODS, 2)
        withdrawn = rng.choice([p for p in PERIODS if p not in (first, second)])
        ids = [f"T-{n}" for n in sorted(rng.sample(range(1000, 9999), self.tickets))]
        escalated = rng.randrange(self.tickets * 3 // 4, self.tickets)  # late: the failure is far back by then
        decoy = rng.randrange(0, max(1, escalated))
        exports: dict[str, list[list]] = {}
        for dataset in DATASETS:
            for period in PERIODS:
                prng = random.Random(f"failure_memory:{seed}:{dataset}:{period}")
                year, quarter = int(period[:4]), int(period[-1])
                rows = []
                mine = prng.randint(3, 7) if dataset == "refunds" else prng.randint(0, 3)
                for index in range(self.rows):
                    acct = account if index < mine else prng.choice(others)
                    month = (quarter - 1) * 3 + prng.randint(1, 3)
                    rows.append([f"RF-{prng.randint(100000, 999999)}", f"{year}-{month:02d}-{prng.randint(1, 28):02d}",
                                 acct, f"ORD-{prng.randint(10000, 99999)}", prng.choice(REASONS),
                                 round(prng.uniform(5, 2500), 2), prng.choice(STATUSES)])
                # the account's rows have at least one counted and one voided row when there are several
                if mine >= 2:
                    rows[0][6], rows[1][6] = "settled", "voided"
                prng.shuffle(rows)
                exports[f"{dataset}:{period}"] = rows
        tickets = []
        for index, tid in enumerate(ids):
            trng = random.Random(f"failure_memory:{seed}:{tid}")
            if index == escalated:
                escalation = f"Escalation: FINANCE — compare refunds for {second} (approved by {trng.choice(AGENTS)})"
            elif index == decoy:
                escalation = f"Escalation: withdrawn (the earlier request to compare {withdrawn} was cancelled)"
            else:
                escalation = "Escalation: none"
            messages = []
            for _ in range(self.ticket_messages):
                who = trng.choice(AGENTS + ["Customer"])
                extra = trng.choice([
                    f"They say {trng.choice(others)} was refunded USD {trng.uniform(50, 3000):,.2f} in {trng.choice(PERIODS)}, why not them?",
                    f"Attached: statement for {trng.choice(PERIODS)} (PDF, 3 pages).",
                    f"See also ticket {trng.choice(ids)}.",
                    "",
                ])
                messages.append([who, trng.choice(FILLER) + " " + trng.choice(FILLER) + (" " + extra if extra else "")])
            tickets.append({"id": tid, "subject": trng.choice(
                ["Refund not received", "Charged twice", "Question about credit note", "Invoice discrepancy",
                 "Cancel add-on", "Outage compensation"]), "escalation": escalation, "messages": messages,
                "priority": trng.choice(["P2", "P3", "P3", "P4"])})
        return FailureMemoryInstance(self, seed, account, rng.choice(COMPANIES), first, second, tickets, ids[escalated], exports)


def _total(rows: list[list], account: str) -> float:
    return round(sum(r[5] for r in rows if r[2] == account and r[6] != "voided"), 2)


class FailureMemoryInstance(TaskInstance):
    """One escalation; its tools remember the calls made (per-trial state) for the grader."""

    family = FailureMemory.name

    def __init__(self, family: FailureMemory, seed: int, account: str, company: str, first: str, second: str,
                 tickets: list[dict], escalated: str, exports: dict[str, list[list]]) -> None:
        self.seed = seed
        self.id = f"failure_memory-t{family.tickets}-s{seed}"
        self.account, self.company, self.first, self.second = account, company, first, second
        self.tickets = {t["id"]: t for t in tickets}
        self.ticket_ids = [t["id"] for t in tickets]
        self.escalated = escalated
        self.exports = exports
        self.page_rows = family.page_rows
        self.max_calls_per_turn = CALLS_PER_TURN
        self.export_ids = {key: "EXP-" + hashlib.sha1(f"{seed}:{key}".encode()).hexdigest()[:6].upper() for key in exports}
        self.by_export_id = {v: k for k, v in self.export_ids.items()}
        self.created: set[str] = set()
        self.log: list[tuple[str, str, bool]] = []  # (name, canonical args, is_error)
        self.expected = {"first_total": _total(exports[f"refunds:{first}"], account), "escalated_ticket": escalated,
                         "second_period": second, "second_total": _total(exports[f"refunds:{second}"], account)}
        self.system_prompt = (
            "You are a customer-success operations agent at Paylane. You work only through the tools you are "
            "given. Tools can fail; read errors carefully and do not repeat an approach that cannot work. "
            "When you are done, call submit."
        )
        self.user_prompt = (
            f"Escalation for account {account} ({company}). (1) Find the account's total refunds in {first}: "
            "the sum of the refund amounts of its refund records (settled and pending refunds count; voided "
            "refunds do not; chargebacks and credits are not refunds). "
            f"(2) Read the open tickets {', '.join(self.ticket_ids)} (read_ticket). Exactly one of them is "
            "escalated to finance and names a second quarter to compare. (3) Find the account's total refunds "
            "in that quarter the same way. The refunds data is served by the billing API "
            "(query_api, endpoint /v2/refunds?account=...&period=...) and by the reporting exports "
            "(export_report, then read_export). Submit submit(first_total=..., escalated_ticket=..., "
            "second_period=..., second_total=...). " + limit_sentence(CALLS_PER_TURN)
        )
        self.tools = [
            tool_schema("query_api", "Call the billing REST API (GET).",
                        {"endpoint": {"type": "string", "description": "path and query, e.g. /v2/refunds?account=ACC-12345&period=2026-Q1"},
                         "auth": {"type": "string", "description": "auth mode: token (service token) or none"}}),
            tool_schema("export_report", "Create a CSV export of a reporting dataset for one quarter.",
                        {"dataset": {"type": "string", "description": "refunds, chargebacks or credits"},
                         "period": {"type": "string", "description": "quarter, e.g. 2026-Q1"}}),
            tool_schema("read_export", "Read one page of a finished export.",
                        {"export_id": {"type": "string"}, "page": {"type": "integer", "description": "1-based page"}}),
            tool_schema("read_ticket", "Read a support ticket thread.", {"ticket_id": {"type": "string"}}),
        ]
        self.answer_schema = {
            "type": "object",
            "properties": {"first_total": {"type": "number"}, "escalated_ticket": {"type": "string"},
                           "second_period": {"type": "string"}, "second_total": {"type": "number"}},
            "required": ["first_total", "escalated_ticket", "second_period", "second_total"],
        }

    # -- tools -------------------------------------------------------------------------
    def call(self, name: str, args: dict) -> ToolResult:
        """Execute a tool and remember (name, args, error) for the grader."""
        result = self._call(name, args)
        self.log.append((name, _canonical(args), result.is_error))
        return result

    def _call(self, name: str, args: dict) -> ToolResult:
        if name == "query_api":
            endpoint = args.get("endpoint")
            if not isinstance(endpoint, str) or not endpoint.startswith("/"):
                return ToolResult(f"ERROR: endpoint must be a path starting with '/', got {endpoint!r}", is_error=True)
            auth = args.get("auth", "token")
            if auth not in ("token", "none", None):
                return ToolResult(f"ERROR: auth must be 'token' or 'none', got {auth!r}", is_error=True)
            return ToolResult(self._auth_error(endpoint, auth or "token"), is_error=True)
        if name == "export_report":
            dataset, period = args.get("dataset"), args.get("period")
            if dataset not in DATASETS:
                return ToolResult(f"ERROR: unknown dataset {dataset!r}; datasets: {', '.join(DATASETS)}", is_error=True)
            if not isinstance(period, str) or period not in PERIODS:
                return ToolResult(f"ERROR: period must be a quarter from {PERIODS[0]} to {PERIODS[-1]}, got {period!r}",
                                  is_error=True)
            key = f"{dataset}:{period}"
            export_id = self.export_ids[key]
            self.created.add(export_id)
            rows = len(self.exports[key])
            pages = self._pages(rows)
            return ToolResult(
                f"Export job queued by reporting-svc 4.2.1 (worker rpt-7, region eu-central) ... running ... done in "
                f"{3 + len(key) % 5}.{rows % 10}s.\nExport {export_id} ready: dataset {dataset}, period {period}, "
                f"{rows} rows in {pages} pages.\nRead it with read_export(export_id=\"{export_id}\", page=1..{pages}). "
                "Exports are kept for 7 days.")
        if name == "read_export":
            export_id, page = args.get("export_id"), args.get("page")
            if isinstance(page, str) and page.strip().isdigit():
                page = int(page)
            if export_id not in self.by_export_id or export_id not in self.created:
                return ToolResult(f"ERROR: no finished export with id {export_id!r}; create one with export_report "
                                  "first", is_error=True)
            key = self.by_export_id[export_id]
            pages = self._pages(len(self.exports[key]))
            if not isinstance(page, int) or isinstance(page, bool) or not 1 <= page <= pages:
                return ToolResult(f"ERROR: page must be an integer from 1 to {pages}, got {page!r}", is_error=True)
            return ToolResult(self._export_page(export_id, key, page, pages), resource=f"export:{export_id}:{page}")
        if name == "read_ticket":
            tid = args.get("ticket_id")
            if not isinstance(tid, str) or tid.strip() not in self.tickets:
                return ToolResult(f"ERROR: no ticket {tid!r}; open tickets: {', '.join(self.ticket_ids)}", is_error=True)
            return ToolResult(self._ticket_text(self.tickets[tid.strip()]), resource=f"ticket:{tid.strip()}")
        return ToolResult(f"ERROR: unknown tool {name!r}; available: query_api, export_report, read_export, read_ticket",
                          is_error=True)

    def _pages(self, rows: int) -> int:
        return max(1, -(-rows // self.page_rows))

    def _auth_error(self, endpoint: str, auth: str) -> str:
        digest = hashlib.sha1(f"{self.seed}:{endpoint}".encode()).hexdigest()
        frames = [
            ("billing_client/http.py", 212, "send", "response = self._session.request(method, url, headers=headers, timeout=self.timeout)"),
            ("billing_client/http.py", 248, "_raise_for_status", "raise HTTPError.from_response(response)"),
            ("billing_client/auth/token.py", 87, "refresh", "token = self._provider.fetch(scope=self.scope, audience=self.audience)"),
            ("billing_client/auth/providers/vault.py", 131, "fetch", "secret = self._vault.read(f\"secret/data/svc/{self.account}\")"),
            ("billing_client/auth/providers/vault.py", 164, "_exchange", "resp = self._sts.assume_role(RoleArn=self.role, WebIdentityToken=jwt)"),
            ("billing_client/auth/token.py", 102, "refresh", "raise AuthenticationError(self._explain(exc)) from exc"),
            ("billing_client/api/base.py", 56, "get", "self._auth.ensure_valid(self._session)"),
            ("billing_client/api/refunds.py", 33, "list_refunds", "return self.get(\"/v2/refunds\", params=params)"),
            ("tools/query_api.py", 74, "handle", "payload = client.dispatch(endpoint, auth=auth_mode)"),
            ("agent_runtime/tools/executor.py", 188, "execute", "return tool.handle(**arguments)"),
        ]
        lines = [
            f"ERROR: query_api GET {endpoint} failed: HTTP 401 Unauthorized (auth={auth}, request id {digest[:16]})",
            "Traceback (most recent call last):",
        ]
        for path, line, func, code in frames:
            lines.append(f'  File "/opt/paylane/venv/lib/python3.11/site-packages/{path}", line {line}, in {func}')
            lines.append(f"    {code}")
        lines += [
            "billing_client.errors.HTTPError: 401 Client Error: Unauthorized for url: "
            f"https://billing-api.internal.paylane.example{endpoint}",
            "",
            "The above exception was the direct cause of the following exception:",
            "",
            "billing_client.auth.errors.AuthenticationError: token refresh failed for service account "
            "'svc-billing-readonly@paylane-prod' (scope billing.refunds.read, audience billing-api).",
            "  caused by: vault: permission denied reading secret/data/svc/svc-billing-readonly (policy "
            "'billing-readonly-v3' revoked on 2026-03-02 during the credential rotation INC-4471)",
            "  caused by: sts: AccessDenied: not authorized to perform sts:AssumeRoleWithWebIdentity on role "
            "arn:aws:iam::481516234200:role/billing-readonly",
            f"  response headers: www-authenticate: Bearer error=\"invalid_token\", error_description=\"token mode "
            f"disabled for /v2/*\"; x-request-id: {digest[:16]}; x-trace-id: {digest[16:32]}; retry-after: none",
            "  hint: service-token access to the billing API has been disabled for this agent runtime until IAM "
            "re-issues credentials (ticket IAM-2209, no ETA). Retrying with the same or other parameters will "
            "fail the same way. Use the reporting exports for billing data.",
        ]
        return "\n".join(lines)

    def _export_page(self, export_id: str, key: str, page: int, pages: int) -> str:
        dataset, period = key.split(":")
        rows = self.exports[key][(page - 1) * self.page_rows: page * self.page_rows]
        lines = [f"=== Export {export_id} · dataset {dataset} · period {period} · page {page} of {pages} ===",
                 "generated by reporting-svc 4.2.1 · timezone UTC · currency USD · amounts are refund amounts",
                 "refund_id | date | account | order | reason | amount | status"]
        lines += [f"{r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]:,.2f} | {r[6]}" for r in rows]
        lines.append(f"-- end of page {page} of {pages} ({len(rows)} rows) · checksum "
                     f"{hashlib.sha1(f'{export_id}:{page}'.encode()).hexdigest()[:8]} --")
        return "\n".join(lines)

    def _ticket_text(self, ticket: dict) -> str:
        lines = [f"=== Ticket {ticket['id']} · {ticket['subject']} · account {self.account} ({self.company}) ===",
                 f"Status: open   Priority: {ticket['priority']}   Queue: Billing   {ticket['escalation']}", ""]
        for index, (who, text) in enumerate(ticket["messages"], start=1):
            lines.append(f"--- message {index} · {who} ---")
            lines.append(text)
            lines.append("")
        lines.append("--- end of thread · Paylane Support · replies to this ticket are tracked ---")
        return "\n".join(lines)

    # -- grading and metrics -----------------------------------------------------------
    def _repeats(self) -> int:
        return _repeats(self.log)

    def grade(self, answer: dict) -> Grade:
        """All four fields and no repeated failed call for success; right fractions, halved per repeat."""
        answer = answer if isinstance(answer, dict) else {}
        right = {}
        for key, value in self.expected.items():
            given = answer.get(key)
            if isinstance(value, float):
                right[key] = _cents(given) == _cents(value)
            else:
                right[key] = isinstance(given, str) and given.strip() == value
        repeats = self._repeats()
        score = sum(right.values()) / len(right) * 0.5 ** repeats
        return Grade(all(right.values()) and repeats == 0, round(score, 4),
                     {"fields": right, "expected": self.expected, "repeated_failed_calls": repeats})

    def trial_metrics(self, tool_log: list[dict]) -> dict:
        """``repeated_failed_calls`` and ``api_calls`` from the executed calls."""
        calls = [(e["name"], _canonical(e["args"]), bool(e["is_error"])) for e in tool_log]
        return {"repeated_failed_calls": _repeats(calls), "api_calls": sum(1 for c in calls if c[0] == "query_api")}

    def reference_policy(self) -> "FailureMemoryPolicy":
        """The agent who tries the API first, then the exports."""
        return FailureMemoryPolicy()

    def data_fingerprint(self) -> list:
        """Tickets, exports and the expected answer."""
        return [self.tickets, self.exports, self.expected]


def _cents(amount: object) -> int | None:
    """``amount`` in whole cents (half a cent rounds up), ``None`` when it is not a finite number.

    Money is compared in exact cents: a float difference of one cent can come out just
    under ``0.01`` and pass a tolerance test.
    """
    if isinstance(amount, bool) or not isinstance(amount, (int, float, str)):
        return None
    try:
        value = Decimal(str(amount).strip())
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    return int((value * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _canonical(args: dict) -> str:
    return json.dumps(args, sort_keys=True, default=str)


def _repeats(calls: list[tuple[str, str, bool]]) -> int:
    """Repeated failed calls: identical to an earlier failed call, or query_api after its auth failure."""
    failed: set[tuple[str, str]] = set()
    api_broken = False
    repeats = 0
    for name, args, is_error in calls:
        if (name, args) in failed or (name == "query_api" and api_broken):
            repeats += 1
        if is_error:
            failed.add((name, args))
            if name == "query_api":
                endpoint = json.loads(args).get("endpoint")
                if isinstance(endpoint, str) and endpoint.startswith("/"):
                    api_broken = True  # a well-formed call failed: the 401 of the broken approach
    return repeats


class FailureMemoryPolicy:
    """Reference policy for ``failure_memory`` (see the module docstring).

    ``running_notes`` (set by the ``realistic`` profile) changes nothing here any more: every reply
    already restates the findings (``Findings: ...``), as the calibration LLM did, and the failure
    is written where the LLM wrote it, in the replies right after it (``FAILED: query_api ...``) and
    as the reason of each export (``The billing API is known to fail ...``), not in every reply. The
    calibration LLM (shared/calibration/failure_memory_headtail_2k) said once that the API cannot
    work and never again; restating it in every reply made the failure uncuttable (issue 13 §2).
    """

    running_notes = False

    def _knowledge(self, messages: list[dict]) -> dict:
        k: dict = {"account": None, "first": None, "tickets": [], "api_failed": False, "exports": {},
                   "pages": {}, "tickets_seen": {}, "findings": {}, "furthest": None}
        for message in messages:
            role, text = message.get("role"), str(message.get("content") or "")
            if role == "user" and k["account"] is None and PROMPT_ACCOUNT.search(text):
                k["account"] = PROMPT_ACCOUNT.search(text).group(1)
                first = PROMPT_FIRST.search(text)
                k["first"] = first.group(1) if first else None
                tickets = PROMPT_TICKETS.search(text)
                k["tickets"] = re.findall(r"T-\d+", tickets.group(1)) if tickets else []
                continue
            if role == "tool":
                self._read_tool(text, k)
            elif role in ("user", "assistant"):
                self._read_text(text, k)
        return k

    def _read_tool(self, text: str, k: dict) -> None:
        if text.startswith("ERROR: query_api"):
            k["api_failed"] = True
        ready = EXPORT_READY.search(text)
        if ready and ready.group(2) == "refunds":
            k["exports"][ready.group(3)] = (ready.group(1), int(ready.group(4)))
        header = EXPORT_HEADER.search(text)
        if header and header.group(2) == "refunds" and k["account"]:
            export_id, _, period, page, pages = header.groups()
            k["exports"].setdefault(period, (export_id, int(pages)))
            amounts = [a for acct, a, status in ROW.findall(text) if acct == k["account"] and status != "voided"]
            k["pages"].setdefault(period, {})[int(page)] = [float(a.replace(",", "")) for a in amounts]
        ticket = TICKET_HEADER.search(text)
        if ticket:
            esc = ESCALATED.search(text)
            k["tickets_seen"][ticket.group(1)] = esc.group(1) if esc else None

    def _read_text(self, text: str, k: dict) -> None:
        if API_FAILED.search(text):
            k["api_failed"] = True
        for period, export_id, pages in EXPORT_NOTE.findall(text):
            k["exports"][period] = (export_id, int(pages))
        for export_id, period, page, pages, _acct, amounts in PAGE_NOTE.findall(text):
            k["exports"].setdefault(period, (export_id, int(pages)))
            values = [float(a) for a in re.findall(r"[\d.]+", amounts) if a != "."] if amounts.strip() != "none" else []
            k["pages"].setdefault(period, {})[int(page)] = values
        for line in text.splitlines():
            note = TICKET_NOTE.search(line)
            if note:
                period = re.search(r"second quarter (\d{4}-Q\d)", line)
                k["tickets_seen"][note.group(1)] = period.group(1) if period else None
        for key, value in FINDING.findall(text):
            k["findings"][key] = value
        done = TICKETS_DONE.search(text)
        if done:
            k["furthest"] = done.group(1)

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
                "read_export", export_id=export_id, page=missing[0])
        if k["api_failed"]:
            return (f"{API_BROKEN}; using a refunds export for {period}.",
                    make_call("export_report", dataset="refunds", period=period))
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
        known = [k["tickets"].index(t) for t in seen | called if t in k["tickets"]]
        if k["furthest"] in k["tickets"]:
            known.append(k["tickets"].index(k["furthest"]))
        return lost, k["tickets"][max(known, default=-1) + 1:]

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
                why = ("was rate limited (not read)" if _rate_limited_ticket(messages, lost[0])
                       else "is out of view and I have no note on it")
                return reply(note + f"\nTicket {lost[0]} {why}; reading it again.",
                             make_call("read_ticket", ticket_id=lost[0]))
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
        if "second_period" not in findings:
            lost, unread = self._ticket_plan(messages, k)
            calls += [make_call("read_ticket", ticket_id=t) for t in lost + unread]
        second = findings.get("second_period")
        if second and "second_total" not in findings:
            calls += self._fetches(k, second)
        api = (first.get("function") or {}).get("name") == "query_api"
        more = []
        for call in calls:
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
                lines.append("FAILED: query_api returned HTTP 401 (token refresh failed, credentials revoked, token "
                             "mode disabled for /v2/*); retrying cannot work. Switching to the reporting exports.")
            ready = EXPORT_READY.search(text)
            if ready:
                lines.append(f"Export for {ready.group(3)}: {ready.group(1)} ({ready.group(4)} pages)")
            header = EXPORT_HEADER.search(text)
            if header and header.group(2) == "refunds":
                export_id, _, period, page, pages = header.groups()
                values = k["pages"].get(period, {}).get(int(page), [])
                lines.append(f"Export {export_id} ({period}) page {page}/{pages}: {k['account']} amounts: "
                             + (", ".join(f"{v:.2f}" for v in values) or "none"))
            ticket = TICKET_HEADER.search(text)
            if ticket:
                esc = ESCALATED.search(text)
                lines.append(f"Ticket {ticket.group(1)}: " + (f"ESCALATED to finance, second quarter {esc.group(1)}"
                                                              if esc else "not escalated"))
        limited = [f"{e.name} {' '.join(str(v) for _, v in sorted(e.args.items()))}" for e in rate_limited_calls(messages)]
        if limited:
            lines.append(f"Rate limited, so not done (not a failure): {'; '.join(limited)}; making them again.")
        lines.append("Findings: " + (", ".join(f"{key}={findings[key]}" for key in
                                               ("first_total", "escalated_ticket", "second_period", "second_total")
                                               if key in findings) or "none yet"))
        return "\n".join(lines)

    def summarize(self, history_text: str) -> str:
        """Findings, export ids and failures; not per-page amounts nor the list of tickets read."""
        k: dict = {"account": None, "first": None, "tickets": [], "api_failed": False, "exports": {},
                   "pages": {}, "tickets_seen": {}, "findings": {}, "furthest": None}
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
        progress.append("remaining: " + ", ".join(
            part for part, key in (("first quarter total", "first_total"), ("find the escalated ticket", "second_period"),
                                   ("second quarter total", "second_total")) if key not in findings) or "submit")
        failed = [f for f in failed_attempts(history_text) if RATE_LIMITED not in f]  # not done, not failed
        if k["api_failed"] and not any(f.startswith("query_api") for f in failed):
            failed.append("query_api: ERROR: HTTP 401, token mode disabled; do not retry")
        return format_summary(key_findings, tools_used(history_text), failed, progress)


def _rate_limited_ticket(messages: list[dict], ticket: str) -> bool:
    """Whether the latest visible ``read_ticket`` call for ``ticket`` was rate limited (not executed)."""
    results = [e.result for e in exchanges(messages) if e.name == "read_ticket" and str(e.args.get("ticket_id")) == ticket]
    return bool(results) and is_rate_limited(results[-1])


def _answer(findings: dict) -> dict:
    def number(key: str) -> float:
        try:
            return float(findings.get(key, 0))
        except ValueError:
            return 0.0
    return {"first_total": number("first_total"), "escalated_ticket": findings.get("escalated_ticket", ""),
            "second_period": findings.get("second_period", ""), "second_total": number("second_total")}

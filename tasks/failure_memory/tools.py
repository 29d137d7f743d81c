"""The tools of ``failure_memory``: the broken billing API, the reporting exports and the tickets,
served by the instance."""

from __future__ import annotations

import hashlib

from tasks.base import Grade, TaskInstance, ToolResult, tool_schema
from tasks.failure_memory.grade import canonical_args, grade_escalation, repeated_failed_calls
from tasks.failure_memory.world import CALLS_PER_TURN, DATASETS, PERIODS, World, total_refunds
from tasks.kit.args import digits
from tasks.kit.limits import limit_sentence


class FailureMemoryInstance(TaskInstance):
    """One escalation; its tools remember the calls made (per-trial state) for the grader."""

    family = "failure_memory"

    def __init__(self, ticket_count: int, page_rows: int, seed: int, world: World) -> None:
        account, first, second, exports = world.account, world.first, world.second, world.exports
        self.seed = seed
        self.id = f"failure_memory-t{ticket_count}-s{seed}"
        self.account, self.company, self.first, self.second = account, world.company, first, second
        self.tickets = {t["id"]: t for t in world.tickets}
        self.ticket_ids = [t["id"] for t in world.tickets]
        self.escalated = escalated = world.escalated
        self.exports = exports
        self.page_rows = page_rows
        self.max_calls_per_turn = CALLS_PER_TURN
        self.export_ids = {
            key: "EXP-" + hashlib.sha1(f"{seed}:{key}".encode()).hexdigest()[:6].upper() for key in exports
        }
        self.by_export_id = {v: k for k, v in self.export_ids.items()}
        self.created: set[str] = set()
        self.log: list[tuple[str, str, bool]] = []  # (name, canonical args, is_error)
        self.expected = {
            "first_total": total_refunds(exports[f"refunds:{first}"], account),
            "escalated_ticket": escalated,
            "second_period": second,
            "second_total": total_refunds(exports[f"refunds:{second}"], account),
        }
        self.system_prompt = (
            "You are a customer-success operations agent at Paylane. You work only through the tools you are "
            "given. Tools can fail; read errors carefully and do not repeat an approach that cannot work. "
            "When you are done, call submit."
        )
        self.user_prompt = (
            f"Escalation for account {account} ({world.company}). (1) Find the account's total refunds in {first}: "
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
            tool_schema(
                "query_api",
                "Call the billing REST API (GET).",
                {
                    "endpoint": {
                        "type": "string",
                        "description": "path and query, e.g. /v2/refunds?account=ACC-12345&period=2026-Q1",
                    },
                    "auth": {"type": "string", "description": "auth mode: token (service token) or none"},
                },
            ),
            tool_schema(
                "export_report",
                "Create a CSV export of a reporting dataset for one quarter.",
                {
                    "dataset": {"type": "string", "description": "refunds, chargebacks or credits"},
                    "period": {"type": "string", "description": "quarter, e.g. 2026-Q1"},
                },
            ),
            tool_schema(
                "read_export",
                "Read one page of a finished export.",
                {"export_id": {"type": "string"}, "page": {"type": "integer", "description": "1-based page"}},
            ),
            tool_schema("read_ticket", "Read a support ticket thread.", {"ticket_id": {"type": "string"}}),
        ]
        self.answer_schema = {
            "type": "object",
            "properties": {
                "first_total": {"type": "number"},
                "escalated_ticket": {"type": "string"},
                "second_period": {"type": "string"},
                "second_total": {"type": "number"},
            },
            "required": ["first_total", "escalated_ticket", "second_period", "second_total"],
        }

    # -- tools -------------------------------------------------------------------------
    def call(self, name: str, args: dict) -> ToolResult:
        """Execute a tool and remember (name, args, error) for the grader."""
        result = self._call(name, args)
        self.log.append((name, canonical_args(args), result.is_error))
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
                return ToolResult(
                    f"ERROR: period must be a quarter from {PERIODS[0]} to {PERIODS[-1]}, got {period!r}", is_error=True
                )
            key = f"{dataset}:{period}"
            export_id = self.export_ids[key]
            self.created.add(export_id)
            rows = len(self.exports[key])
            pages = self._pages(rows)
            return ToolResult(
                f"Export job queued by reporting-svc 4.2.1 (worker rpt-7, region eu-central) ... running ... done in "
                f"{3 + len(key) % 5}.{rows % 10}s.\nExport {export_id} ready: dataset {dataset}, period {period}, "
                f'{rows} rows in {pages} pages.\nRead it with read_export(export_id="{export_id}", page=1..{pages}). '
                "Exports are kept for 7 days."
            )
        if name == "read_export":
            export_id, page = args.get("export_id"), args.get("page")
            if (number := digits(page)) is not None:
                page = number
            if not isinstance(export_id, str) or export_id not in self.by_export_id or export_id not in self.created:
                return ToolResult(
                    f"ERROR: no finished export with id {export_id!r}; create one with export_report first",
                    is_error=True,
                )
            key = self.by_export_id[export_id]
            pages = self._pages(len(self.exports[key]))
            if not isinstance(page, int) or isinstance(page, bool) or not 1 <= page <= pages:
                return ToolResult(f"ERROR: page must be an integer from 1 to {pages}, got {page!r}", is_error=True)
            return ToolResult(self._export_page(export_id, key, page, pages), resource=f"export:{export_id}:{page}")
        if name == "read_ticket":
            tid = args.get("ticket_id")
            if not isinstance(tid, str) or tid.strip() not in self.tickets:
                return ToolResult(
                    f"ERROR: no ticket {tid!r}; open tickets: {', '.join(self.ticket_ids)}", is_error=True
                )
            return ToolResult(self._ticket_text(self.tickets[tid.strip()]), resource=f"ticket:{tid.strip()}")
        return ToolResult(
            f"ERROR: unknown tool {name!r}; available: query_api, export_report, read_export, read_ticket",
            is_error=True,
        )

    def _pages(self, rows: int) -> int:
        return max(1, -(-rows // self.page_rows))

    def _auth_error(self, endpoint: str, auth: str) -> str:
        digest = hashlib.sha1(f"{self.seed}:{endpoint}".encode("utf-8", "surrogatepass")).hexdigest()  # "\ud800" too
        frames = [
            (
                "billing_client/http.py",
                212,
                "send",
                "response = self._session.request(method, url, headers=headers, timeout=self.timeout)",
            ),
            ("billing_client/http.py", 248, "_raise_for_status", "raise HTTPError.from_response(response)"),
            (
                "billing_client/auth/token.py",
                87,
                "refresh",
                "token = self._provider.fetch(scope=self.scope, audience=self.audience)",
            ),
            (
                "billing_client/auth/providers/vault.py",
                131,
                "fetch",
                'secret = self._vault.read(f"secret/data/svc/{self.account}")',
            ),
            (
                "billing_client/auth/providers/vault.py",
                164,
                "_exchange",
                "resp = self._sts.assume_role(RoleArn=self.role, WebIdentityToken=jwt)",
            ),
            ("billing_client/auth/token.py", 102, "refresh", "raise AuthenticationError(self._explain(exc)) from exc"),
            ("billing_client/api/base.py", 56, "get", "self._auth.ensure_valid(self._session)"),
            ("billing_client/api/refunds.py", 33, "list_refunds", 'return self.get("/v2/refunds", params=params)'),
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
            f'  response headers: www-authenticate: Bearer error="invalid_token", error_description="token mode '
            f'disabled for /v2/*"; x-request-id: {digest[:16]}; x-trace-id: {digest[16:32]}; retry-after: none',
            "  hint: service-token access to the billing API has been disabled for this agent runtime until IAM "
            "re-issues credentials (ticket IAM-2209, no ETA). Retrying with the same or other parameters will "
            "fail the same way. Use the reporting exports for billing data.",
        ]
        return "\n".join(lines)

    def _export_page(self, export_id: str, key: str, page: int, pages: int) -> str:
        dataset, period = key.split(":")
        rows = self.exports[key][(page - 1) * self.page_rows : page * self.page_rows]
        lines = [
            f"=== Export {export_id} · dataset {dataset} · period {period} · page {page} of {pages} ===",
            "generated by reporting-svc 4.2.1 · timezone UTC · currency USD · amounts are refund amounts",
            "refund_id | date | account | order | reason | amount | status",
        ]
        lines += [f"{r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]:,.2f} | {r[6]}" for r in rows]
        lines.append(
            f"-- end of page {page} of {pages} ({len(rows)} rows) · checksum "
            f"{hashlib.sha1(f'{export_id}:{page}'.encode()).hexdigest()[:8]} --"
        )
        return "\n".join(lines)

    def _ticket_text(self, ticket: dict) -> str:
        lines = [
            f"=== Ticket {ticket['id']} · {ticket['subject']} · account {self.account} ({self.company}) ===",
            f"Status: open   Priority: {ticket['priority']}   Queue: Billing   {ticket['escalation']}",
            "",
        ]
        for index, (who, text) in enumerate(ticket["messages"], start=1):
            lines.append(f"--- message {index} · {who} ---")
            lines.append(text)
            lines.append("")
        lines.append("--- end of thread · Paylane Support · replies to this ticket are tracked ---")
        return "\n".join(lines)

    # -- grading and metrics -----------------------------------------------------------
    def grade(self, answer: dict) -> Grade:
        """All four fields and no repeated failed call for success; right fractions, halved per repeat."""
        return grade_escalation(answer, self.expected, repeated_failed_calls(self.log))

    def answer_key(self) -> dict:
        """The four expected fields (what ``grade_escalation`` compares with; no call made, so no repeat)."""
        return dict(self.expected)

    def trial_metrics(self, tool_log: list[dict]) -> dict:
        """``repeated_failed_calls`` and ``api_calls`` from the executed calls."""
        calls = [(e["name"], canonical_args(e["args"]), bool(e["is_error"])) for e in tool_log]
        return {
            "repeated_failed_calls": repeated_failed_calls(calls),
            "api_calls": sum(1 for c in calls if c[0] == "query_api"),
        }

    def data_fingerprint(self) -> list:
        """Tickets, exports and the expected answer."""
        return [self.tickets, self.exports, self.expected]

"""The ``invoice_audit`` family and its instances: find every duplicate charge in a year of invoices (source 004).

The agent pages through the invoice history with ``get_invoice_page(cursor)`` (``tools.py``:
cursor pagination, so the pages arrive one round at a time even for an agent that batches).
Some charges were billed twice (``world.py``: the same vendor, service date, amount and
purchase order under two invoice ids, ``min_distance``..``max_distance`` pages apart);
monthly subscriptions and same-day charges of other vendors are distractors.

Answer: ``submit(invoice_ids=[...])``, every id involved in a duplicate (both copies).
Grade (``grade.py``): success = the exact set; score = F1 against it.
"""

from __future__ import annotations

import random

from tasks.base import Grade, KnobError, TaskFamily, TaskInstance, ToolResult
from tasks.invoice_audit.grade import grade_ids
from tasks.invoice_audit.tools import call_tool, render_page, tool_schemas
from tasks.invoice_audit.world import History, generate_history
from tasks.kit.cursors import CursorPages


class InvoiceAudit(TaskFamily):
    """Family generator. Knobs: ``pages``, ``invoices_per_page``, ``duplicates``,
    ``min_distance`` and ``max_distance`` (pages between the two copies of a duplicate)."""

    name = "invoice_audit"

    def __init__(
        self,
        pages: int = 30,
        invoices_per_page: int = 20,
        duplicates: int = 6,
        min_distance: int = 1,
        max_distance: int = 12,
    ) -> None:
        self.pages = self.check_knob("pages", pages, 2, 2000)
        self.invoices_per_page = self.check_knob("invoices_per_page", invoices_per_page, 2, 200)
        self.duplicates = self.check_knob("duplicates", duplicates, 1, 500)
        self.min_distance = self.check_knob("min_distance", min_distance, 0, pages - 1)
        self.max_distance = self.check_knob("max_distance", max_distance, min_distance, pages - 1)
        if duplicates * 2 > pages * invoices_per_page // 2:
            raise KnobError(
                f"task knob duplicates={duplicates} is too many for {pages} pages x {invoices_per_page} invoices"
            )

    def generate(self, seed: int) -> "InvoiceAuditInstance":
        """Generate the invoice history for ``seed``."""
        rng = random.Random(f"invoice_audit:{seed}")
        history = generate_history(
            rng, self.pages, self.invoices_per_page, self.duplicates, self.min_distance, self.max_distance
        )
        return InvoiceAuditInstance(self, seed, history)


class InvoiceAuditInstance(TaskInstance):
    """One generated invoice history."""

    family = InvoiceAudit.name

    def __init__(self, family: InvoiceAudit, seed: int, history: History) -> None:
        self.seed = seed
        self.id = f"invoice_audit-p{family.pages}-s{seed}"
        self.pages = family.pages
        self.per_page = family.invoices_per_page
        self.invoices = history.invoices
        self.pairs = history.pairs
        self.answer_ids = sorted({i for pair in self.pairs for i in pair})
        self.customer = f"C{seed % 1000:03d}"
        self.listing = CursorPages(f"{self.id}:invoices", self.pages)
        self.system_prompt = (
            "You are a billing-audit agent for the CloudLedger support team. You work only through "
            "the tools you are given. Be thorough: a missed duplicate charge costs the customer money, "
            "a false accusation costs the vendor relationship. When you are done, call submit."
        )
        self.user_prompt = (
            f"Audit customer {self.customer}'s invoice history for 2026 ({self.per_page} invoices per page). "
            "get_invoice_page reads it one page at a time: pass an empty cursor for the first page, then the "
            "next_cursor that each page ends with, until a page says it is the last. Find every duplicate "
            "charge: the same vendor, service date and amount billed under two different invoice ids. Monthly "
            "subscriptions recur on purpose and are not duplicates. Submit the ids of every invoice involved "
            "in a duplicate charge, both copies, with submit(invoice_ids=[...])."
        )
        self.tools = tool_schemas()
        self.answer_schema = {
            "type": "object",
            "properties": {
                "invoice_ids": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "ids of every invoice in a duplicate charge",
                }
            },
            "required": ["invoice_ids"],
        }

    def page_text(self, page: int) -> str:
        """The text of one page, as the portal prints it."""
        return render_page(self.customer, self.invoices, self.per_page, self.listing, page)

    def call(self, name: str, args: dict) -> ToolResult:
        """``get_invoice_page(cursor)``."""
        return call_tool(name, args, self.customer, self.invoices, self.per_page, self.listing)

    def grade(self, answer: dict) -> Grade:
        """Exact set for success, F1 for the score."""
        return grade_ids(answer, set(self.answer_ids))

    def answer_key(self) -> dict:
        """The ids of every invoice in a duplicate charge (what ``grade_ids`` compares with)."""
        return {"invoice_ids": list(self.answer_ids)}

    def data_fingerprint(self) -> list:
        """Every invoice and the planted pairs."""
        return [[vars(i) for i in self.invoices], self.pairs]

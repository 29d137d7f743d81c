"""A strategy and a task family that live outside ctxbench (see examples/README.md).

``Elide`` keeps the head (system message and task) and the newest ``keep`` rounds;
``TinyInvoices`` is the invoice audit at a few pages, for a run of seconds.
"""

from __future__ import annotations

from harness.conversation import split_head, split_rounds
from tasks.invoice_audit import InvoiceAudit


class Elide:
    """Head plus the newest ``keep`` rounds (a tool call stays with its results)."""

    budget_guarantee = "none"

    def __init__(self, keep: int = 2) -> None:
        if keep < 1:
            raise ValueError(f"elide: keep={keep} must be at least 1")
        self.keep = keep

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The head and the last ``keep`` rounds of the history."""
        head, rest = split_head(messages)
        rounds = split_rounds(rest)
        return [*head, *(m for r in rounds[-self.keep :] for m in r)]


class TinyInvoices(InvoiceAudit):
    """The invoice audit with small defaults (4 pages of 5 invoices, 2 duplicates)."""

    def __init__(
        self,
        pages: int = 4,
        invoices_per_page: int = 5,
        duplicates: int = 2,
        min_distance: int = 1,
        max_distance: int = 3,
    ) -> None:
        super().__init__(
            pages=pages,
            invoices_per_page=invoices_per_page,
            duplicates=duplicates,
            min_distance=min_distance,
            max_distance=max_distance,
        )

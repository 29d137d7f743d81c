"""The tool of ``invoice_audit``: ``get_invoice_page(cursor)``, a cursor-paginated billing portal.

Like a real billing API (Stripe's ``starting_after``, most list endpoints), the history is
read page by page: an empty cursor reads the first page, and every page ends with the
cursor of the next (``next_cursor: cur_... (page k of N)``). An agent therefore cannot ask
for page 7 before page 6 has named it, however many calls it batches.
"""

from __future__ import annotations

from tasks.base import ToolResult, tool_schema
from tasks.invoice_audit.world import Invoice
from tasks.kit.cursors import CursorPages
from tasks.kit.pages import page_for_call, page_items, with_footer

TOOL = "get_invoice_page"


def tool_schemas() -> list[dict]:
    """The schema of ``get_invoice_page``."""
    return [
        tool_schema(
            TOOL,
            "Fetch one page of the customer's invoice history. Pass an empty cursor for the "
            "first page; every page ends with the next_cursor to pass for the page after it.",
            {"cursor": {"type": "string", "description": '"" for the first page, else a next_cursor'}},
        )
    ]


def render_page(customer: str, invoices: list[Invoice], per_page: int, listing: CursorPages, page: int) -> str:
    """The text of one page, as the portal prints it (navigation, the invoices, the next cursor)."""
    lines = [
        f"=== Invoice history · customer {customer} · page {page} of {listing.pages} ===",
        "CloudLedger Billing Portal | Home > Customers > Invoices | Export CSV | Filters: year=2026, status=any",
    ]
    start = (page - 1) * per_page
    for invoice in page_items(invoices, page, per_page):
        lines += [
            f"Invoice {invoice.id}",
            f"  Date: {invoice.date}   Vendor: {invoice.vendor}",
            f"  Description: {invoice.description}",
            f"  Amount: USD {invoice.amount:,.2f}   Tax: USD {invoice.tax:,.2f}   Status: {invoice.status}",
            (
                f"  Payment ref: {invoice.payment_ref}   PO: {invoice.po}   "
                f"Billed to: CloudLedger GmbH, {invoice.city} office"
            ),
        ]
    lines.append(
        f"Showing {start + 1}-{min(start + per_page, len(invoices))} of {len(invoices)} invoices · "
        "Need help? support@cloudledger.example · Terms · Privacy · © 2026 CloudLedger"
    )
    return with_footer(lines, listing, page)


def call_tool(
    name: str, args: dict, customer: str, invoices: list[Invoice], per_page: int, listing: CursorPages
) -> ToolResult:
    """``get_invoice_page(cursor)``: the page the cursor names, or an error result."""
    if name != TOOL:
        return ToolResult(f"ERROR: unknown tool {name!r}; available: {TOOL}", is_error=True)
    page = page_for_call(listing, args)
    if isinstance(page, ToolResult):
        return page
    return ToolResult(render_page(customer, invoices, per_page, listing, page), resource=f"page:{page}")

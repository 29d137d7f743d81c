"""``invoice_audit``: find every duplicate charge in a customer's year of invoices (source 004).

The package: ``world.py`` (the generated history and its templates), ``tools.py``
(``get_invoice_page(cursor)``), ``grade.py`` and ``family.py`` (the ``TaskFamily`` and
``TaskInstance`` that tie them together). Its reference policy and sub-agent are in
``reference_agent/policies/invoice_audit.py``.
"""

from tasks.base import FamilySpec
from tasks.invoice_audit.family import InvoiceAudit, InvoiceAuditInstance
from tasks.invoice_audit.grade import grade_ids
from tasks.invoice_audit.world import Invoice

__all__ = ["FAMILY", "Invoice", "InvoiceAudit", "InvoiceAuditInstance"]

FAMILY = FamilySpec(
    InvoiceAudit.name,
    InvoiceAudit,
    InvoiceAuditInstance,
    grade_ids,
    policy="reference_agent.policies.invoice_audit:InvoicePolicy",  # the page-by-page auditor
)
"""The family's registration (``tasks.registry``)."""

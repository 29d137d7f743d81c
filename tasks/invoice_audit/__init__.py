"""``invoice_audit``: find every duplicate charge in a customer's year of invoices (seed 004).

The package: ``world.py`` (the generated history and its templates), ``tools.py``
(``get_invoice_page(cursor)``), ``grade.py``, ``policy.py`` (the reference policy and its
sub-agent), ``family.py`` (the ``TaskFamily`` and ``TaskInstance`` that tie them together).
"""
from tasks.invoice_audit.family import InvoiceAudit, InvoiceAuditInstance
from tasks.invoice_audit.policy import InvoicePolicy, InvoiceSubPolicy
from tasks.invoice_audit.world import Invoice

__all__ = ["Invoice", "InvoiceAudit", "InvoiceAuditInstance", "InvoicePolicy", "InvoiceSubPolicy"]

"""``invoice_audit`` as a package (issue 13 §4); the module moved to ``policy.py`` unchanged first."""
from tasks.invoice_audit.policy import Invoice, InvoiceAudit, InvoiceAuditInstance, InvoicePolicy, InvoiceSubPolicy

__all__ = ["Invoice", "InvoiceAudit", "InvoiceAuditInstance", "InvoicePolicy", "InvoiceSubPolicy"]

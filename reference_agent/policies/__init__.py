"""The reference policy of every task family, and how the scripted agent finds the one for an instance.

One module per family (``code_review`` has two helpers beside its own: ``code_review_patterns``,
the bug patterns a reviewer spots, and ``code_review_ledger``, its ledger). A policy acts only
on the messages it is given (``Policy``). ``reference_policy(instance)`` gives a fresh policy
for one trial: the family's from ``FACTORIES`` (keyed by ``TaskInstance.family``), else the
instance's own ``reference_policy()`` (a family from a plugin may ship one).
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from reference_agent.policies.brand_report import BrandPolicy
from reference_agent.policies.call_budget import CallBudgetPolicy
from reference_agent.policies.callback_search import CallbackSearchPolicy
from reference_agent.policies.code_review import ReviewPolicy
from reference_agent.policies.failure_memory import FailureMemoryPolicy
from reference_agent.policies.invoice_audit import InvoicePolicy
from reference_agent.policies.needle import NeedlePolicy
from reference_agent.policies.people_tracker import TrackerPolicy
from tasks.base import TaskInstance
from tasks.brand_report import BrandReport
from tasks.call_budget import CallBudget
from tasks.callback_search import CallbackSearch
from tasks.code_review import CodeReview
from tasks.failure_memory import FailureMemory
from tasks.invoice_audit import InvoiceAudit
from tasks.needle import Needle
from tasks.people_tracker import PeopleTracker


class Policy(Protocol):
    """A reference policy for the scripted agent.

    It must act only on the messages it is given (the prepared request), never on the
    instance's hidden state beyond what a competent agent would know from its prompt.
    """

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Return the next assistant message (``content`` and/or ``tool_calls``)."""

    def summarize(self, history_text: str) -> str:
        """Summarize a rendered history in the seed's four-part template."""


FACTORIES: dict[str, Callable[[Any], Policy]] = {
    BrandReport.name: lambda instance: BrandPolicy(notes_window=instance.notes_window),  # the page-by-page analyst
    CallBudget.name: lambda instance: CallBudgetPolicy(),  # the counting negotiator
    CallbackSearch.name: lambda instance: CallbackSearchPolicy(),  # search phase, verify phase, submit
    CodeReview.name: lambda instance: ReviewPolicy(),  # the careful reviewer
    FailureMemory.name: lambda instance: FailureMemoryPolicy(),  # tries the API first, then the exports
    InvoiceAudit.name: lambda instance: InvoicePolicy(),  # the page-by-page auditor
    Needle.name: lambda instance: NeedlePolicy(),  # one search, then the answer from what is visible
    PeopleTracker.name: lambda instance: TrackerPolicy(),  # the careful researcher
}
"""Family name -> a fresh reference policy for one trial of an instance of it."""


def reference_policy(instance: TaskInstance) -> Policy:
    """A fresh reference policy for one trial of ``instance``; ``LookupError`` when its family has none."""
    factory = FACTORIES.get(instance.family)
    if factory is not None:
        return factory(instance)
    own = getattr(instance, "reference_policy", None)
    if callable(own):
        return own()
    raise LookupError(f"the {instance.family} family has no reference policy (reference_agent.policies.FACTORIES)")

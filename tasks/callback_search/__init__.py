"""``callback_search``: find the payment-callback handler and its call sites (source 002 §2.7.6).

A package: ``world`` (the codebase, target, call sites and distractors, as plain data), ``family``
(the knobs; it composes world and tools into an instance), ``formats`` (how the tools
render their results, and the patterns that read them back), ``tools`` (prompts and tools; the
instance, the Task contract's seam) and ``grade``. Answer: ``submit(file, function,
call_sites=[{"file", "function"}, ...])``. The family's rules are in tasks/README.md; its reference
agent (search, then verify; its sub-agent for ``isolate``) is ``reference_agent/policies/callback_search.py``.
"""

from tasks.base import FamilySpec
from tasks.callback_search.family import CallbackSearch
from tasks.callback_search.grade import grade_answer, search_metrics
from tasks.callback_search.tools import CallbackSearchInstance
from tasks.callback_search.world import ALIASES, FACADE

__all__ = ["FAMILY", "ALIASES", "FACADE", "CallbackSearch", "CallbackSearchInstance", "grade_answer", "search_metrics"]

FAMILY = FamilySpec(
    CallbackSearch.name,
    CallbackSearch,
    CallbackSearchInstance,
    grade_answer,
    policy="reference_agent.policies.callback_search:CallbackSearchPolicy",  # search phase, verify phase, submit
)
"""The family's registration (``tasks.registry``)."""

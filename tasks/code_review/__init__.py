"""``code_review``: find the planted bugs in a generated Python repository (source 000 §7.3).

A package: ``world`` (the repository, bugs, decoys and the scope, as plain data), ``family`` (the knobs;
it composes world and tools into an instance), ``formats`` (how the tools render
their results and the replies the stop hook reads, with the patterns that read them back), ``tools``
(prompts and tools; the instance, the Task contract's seam) and ``grade`` (the answer, the stop hook,
file coverage). Answer: ``submit(findings=[{"file": path, "function": name}, ...])``, one entry per
buggy function in scope; success = the exact set, score = F1. The family's rules are in
tasks/README.md; its reference reviewer is ``reference_agent/policies/code_review.py``.
"""

from tasks.base import FamilySpec
from tasks.code_review.family import CodeReview
from tasks.code_review.formats import GREP_LIMIT, LISTING_HEADER, LISTING_LINE, SCOPE, VERDICT
from tasks.code_review.grade import file_metrics, grade_findings, missing_reviews
from tasks.code_review.tools import CodeReviewInstance
from tasks.code_review.world import (
    BUG_TEMPLATES,
    DOMAINS,
    HELPERS,
    KINDS,
    Bug,
    _helper_module,
    _t_call,
    _t_off_by_one,
)

__all__ = [
    "FAMILY",
    "BUG_TEMPLATES",
    "DOMAINS",
    "GREP_LIMIT",
    "HELPERS",
    "KINDS",
    "LISTING_HEADER",
    "LISTING_LINE",
    "SCOPE",
    "VERDICT",
    "Bug",
    "CodeReview",
    "CodeReviewInstance",
    "file_metrics",
    "grade_findings",
    "missing_reviews",
    "_helper_module",
    "_t_call",
    "_t_off_by_one",
]

FAMILY = FamilySpec(
    CodeReview.name,
    CodeReview,
    CodeReviewInstance,
    grade_findings,
    policy="reference_agent.policies.code_review:ReviewPolicy",  # the careful reviewer
)
"""The family's registration (``tasks.registry``)."""

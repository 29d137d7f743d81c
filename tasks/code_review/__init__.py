"""``code_review``: find the planted bugs in a generated Python repository (seed 000 §7.3).

A package: ``world`` (the repository, bugs, decoys and the scope), ``tools`` (prompts, tools and
their rendering; the instance, the Task contract's seam), ``grade`` (the answer, the stop hook,
file coverage) and ``policy`` (the reference reviewer). Answer:
``submit(findings=[{"file": path, "function": name}, ...])``, one entry per buggy function in
scope; success = the exact set, score = F1. The family's rules are in tasks/README.md.
"""
from tasks.code_review.grade import file_metrics, grade_findings, missing_reviews
from tasks.code_review.policy import ReviewPolicy, ReviewSubPolicy, detect, helper_imports, helper_signatures
from tasks.code_review.tools import GREP_LIMIT, LISTING_HEADER, LISTING_LINE, SCOPE, VERDICT, CodeReviewInstance
from tasks.code_review.world import (BUG_TEMPLATES, DOMAINS, HELPERS, KINDS, Bug, CodeReview, _helper_module,
                                     _t_call, _t_off_by_one)

__all__ = ["BUG_TEMPLATES", "DOMAINS", "GREP_LIMIT", "HELPERS", "KINDS", "LISTING_HEADER", "LISTING_LINE", "SCOPE",
           "VERDICT", "Bug", "CodeReview", "CodeReviewInstance", "ReviewPolicy", "ReviewSubPolicy", "detect",
           "file_metrics", "grade_findings", "helper_imports", "helper_signatures", "missing_reviews",
           "_helper_module", "_t_call", "_t_off_by_one"]

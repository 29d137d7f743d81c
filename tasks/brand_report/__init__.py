"""``brand_report``: count last week's negative mentions of three brands in a noisy social feed (source 000).

The package: ``world.py`` (the generated feed and its templates), ``tools.py``
(``get_posts(cursor)``, ``search_posts(brand, cursor)``), ``grade.py`` and ``family.py`` (the
``TaskFamily`` and ``TaskInstance``). Its reference policy and sub-agent are in
``reference_agent/policies/brand_report.py``.
"""

from tasks.base import FamilySpec
from tasks.brand_report.family import BrandReport, BrandReportInstance
from tasks.brand_report.grade import grade_counts
from tasks.brand_report.world import Item, negative_counts, pin_window_boundaries, shifted_windows

__all__ = [
    "FAMILY",
    "BrandReport",
    "BrandReportInstance",
    "Item",
    "negative_counts",
    "pin_window_boundaries",
    "shifted_windows",
]

FAMILY = FamilySpec(
    BrandReport.name,
    BrandReport,
    BrandReportInstance,
    grade_counts,
    policy="reference_agent.policies.brand_report:BrandPolicy",  # the page-by-page analyst
    policy_args=("notes_window",),
)
"""The family's registration (``tasks.registry``)."""

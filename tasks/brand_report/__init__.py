"""``brand_report``: count last week's negative mentions of three brands in a noisy social feed (seed 000).

The package: ``world.py`` (the generated feed and its templates), ``tools.py``
(``get_posts(cursor)``, ``search_posts(brand, cursor)``), ``grade.py``, ``policy.py`` (the
reference policy and its sub-agent), ``family.py`` (the ``TaskFamily`` and ``TaskInstance``).
"""
from tasks.brand_report.family import BrandReport, BrandReportInstance
from tasks.brand_report.policy import BrandPolicy, BrandSubPolicy, tally_page
from tasks.brand_report.world import Item, negative_counts, pin_window_boundaries, shifted_windows

__all__ = ["BrandPolicy", "BrandReport", "BrandReportInstance", "BrandSubPolicy", "Item", "negative_counts",
           "pin_window_boundaries", "shifted_windows", "tally_page"]

"""``brand_report`` as a package (issue 13 §4); the module moved to ``policy.py`` unchanged first."""
from tasks.brand_report.policy import (BrandPolicy, BrandReport, BrandReportInstance, Item, negative_counts,
                                       pin_window_boundaries, shifted_windows, tally_page)

__all__ = ["BrandPolicy", "BrandReport", "BrandReportInstance", "Item", "negative_counts", "pin_window_boundaries",
           "shifted_windows", "tally_page"]

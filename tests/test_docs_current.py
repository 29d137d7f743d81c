"""The comparison of committed tables with a fresh run masks wall times and nothing else.

The docs themselves are checked by tests/test_docs_*.py, one file per doc (tests/docs_current.py).
"""
from __future__ import annotations

from tests.docs_current import tables


def test_wall_time_columns_are_masked_and_nothing_else():
    table = "| a | mean wall time (s) | b |\n|---|---|---|\n| x | 0.041 | 7 |"
    assert tables.mask_wall_times(table).splitlines()[2] == "| x | … | 7 |"
    changed = table.replace("| 7 |", "| 8 |")
    assert tables.mask_wall_times(table) != tables.mask_wall_times(changed)

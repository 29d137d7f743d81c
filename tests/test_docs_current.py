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


def test_every_preset_section_ends_with_a_generated_verdict():
    """docs/experiments.md: each numbered section's last generated block is a verdict table computed by code,
    and every preset (strategy_zoo aside: strategies/README.md) has a table there."""
    import re

    text = (tables.ROOT / "docs" / "experiments.md").read_text()
    sections = re.split(r"^## \d+\. ", text, flags=re.M)[1:]
    assert len(sections) >= 11
    for section in sections:
        section = section.split("\n## ", 1)[0]
        names = [m.group(1) for m in tables.BLOCK.finditer(section)]
        assert names and names[-1].endswith("_verdict"), section.splitlines()[0]
        assert names[-1] in tables.TABLES
        verdict = section[section.index(f"<!-- table:{names[-1]} -->") :]
        cells = [line.split(" | ")[2] for line in verdict.splitlines()[3:] if line.startswith("| ")]
        assert cells and all(c.split(" (")[0] in ("reproduced", "partly", "not") for c in cells), cells
    shown = {tables.source_of(n) for n in tables.block_names(tables.ROOT / "docs" / "experiments.md")}
    assert set(tables.PRESETS) - {"strategy_zoo"} <= shown


def test_verdict_tables_use_the_three_verdicts():
    rows = [("claim", "ours", "partly", "why")]
    table = tables.verdict_table(rows)
    assert table.splitlines()[0] == "| published figure | ours | verdict | reason |" and "| partly |" in table

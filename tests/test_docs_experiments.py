"""The generated blocks of docs/experiments.md equal a fresh run (tests/docs_current.py), one case per preset.

Every block is checked: the presets' tables, their verdict tables and the computed demos. A case runs one
preset (or computes one demo), so pytest-xdist spreads the presets over the cores.
"""
import pytest

from tests.docs_current import block_groups, check_current

DOC = "docs/experiments.md"
GROUPS = block_groups(DOC)


@pytest.mark.parametrize("source", sorted(GROUPS))
def test_generated_blocks_are_current(source, tmp_path):
    check_current(DOC, tmp_path, GROUPS[source])

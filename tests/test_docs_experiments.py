"""The generated blocks of docs/experiments.md equal a fresh run (tests/docs_current.py), one case per preset.

Every block is checked: the presets' tables, their verdict tables and the computed demos. A case runs one
preset (or computes one demo). The project runs pytest-xdist with ``--dist loadfile`` (a file stays on one
worker), so the presets are split over two files by a stable hash of their names: this one takes the even
half, tests/test_docs_experiments_odd.py the odd one, and the two run on different cores.
"""

import zlib

import pytest

from tests.docs_current import block_groups, check_current

DOC = "docs/experiments.md"
GROUPS = block_groups(DOC)
HEAVY = {"attention_model", "compression_six", "lost_in_middle", "review44_budget"}  # ~15, 14, 6, 6 s
SLICE = {"seed004_demo", "semantic_filter", "status_cost_model", "three_versions"}
"""The fixed slice the default test command checks (each under 5 s); every other block runs in the slow
tier (``pytest -m slow``, which .ci/run runs), where a full regeneration takes minutes."""


def cases(names: list[str]) -> list:
    """``names`` as test cases, those outside ``SLICE`` marked slow."""
    return [pytest.param(n, marks=() if n in SLICE else pytest.mark.slow) for n in names]


def half(parity: int) -> list[str]:
    """The preset names of one half: the heavy ones alternate, the rest by a stable hash of the name."""
    heavy = sorted(s for s in GROUPS if s in HEAVY)
    light = sorted(s for s in GROUPS if s not in HEAVY)
    return heavy[parity::2] + [s for s in light if zlib.crc32(s.encode()) % 2 == parity]


@pytest.mark.parametrize("source", cases(half(0)))
def test_generated_blocks_are_current(source, tmp_path):
    check_current(DOC, tmp_path, GROUPS[source])

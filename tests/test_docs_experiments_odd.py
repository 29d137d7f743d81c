"""The other half of docs/experiments.md's presets (tests/test_docs_experiments.py says why there are two files)."""

import pytest

from tests.docs_current import check_current
from tests.test_docs_experiments import DOC, GROUPS, cases, half


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@pytest.mark.parametrize("source", cases(half(1)))
def test_generated_blocks_are_current(source, tmp_path):
    check_current(DOC, tmp_path, GROUPS[source])

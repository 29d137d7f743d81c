"""The generated blocks of strategies/README.md equal a fresh run (tests/docs_current.py).

Slow (run by .ci/run after the default suite): the strategy zoo is 22 configurations on the default
suite (7 families x 5 instances x 2 trials), 1,540 trials, several minutes on 2 cores.
"""

import pytest

from tests.docs_current import check_current


@pytest.mark.slow
def test_generated_blocks_are_current(tmp_path):
    check_current("strategies/README.md", tmp_path)

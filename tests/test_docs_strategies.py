"""The generated blocks of strategies/README.md equal a fresh run (tests/docs_current.py).

Slow (run by .ci/run after the default suite): the strategy zoo is 22 configurations on the default
suite (10 families x 5 instances x 2 trials), 2,200 trials, about 9 minutes on 2 cores shared with other jobs.
"""

import pytest

from tests.docs_current import check_current


@pytest.mark.slow
def test_generated_blocks_are_current(tmp_path):
    check_current("strategies/README.md", tmp_path)

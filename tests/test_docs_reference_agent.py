"""The generated blocks of docs/reference_agent.md equal a fresh run (tests/docs_current.py)."""
import pytest

from tests.docs_current import check_current
from tests.test_calibration import RUNS


@pytest.mark.skipif(not RUNS, reason="shared/calibration is not beside this checkout")
def test_generated_blocks_are_current(tmp_path):
    check_current("docs/reference_agent.md", tmp_path)

"""The generated calibration block of docs/reference_agent.md equals a fresh run (tests/docs_current.py).

Slow: it replays every recorded LLM run (calibration/ and shared/calibration/) three times on the
reference agent; `.ci/run` runs it after the default suite. The block counts the runs of
``shared/calibration/`` beside the checkout, so a clone without that folder skips the check (it
would find the block stale for want of the runs, not for a change of the reference agent).
"""

import pytest

from tests.docs_current import check_current
from tests.test_cli import ROOT

CALIBRATION = ROOT.parent / "shared" / "calibration"  # as benchmarks/calibration.py reads it


@pytest.mark.slow
def test_generated_blocks_are_current(tmp_path):
    if not CALIBRATION.is_dir():
        pytest.skip(f"{CALIBRATION} is not beside the checkout: the calibration block counts its runs")
    check_current("docs/reference_agent.md", tmp_path)

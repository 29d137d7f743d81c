"""The generated calibration block of docs/reference_agent.md equals a fresh run (tests/docs_current.py).

Slow: it replays every recorded LLM run in this repository (calibration/ and calibration/protocol-1/) three
times on the reference agent; `.ci/run` runs it after the default suite. The block leaves out
``shared/calibration/`` (benchmarks/experiments/benchmark_tables.py), so it reproduces from a clone alone.
"""

import pytest

from tests.docs_current import check_current


@pytest.mark.slow
def test_generated_blocks_are_current(tmp_path):
    check_current("docs/reference_agent.md", tmp_path)

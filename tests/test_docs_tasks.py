"""The generated blocks of tasks/README.md (memory pressure per family and profile; the issue 34 families beside
the recorded LLM) equal a fresh run.

The blocks run every family (the long-size one at 150-250K-token histories) or replay the recordings, and are
slow: .ci/run checks
them after the default suite."""

import pytest

from tests.docs_current import check_current


@pytest.mark.slow
def test_the_default_size_block_is_current(tmp_path):
    check_current("tasks/README.md", tmp_path, {"memory_pressure"})


@pytest.mark.slow
def test_the_long_size_block_is_current(tmp_path):
    check_current("tasks/README.md", tmp_path, {"memory_pressure_long"})


@pytest.mark.slow
def test_the_issue34_families_block_is_current(tmp_path):
    check_current("tasks/README.md", tmp_path, {"issue34_families"})

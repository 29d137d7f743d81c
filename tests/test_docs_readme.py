"""The generated blocks of README.md equal a fresh run of the main job (tests/docs_current.py).

The main job is 70 trials: the slow tier (``pytest -m slow``, run by .ci/run) checks it."""
import pytest

from tests.docs_current import check_current


@pytest.mark.slow
def test_generated_blocks_are_current(tmp_path):
    check_current("README.md", tmp_path)

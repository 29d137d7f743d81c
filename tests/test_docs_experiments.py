"""The generated blocks of docs/experiments.md equal a fresh run (tests/docs_current.py)."""
from tests.docs_current import check_current


def test_generated_blocks_are_current(tmp_path):
    check_current("docs/experiments.md", tmp_path)

"""The generated blocks of tasks/README.md (memory pressure per family and profile) equal a fresh run."""
from tests.docs_current import check_current


def test_generated_blocks_are_current(tmp_path):
    check_current("tasks/README.md", tmp_path)

"""The ``code_review`` family: its knobs, and the instance it composes from ``world`` and ``tools``.

``world`` generates the repository as plain data (``generate_repository``); ``tools`` holds the
instance (prompts, tools, the grader's seam). This module is the only one that imports both, so
neither imports the other.
"""

from __future__ import annotations

from tasks.base import TaskFamily
from tasks.code_review.tools import CodeReviewInstance
from tasks.code_review.world import HELPERS, MAX_FILES, generate_repository


class CodeReview(TaskFamily):
    """Family generator. Knobs: ``files`` (modules in the repository), ``bugs`` (planted bugs),
    ``max_calls_per_turn`` (the code host's documented limit on concurrent tool calls per turn),
    ``other_teams`` (domains the prompt puts out of scope, each with one planted bug that must not be reported)."""

    name = "code_review"

    def __init__(self, files: int = 44, bugs: int = 6, max_calls_per_turn: int = 4, other_teams: int = 1) -> None:
        self.files = self.check_knob("files", files, len(HELPERS) + 2, MAX_FILES)
        self.bugs = self.check_knob("bugs", bugs, 1, files - len(HELPERS) - other_teams)
        self.other_teams = self.check_knob("other_teams", other_teams, 0, 3)
        self.max_calls_per_turn = self.check_knob("max_calls_per_turn", max_calls_per_turn, 1, 64)

    def generate(self, seed: int) -> CodeReviewInstance:
        """Generate the repository for ``seed``."""
        repo = generate_repository(seed, self.files, self.bugs, self.other_teams)
        return CodeReviewInstance(self, seed, repo.files, repo.bugs, repo.out_of_scope, repo.other_bugs)

"""The ``callback_search`` family: its knobs, and the instance it composes from ``world`` and ``tools``.

``world`` generates the codebase as plain data (``generate_codebase``); ``tools`` holds the instance
(prompts, tools, the grader's seam). This module is the only one that imports both, so neither
imports the other.
"""

from __future__ import annotations

from tasks.base import TaskFamily
from tasks.callback_search.tools import CallbackSearchInstance
from tasks.callback_search.world import extra_room, generate_codebase


class CallbackSearch(TaskFamily):
    """Family generator. Knobs: ``files`` (files in the codebase), ``functions_per_file``
    (generated functions per module), ``grep_cap`` (lines a grep shows), ``max_calls_per_turn``
    (the code host's documented limit on concurrent tool calls per turn) and ``extra_call_sites``
    (call sites beyond the 2-4 planted ones, each in a generated module of its own: 0 by default)."""

    name = "callback_search"

    def __init__(
        self,
        files: int = 120,
        functions_per_file: int = 26,
        grep_cap: int = 60,
        max_calls_per_turn: int = 2,
        extra_call_sites: int = 0,
    ) -> None:
        self.files = self.check_knob("files", files, 20, 2000)
        self.functions_per_file = self.check_knob("functions_per_file", functions_per_file, 2, 100)
        self.grep_cap = self.check_knob("grep_cap", grep_cap, 5, 1000)
        self.max_calls_per_turn = self.check_knob("max_calls_per_turn", max_calls_per_turn, 1, 64)
        self.extra_call_sites = self.check_knob("extra_call_sites", extra_call_sites, 0, extra_room(self.files))

    def generate(self, seed: int) -> CallbackSearchInstance:
        """The codebase for ``seed``: source modules with the target, its decoys and its call sites, tests, docs."""
        codebase = generate_codebase(seed, self.files, self.functions_per_file, self.extra_call_sites)
        return CallbackSearchInstance(
            self, seed, codebase.files, codebase.target_path, codebase.target_name, codebase.sites
        )

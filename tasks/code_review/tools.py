"""``code_review`` tools: the prompts and ``list_files`` / ``read_file`` / ``grep`` (their texts: ``formats``).

Tools: ``list_files()``, ``read_file(path)`` (numbered lines, one file per call), ``grep(pattern)``
(regex over every file, at most ``GREP_LIMIT`` lines shown). The instance declares the code host's
per-turn limit (``max_calls_per_turn``, default 4) and its prompt says it (``kit.limits``).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Protocol

from tasks.base import Grade, TaskInstance, ToolResult, tool_schema
from tasks.code_review import grade as grading
from tasks.code_review.formats import GREP_LIMIT, LISTING_HEADER, file_result, listing_line, scope_sentence
from tasks.kit.limits import limit_sentence
from tasks.kit.repo import grep_lines

if TYPE_CHECKING:
    from tasks.code_review.world import Bug


class ReviewKnobs(Protocol):
    """What an instance reads from its family (``family.CodeReview``): the repository's size and the per-turn limit."""

    files: int
    max_calls_per_turn: int


class CodeReviewInstance(TaskInstance):
    """One generated repository."""

    family = "code_review"

    def __init__(
        self,
        family: ReviewKnobs,
        seed: int,
        files: dict[str, str],
        bugs: list[Bug],
        out_of_scope: tuple[str, ...] = (),
        other_bugs: list[Bug] | None = None,
    ) -> None:
        self.seed = seed
        self.id = f"code_review-f{family.files}-s{seed}"
        self.files = files
        self.bugs = bugs
        self.out_of_scope = out_of_scope
        self.other_bugs = other_bugs or []
        self.max_calls_per_turn = family.max_calls_per_turn
        self.repo = f"acme-platform @ {random.Random(seed).randrange(16**7):07x}"
        self.system_prompt = (
            "You are a senior code reviewer. You work only through the tools you are given. Review carefully: "
            "a missed bug reaches production, a false report wastes the owning team's time. "
            "When you are done, call submit."
        )
        self.user_prompt = (
            f"Review the Python repository {self.repo} ({len(files)} files; list_files, read_file, grep). "
            "Find every function with a real bug: wrong argument order in calls to helpers defined in other "
            "modules, off-by-one loop bounds, inverted comparisons, mutable default arguments, files opened and "
            "never closed, SQL built by string formatting from arguments, divisions without a zero guard. Some "
            "code only looks suspicious; report real bugs only. "
            + scope_sentence(self.out_of_scope)
            + "Submit every buggy function once with "
            'submit(findings=[{"file": path, "function": name}, ...]). '
            + limit_sentence(self.max_calls_per_turn, "tool calls (one file per read_file)")
        )
        self.tools = [
            tool_schema("list_files", "List every file of the repository with its size.", {}),
            tool_schema(
                "read_file",
                "Read one file, with line numbers.",
                {"path": {"type": "string", "description": "a path from list_files"}},
            ),
            tool_schema(
                "grep",
                f"Search every file with a Python regular expression (at most {GREP_LIMIT} matching lines).",
                {"pattern": {"type": "string", "description": "a Python regular expression"}},
            ),
        ]
        self.answer_schema = {
            "type": "object",
            "properties": {
                "findings": {
                    "type": "array",
                    "description": "one entry per buggy function",
                    "items": {
                        "type": "object",
                        "properties": {"file": {"type": "string"}, "function": {"type": "string"}},
                        "required": ["file", "function"],
                    },
                }
            },
            "required": ["findings"],
        }

    def listing(self) -> str:
        """The ``list_files`` output."""
        lines = [f"{LISTING_HEADER} · {self.repo} · {len(self.files)} files"]
        for path, text in self.files.items():
            lines.append(listing_line(path, text))
        lines.append("Hint: read_file(path) opens a file; grep(pattern) searches every file.")
        return "\n".join(lines)

    def call(self, name: str, args: dict) -> ToolResult:
        """``list_files()``, ``read_file(path)``, ``grep(pattern)``."""
        if name == "list_files":
            return ToolResult(self.listing(), resource="listing")
        if name == "read_file":
            path = args.get("path")
            if not isinstance(path, str) or not path.strip():
                return ToolResult("ERROR: read_file needs a path (a string from list_files)", is_error=True)
            path = path.strip().lstrip("./")
            if path not in self.files:
                return ToolResult(
                    f"ERROR: no such file {path!r}; call list_files to see the {len(self.files)} paths", is_error=True
                )
            return ToolResult(file_result(path, self.files[path]), resource=f"file:{path}")
        if name == "grep":
            found = grep_lines(self.files, args)
            if isinstance(found, ToolResult):
                return found
            pattern, hits = found
            shown = hits[:GREP_LIMIT]
            if len(hits) > GREP_LIMIT:
                shown.append(f"... {len(hits) - GREP_LIMIT} more matching lines not shown; narrow the pattern")
            return ToolResult(
                f"grep {pattern!r}: {len(hits)} matching lines\n" + "\n".join(shown or ["(no matches)"]),
                resource=f"grep:{pattern}",
            )
        return ToolResult(f"ERROR: unknown tool {name!r}; available: list_files, read_file, grep", is_error=True)

    def grade(self, answer: dict) -> Grade:
        """Exact set of (file, function) for success; F1 for the score (``grade.grade_findings``)."""
        return grading.grade_findings(self.bugs, answer)

    def answer_key(self) -> dict:
        """The in-scope buggy functions (what ``grade_findings`` compares with)."""
        return {"findings": [{"file": bug.file, "function": bug.function} for bug in self.bugs]}

    def completion_check(self, messages: list[dict], answer: dict) -> str | None:
        """Stop-hook check (source 000 §7.4): every in-scope file in the visible listing needs a visible review."""
        return grading.missing_reviews(messages, self.out_of_scope)

    def trial_metrics(self, tool_log: list[dict]) -> dict:
        """File coverage of the in-scope files (``grade.file_metrics``)."""
        return grading.file_metrics(tool_log, list(self.files), self.out_of_scope)

    def data_fingerprint(self) -> list:
        """Every file and the planted bugs."""
        return [self.files, [vars(b) for b in self.bugs], list(self.out_of_scope), [vars(b) for b in self.other_bugs]]

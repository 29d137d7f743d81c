"""``callback_search`` tools: the prompts and ``list_files`` / ``read_file`` / ``grep`` (their texts: ``formats``).

Tools: ``list_files()``, ``read_file(path)`` (numbered lines, one file per call) and ``grep(pattern)``
(a Python regex; a bad regex is a tool error; output capped at ``grep_cap`` lines with a note). The
instance declares the code host's per-turn limit (``max_calls_per_turn``, default 2: every file is a
large read) and its prompt says it (``kit.limits``).
"""

from __future__ import annotations

from typing import Protocol

from tasks.base import Grade, TaskInstance, ToolResult, tool_schema
from tasks.callback_search.formats import file_result, grep_result
from tasks.callback_search.grade import grade_answer, search_metrics
from tasks.kit.limits import limit_sentence
from tasks.kit.repo import grep_lines


class SearchKnobs(Protocol):
    """What an instance reads from its family (``family.CallbackSearch``): its size, grep cap and per-turn limit."""

    files: int
    grep_cap: int
    max_calls_per_turn: int


class CallbackSearchInstance(TaskInstance):
    """One generated codebase."""

    family = "callback_search"

    def __init__(
        self,
        family: SearchKnobs,
        seed: int,
        files: dict[str, str],
        target_path: str,
        target_name: str,
        sites: list[dict],
    ) -> None:
        self.seed = seed
        self.id = f"callback_search-f{family.files}-s{seed}"
        self.files = files
        self.grep_cap = family.grep_cap
        self.max_calls_per_turn = family.max_calls_per_turn
        self.target = {"file": target_path, "function": target_name}
        self.sites = sites
        self.system_prompt = (
            "You are a software engineer exploring an unfamiliar Python codebase (the Shoply backend) through "
            "the tools you are given: list_files, read_file and grep. Be precise: confirm what you report by "
            "reading the code. When you are done, call submit."
        )
        self.user_prompt = (
            "Find the function that handles the payment gateway's callbacks: the handler that runs when the "
            "gateway reports a payment as completed, failed or refunded (a deprecated handler that nothing calls "
            "any more, the callbacks of other services and the endpoints that only pass the event on do not "
            "count). Then find every call site of it in the application code under src/ (tests and docs do not "
            "count). A call site is a function whose body calls it: directly, through an import alias or as a "
            "module attribute; mentions in comments, log strings and docstrings are not calls. "
            'Submit submit(file="src/...py", function="name", call_sites=[{"file": "src/...py", '
            '"function": "name"}, ...]). '
            + limit_sentence(self.max_calls_per_turn, "tool calls (one file per read_file)")
        )
        self.tools = [
            tool_schema("list_files", "List every file of the repository.", {}, []),
            tool_schema("read_file", "Read a file, with line numbers.", {"path": {"type": "string"}}),
            tool_schema(
                "grep",
                "Search every file for a Python regular expression; prints path:line: text.",
                {"pattern": {"type": "string"}},
            ),
        ]
        self.answer_schema = {
            "type": "object",
            "properties": {
                "file": {"type": "string"},
                "function": {"type": "string"},
                "call_sites": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"file": {"type": "string"}, "function": {"type": "string"}},
                        "required": ["file", "function"],
                    },
                },
            },
            "required": ["file", "function", "call_sites"],
        }

    def call(self, name: str, args: dict) -> ToolResult:
        """``list_files()``, ``read_file(path)``, ``grep(pattern)``."""
        if name == "list_files":
            lines = [f"{path}  ({len(text.splitlines())} lines)" for path, text in self.files.items()]
            return ToolResult(f"{len(self.files)} files:\n" + "\n".join(lines), resource="list_files")
        if name == "read_file":
            path = args.get("path")
            if isinstance(path, str):
                path = path.strip().lstrip("./")
            if not isinstance(path, str) or path not in self.files:
                return ToolResult(
                    f"ERROR: no such file {args.get('path')!r}; use list_files to see the paths", is_error=True
                )
            return ToolResult(file_result(path, self.files[path]), resource=f"file:{path}")
        if name == "grep":
            found = grep_lines(self.files, args)
            if isinstance(found, ToolResult):
                return found
            pattern, hits = found
            return ToolResult(grep_result(pattern, hits, self.grep_cap), resource=f"grep:{pattern}")
        return ToolResult(f"ERROR: unknown tool {name!r}; available: list_files, read_file, grep", is_error=True)

    def grade(self, answer: dict) -> Grade:
        """Right target and exact call-site set for success; 0.4 target + 0.6 call-site F1 (``grade.grade_answer``)."""
        return grade_answer(self.target, self.sites, answer)

    def answer_key(self) -> dict:
        """The target handler and its call sites under src/ (what ``grade_answer`` compares with)."""
        sites = [{"file": s["file"], "function": s["function"]} for s in self.sites]
        return {**self.target, "call_sites": sites}

    def trial_metrics(self, tool_log: list[dict]) -> dict:
        """``files_read`` (distinct files read) and ``greps``."""
        return search_metrics(tool_log)

    def data_fingerprint(self) -> list:
        """Every file and the answer."""
        return [self.files, self.target, self.sites]

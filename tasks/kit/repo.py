"""Repository tools shared by the families that search a generated codebase (code_review, callback_search)."""

from __future__ import annotations

import re

from tasks.base import ToolResult


def grep_lines(files: dict[str, str], args: dict) -> tuple[str, list[str]] | ToolResult:
    """Validate ``grep(pattern)`` and return ``(pattern, ["path:line: text", ...])``.

    A missing or invalid pattern gives an error ``ToolResult`` (never an exception); each
    family formats and caps the matching lines itself.
    """
    pattern = args.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        return ToolResult("ERROR: grep needs a non-empty pattern (a Python regular expression)", is_error=True)
    try:
        regex = re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:  # a{4294967296} overflows, 1000 nested groups recurse
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        return ToolResult(f"ERROR: invalid regular expression {pattern[:200]!r}: {reason}", is_error=True)
    hits = [
        f"{path}:{number}: {line}"
        for path, text in files.items()
        for number, line in enumerate(text.splitlines(), start=1)
        if regex.search(line)
    ]
    return pattern, hits

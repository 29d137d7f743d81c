"""``code_review``'s text formats: how its tools render their results, and the patterns that read them back.

The tools write these texts (``tools.py``); the stop-hook check reads the listing and the
agent's review lines (``grade.missing_reviews``); an agent (the reference reviewer among
them) reads them back with the patterns here.
"""

from __future__ import annotations

import re

GREP_LIMIT = 60  # the most matching lines one grep shows
LISTING_HEADER = "Repository listing"  # how the ``list_files`` result starts
LISTING_LINE = re.compile(r"^  (app/\S+\.py)\s", re.M)  # one file of the listing (``listing_line``)
HEADER = re.compile(r"^=== (\S+\.py) · (\d+) lines", re.M)  # the first line of a ``read_file`` result
NUMBERED = re.compile(r"^ *(\d+)  ?(.*)$")  # one numbered line of a ``read_file`` result
VERDICT = re.compile(r"Reviewed (\S+\.py): (clean|bugs in [^\n]*)")  # a reviewer's note that counts as a review
SCOPE = re.compile(r"Out of scope: files under ((?:app/\w+/(?:, )?)+) belong to other teams")  # ``scope_sentence``


def scope_sentence(out_of_scope: tuple[str, ...]) -> str:
    """The prompt's scope rule (empty when every file is in scope); ``SCOPE`` reads it back."""
    if not out_of_scope:
        return ""
    folders = ", ".join(out_of_scope)
    return (
        f"Out of scope: files under {folders} belong to other teams; do not review them and do not report their bugs. "
    )


def listing_line(path: str, text: str) -> str:
    """One file of the ``list_files`` result: its path, size and line count."""
    return f"  {path:<34} {len(text.encode()) / 1024:5.1f} KB  {text.count(chr(10)):4d} lines"


def file_result(path: str, text: str) -> str:
    """The ``read_file`` result: the ``HEADER`` line, then every line numbered (``NUMBERED``)."""
    body = [f"{n:4d}  {line}" for n, line in enumerate(text.splitlines(), 1)]
    head = f"=== {path} · {len(body)} lines · {len(text.encode()) / 1024:.1f} KB ==="
    return "\n".join([head] + body)

"""``callback_search``'s text formats: how its tools render their results, and the patterns that read them back.

The tools write these texts (``tools.py``); an agent (the reference agent among them) reads
them back with the patterns here.
"""

from __future__ import annotations

import re

DEF = re.compile(r"^\s*def (\w+)\(", re.M)  # a function's def line in a file's text
NUMBERED = re.compile(r"^\s*(\d+)  (.*)$")  # one numbered line of a ``read_file`` result (``file_result``)
FILE_HEADER = re.compile(r"^=== (\S+) \((\d+) lines\) ===")  # the first line of a ``read_file`` result
GREP_LINE = re.compile(r"^(\S+?):(\d+): (.*)$", re.M)  # one hit of a ``grep`` result: path:line: text
GREP_HEADER = re.compile(r"^grep (.+?) · (\d+) matches", re.M)  # the first line of a ``grep`` result (``grep_result``)


def file_result(path: str, text: str) -> str:
    """The ``read_file`` result: the ``FILE_HEADER`` line, then every line numbered (``NUMBERED``)."""
    lines = text.splitlines()
    body = "\n".join(f"{i:5d}  {line}" for i, line in enumerate(lines, start=1))
    return f"=== {path} ({len(lines)} lines) ===\n{body}"


def grep_result(pattern: str, hits: list[str], cap: int) -> str:
    """The ``grep`` result: the ``GREP_HEADER`` line, at most ``cap`` hits (``GREP_LINE``) and what was left out."""
    shown = hits[:cap]
    text = f"grep {pattern} · {len(hits)} matches\n" + "\n".join(shown)
    if len(hits) > len(shown):
        text += f"\n... {len(hits) - len(shown)} more matches not shown; narrow the pattern"
    return text

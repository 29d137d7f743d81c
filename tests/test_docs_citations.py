"""Docs cite only what a clone of the repository has (issue 37).

A tracked ``*.md`` file may not cite a path outside the repository: a relative path that climbs out of
its folder (``../x``, in a link or in backticks, outside fenced code) must land inside the repository on
a name the repository tracks; and no doc names the project's outside material (``OUTSIDE``), however it
spells the path. A calibration folder's README records where its runs came from, so it may say where
older runs were kept (``PROVENANCE``); nothing else may depend on them.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import PurePosixPath

from tests.test_cli import ROOT

OUTSIDE = re.compile(r"(?<![\w./-])(?:\.\./)*(?:shared/(?:seeds|calibration)\b|(?:shared/)?DESIGN\.md)")
"""The outside material earlier docs cited: the folder beside the checkout (the source chapters, older
calibration runs) and its design notes. None of it is in the repository (``test_outside_material_is_not_tracked``)."""
PROVENANCE = re.compile(r"^calibration/(.+/)?README\.md$")
CITED = re.compile(r"`([^`\s]+)`|\]\(([^)\s]+)\)")


def tracked(pattern: str = "") -> list[str]:
    """The repository's tracked files (matching a git pathspec)."""
    args = ["git", "ls-files", *([pattern] if pattern else [])]
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The numbered lines of a markdown text outside its fenced code blocks."""
    lines, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(r"\s*(```|~~~)", line):
            inside = not inside
        elif not inside:
            lines.append((number, line))
    return lines


def outside_citations(doc: str, text: str, top: set[str]) -> list[str]:
    """``doc:line: path`` for each path ``text`` (the doc at repository path ``doc``) cites outside the repository.

    ``top`` holds the repository's top-level names."""
    found = []
    for number, line in prose_lines(text):
        hits = [m.group(0) for m in OUTSIDE.finditer(line)]
        for match in CITED.finditer(line):
            path = (match.group(1) or match.group(2)).split("#")[0].rstrip("/")
            if path.startswith("../") and not inside_repository(PurePosixPath(doc).parent, path, top):
                hits.append(path)
        found += [f"{doc}:{number}: {hit}" for hit in dict.fromkeys(hits)]
    return found


def inside_repository(folder: PurePosixPath, path: str, top: set[str]) -> bool:
    """Whether ``path``, relative to ``folder`` (both from the repository's root), lands on a tracked top-level name."""
    parts: list[str] = list(folder.parts)
    for part in PurePosixPath(path).parts:
        if part == "..":
            if not parts:
                return False
            parts.pop()
        elif part != ".":
            parts.append(part)
    return not parts or parts[0] in top


def test_no_doc_cites_a_path_outside_the_repository():
    top = {path.split("/")[0] for path in tracked()}
    docs = [doc for doc in tracked("*.md") if not PROVENANCE.match(doc)]
    found = [hit for doc in docs for hit in outside_citations(doc, (ROOT / doc).read_text(encoding="utf-8"), top)]
    assert docs and not found, found


def test_outside_material_is_not_tracked():
    """What ``OUTSIDE`` names is really outside: were it added to the repository, citing it would be fine."""
    assert not [path for path in tracked() if OUTSIDE.search(path)]


def test_the_scan_finds_each_kind_of_outside_citation():
    top = {"docs", "tasks", "README.md"}
    text = "\n".join(
        [
            "chapters in `../shared/seeds/` and runs in shared/calibration/ (see ../shared/DESIGN.md)",  # 1
            "a link [up](../../elsewhere/x.md) and `../nowhere/y.md`",  # 2
            "fine: [readme](../README.md#add-a-strategy), `../tasks/base.py`, [here](./a.md)",  # 3
            "```",
            "../shared/seeds/ in a code block is an example, not a citation",  # 5
            "```",
        ]
    )
    found = outside_citations("docs/page.md", text, top)
    assert found == [
        "docs/page.md:1: ../shared/seeds",
        "docs/page.md:1: shared/calibration",
        "docs/page.md:1: ../shared/DESIGN.md",
        "docs/page.md:2: ../../elsewhere/x.md",
        "docs/page.md:2: ../nowhere/y.md",
    ]

"""README.md: its generated block equals a fresh run of the main job (tests/docs_current.py), its test
command is the one .ci/run runs, its links and those of the pages it maps resolve, and it stays short.

The main job is 100 trials: the slow tier (``pytest -m slow``, run by .ci/run) checks the block."""

import re
from pathlib import Path

import pytest

from tests.docs_current import check_current

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.slow
def test_generated_blocks_are_current(tmp_path):
    check_current("README.md", tmp_path)


def test_the_test_command_is_the_one_ci_runs():
    """.ci/run's first command is exactly the README's test command (the block under "Run the tests:")."""
    block = README.read_text(encoding="utf-8").split("Run the tests:\n\n```bash\n", 1)[1].split("\n```", 1)[0]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert (
        block.strip()
        == ci[0].strip()
        == 'python3 -m venv .venv && .venv/bin/pip install -q -e ".[test]" && .venv/bin/python -m pytest'
    )


def slug(heading: str) -> str:
    """GitHub's anchor of a markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def prose(doc: Path) -> str:
    """``doc`` without its fenced code blocks."""
    lines, inside = [], False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if re.match(r"\s*```+[^`]*$", line):
            inside = not inside
        elif not inside:
            lines.append(line)
    return "\n".join(lines)


def anchors(doc: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", prose(doc), flags=re.M)}


def links(doc: Path) -> list[str]:
    return [m.group(1) for m in LINK.finditer(prose(doc)) if not re.match(r"\w+:", m.group(1))]


def test_links_of_the_readme_and_its_pages_resolve():
    """Every relative link of README.md, and of each markdown page it links, names a file (and a heading there)."""
    pages = [README] + [
        (README.parent / link.split("#")[0]).resolve() for link in links(README) if link.split("#")[0].endswith(".md")
    ]
    broken = []
    for page in dict.fromkeys(pages):
        for link in links(page):
            path, _, anchor = link.partition("#")
            target = (page.parent / path).resolve() if path else page
            if not target.exists() or (anchor and target.suffix == ".md" and anchor not in anchors(target)):
                broken.append(f"{page.relative_to(ROOT)}: {link}")
    assert not broken, broken


def test_the_readme_stays_short_and_names_the_reference_agent():
    """A ten-minute read (at most 15,000 bytes; longer sections go to docs/), and every run output it shows
    says it comes from the reference agent, not an LLM."""
    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) <= 15_000, f"README.md is {len(text.encode()):,} bytes; move a section to docs/"
    outputs = [block for block in re.findall(r"```console\n(.*?)```", text, flags=re.S) if "harness run" in block]
    assert outputs and all("reference agent" in block and "not an LLM" in block for block in outputs)

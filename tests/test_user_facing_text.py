"""User-facing text is English and self-explanatory: ``python -m harness list`` and docs/sources.md.

``harness list`` prints, for every config of a listed group, the FIRST comment line of
configs/<group>/<name>.yaml (harness/commands.py ``describe``). Each of those descriptions must be:

- present (a config without a comment line would print an empty description);
- English: no CJK characters (a Chinese term may stand in parentheses in docs/sources.md only);
- free of "seed" meaning a source chapter: the harness keeps "seed" for the random seed, and a
  source chapter is cited as "source 00N §x.y" (docs/sources.md), so neither "Seed " nor "seed 00"
  may appear;
- one complete sentence, not cut where the sentence goes on in the next comment line: it ends with
  a sentence end, ".", "?" or "!" (a closing parenthesis or quote is not enough: "(1.5B)" ends a
  clause, not necessarily the sentence, so the rule asks for the full stop after it);
- short enough to read in a terminal: at most 150 characters (detail goes on the next comment lines).

The comment lines of every configs/**/*.yaml (variants and claims too, which ``list`` does not show)
carry no CJK characters and no "seed 00N" either. docs/sources.md exists and names every preset of
configs/experiment/ (as `name`). Fast: in-process, no run, no subprocess.
"""

import re
from pathlib import Path

import pytest

from harness.commands import LIST_SECTIONS, cmd_list, config_description, describe
from harness.config import CONFIG_DIR, options

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "docs" / "sources.md"

# CJK ideographs, kana, hangul, CJK punctuation and full-width forms.
CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")
SOURCE_AS_SEED = re.compile(r"\bSeed |\b[Ss]eeds? 00\d")  # "Seed 002 ...", "seed 004", "seeds 000 and 004"
SENTENCE_END = (".", "?", "!")
MAX_CHARS = 150

CONFIGS = [(group, name) for _, group in LIST_SECTIONS for name in options(group)]


def test_harness_list_prints_every_description(capsys):
    assert cmd_list() == 0
    out = capsys.readouterr().out
    for group, name in CONFIGS:
        assert describe(group, name) in out.splitlines(), f"{group}/{name}"


@pytest.mark.parametrize("group,name", CONFIGS, ids=[f"{g}/{n}" for g, n in CONFIGS])
def test_description_is_one_complete_english_sentence(group, name):
    text = config_description(group, name)
    where = f"configs/{group}/{name}.yaml: {text!r}"
    assert text, f"configs/{group}/{name}.yaml has no comment line"
    assert not CJK.search(text), where
    assert not SOURCE_AS_SEED.search(text), f"cite a source chapter as 'source 00N', not 'seed': {where}"
    assert text.endswith(SENTENCE_END), f"cut mid-sentence (or no sentence end): {where}"
    assert len(text) <= MAX_CHARS, f"{len(text)} characters, at most {MAX_CHARS}: {where}"


def comments(path: Path) -> list[str]:
    """The comment text of a YAML file: whole comment lines and what follows `` #`` on a line."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.lstrip()
        if stripped.startswith("#"):
            found.append(stripped[1:])
        elif " #" in line:
            found.append(line.split(" #", 1)[1])
    return found


def test_config_comments_are_english_and_cite_sources_not_seeds():
    bad = [
        f"{path.relative_to(ROOT)}: {text.strip()}"
        for path in sorted(CONFIG_DIR.rglob("*.yaml"))
        for text in comments(path)
        if CJK.search(text) or SOURCE_AS_SEED.search(text)
    ]
    assert not bad, "\n".join(bad)


def test_sources_doc_names_every_preset():
    text = SOURCES.read_text(encoding="utf-8")
    missing = [name for name in options("experiment") if f"`{name}`" not in text]
    assert not missing, f"docs/sources.md does not name: {missing}"
    for chapter in ("000", "002", "003", "004"):
        assert f"source {chapter}" in text.lower(), chapter


def test_code_cites_sources_not_seeds():
    """Docstrings and comments name a source chapter as the docs do ("source 002"), never as a "seed"."""
    packages = ("harness", "strategies", "tasks", "reference_agent", "benchmarks", "examples", "tests")
    bad = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for package in packages
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SOURCE_AS_SEED.search(line)
    ]
    assert not bad, "\n".join(bad)

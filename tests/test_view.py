"""``python -m harness view``: the static HTML file of a run (and, slow, the same file in headless Chromium)."""
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.records import STEPS, read_jsonl
from harness.view_data import CUT, INSERTED, KEPT, REPLACED, compare
from tests.test_cli import harness

VOID = {"meta", "br", "hr", "img", "input", "link", "circle", "line", "rect", "polyline"}  # svg shapes close themselves


class Checker(HTMLParser):
    """Counts step sections and marks, collects src/href values, and checks that tags nest."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.steps = 0
        self.marks: dict[str, int] = {}
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag not in VOID:
            self.stack.append(tag)
        if tag == "section" and "step" in (attrs.get("class") or "").split():
            self.steps += 1
        if attrs.get("data-mark"):
            self.marks[attrs["data-mark"]] = self.marks.get(attrs["data-mark"], 0) + 1
        self.links += [v for k, v in attrs.items() if k in ("src", "href") and v]

    def handle_startendtag(self, tag, attrs):
        self.links += [v for k, v in attrs if k in ("src", "href") and v]

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A small headtail run at 2k (the smoke suite, one trial each)."""
    tmp = tmp_path_factory.mktemp("view")
    result = harness("run", "suite=smoke", "strategy=headtail", "budget=2k", "trials=1", "progress=false",
                     f"hydra.run.dir={tmp / 'run'}", cwd=tmp)
    assert result.returncode == 0, result.stderr
    return tmp / "run"


@pytest.fixture(scope="module")
def page(run_dir):
    """``view RUN``: the default file RUN/view.html."""
    result = harness("view", str(run_dir), cwd=run_dir)
    assert result.returncode == 0, result.stderr
    path = run_dir / "view.html"
    assert str(path) in result.stdout
    return path


def agent_steps(run_dir: Path, trial: str | None = None) -> int:
    rows = read_jsonl(run_dir / STEPS)
    return sum(r.get("kind") == "agent" and (trial is None or r["trial_id"] == trial) for r in rows)


def test_view_html_is_well_formed_with_one_section_per_step(page, run_dir):
    checker = Checker()
    checker.feed(page.read_text(encoding="utf-8"))
    checker.close()
    assert not checker.errors, checker.errors[:5]
    assert checker.stack == []
    assert checker.steps == agent_steps(run_dir) > 0
    assert checker.marks.get(KEPT) and checker.marks.get(CUT) and checker.marks.get(INSERTED)  # headtail cuts and notes
    external = [link for link in checker.links if re.match(r"\s*(https?:)?//", link)]
    assert not external, external[:5]
    assert page.stat().st_size < 4 * sum(p.stat().st_size for p in (run_dir / "transcripts").iterdir())


def test_view_html_shows_curve_budget_and_cache_breaks(page, run_dir):
    text = page.read_text(encoding="utf-8")
    assert text.count("<svg") == len(read_jsonl(run_dir / "trials.jsonl"))
    assert 'class="budget"' in text and "budget 2,000" in text
    assert "strategy: compaction" in text
    breaks = sum(1 for r in read_jsonl(run_dir / STEPS) if r.get("kind") == "agent" and r.get("cache_break"))
    assert text.count('class="step break"') == breaks
    assert "<script src" not in text and "<link" not in text


def test_view_one_trial_with_out(run_dir, tmp_path):
    trial = sorted(p.name[:-6] for p in (run_dir / "transcripts").glob("callback_search*.jsonl"))[0]
    out = tmp_path / "one.html"
    result = harness("view", str(run_dir), trial, "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    checker = Checker()
    checker.feed(out.read_text(encoding="utf-8"))
    assert checker.steps == agent_steps(run_dir, trial)


@pytest.mark.parametrize("args,needle", [(["nope"], "not a run folder"), (["RUN", "zzz"], "no trial matching 'zzz'"),
                                         ([], "usage: python -m harness view")])
def test_view_bad_input_is_one_line_exit_2(run_dir, tmp_path, args, needle):
    args = [str(run_dir) if a == "RUN" else str(tmp_path / a) if a == "nope" else a for a in args]
    result = harness("view", *args, cwd=tmp_path)
    assert result.returncode == 2 and needle in result.stderr, result.stderr


def test_compare_marks_cut_replaced_and_inserted():
    messages = {
        "m0": {"role": "system", "content": "s"},
        "m1": {"role": "assistant", "content": "a", "_step": 1, "tool_calls": [{"id": "c1"}]},
        "m2": {"role": "tool", "tool_call_id": "c1", "content": "big result", "_step": 1},
        "m3": {"role": "tool", "tool_call_id": "c1", "content": "[cleared]", "_step": 1},
        "m4": {"role": "user", "content": "[context note] cut"},
        "m5": {"role": "assistant", "content": "b", "_step": 2},
    }
    request, cut = compare(["m0", "m4", "m1", "m3"], ["m0", "m1", "m2", "m5"], messages)
    assert [(s.ref, s.mark, s.stands_for) for s in request] == [
        ("m0", KEPT, None), ("m4", INSERTED, None), ("m1", KEPT, None), ("m3", REPLACED, "m2")]
    assert [(s.ref, s.mark, s.stands_for) for s in cut] == [("m2", REPLACED, "m3"), ("m5", CUT, None)]


def chromium() -> str | None:
    return next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None)


@pytest.mark.slow
def test_view_in_headless_chromium(page, run_dir, tmp_path):
    """The file opens in a real browser: no console errors, every step section in the DOM; a screenshot too."""
    binary = chromium()
    if binary is None:
        pytest.skip("no chromium binary (apt-get install chromium)")
    flags = [binary, "--headless", "--disable-gpu", "--no-sandbox", f"--user-data-dir={tmp_path / 'profile'}"]
    url = page.resolve().as_uri()
    dom = subprocess.run([*flags, "--enable-logging=stderr", "--v=0", "--dump-dom", url],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    console = [line for line in dom.stderr.splitlines() if "Uncaught" in line or "CONSOLE" in line]
    assert not console, console[:5]
    assert len(re.findall(r'<section class="step[ "]', dom.stdout)) == agent_steps(run_dir)
    shot = tmp_path / "view.png"
    subprocess.run([*flags, f"--screenshot={shot}", "--window-size=1400,2000", url],
                   capture_output=True, text=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 10_000

"""``python -m harness view``: an index and a page per trial (and, slow, the pages in headless Chromium); the token
chart."""

import gzip
import re
import shutil
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.records import STEPS, read_jsonl, read_transcript, transcript_files
from harness.view import page_name, write_pages
from harness.view_data import CUT, INSERTED, KEPT, REPLACED, compare, load_run
from harness.view_svg import CLIP_FACTOR, layout, overlaps, token_curve
from tests.test_cli import ROOT, harness

PAGE_LIMIT = 3_000_000  # bytes of any one page the browser opens (issue 23)
LOAD_LIMIT_S = 2.0  # seconds to open one in headless Chromium, beyond the browser's own start

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
    result = harness(
        "run",
        "suite=smoke",
        "strategy=headtail",
        "budget=2k",
        "trials=1",
        "progress=false",
        f"hydra.run.dir={tmp / 'run'}",
        cwd=tmp,
    )
    assert result.returncode == 0, result.stderr
    return tmp / "run"


@pytest.fixture(scope="module")
def page(run_dir):
    """``view RUN``: the default index RUN/view/index.html, with a page per trial beside it."""
    result = harness("view", str(run_dir), cwd=run_dir)
    assert result.returncode == 0, result.stderr
    path = run_dir / "view" / "index.html"
    assert str(path) in result.stdout and "trial pages beside it" in result.stdout
    return path


def trial_pages(index: Path) -> list[Path]:
    return sorted(p for p in index.parent.glob("*.html") if p != index)


def agent_steps(run_dir: Path, trial: str | None = None) -> int:
    rows = read_jsonl(run_dir / STEPS)
    return sum(r.get("kind") == "agent" and (trial is None or r["trial_id"] == trial) for r in rows)


def checked(path: Path) -> Checker:
    checker = Checker()
    checker.feed(path.read_text(encoding="utf-8"))
    checker.close()
    assert not checker.errors, (path.name, checker.errors[:5])
    assert checker.stack == [], path.name
    external = [link for link in checker.links if re.match(r"\s*(https?:)?//", link)]
    assert not external, external[:5]
    return checker


def transcripts_bytes(run_dir: Path) -> int:
    """The transcripts' size uncompressed."""
    return sum(
        len(gzip.decompress(p.read_bytes())) if p.name.endswith(".gz") else p.stat().st_size
        for p in transcript_files(run_dir / "transcripts").values()
    )


def test_view_writes_an_index_and_one_well_formed_page_per_trial_with_one_section_per_step(page, run_dir):
    trials = read_jsonl(run_dir / "trials.jsonl")
    pages = trial_pages(page)
    assert [p.name for p in pages] == sorted(page_name(t["trial_id"]) for t in trials)
    index = checked(page)
    assert index.steps == 0 and all(page_name(t["trial_id"]) in index.links for t in trials)
    steps, marks = 0, {}
    for path in pages:
        checker = checked(path)
        assert "index.html" in checker.links, "each page links back to the index"
        assert checker.steps == agent_steps(run_dir, path.stem) > 0
        steps += checker.steps
        for mark, n in checker.marks.items():
            marks[mark] = marks.get(mark, 0) + n
    assert steps == agent_steps(run_dir)
    assert marks.get(KEPT) and marks.get(CUT) and marks.get(INSERTED)  # headtail cuts and notes
    assert all(p.stat().st_size <= PAGE_LIMIT for p in [page, *pages])
    assert sum(p.stat().st_size for p in [page, *pages]) < 4 * transcripts_bytes(run_dir)


def test_view_html_shows_curve_budget_and_cache_breaks(page, run_dir):
    text = "".join(p.read_text(encoding="utf-8") for p in trial_pages(page))
    assert text.count("<svg") == len(read_jsonl(run_dir / "trials.jsonl"))
    assert 'class="budget"' in text and "budget 2,000" in text
    assert "strategy: compaction" in text
    breaks = sum(1 for r in read_jsonl(run_dir / STEPS) if r.get("kind") == "agent" and r.get("cache_break"))
    assert text.count('class="step break"') == breaks
    assert "<script src" not in text and "<link" not in text
    assert 'class="msg same"' in text, "what a request shares with the previous one is one line"


class IndexRows(HTMLParser):
    """The index's trial rows (their attributes, in order) and its form controls (id: option values)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict] = []
        self.controls: dict[str, list[str]] = {}
        self.select: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr" and "trial" in (attrs.get("class") or "").split():
            self.rows.append(attrs)
        if tag in ("select", "input") and attrs.get("id"):
            self.controls[attrs["id"]] = []
            self.select = attrs["id"] if tag == "select" else None
        if tag == "option" and self.select:
            self.controls[self.select].append(attrs.get("value") or "")

    def handle_endtag(self, tag):
        if tag == "select":
            self.select = None


def index_rows(html: str) -> IndexRows:
    parser = IndexRows()
    parser.feed(html)
    return parser


def test_index_has_sort_and_filter_controls_and_every_row_their_data(page, run_dir):
    html = page.read_text(encoding="utf-8")
    trials = read_jsonl(run_dir / "trials.jsonl")
    index = index_rows(html)
    assert [r["data-trial"] for r in index.rows] == [t["trial_id"] for t in trials]
    for row, trial in zip(index.rows, trials, strict=True):
        assert row["data-family"] == trial["family"] and row["data-outcome"] == trial["outcome"]
        assert row["data-tokens"] == str(trial["input_tokens"])
    assert index.controls["f-family"] == ["", *sorted({t["family"] for t in trials})]
    assert index.controls["f-outcome"] == ["", *sorted({t["outcome"] for t in trials})]
    assert {"f-min", "f-max", "f-desc"} <= set(index.controls)
    assert {"family", "outcome", "tokens"} <= set(index.controls["f-sort"])
    assert "<script src" not in html and "function apply()" in html  # inline, no external script


def test_view_one_trial_with_out(run_dir, tmp_path):
    trial = sorted(t for t in transcript_files(run_dir / "transcripts") if t.startswith("callback_search"))[0]
    out = tmp_path / "one.html"
    result = harness("view", str(run_dir), trial, "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert checked(out).steps == agent_steps(run_dir, trial)
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".html") == ["one.html"]


def test_view_out_puts_the_trial_pages_beside_the_index(run_dir, tmp_path):
    out = tmp_path / "site" / "run.html"
    result = harness("view", str(run_dir), "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert out.exists() and len(trial_pages(out)) == len(read_jsonl(run_dir / "trials.jsonl"))
    assert "run.html" in checked(trial_pages(out)[0]).links


def test_view_reads_an_older_uncompressed_run_folder(tmp_path):
    fixture = ROOT / "results" / "fixtures" / "smoke-1500" / "headtail"
    index, pages = write_pages(fixture, load_run(fixture), tmp_path / "index.html")
    assert len(pages) == len(read_jsonl(fixture / "trials.jsonl"))
    assert sum(checked(p).steps for p in pages) == agent_steps(fixture)


@pytest.mark.parametrize(
    "args,needle",
    [
        (["nope"], "not a run folder"),
        (["RUN", "zzz"], "no trial matching 'zzz'"),
        ([], "usage: python -m harness view"),
    ],
)
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
        ("m0", KEPT, None),
        ("m4", INSERTED, None),
        ("m1", KEPT, None),
        ("m3", REPLACED, "m2"),
    ]
    assert [(s.ref, s.mark, s.stands_for) for s in cut] == [("m2", REPLACED, "m3"), ("m5", CUT, None)]


def _is_round(step: int) -> bool:
    digits = str(step).rstrip("0")
    return digits in ("1", "2", "5")


CODE_REVIEW = (  # code_review-f44-s4-t0 under headtail at 25k: the history reaches 60,285, the requests stay under 25k
    list(range(1, 13)),
    [612, 3_440, 5_810, 10_570, 16_930, 24_610, 21_600, 22_390, 21_590, 21_700, 24_570, 20_700],
    [612, 3_440, 5_900, 11_000, 18_100, 26_500, 33_000, 40_400, 46_900, 53_900, 56_900, 60_777],
    25_000,
)


def test_chart_ticks_are_round_and_the_history_is_drawn_in_full_when_it_fits():
    steps, tokens, history, budget = CODE_REVIEW
    plot = layout(steps, tokens, history, budget)
    step = plot.ticks[1] - plot.ticks[0]
    assert plot.ticks[0] == 0 and plot.ticks[-1] == plot.top and _is_round(step)
    assert all(b - a == step for a, b in zip(plot.ticks, plot.ticks[1:], strict=False)) and len(plot.ticks) <= 6
    assert plot.top >= 60_777 and plot.clipped is None and plot.history == history
    svg = token_curve("t", steps, tokens, history, budget, [""] * 12, [None] * 12)
    assert "15,625" not in svg and "31,250" not in svg and "clipped" not in svg
    assert all(f">{tick:,}</text>" in svg for tick in plot.ticks)


@pytest.mark.parametrize("peak", [9_000, 87_654, 2_500_000])
def test_chart_ticks_are_round_at_any_size(peak):
    tokens = [peak * i // 10 for i in range(1, 11)]
    plot = layout(list(range(1, 11)), tokens, tokens, None)
    step = plot.ticks[1]
    assert _is_round(step) and plot.top >= peak and plot.top < peak * 2.5 and 3 <= len(plot.ticks) <= 6


def test_chart_says_when_it_clips_the_history():
    steps = list(range(1, 32))
    tokens = [min(24_990, 2_400 * i) for i in steps]
    history = [7_431 * i + 98 for i in steps]  # to 230,459: more than CLIP_FACTOR times the axis
    plot = layout(steps, tokens, history, 25_000)
    assert max(history) > CLIP_FACTOR * plot.top and max(plot.history) == plot.top
    assert plot.clipped == f"history clipped at {plot.top:,}; reaches {max(history):,} at step 31"
    svg = token_curve("t", steps, tokens, history, 25_000, [""] * 31, [None] * 31)
    assert f"history clipped at {plot.top:,}; reaches 230,459 at step 31" in svg


@pytest.mark.parametrize(
    "tokens",
    [
        [2_000 * i for i in range(1, 13)] + [24_990] * 8,  # the requests run along the budget at the right end
        [1_000 * i for i in range(1, 21)],  # they cross the budget where its label used to be (right end, above)
        [24_000, 26_000] * 10,  # zigzag across the budget line everywhere
    ],
)
def test_chart_budget_label_crosses_no_line(tokens):
    steps = list(range(1, len(tokens) + 1))
    history = [t * 1.5 for t in tokens]
    plot = layout(steps, tokens, history, 25_000)
    x0, y0, x1, y1 = plot.budget_box
    assert not overlaps((x0 - 2, y0 - 2, x1 + 2, y1 + 2), plot.lines), plot.budget_label
    svg = token_curve("t", steps, tokens, history, 25_000, [""] * len(steps), [None] * len(steps))
    assert "budget 25,000" in svg


def chromium() -> str | None:
    return next(
        (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None
    )


def open_in_chromium(path: Path, profile: Path, fragment: str = "") -> tuple[float, subprocess.CompletedProcess]:
    """Seconds to load ``path`` (``#fragment`` appended) and dump its DOM in headless Chromium (the best of two),
    and the last run."""
    binary = chromium()
    if binary is None:
        pytest.skip("no chromium binary (apt-get install chromium)")
    flags = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        "--dump-dom",
        path.resolve().as_uri() + (f"#{fragment}" if fragment else ""),
    ]
    best, dom = None, None
    for _ in range(2):
        start = time.perf_counter()
        dom = subprocess.run(flags, capture_output=True, text=True, timeout=120)
        elapsed = time.perf_counter() - start
        assert dom.returncode == 0, dom.stderr[-2000:]
        best = elapsed if best is None else min(best, elapsed)
    console = [line for line in dom.stderr.splitlines() if "Uncaught" in line or "CONSOLE" in line]
    assert not console, console[:5]
    return best, dom


def load_seconds(path: Path, tmp_path: Path) -> tuple[float, str]:
    """Seconds to open ``path`` beyond the browser's own start (a blank page's time), and its DOM."""
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body>blank</body></html>", encoding="utf-8")
    start, _ = open_in_chromium(blank, tmp_path / "profile")
    took, dom = open_in_chromium(path, tmp_path / "profile")
    return took - start, dom.stdout


@pytest.mark.slow
def test_view_in_headless_chromium(page, run_dir, tmp_path):
    """Index and trial pages open in a real browser: no console errors, every step section in the DOM; a screenshot."""
    pages = trial_pages(page)
    _, dom = open_in_chromium(page, tmp_path / "profile")
    assert all(page_name(t["trial_id"]) in dom.stdout for t in read_jsonl(run_dir / "trials.jsonl"))
    steps = 0
    for path in pages:
        _, dom = open_in_chromium(path, tmp_path / "profile")
        found = len(re.findall(r'<section class="step[ "]', dom.stdout))
        assert found == agent_steps(run_dir, path.stem), path.name
        steps += found
    assert steps == agent_steps(run_dir)
    shot = tmp_path / "view.png"
    subprocess.run(
        [
            chromium(),
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            "--window-size=1400,2000",
            pages[0].resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.exists() and shot.stat().st_size > 10_000


@pytest.mark.slow
def test_index_sorts_and_filters_in_headless_chromium(page, run_dir, tmp_path):
    """The index's script applies the filter and sort given in the address: input tokens from the median,
    descending; then one family and outcome. The other rows are hidden, none is lost."""
    trials = read_jsonl(run_dir / "trials.jsonl")
    median = sorted(t["input_tokens"] for t in trials)[len(trials) // 2]
    _, dom = open_in_chromium(page, tmp_path / "profile", f"min={median}&sort=tokens&desc=1")
    rows = index_rows(dom.stdout).rows
    assert sorted(r["data-trial"] for r in rows) == sorted(t["trial_id"] for t in trials)  # all rows kept
    shown = [int(r["data-tokens"]) for r in rows if "hidden" not in r]
    assert shown == sorted((t["input_tokens"] for t in trials if t["input_tokens"] >= median), reverse=True)
    assert 1 < len(shown) < len(rows) and f"{len(shown)} of {len(rows)} trials shown" in dom.stdout
    trial = trials[-1]
    _, dom = open_in_chromium(page, tmp_path / "profile", f"family={trial['family']}&outcome={trial['outcome']}")
    rows = index_rows(dom.stdout).rows
    expected = [t["trial_id"] for t in trials if (t["family"], t["outcome"]) == (trial["family"], trial["outcome"])]
    assert [r["data-trial"] for r in rows if "hidden" not in r] == expected and len(expected) < len(rows)


@pytest.mark.slow
def test_view_of_the_main_job_opens_fast(tmp_path):
    """The main job's view (defaults: every family of the default suite x 5 instances x 2 trials): the index and
    the largest trial page are at most 3 MB each and open in under 2 s in headless Chromium (beyond the browser's
    start)."""
    if chromium() is None:
        pytest.skip("no chromium binary (apt-get install chromium)")
    run = tmp_path / "main"
    result = harness("run", "progress=false", f"hydra.run.dir={run}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    result = harness("view", str(run), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    index = run / "view" / "index.html"
    pages = trial_pages(index)
    families = len(re.findall(r"^  - /task@families\.", (ROOT / "configs/suite/default.yaml").read_text(), re.M))
    assert len(pages) == len(read_jsonl(run / "trials.jsonl")) == families * 5 * 2
    largest = max(pages, key=lambda p: p.stat().st_size)
    for path in (index, largest):
        size = path.stat().st_size
        assert size <= PAGE_LIMIT, f"{path.name}: {size:,} bytes"
        took, dom = load_seconds(path, tmp_path)
        print(f"{path.name}: {size:,} bytes, opened in {took:.2f} s beyond the browser's start")
        assert took < LOAD_LIMIT_S, f"{path.name} ({size:,} bytes) took {took:.2f} s"
        if path != index:  # one section per prepared request, a request refused for the context window included
            requests = read_transcript(run, path.stem, only=["request"])
            assert len(re.findall(r'<section class="step[ "]', dom)) == len(requests)
            assert len(requests) - agent_steps(run, path.stem) in (0, 1)

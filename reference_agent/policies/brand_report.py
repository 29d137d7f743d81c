"""The reference policy of ``brand_report`` and its sub-agent (strategy ``isolate``).

The analyst reads every feed page in order, following each page's ``next_cursor``; after
each page it writes ``Posts pN (window A..B): Brand [ids]; ...`` (the page's negative
mentions, by post id), copies the page's ``next_cursor`` line, and recites
``Running totals (window A..B) after pages R of N: ...``. It counts each post id once (the
feed re-surfaces some posts on later pages), from every id in view. It knows the brand
names and nicknames from the prompt and the window from the prompt or from its own notes
or a summary that restates it; if none of these is visible (the task was cut and the notes
are gone) it counts every date, says so in its notes, and fails as an LLM that lost the
constraint would. A page whose call is visible but whose content and notes are gone is
read again; a page whose cursor is nowhere in view is reached by re-reading from the
furthest cursor it still knows (``kit.cursor_reading``); otherwise it moves on from the
latest visible running totals, adding the posts of later pages that it has not seen on
the pages still in view (so a re-surfaced post whose first page is gone counts twice).
Batching (profiles ``realistic`` and ``greedy``): ``parallel_calls`` offers the other reads
whose cursors are in view, so a run still takes one round per page. ``search_posts`` is
not used.

Reference summary (documented): keeps the window, the negative post ids, the running totals,
the pages done and the next cursor, and a per-page log that each summary restates whole (for
every page read: its negative post ids, and each post set aside with why, id and date), as the
calibration LLM's summaries did (calibration/brand_report__summarize__8k__default: a summary
of ~490 tokens after page 1, ~240 more per page). The log grows by a page per summary, so under
a tight budget the summaries stop bringing the request under it and the summarize strategy's
breaker trips. It drops the posts themselves.

Delegation (``isolate``): chunks of ``chunk`` feed pages, each from the cursor the previous
sub-agent reported; the task restates the brands, their nicknames and the window; each
sub-agent reports, per brand, the ids of the in-window original posts with a negative
sentence about it, and the main agent counts the union of the ids (a post reported twice
counts once).
"""

from __future__ import annotations

import copy
import re
from functools import partial

from reference_agent.kit.cursor_reading import FOOTER, RangeReader, footer_line, onward, plan_reads
from reference_agent.kit.incremental import KeyedMemo, PrefixFold, TextMemo, per_request
from reference_agent.kit.ledger import Ledger, quoted_rules
from reference_agent.policy_kit import (
    REPORT_PREFIX,
    delegation_failed,
    failed_attempts,
    format_summary,
    latest_results,
    make_call,
    other_calls,
    parse_ranges,
    ranges,
    rate_limit_note,
    reply,
    submit,
    texts,
    tool_texts,
    tools_used,
)
from tasks.brand_report.tools import FEED, name_pattern
from tasks.brand_report.world import NEGATIVE

PAGE_HEADER = re.compile(r"SocialPulse Monitor · .* · page (\d+) of (\d+)")
WINDOW_PROMPT = re.compile(r"dated from (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})")
WINDOW_NOTE = re.compile(r"window (\d{4}-\d{2}-\d{2})\.\.(\d{4}-\d{2}-\d{2})")
BRANDS_PROMPT = re.compile(r"The brands and the names people use for them: ([^\n]*?)\.(?: |$)", re.M)
RUNNING = re.compile(
    r"Running totals \((?:window [\d.-]+|all dates|last week)\) after pages ([\d,\- none]+) of (\d+|\?): ([^\n]*)"
)
COUNT_ITEM = re.compile(r"([A-Z][\w\- ]*?) (\d+)(?:,|$)")
IDS_ITEM = re.compile(r"([A-Z][\w\- ]*?) \[([\d, ]*)\]")
POSTS_NOTE = re.compile(r"Posts p(\d+) \((?:window [\d.-]+|all dates|last week)\): ([^\n]*)")
SO_FAR = re.compile(r"Negative posts so far \((?:window [\d.-]+|all dates|last week)\): ([^\n]*)")
REPORT = re.compile(
    r"pages counted: ([\d,\- none]+) of (\d+|\?) \([^)]*\); negative posts: ([^\n]*?)(?:; next_cursor|$)", re.M
)
# the task's sentences its ledger quotes (reference_agent/kit/ledger.py), so that they
# survive a cut of the task statement
RULES = (
    re.compile(r"Today is \d{4}-\d{2}-\d{2}\."),
    BRANDS_PROMPT,
    re.compile(r"Count only last week: [^.]*\."),
    re.compile(r"A negative mention is an original post[^.]*\."),
    re.compile(r"Sponsored posts and reposts are not mentions\."),
    re.compile(r"The feed can show the same post again[^\n]*?count each post once\."),
    re.compile(r"Submit with submit\(counts=[^\n]*?above\."),
)
WINDOW_RULE = RULES[2]
SUBTASK = re.compile(
    r"Count pages (\d+)-(\d+) of (\d+|\?) of the feed with get_posts, starting with cursor \"([^\"]*)\""
)
NEGATIVE_CUES = [re.compile(re.escape(c.split("{")[0].strip())) for c in NEGATIVE]
# a rendered history (harness/conversation.py ``render_history``) cut into its messages: a feed page's own
# ``[Sponsored]`` lines must not cut it
HISTORY_BLOCK = re.compile(r"\n(?=\[(?:user|assistant)\]: |\[tool_call\] |\[tool [^\]\n]*\]: )")
SET_ASIDE = re.compile(r"^- (p(\d+) set aside: [^\n]*)$", re.M)  # a per-page log line of an earlier summary
POST_HEAD = re.compile(r"(\d+) · \w+ · @\S+ · (\d{4}-\d{2}-\d{2})")


def negative_posts(text: str, vocabulary: dict[str, list[str]], window: tuple[str, str] | None) -> dict[str, list[int]]:
    """Per brand, the ids of the original posts on one feed page with a negative sentence naming it,
    dated inside ``window`` (every date when ``None``), as a careful analyst reads them."""
    found: dict[str, list[int]] = {b: [] for b in vocabulary}
    key = (tuple((b, tuple(a)) for b, a in vocabulary.items()), window)
    patterns: dict | None = None
    for block in text.split("\nPost #")[1:]:
        mentions = _BLOCKS.cache.get((block, key))
        if mentions is None:  # each post is read once per vocabulary and window (a page's view changes by lines)
            if patterns is None:
                patterns = {b: name_pattern(b, a) for b, a in vocabulary.items()}
            mentions = _BLOCKS(block, key, make=partial(_block_mentions, block, patterns, window))
        for brand, post in mentions:
            found[brand].append(post)
    return found


def _block_mentions(block: str, patterns: dict, window: tuple[str, str] | None) -> tuple[tuple[str, int], ...]:
    """(brand, post id) of each negative mention in one post's block, in the order ``negative_posts`` finds them."""
    head, _, rest = block.partition("\n")
    match = re.match(r"(\d+) · \w+ · @\S+ · (\d{4}-\d{2}-\d{2})", head)
    body = rest.split("\n")[0].strip()
    if not match or body.startswith("\u21bb"):
        return ()
    if window and not window[0] <= match.group(2) <= window[1]:
        return ()
    mentions = []
    for sentence in re.split(r"(?<=[.?!])\s+", body):
        for brand, pattern in patterns.items():
            if pattern.search(sentence) and any(c.search(sentence) for c in NEGATIVE_CUES):
                mentions.append((brand, int(match.group(1))))
    return tuple(mentions)


_BLOCKS = KeyedMemo(size=100_000)  # (post block, vocabulary and window) -> its negative mentions


def tally_page(text: str, vocabulary: dict[str, list[str]], window: tuple[str, str] | None) -> dict[str, int]:
    """Negative mentions per brand on one feed page, as a careful analyst reads it."""
    return {b: len(ids) for b, ids in negative_posts(text, vocabulary, window).items()}


def set_aside(text: str, vocabulary: dict[str, list[str]], window: tuple[str, str] | None) -> tuple[int, str] | None:
    """The page number and the per-page log line of a summary for one feed page: every post on it that was not
    counted, by why (in the window but not negative, negative outside the window with its brands, reposts, other
    dates, each with its id and date; the sponsored posts by number), as the calibration LLM's summaries logged
    each page; ``None`` for a text that is not a feed page."""
    header = PAGE_HEADER.search(text)
    if not header or "Feed:" not in text.split("\n", 1)[0]:
        return None
    patterns = {b: name_pattern(b, a) for b, a in vocabulary.items()}
    quiet = "in window, not negative" if window else "not negative"
    kept: dict[str, list[str]] = {quiet: [], "negative outside the window": [], "reposts": [], "other dates": []}
    for block in text.split("\nPost #")[1:]:
        match = POST_HEAD.match(block)
        if not match:
            continue
        post, date = match.group(1), match.group(2)
        inside = window is None or window[0] <= date <= window[1]
        brands = sorted({b for b, _ in _block_mentions(block, patterns, None)}, key=list(vocabulary).index)
        if block.partition("\n")[2].lstrip().startswith("\u21bb"):
            kept["reposts"].append(f"#{post}")
        elif inside and not brands:
            kept[quiet].append(f"#{post} ({date[5:]})")
        elif not inside and brands:
            kept["negative outside the window"].append(f"#{post} ({date[5:]}, {' + '.join(brands)})")
        elif not inside:
            kept["other dates"].append(f"#{post} ({date[5:]})")
    parts = [f"{why} {', '.join(posts)}" for why, posts in kept.items() if posts]
    sponsored = text.count("\n[Sponsored] ")
    if sponsored:
        parts.append(f"sponsored posts {sponsored}")
    return int(header.group(1)), f"p{header.group(1)} set aside: {'; '.join(parts) or 'nothing'}"


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{b} {n}" for b, n in counts.items())


def _ids_text(ids: dict[str, set[int] | list[int]]) -> str:
    return "; ".join(f"{b} [{', '.join(str(i) for i in sorted(v))}]" for b, v in ids.items())


def _parse_ids(text: str) -> dict[str, set[int]]:
    return {b.strip(): {int(x) for x in re.findall(r"\d+", v)} for b, v in IDS_ITEM.findall(text)}


def _note_facts(text: str) -> tuple:
    """What one note says, in the order ``Knowledge`` reads it: footers, the task's brands and window, a window
    note, then the ``Posts pN`` notes, the ``so far`` recitations, the running totals and the reports."""
    footers = tuple((int(page), cursor, int(of)) for cursor, page, of in FOOTER.findall(text))
    brands = None
    match = BRANDS_PROMPT.search(text)
    if match:
        brands = tuple(
            (m.group(1), [a.strip() for a in m.group(2).split(",")])
            for part in match.group(1).split(";")
            for m in [re.match(r"\s*(.+?) \(([^)]*)\)", part)]
            if m
        )
    match = WINDOW_PROMPT.search(text)
    window = (match.group(1), match.group(2)) if match else None
    match = WINDOW_NOTE.search(text)
    window_note = (match.group(1), match.group(2)) if match else None
    posts = tuple((int(page), _parse_ids(items)) for page, items in POSTS_NOTE.findall(text))
    so_far = tuple(_parse_ids(items) for items in SO_FAR.findall(text))
    running = tuple(
        (
            frozenset(parse_ranges(pages)),
            int(of) if of.isdigit() else None,
            {b.strip(): int(n) for b, n in COUNT_ITEM.findall(items)},
        )
        for pages, of, items in RUNNING.findall(text)
    )
    reports = tuple(
        (int(of) if of.isdigit() else None, frozenset(parse_ranges(pages)), _parse_ids(items))
        for pages, of, items in REPORT.findall(text)
    )
    return footers, brands, window, window_note, posts, so_far, running, reports


def _page_facts(text: str) -> tuple:
    """A tool result's footers and, for a feed page, its page number and page count (``None`` otherwise)."""
    footers = tuple((int(page), cursor, int(of)) for cursor, page, of in FOOTER.findall(text))
    header = PAGE_HEADER.search(text)
    if not header or "Feed:" not in text.split("\n", 1)[0]:
        return footers, None
    return footers, (int(header.group(1)), int(header.group(2)))


class _Notes:
    """The notes folded in order (``Knowledge`` reads its notes with this, text by text)."""

    def __init__(self) -> None:
        self.cursors: dict[int, str] = {}
        self.footer_total: int | None = None
        self.vocabulary: dict[str, list[str]] = {}
        self.window: tuple[str, str] | None = None  # the task's window (the last one stated)
        self.window_note: tuple[str, str] | None = None  # the first window a note names
        self.page_ids: dict[int, dict[str, set[int]]] = {}
        self.all_ids: dict[str, set[int]] = {}
        self.running: tuple[set[int], dict[str, int]] = (set(), {})
        self.reported: set[int] = set()
        self.total: int | None = None  # the page count of the last running total or report that states one

    def read(self, facts: tuple) -> None:
        footers, brands, window, window_note, posts, so_far, running, reports = facts
        for page, cursor, of in footers:
            self.cursors[page] = cursor
            self.footer_total = of
        for brand, aliases in brands or ():
            self.vocabulary[brand] = aliases
        if window is not None:
            self.window = window
        if self.window_note is None:
            self.window_note = window_note
        for page, ids in posts:
            known = self.page_ids.setdefault(page, {})
            for b, found in ids.items():
                known.setdefault(b, set()).update(found)
        for ids in so_far:
            self._add_ids(ids)
        for covered, of, counts in running:
            self.total = of if of is not None else self.total
            if len(covered) >= len(self.running[0]):
                self.running = (covered, counts)
        for of, pages, ids in reports:
            self.total = of if of is not None else self.total
            self.reported |= pages
            self._add_ids(ids)

    def _add_ids(self, ids: dict[str, set[int]]) -> None:
        for b, found in ids.items():
            self.all_ids.setdefault(b, set()).update(found)


class _Pages:
    """The tool results folded in order: footers, and the feed pages in view with their negative posts."""

    def __init__(self) -> None:
        self.cursors: dict[int, str] = {}
        self.footer_total: int | None = None
        self.pages: list[tuple[int, dict[str, list[int]]]] = []
        self.total: int | None = None  # the page count of the last page header


class Reader:
    """Folds a policy's visible texts into ``_Notes`` and ``_Pages``, each text parsed once (``kit.incremental``)."""

    def __init__(self) -> None:
        self.note_facts = TextMemo(_note_facts)
        self.page_facts = TextMemo(_page_facts)
        self.posts: dict[tuple, dict[str, list[int]]] = {}
        self.notes = PrefixFold(_Notes, self.read_note)
        self.pages: tuple[tuple, PrefixFold] | None = None

    def read_note(self, state: _Notes, text: str) -> None:
        state.read(self.note_facts(text))

    def fold_notes(self, texts: list[str]) -> _Notes:
        """The notes read from the start (no fold kept)."""
        state = _Notes()
        for text in texts:
            self.read_note(state, text)
        return state

    def fold_pages(
        self, texts: list[str], vocabulary: dict[str, list[str]], window: tuple[str, str] | None, keep: bool
    ) -> _Pages:
        """The tool results read with ``vocabulary`` and ``window`` (``keep``: continue the fold kept for them)."""
        key = (tuple((b, tuple(a)) for b, a in vocabulary.items()), window)

        def read(state: _Pages, text: str) -> None:
            footers, header = self.page_facts(text)
            for page, cursor, of in footers:
                state.cursors[page] = cursor
                state.footer_total = of
            if header is not None:
                state.total = header[1]
                state.pages.append((header[0], self.negative_posts(text, key, vocabulary, window)))

        if not keep:
            state = _Pages()
            for text in texts:
                read(state, text)
            return state
        if self.pages is None or self.pages[0] != key:
            self.pages = (key, PrefixFold(_Pages, read))
        return self.pages[1](texts)

    def negative_posts(
        self, text: str, key: tuple, vocabulary: dict[str, list[str]], window: tuple[str, str] | None
    ) -> dict[str, list[int]]:
        """``negative_posts`` of one page, once per page text, vocabulary and window."""
        found = self.posts.get((text, key))
        if found is None:
            if len(self.posts) > 20_000:
                self.posts.clear()
            found = self.posts[(text, key)] = negative_posts(text, vocabulary, window)
        return found


class Knowledge:
    """What the visible pages, notes and reports say (see ``BrandPolicy``).

    Counts come from post ids wherever they are visible (pages, ``Posts pN`` notes, a
    sub-agent's ``Negative posts so far`` recitation, sub-agent reports): each post once
    (the feed re-surfaces some), and a line overlooked at one step is not a lasting error.
    The ``Running totals`` recitation (counts only) is the fallback for pages whose ids are
    no longer in view: it cannot tell a re-surfaced post from a new one when the page that
    first showed it is gone (the count a summary or a cut history gets wrong).

    ``reader`` (with ``notes_read``, the notes already folded by it): read the tool results with the reader's
    kept fold; without it everything is read from the start. Either way the result is the same.
    """

    def __init__(
        self,
        tool_outputs: list[str],
        notes: list[str],
        notes_window: bool = True,
        reader: Reader | None = None,
        notes_read: _Notes | None = None,
    ) -> None:
        self.notes_window = notes_window
        keep = reader is not None and notes_read is not None
        reader = reader or Reader()
        read = notes_read if keep else reader.fold_notes(notes)
        self.vocabulary: dict[str, list[str]] = dict(read.vocabulary)
        self.window = read.window if read.window is not None else read.window_note
        self.page_ids = dict(read.page_ids)  # a page's ids are copied before a visible page adds to them
        self._own: set[int] = set()
        self.all_ids = read.all_ids
        self.running = read.running
        self.reported = read.reported
        for b in list(self.running[1]) + list(self.all_ids):
            self.vocabulary.setdefault(b, [])
        pages = reader.fold_pages(tool_outputs, self.vocabulary, self.window, keep)
        self.cursors = {1: ""}
        self.cursors.update(pages.cursors)
        self.cursors.update(read.cursors)
        footer_total = read.footer_total if read.footer_total is not None else pages.footer_total
        self.total = (
            pages.total if pages.total is not None else (read.total if read.total is not None else footer_total)
        )
        self.fresh_pages: list[int] = []  # pages whose content is in view
        for page, ids in pages.pages:
            self.fresh_pages.append(page)
            self._add_page(page, ids)

    def _add_page(self, page: int, ids: dict[str, list[int]]) -> None:
        if page not in self._own:  # the notes' sets are the fold's: copy before adding to them
            known = self.page_ids.get(page)
            if known is not None and all(b in known and known[b].issuperset(found) for b, found in ids.items()):
                return  # the page's notes hold its ids already
            self._own.add(page)
            self.page_ids[page] = {b: set(v) for b, v in self.page_ids.get(page, {}).items()}
        known = self.page_ids[page]
        for b, found in ids.items():
            known.setdefault(b, set()).update(found)

    @property
    def scope(self) -> str:
        """``window A..B`` or ``all dates`` (what the notes say the counts cover); ``last week`` without the dates
        when the notes do not restate the window (``notes_window=False``)."""
        if self.window is None:
            return "all dates"
        return f"window {self.window[0]}..{self.window[1]}" if self.notes_window else "last week"

    def covered(self) -> set[int]:
        """Pages counted: in view, noted, recited or reported."""
        return set(self.running[0]) | set(self.page_ids) | self.reported

    def ids(self) -> dict[str, set[int]]:
        """Per brand, every negative post id in view (computed once: read it, do not change it)."""
        cached = self.__dict__.get("_ids")
        if cached is not None:
            return cached
        found = self._ids = {b: set(self.all_ids.get(b, set())) for b in self.vocabulary}
        for ids in self.page_ids.values():
            for b, post_ids in ids.items():
                found.setdefault(b, set()).update(post_ids)
        return found

    def totals(self) -> tuple[set[int], dict[str, int]]:
        """Pages counted and the counts: the ids in view, or the running totals plus the ids of later pages
        not seen on the recited pages still in view, when that is more (ids of earlier pages are gone)."""
        recited, recited_counts = self.running
        ids = self.ids()
        earlier: dict[str, set[int]] = {b: set() for b in self.vocabulary}
        later: dict[str, set[int]] = {b: set() for b in self.vocabulary}
        for page, found in self.page_ids.items():
            for b, post_ids in found.items():
                (earlier if page in recited else later).setdefault(b, set()).update(post_ids)
        counts = {
            b: max(len(ids.get(b, ())), recited_counts.get(b, 0) + len(later[b] - earlier[b])) for b in self.vocabulary
        }
        return self.covered(), counts

    def vocabulary_text(self) -> str:
        """The prompt's brand sentence, restated for a sub-agent."""
        return "; ".join(f"{b} ({', '.join(a)})" for b, a in self.vocabulary.items())


class BrandPolicy:
    """Reference policy for ``brand_report`` (see the module docstring). ``notes_window=False``: its notes say
    "last week" instead of the window's dates (it still applies the window while the task statement is visible;
    preset ``context_growth``, source 003's constraint forgetting)."""

    chunk = 10

    def __init__(self, notes_window: bool = True) -> None:
        self.notes_window = notes_window

    def _notes(self, messages: list[dict]) -> list[str]:
        return texts(messages) + [t for t in tool_texts(messages) if t.startswith(REPORT_PREFIX)]

    @per_request
    def knowledge(self, messages: list[dict]) -> Knowledge:
        """What the visible messages say (once per request; only the messages new since the last one are read)."""
        reader = self.__dict__.get("_reader")
        if reader is None:
            reader = self._reader = Reader()
        tools = tool_texts(messages)
        notes = reader.notes(texts(messages))
        reports = [t for t in tools if t.startswith(REPORT_PREFIX)]
        if reports:  # the sub-agents' reports are read after the agent's own notes
            notes = copy.deepcopy(notes)
            for text in reports:
                reader.read_note(notes, text)
        return Knowledge(tools, [], self.notes_window, reader, notes)

    @per_request
    def _planned_moves(self, messages: list[dict]):
        known = self.knowledge(messages)
        return self._moves(messages, known, known.covered())

    def _moves(self, messages: list[dict], known: Knowledge, covered: set[int], last: int | None = None):
        return plan_reads(messages, FEED, covered, known.cursors, known.total if last is None else last)

    def _page_notes(self, messages: list[dict], known: Knowledge) -> list[str]:
        """Per page just read: its negative posts and its next_cursor line; and any rate-limited calls."""
        lines = []
        for text in latest_results(messages):  # the newest results, even with a status bar or notes after them
            header, footer = PAGE_HEADER.search(text), footer_line(text)
            if not header or "Feed:" not in text.split("\n", 1)[0]:
                continue
            page = int(header.group(1))
            lines.append(f"Posts p{page} ({known.scope}): {_ids_text(known.page_ids.get(page, {}))}")
            if footer and FOOTER.search(footer):
                lines.append(f"After p{page}: {footer}")
        limited = rate_limit_note(messages)
        if limited:
            lines.append(limited)
        if known.window is None:
            lines.append("I cannot see a date window in the task or my notes; counting posts of every date.")
        return lines

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Read the next page, re-read a lost one, walk back to a lost cursor, retry a rate-limited one, or submit."""
        known = self.knowledge(messages)
        covered, counts = known.totals()
        moves = self._planned_moves(messages)
        lines = self._page_notes(messages, known)
        lines.append(self._ledger(messages, known, covered, counts))
        note = "\n".join(lines)
        if not moves:
            return submit(note + "\nAll pages counted; submitting.", counts=counts)
        return reply(note + _move_note(moves[0]), moves[0].call(FEED))

    def _ledger(self, messages: list[dict], known: Knowledge, covered: set[int], counts: dict[str, int]) -> str:
        """The whole ledger: the task's rules quoted (without the window when its notes drop it: ``notes_window``),
        the negative post ids per brand and the running totals (facts), the pages counted (in the totals line),
        and the next page's cursor (remaining)."""
        rules = quoted_rules(messages, RULES)
        if not self.notes_window:
            rules = [r for r in rules if not WINDOW_RULE.match(r)]
        facts = [
            f"Negative posts so far ({known.scope}): {_ids_text(known.ids())}",
            f"Running totals ({known.scope}) after pages {ranges(covered)} of {known.total or '?'}: "
            f"{_counts_text(counts)}",
        ]
        footers = [line for line in self._page_notes(messages, known) if line.startswith("After p")]
        return Ledger(rules=rules, facts=facts, checked=[], remaining=footers[-1:]).render()

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """Every other read whose cursor is in view (lost or rate-limited pages besides the next one)."""
        return other_calls((m.call(FEED) for m in self._planned_moves(messages)), first)

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The running totals over the pages counted so far, or None before any page was counted."""
        covered, counts = self.knowledge(messages).totals()
        return {"counts": counts} if covered else None

    def delegate_plan(self, messages: list[dict]) -> str | None:
        """The next chunk of feed pages to hand to a sub-agent, or None when all are counted
        (or it cannot start one)."""
        if delegation_failed(messages):
            return None  # a sub-agent failed: count the rest in this context
        known = Knowledge([], self._notes(messages), self.notes_window)
        if not known.vocabulary:
            return None
        covered = known.covered()
        missing = [p for p in range(1, (known.total or 0) + 1) if p not in covered]
        if known.total is not None and not missing:
            return None
        start = missing[0] if missing else max(covered, default=0) + 1
        if start not in known.cursors:
            return None  # the cursor of the next chunk is not in view: read on in this context
        end = start + self.chunk - 1 if known.total is None else min(start + self.chunk - 1, known.total)
        window = (
            f"Count only posts dated from {known.window[0]} to {known.window[1]}, both days included."
            if known.window
            else "Count posts of every date."
        )
        return (
            f"Count pages {start}-{end} of {known.total or '?'} of the feed with get_posts, starting with cursor "
            f'"{known.cursors[start]}" (page {start}) and following each page\'s next_cursor. The brands and the '
            f"names people use for them: {known.vocabulary_text()}. {window} A negative mention is an original "
            "post with a negative sentence about the brand; sponsored posts and reposts are not mentions. Report, "
            "per brand, the ids of the posts in these pages that are negative mentions of it, and the next_cursor "
            "after your last page."
        )

    def subagent_policy(self, task: str) -> "BrandSubPolicy":
        """The policy of a sub-agent given ``task``."""
        return BrandSubPolicy(self.notes_window)

    def summarize(self, history_text: str) -> str:
        """Keep the window, the negative post ids and running totals, a per-page log (each page's negative post
        ids and the posts set aside on it: ``page_log``), the pages done and the next cursor; drop the posts."""
        blocks = HISTORY_BLOCK.split(history_text)
        outputs = [b.split("]: ", 1)[1] for b in blocks if b.startswith("[tool ") and "]: " in b]
        known = Knowledge(outputs, [history_text], self.notes_window)
        covered, counts = known.totals()
        findings = [
            ("count only last week" + (f": window {known.window[0]}..{known.window[1]}" if self.notes_window else ""))
            if known.window
            else "no date window seen",
            *self.page_log(history_text, outputs, known),
            f"Negative posts so far ({known.scope}): {_ids_text(known.ids())}",
            f"Running totals ({known.scope}) after pages {ranges(covered)} of {known.total or '?'}: "
            f"{_counts_text(counts)}",
        ]
        remaining = sorted(set(range(1, (known.total or 0) + 1)) - covered)
        progress = [
            f"pages counted: {ranges(covered)} of {known.total or '?'}",
            f"remaining pages: {ranges(remaining)}",
        ]
        after = max(covered, default=0) + 1
        if after in known.cursors and after > 1 and (known.total is None or after <= known.total):
            progress.append(f"read on with next_cursor: {known.cursors[after]} (page {after} of {known.total or '?'})")
        return format_summary(findings, tools_used(history_text), failed_attempts(history_text), progress)

    def page_log(self, history_text: str, outputs: list[str], known: Knowledge) -> list[str]:
        """The summary's per-page log, page by page: the page's negative post ids (``Posts pN``) and the posts
        set aside on it (``set_aside``), read from the page when the history shows it, else carried from the
        earlier summary it absorbs (the log grows by a page per page read, as the calibration LLM's did)."""
        aside = {int(page): line for line, page in SET_ASIDE.findall(history_text)}
        for text in outputs:
            logged = set_aside(text, known.vocabulary, known.window)
            if logged is not None:
                aside[logged[0]] = logged[1]
        lines = []
        for page in sorted(set(known.page_ids) | set(aside)):
            if page in known.page_ids:
                lines.append(f"Posts p{page} ({known.scope}): {_ids_text(known.page_ids[page])}")
            if page in aside:
                lines.append(aside[page])
        return lines


def _move_note(move) -> str:
    if move.kind == "reread":
        return f"\nPage {move.page} is no longer in view and I have no notes on it; reading it again."
    if move.kind == "walk":
        return (
            f"\nThe cursor of the next page is no longer in view; reading page {move.page} again to follow the "
            "cursors from there."
        )
    return ""


SUB_PROGRESS = re.compile(r"Sub-task progress: pages counted: ([\d,\- none]+)")


class BrandSubPolicy(RangeReader, BrandPolicy):
    """A sub-agent counting the feed pages named in its task from the cursor it names, then reporting post ids."""

    listing = FEED

    def _range(self, messages: list[dict]):
        """(start, last page, knowledge, pages done, reads still to make), or None without a task."""
        task = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
        match = SUBTASK.search(task)
        if not match:
            return None
        start, end, cursor = int(match.group(1)), int(match.group(2)), match.group(4)
        known = Knowledge(tool_texts(messages), texts(messages), self.notes_window)
        known.cursors.setdefault(start, cursor)
        last = end if known.total is None else min(end, known.total)
        done = set(known.page_ids)
        for text in texts(messages):
            for pages in SUB_PROGRESS.findall(text):
                done |= parse_ranges(pages)
        done = {p for p in done if start <= p <= last}
        moves = [m for m in self._moves(messages, known, done | set(range(1, start)), last) if m.page <= last]
        return start, last, known, done, moves

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Read the pages of the range in order, noting the negative posts of each, then ``report``."""
        state = self._range(messages)
        if state is None:
            return reply("I cannot tell which pages to count.", make_call("report", conclusion="no page range given"))
        start, last, known, done, moves = state
        lines = self._page_notes(messages, known)
        lines.append(f"Negative posts so far ({known.scope}): {_ids_text(known.ids())}")
        lines.append(f"Sub-task progress: pages counted: {ranges(done)}")
        note = "\n".join(lines)
        if moves:
            return reply(note + _move_note(moves[0]), moves[0].call(FEED))
        conclusion = (
            f"{REPORT_PREFIX}: pages counted: {start}-{last} of {known.total or '?'} ({known.scope}); "
            f"negative posts: {_ids_text(known.ids())}{onward(known.cursors, known.total, last)}"
        )
        return reply(note, make_call("report", conclusion=conclusion))

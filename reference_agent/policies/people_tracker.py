"""The reference policy of ``people_tracker``: the careful researcher, and its sub-agent (strategy ``isolate``).

It works as the calibration LLM did (calibration/people_tracker__*__default, relay protocol 2): it searches every
person, opens the round-ups (pages listed for several people) before anyone's own pages, then each person's rumour,
profile and the articles of the moves whose month no page read has given yet (``pages_to_open``), and submits.
"""

from __future__ import annotations

import re
from collections import Counter

from reference_agent.kit.incremental import KeyedMemo, PrefixFold, TextMemo, per_request
from reference_agent.kit.ledger import Ledger, quoted_rules
from reference_agent.kit.limits import within_limit
from reference_agent.policy_kit import (
    REPORT_PREFIX,
    deferred_args,
    delegation_failed,
    exchanges,
    format_summary,
    latest_results,
    make_call,
    rate_limited_notes,
    real_failures,
    reply,
    submit,
    texts,
    tool_texts,
    tools_used,
)
from tasks.kit.limits import limit_sentence
from tasks.people_tracker.world import BROWSER_CALLS, DENIAL_PATTERN, MOVE_PATTERNS, month_of

PAGE_URL = re.compile(r'^<page url="([^"]+)">')
SEARCH_HEADER = re.compile(r'^Search results for "([^"]+)"')
RESULT_URL = re.compile(r"^  (https://\S+)$", re.M)
NOTE = re.compile(r"Notes on (https://\S+):")
MOVE_ITEM = re.compile(r"([A-Z][a-z]+ [A-Z][a-z]+) (\d{4}-\d{2}) ([A-Z][\w ]+?)(?:;|$)")
MOVES_LINE = re.compile(r"(?:Moves so far|Moves noted): ([^\n]*)")
NOTE_LINE = re.compile(r"Notes on https://\S+: ([^\n]*)")
DENIED_NOTE = re.compile(r"denied: ([A-Z][a-z]+ [A-Z][a-z]+) joining ([A-Z][\w ]+?) \(not a move\)")
PROGRESS = re.compile(r"Progress: done: ([^;\n]*); current: ([^;\n]*); opened: ([^;\n]*); remaining: ([^\n]*)")
PEOPLE_PROMPT = re.compile(r"Track these people: ([^.]*)\.")
# the ledger (reference_agent/kit/ledger.py): the task's rules quoted, every page opened, the result pages still to open
RULES = (
    PEOPLE_PROMPT,
    re.compile(r"For each one, find every employer change since 2018[^.]*\."),
    re.compile(r"Beware of people with similar names[^\n]*?even where another page reports it\)\."),
    re.compile(r"The API allows at most \d+ [^\n]*? per turn[^\n]*?\."),
)
OPENED_LINE = re.compile(r"^- Opened: ([^\n]*)$", re.M)
SEARCHED_LINE = re.compile(r"^- Searched: ([^\n]*)$", re.M)
TO_OPEN_LINE = re.compile(r"^- To open for ([A-Z][a-z]+ [A-Z][a-z]+): ([^\n]*)$", re.M)
# delegation (strategy ``isolate``): one sub-agent per person
SUBTASK_PROMPT = re.compile(r"Track this person: ([^.]*)\.")
REPORT_TRACKED = re.compile(r"^Sub-agent report: tracked ([^\n]*)$", re.M)
# a news article's address: the year and the headline ("/2025/ines-kovac-joins-orbital-labs")
ARTICLE = re.compile(r"/(\d{4})/([a-z0-9-]+)$")


def page_denials(text: str, people: set[str]) -> set[tuple[str, str]]:
    """(person, company) of the reported moves of tracked people that a page says were denied (exact names)."""
    tracking = frozenset(people)
    return set().union(*(_paragraph_facts(paragraph, tracking)[1] for paragraph in text.split("\n\n")))


def without_denied(moves: set[tuple[str, str, str]], denied: set[tuple[str, str]]) -> set[tuple[str, str, str]]:
    """The moves whose (person, company) was not denied."""
    return {m for m in moves if (m[0], m[2]) not in denied}


def page_moves(text: str, people: set[str]) -> set[tuple[str, str, str]]:
    """Moves of tracked people stated on a page (exact names; talks are not moves; a denial is no move).

    A move a page reports is returned even when another page denied it: the caller removes the
    denied ones it knows of (``without_denied``)."""
    tracking = frozenset(people)
    return set().union(*(_paragraph_facts(paragraph, tracking)[0] for paragraph in text.split("\n\n")))


def _read_paragraph(paragraph: str, people: frozenset[str]) -> tuple[frozenset, frozenset]:
    """The moves and the denials one paragraph states (a denial is one line: it never spans paragraphs)."""
    found = set()
    for pattern, needle in zip(MOVE_PATTERNS, _MOVE_WORDS, strict=False):
        if needle not in paragraph:  # each pattern holds its words: a paragraph without them has no match
            continue
        for match in pattern.finditer(paragraph):
            month = month_of(match.group("when"))
            if match.group("name") in people and month:
                found.add((match.group("name"), month, match.group("to").strip()))
    denied = (
        {
            (m.group("name"), m.group("to").strip())
            for m in DENIAL_PATTERN.finditer(paragraph)
            if m.group("name") in people
        }
        if " were false: " in paragraph
        else set()
    )
    return frozenset(found), frozenset(denied)


_MOVE_WORDS = (" left ", " moved from ", " announced in ")  # words of MOVE_PATTERNS, in order


_PARAGRAPHS = KeyedMemo(_read_paragraph, size=50_000)


def _paragraph_facts(paragraph: str, people: frozenset[str]) -> tuple[frozenset, frozenset]:
    """``_read_paragraph``, once per paragraph and people: the attention model changes a page's view a few lines
    at a time, and every other paragraph of it reads as before."""
    return _PARAGRAPHS(paragraph, people)


def relevant(url: str, person: str) -> bool:
    """Whether a result page can be about ``person``: a profile page (``/people/SLUG``) of another name is not
    (a different first or last name is a different person), everything else may be (round-ups, news, gossip)."""
    slug = person.lower().replace(" ", "-")
    return "/people/" not in url or url.rstrip("/").endswith(slug)


def _slug(text: str) -> str:
    """``text`` as a web address writes it (``Orbital Labs`` -> ``orbital-labs``)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def covered(url: str, person: str, moves: set[tuple[str, str, str]]) -> bool:
    """Whether ``url`` is the news article of a move of ``person`` that a page read already stated with its month.

    The article's address names the year and the headline (``/2025/ines-kovac-joins-orbital-labs``); opening it
    would only restate a known move, so the careful researcher skips it, as the calibration LLM did once a
    round-up had given the month (it opened the articles of the moves still without one)."""
    match = ARTICLE.search(url.rstrip("/"))
    return bool(match) and any(
        name == person and month[:4] == match.group(1) and match.group(2) == f"{_slug(name)}-joins-{_slug(company)}"
        for name, month, company in moves
    )


def shared_pages(results: dict[str, list[str]]) -> set[str]:
    """The result pages listed for two or more people searched (round-ups): one visit notes several people's
    moves, so they are opened first (the calibration LLM opened every round-up before any person's own pages)."""
    counts = Counter(url for urls in results.values() for url in set(urls))
    return {url for url, count in counts.items() if count > 1}


def pages_to_open(
    person: str, results: dict[str, list[str]], seen: set[str], moves: set[tuple[str, str, str]]
) -> list[str]:
    """The result pages of ``person`` still worth opening, round-ups first: not seen, about them (``relevant``) and
    not the article of a move already known (``covered``)."""
    shared = shared_pages(results)
    pending = [
        url
        for url in results.get(person, [])
        if url not in seen and relevant(url, person) and not covered(url, person, moves)
    ]
    return sorted(pending, key=lambda url: url not in shared)  # stable: the results' order within each kind


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip() and n.strip() != "none"]


def _parse_note(text: str, prompt_pattern: re.Pattern) -> tuple:
    """What one note says (``TrackerPolicy._state`` reads each note in this order)."""
    match = prompt_pattern.search(text)
    moves = frozenset(m for line in MOVES_LINE.findall(text) + NOTE_LINE.findall(text) for m in MOVE_ITEM.findall(line))
    opened = [u for line in OPENED_LINE.findall(text) for u in line.split(", ") if u.startswith("https://")]
    return (
        frozenset(DENIED_NOTE.findall(text)),
        [n.strip() for n in REPORT_TRACKED.findall(text)],
        [n.strip() for n in match.group(1).split(";")] if match else None,
        moves,
        frozenset(NOTE.findall(text)) | frozenset(opened),
        [name for line in SEARCHED_LINE.findall(text) for name in _names(line)],
        [
            (person, [u for u in line.split(", ") if u.startswith("https://")])
            for person, line in TO_OPEN_LINE.findall(text)
        ],
        PROGRESS.findall(text),
    )


class _Notes:
    """The notes folded in order: denials, people tracked by sub-agents, the people, moves, pages noted, people
    searched, result pages still to open, the latest progress line."""

    def __init__(self) -> None:
        self.denied: set[tuple[str, str]] = set()
        self.tracked: list[str] = []
        self.people: list[str] = []
        self.moves: set[tuple[str, str, str]] = set()
        self.noted: set[str] = set()
        self.searched: set[str] = set()
        self.to_open: dict[str, list[str]] = {}
        self.progress: tuple | None = None

    def read(self, facts: tuple) -> None:
        denied, tracked, people, moves, noted, searched, to_open, progress = facts
        self.denied |= denied
        self.tracked += tracked
        if people is not None:
            self.people = people
        self.moves |= moves
        self.noted |= noted
        self.searched.update(searched)
        for person, urls in to_open:
            self.to_open[person] = urls
        for groups in progress:
            self.progress = groups


def _fold_notes(facts, notes: list[str]) -> _Notes:
    state = _Notes()
    for text in notes:
        state.read(facts(text))
    return state


def _parse_result(text: str) -> tuple[str | None, str | None, tuple[str, ...]]:
    """A tool result's page url (an opened page), or its search query and result urls."""
    page = PAGE_URL.match(text)
    search = SEARCH_HEADER.match(text)
    return (
        page.group(1) if page else None,
        search.group(1) if search else None,
        tuple(RESULT_URL.findall(text)) if search else (),
    )


_result_facts = TextMemo(_parse_result)
_denied_notes = TextMemo(DENIED_NOTE.findall)


def _read_page(text: str, people: frozenset[str]) -> tuple[frozenset, frozenset]:
    return frozenset(page_moves(text, set(people))), frozenset(page_denials(text, set(people)))


_page_facts = KeyedMemo(_read_page, size=5_000)


def _page_moves(text: str, people: frozenset[str]) -> frozenset:
    """``page_moves``, once per page text and people."""
    return _page_facts(text, people)[0]


def _page_denials(text: str, people: frozenset[str]) -> frozenset:
    """``page_denials``, once per page text and people."""
    return _page_facts(text, people)[1]


class TrackerPolicy:
    """Reference policy for ``people_tracker`` (see the module docstring).

    With the ``isolate`` strategy (``delegate`` on offer) it hands each person, in the
    prompt's order, to a sub-agent of their own (``Track this person: NAME. ...``): a
    person's search results and pages are a natural, self-contained unit, and pages that
    mention several people (round-ups) are simply read by each sub-agent that finds them.
    The sub-agent reports ``Moves noted``; the main agent merges the visible reports and
    submits. A person whose report is no longer visible is delegated again; a delegate
    result that is not a report (the sub-agent failed) ends delegation, and the main agent
    tracks the rest itself.
    """

    prompt_pattern = PEOPLE_PROMPT

    @staticmethod
    def _notes(messages: list[dict]) -> list[str]:
        """The agent's own notes plus the visible sub-agent reports (``delegate`` results)."""
        return texts(messages) + [t for t in tool_texts(messages) if t.startswith(REPORT_PREFIX)]

    def delegate_plan(self, messages: list[dict]) -> str | None:
        """The next person for a sub-agent; None to act normally (merge and submit)."""
        people = next((m.group(1) for t in texts(messages, ("user",)) for m in [PEOPLE_PROMPT.search(t)] if m), None)
        if people is None:
            return None
        if delegation_failed(messages):
            return None
        results = [e.result for e in exchanges(messages) if e.name == "delegate" and e.result is not None]
        tracked = {name.strip() for r in results for name in REPORT_TRACKED.findall(r)}
        pending = [n.strip() for n in people.split(";") if n.strip() and n.strip() not in tracked]
        if not pending:
            return None
        return (
            f"Track this person: {pending[0]}. Find every employer change since 2018: the month (YYYY-MM) and "
            "the company they joined. Use search(query) and open_page(url). Beware of people with similar names "
            "(a different first or last name is a different person) and of rumours that were denied (a move that "
            "the company or the person denied did not happen, even where another page reports it). Report every "
            "move as: person YYYY-MM company. " + limit_sentence(BROWSER_CALLS, "search or open_page calls")
        )

    def subagent_policy(self, task: str) -> "TrackerSubPolicy":
        """The policy of a sub-agent (it reads its person from its own context)."""
        return TrackerSubPolicy()

    def _state(self, tool_outputs: list[str], notes: list[str], folded: "_Notes | None" = None):
        """What the notes and the tool results say (``folded``: the notes already folded, ``_notes_fold``)."""
        read = folded if folded is not None else _fold_notes(self._note_facts, notes)
        people = list(read.people)
        moves = set(read.moves)
        denied = set(read.denied)
        noted = set(read.noted)
        tracked = read.tracked
        searched = read.searched
        to_open = read.to_open
        progress = read.progress
        done: list[str] = []
        current = None
        opened: set[str] = set()
        remaining: list[str] = []
        if progress:
            done, current, opened, remaining = (
                _names(progress[0]),
                progress[1].strip(),
                set(_names(progress[2])),
                _names(progress[3]),
            )
            if current == "none":
                current = None
        for name in tracked:  # people a sub-agent reported on are done
            if name not in done:
                done.append(name)
            if current == name:
                current = None
        if not people:
            people = done + ([current] if current else []) + remaining
        pages: dict[str, str] = {}
        results: dict[str, list[str]] = {}
        tracking = frozenset(people)
        for text in tool_outputs:
            url, query, urls = _result_facts(text)
            if url is not None:
                pages[url] = text
                moves |= _page_moves(text, tracking)
                denied |= _page_denials(text, tracking)
            if query is not None:
                results[query] = list(urls)
        for person in searched:  # its search result is cut, but the ledger kept the pages still to open
            results.setdefault(person, to_open.get(person, []))
        moves = without_denied(moves, denied)
        return people, moves, noted, done, current, opened, pages, results

    def _note_facts(self, text: str) -> tuple:
        """``_parse_note`` with this policy's prompt pattern, once per text."""
        memo = self.__dict__.get("_note_memo")
        if memo is None:
            pattern = self.prompt_pattern
            memo = self._note_memo = TextMemo(lambda t: _parse_note(t, pattern))
        return memo(text)

    def _notes_fold(self, notes: list[str]) -> "_Notes":
        """The notes folded, only those new since the last request read (``kit.incremental``)."""
        fold = self.__dict__.get("_fold")
        if fold is None:
            fold = self._fold = PrefixFold(_Notes, lambda state, text: state.read(self._note_facts(text)))
        return fold(notes)

    def _visible_state(self, messages: list[dict]) -> tuple:
        """``_state`` of the visible messages, with the current person's ``opened`` pages brought up to date:
        pages in view or noted count as opened, a page whose open was rate limited (not done) does not.
        Returns (people, moves, noted, done, current, opened, pages, results) as ``_state`` does. Once per
        request (``act`` changes ``done`` and ``opened``: those are copies)."""
        people, moves, noted, done, current, opened, pages, results = self._fresh_state(messages)
        return people, moves, noted, list(done), current, set(opened), pages, results

    @per_request
    def _fresh_state(self, messages: list[dict]) -> tuple:
        notes = self._notes(messages)
        people, moves, noted, done, current, opened, pages, results = self._state(
            tool_texts(messages), notes, self._notes_fold(notes)
        )
        opened -= deferred_args(messages, "open_page", "url")
        if current is not None:
            opened |= {u for u in pages if u in results.get(current, [])} | (noted & set(results.get(current, [])))
        return people, moves, noted, done, current, opened, pages, results

    @staticmethod
    def _denied(messages: list[dict], people: list[str]) -> set[tuple[str, str]]:
        """(person, company) of every denied move the visible pages and notes show."""
        denied = {d for text in texts(messages) + tool_texts(messages) for d in _denied_notes(text)}
        tracking = frozenset(people)
        return denied | {
            d
            for text in tool_texts(messages)
            if _result_facts(text)[0] is not None
            for d in _page_denials(text, tracking)
        }

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The lookups whose arguments the visible messages already give, person by person in the prompt's
        order (profile ``realistic`` batches them with ``first``): a search for each person whose results
        are not in view, then the result pages still worth opening (``pages_to_open``) of the people whose
        results are in view, round-ups first, each once, none listed as opened. A person's pages depend on
        their search, so they come a turn later."""
        if (first.get("function") or {}).get("name") not in ("search", "open_page"):
            return []
        people, moves, noted, done, current, opened, pages, results = self._visible_state(messages)
        seen = set(noted) | set(pages)
        order = ([current] if current else []) + [p for p in people if p not in done and p != current]
        calls = [make_call("search", query=person) for person in order if person not in results]  # search first
        wanted = [
            url
            for person in order
            if person in results
            for url in pages_to_open(person, results, seen, moves)
            if not (person == current and url in opened)
        ]
        shared = shared_pages(results)
        for url in sorted(dict.fromkeys(wanted), key=lambda url: url not in shared):  # round-ups first, each once
            calls.append(make_call("open_page", url=url))
        return within_limit(
            messages, [call for call in calls if call["function"] != first.get("function")]
        )  # canonical

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The moves it would submit now: every move noted or in view (None: none yet)."""
        moves = self._visible_state(messages)[1]
        if not moves:
            return None
        return {"moves": [{"person": p, "month": m, "company": c} for p, m, c in sorted(moves)]}

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Search the current person, open their next page worth opening (``pages_to_open``: a round-up first), move
        to the next person, or submit."""
        people, moves, noted, done, current, opened, pages, results = self._visible_state(messages)
        lines = []
        denied = self._denied(messages, people)
        for text in latest_results(messages):  # the newest results, even with a status bar or notes after them
            match = PAGE_URL.match(text)
            if match:
                found = sorted(without_denied(page_moves(text, set(people)), denied))
                said = [" ".join(m) for m in found] + [
                    f"denied: {p} joining {c} (not a move)" for p, c in sorted(page_denials(text, set(people)))
                ]
                lines.append(f"Notes on {match.group(1)}: " + ("; ".join(said) or "no moves of the people I track"))
        lines += rate_limited_notes(messages)
        action = None
        while action is None:
            if current is None:
                todo = [p for p in people if p not in done]
                if not todo:
                    break
                current, opened = todo[0], set()
            if current not in results:
                action = make_call("search", query=current)
                break
            pending = [u for u in pages_to_open(current, results, noted | set(pages), moves) if u not in opened]
            if pending:
                opened.add(pending[0])
                action = make_call("open_page", url=pending[0])
                break
            done.append(current)
            current = None
        remaining = [p for p in people if p not in done and p != current]
        lines.append(
            self._ledger(messages, people, moves, denied, noted | set(pages), results, done, current, opened, remaining)
        )
        note = "\n".join(lines)
        if action is not None:
            return reply(note, action)
        answer = [{"person": p, "month": m, "company": c} for p, m, c in sorted(moves)]
        return submit(note + "\nEveryone tracked; submitting the moves.", moves=answer)

    def _ledger(
        self,
        messages: list[dict],
        people: list[str],
        moves: set,
        denied: set,
        seen: set[str],
        results: dict[str, list[str]],
        done: list[str],
        current: str | None,
        opened: set[str],
        remaining: list[str],
    ) -> str:
        """The whole ledger: the rules quoted, the moves and the denials (facts), the searches made and every page
        opened (checked), the result pages still to open and the progress (remaining)."""
        rules = quoted_rules(messages, RULES)
        facts = ["Moves so far: " + ("; ".join(" ".join(m) for m in sorted(moves)) or "none")]
        facts += [f"denied: {p} joining {c} (not a move)" for p, c in sorted(denied)]
        searched = [p for p in people if p in results]
        checked = ["Searched: " + (", ".join(searched) or "none"), "Opened: " + (", ".join(sorted(seen)) or "none")]
        todo = [
            f"To open for {p}: " + ", ".join(urls) for p in searched if (urls := pages_to_open(p, results, seen, moves))
        ]
        progress = (
            f"Progress: done: {', '.join(done) or 'none'}; current: {current or 'none'}; "
            f"opened: {', '.join(sorted(opened)) or 'none'}; remaining: {', '.join(remaining) or 'none'}"
        )
        return Ledger(rules=rules, facts=facts, checked=checked, remaining=[*todo, progress]).render()

    def summarize(self, history_text: str) -> str:
        """Keep the noted moves (with month and company) and the progress; raw page facts not yet noted are lost."""
        progress = PROGRESS.findall(history_text)
        moves: set[tuple[str, str, str]] = set()
        for line in MOVES_LINE.findall(history_text) + NOTE_LINE.findall(history_text):
            moves.update(MOVE_ITEM.findall(line))
        findings = ["Moves noted: " + ("; ".join(" ".join(m) for m in sorted(moves)) or "none")]
        state = []
        if progress:
            d, c, o, r = progress[-1]
            state.append(f"Progress: done: {d}; current: {c}; opened: {o}; remaining: {r}")
        else:
            state.append("no person finished yet")
        return format_summary(findings, tools_used(history_text), real_failures(history_text), state)


class TrackerSubPolicy(TrackerPolicy):
    """A sub-agent tracking the one person its task names; it reports instead of submitting.

    It batches like the main policy (``parallel_calls`` is inherited: its one person's search,
    then every result page) but never submits early: a sub-agent ends with ``report``.
    """

    prompt_pattern = SUBTASK_PROMPT

    def early_answer(self, messages: list[dict]) -> dict | None:
        """None: a sub-agent cannot submit (an early ``submit`` would be an unknown tool to it)."""
        return None

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Search, open every result, then ``report`` the moves noted."""
        message = TrackerPolicy.act(self, messages, tools)
        calls = message.get("tool_calls") or []
        if not any(c.get("function", {}).get("name") == "submit" for c in calls):
            return message
        task = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
        match = SUBTASK_PROMPT.search(task)
        person = match.group(1).strip() if match else "nobody (no person named)"
        moves = sorted(self._state(tool_texts(messages), texts(messages))[1])
        conclusion = f"{REPORT_PREFIX}: tracked {person}\nMoves noted: " + (
            "; ".join(" ".join(m) for m in moves) or "none"
        )
        return reply(str(message.get("content") or ""), make_call("report", conclusion=conclusion))

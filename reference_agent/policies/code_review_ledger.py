"""``code_review``'s ledger: search for each bug kind, read only the candidates, keep everything in the ledger.

What the calibration LLM did (calibration/code_review__*__default, relay protocol 2: every request read
whole): it listed the files and grepped for every bug pattern, up to 4 calls a turn, and trusted grep's
matched lines. It cleared decoys from them where it could (a ``finally: fh.close()`` after an ``open(``,
an ``intended`` comment above a loop, a zero guard above a division, a constant in an f-string, an
``expires_at > now`` under a ``def is_*_valid``), reported an ``is_*_expired`` predicate that tests
"still valid" from its ``def`` and ``return`` lines alone, read the three shared helper modules for
their signatures, grepped the helper calls, and read only the 4-5 files whose lines stayed suspicious
or whose bug it could see but not name: 5-8 files in all, about 7 steps. ``_line_verdict`` does the same
from the same lines. Its ledger:

* **Rules**: the task's sentences (the repository, the scope, the per-turn limit, how to submit), quoted
  so that they survive when the task statement is cut.
* **Facts**: ``Bug: PATH::FUNCTION (KIND)``; ``Helper: NAME(PARAMS) in MODULE``; ``Helper modules: ...``.
* **Checked**: ``Searched ID``; ``Reviewed PATH: clean`` or ``Reviewed PATH: bugs in F (KIND)``;
  ``Cleared by search: PATH:LINE, ...`` (one line per search).
* **Remaining**: ``Search ID`` and ``Read PATH`` still to do.

A repository of at most ``SMALL_REPOSITORY`` files (the smoke size) is read whole instead (``small_plan``, at the
end of this module), as the smoke LLM did; its ledger keeps no helper signatures.

Bound: the rules are 4 lines; facts grow with the bugs (6 at default size) and the helpers (8);
checked holds one line per search and per file read (about 20 at default size). Nothing in the
ledger is ever dropped: it is what the agent knows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reference_agent.kit.incremental import KeyedMemo, TextMemo
from reference_agent.kit.ledger import Ledger, Plan, newest_ledger
from reference_agent.policies.code_review_patterns import (
    comma_list,
    UNREAD,
    detect,
    helper_imports,
    helper_signatures,
    numbered_lines,
    source_of,
)
from reference_agent.policy_kit import Exchange, exchanges, make_call
from tasks.code_review.formats import HEADER, LISTING_HEADER, LISTING_LINE, SCOPE, VERDICT

# search id -> the pattern it greps (the planted kinds, and the lines that clear their decoys)
SEARCHES = {
    "off_by_one": r"range\(",
    "inverted_comparison": r"expires_at|def is_\w+\(",
    "mutable_default": r"def \w+\(.*=\s*(\[\]|\{\}|set\(\)|list\(\)|dict\(\))",
    "resource_leak": r"open\(|\.close\(\)",
    "sql_injection": r"execute\(",
    "zero_division": r"return .*/ |if \w+ == 0:",
}
# the narrower search that replaces a broad one whose output was cut at the grep limit (a large repository): the
# LLM narrowed a pattern when grep said "more matching lines not shown"
NARROW = {
    "off_by_one": r"range\(len\(\w+\) \+ 1\)",
    "inverted_comparison": r"expires_at > now|now < \w+\.expires_at|def is_\w+_valid\(",
    "resource_leak": r"= open\(|\.close\(\)",
    "sql_injection": r"execute\(f\"|\.format\(",
    "zero_division": r"return \w+ / \w+\s*$|if \w+ == 0:",
}
TRUNCATED_NOTE = "more matching lines not shown"
# a line a search matched that may be a bug (the other matched lines only give context); ``_line_verdict`` clears it,
# reports it, or sends the reviewer to its file, from the lines the grep showed around it
SUSPECT = {
    "off_by_one": re.compile(r"range\(len\(\w+\) \+ 1\)"),
    "inverted_comparison": re.compile(r"expires_at > now|now < \w+\.expires_at"),
    "zero_division": re.compile(r"return \w+ / (\w+)\s*$"),
}
# how the matched lines clear or settle a suspect line without a read (the LLM trusted grep's lines: it cleared the
# loops under an "is intended" comment, the divisions under a zero guard and the "still valid" predicates, and
# reported an ``is_*_expired`` predicate that tests "still valid" from the ``def`` line above its return)
INTENDED = re.compile(r"^\s*#.*\bintended\b")
DEF_LINE = re.compile(r"^def (\w+)\(")
VALID_PREDICATE = re.compile(r"^is_\w+_valid$")
EXPIRED_PREDICATE = re.compile(r"^is_\w+_expired$")
DEF_REACH = 6  # a return at most this many lines below a matched ``def`` line is taken as that function's
GUARD_REACH = 5  # a zero guard at most this many lines above a division guards it
HELPER_SEARCH = "helper_calls"
# the sweep before submitting: searches that confirm no candidate was missed (the LLM re-grepped every category
# before it submitted, with narrow patterns: a mutable default in a signature split over lines matched 0 lines in
# its protocol-2 runs); they change no verdict
VERIFY = {
    "sweep_predicates": r"def is_\w+\(",
    "sweep_closes": r"\.close\(\)|finally:",
    "sweep_defaults": r"^\s+\w+\s*=\s*(\[\]|\{\}|set\(\)|dict\(\)|list\(\))\s*[,)]",
    "sweep_divisions": r" / ",
}
RULE_SENTENCES = (
    re.compile(r"Review the Python repository [^\n]*?\(\d+ files[^)]*\)\."),
    SCOPE,
    re.compile(r"Submit every buggy function once[^\n]*?\.\]\)\.|Submit every buggy function once[^\n]*?\)\."),
    re.compile(r"The API allows at most \d+ [^\n]*? per turn[^\n]*?\."),
)
HIT = re.compile(r"^(app/\S+\.py):(\d+): (.*)$")
BUG_FACT = re.compile(r"^Bug: (app/\S+\.py)::(\w+) \((\w+)\)$")
HELPER_FACT = re.compile(r"^Helper: (\w+)\(([^)]*)\) in (app/\S+\.py)$")
MODULES_FACT = re.compile(r"^Helper modules: (.*)$")
SEARCHED = re.compile(r"^Searched (\w+)$")
TRUNCATED_LINE = re.compile(r"^Truncated (\w+)$")
CLEARED = re.compile(r"^Cleared by search (\w+): (.*)$")
READ = re.compile(r"^Read (app/\S+\.py)")


@dataclass
class ReviewState:
    """What the reviewer knows: rebuilt from the newest ledger plus the visible results."""

    rules: list[str] = field(default_factory=list)
    bugs: dict[tuple[str, str], str] = field(default_factory=dict)
    helpers: dict[str, tuple[list[str], str]] = field(default_factory=dict)
    modules: list[str] | None = None
    searched: set[str] = field(default_factory=set)
    reviewed: dict[str, str] = field(default_factory=dict)
    cleared: dict[str, list[str]] = field(default_factory=dict)
    candidates: dict[str, str] = field(default_factory=dict)  # path -> why it must be read
    truncated: set[str] = field(default_factory=set)  # broad searches whose output the grep limit cut
    contents: dict[str, str] = field(default_factory=dict)  # visible file texts

    @property
    def excluded(self) -> tuple[str, ...]:
        """The out-of-scope folders its rules name."""
        return tuple(p for rule in self.rules for m in [SCOPE.search(rule)] if m for p in m.group(1).split(", "))

    def in_scope(self, path: str) -> bool:
        """Whether ``path`` is to be reviewed."""
        return not path.startswith(self.excluded)


def task_rules(messages: list[dict]) -> list[str]:
    """The task's rule sentences, when the task statement is visible."""
    task = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
    return [m.group(0) for pattern in RULE_SENTENCES for m in [pattern.search(task)] if m]


def from_ledger(state: ReviewState, ledger: Ledger) -> None:
    """Fold a ledger's lines into ``state``."""
    state.rules = state.rules or list(ledger.rules)
    for line in ledger.facts:
        if m := BUG_FACT.match(line):
            state.bugs[(m.group(1), m.group(2))] = m.group(3)
        elif m := HELPER_FACT.match(line):
            state.helpers[m.group(1)] = (comma_list(m.group(2)), m.group(3))
        elif m := MODULES_FACT.match(line):
            state.modules = comma_list(m.group(1))
    for line in ledger.checked:
        if m := SEARCHED.match(line):
            state.searched.add(m.group(1))
        elif m := VERDICT.match(line):
            state.reviewed[m.group(1)] = m.group(2)
        elif m := TRUNCATED_LINE.match(line):
            state.truncated.add(m.group(1))
        elif m := CLEARED.match(line):
            state.cleared[m.group(1)] = comma_list(m.group(2))
    for line in ledger.remaining:
        if m := READ.match(line):
            why = line.split(" ", 2)[2] if line.count(" ") >= 2 else ""
            state.candidates.setdefault(m.group(1), why.removeprefix("(").removesuffix(")"))


def numbered(text: str) -> tuple[str, str] | None:
    """(path, source) of a visible ``read_file`` result; a line it did not attend to becomes ``UNREAD``."""
    return _numbered(text)


def _read_numbered(text: str) -> tuple[str, str] | None:
    header = HEADER.match(text)
    return None if not header else (header.group(1), source_of(numbered_lines(text), int(header.group(2))))


_numbered = TextMemo(_read_numbered)  # every visible file is read at every step: each text is parsed once


def _grep_hits(text: str) -> tuple[tuple[str, int, str], ...]:
    """The ``path:line: text`` hits of a grep result."""
    return tuple(
        (m.group(1), int(m.group(2)), m.group(3)) for line in text.splitlines()[1:] for m in [HIT.match(line)] if m
    )


_hits = TextMemo(_grep_hits)


def search_id(pattern: str, state: ReviewState) -> str | None:
    """Which of its searches a visible grep result answers."""
    for key, value in {**SEARCHES, **VERIFY, **{f"{k}_narrow": v for k, v in NARROW.items()}}.items():
        if value == pattern:
            return key
    if pattern == helper_pattern(state):
        return HELPER_SEARCH
    return next((key for key, value in module_patterns(state).items() if value == pattern), None)


def module_patterns(state: ReviewState) -> dict[str, str]:
    """The narrower helper-call searches, one per helper module, positional calls only (the helper search's
    output was cut at the grep limit): ``helper_calls_<module>`` -> pattern."""
    modules: dict[str, list[str]] = {}
    for name, (_, module) in state.helpers.items():
        modules.setdefault(module, []).append(name)
    return {
        f"{HELPER_SEARCH}_{module.rsplit('/', 1)[-1].removesuffix('.py')}": r"= ("
        + "|".join(sorted(names))
        + r")\([^=)]*\)"
        for module, names in sorted(modules.items())
    }


def helper_pattern(state: ReviewState) -> str | None:
    """The grep for positional calls of every known helper (``None`` until their signatures are known)."""
    if not state.helpers:
        return None
    return r"[=(] *(" + "|".join(sorted(state.helpers)) + r")\("


Hits = dict[int, str]  # line number -> text of one file's matched lines
Verdicts = tuple[dict[str, str], list[str], dict[tuple[str, str], str]]  # candidates, cleared lines, bugs


def suspicious(search: str, hits: list[tuple[str, int, str]], state: ReviewState) -> Verdicts:
    """What a search's hits show: the files to read (path -> why), the hits it cleared (``path:line``) and the
    bugs its lines settle without a read ((path, function) -> kind)."""
    by_file: dict[str, Hits] = {}
    for path, number, text in hits:
        by_file.setdefault(path, {})[number] = text
    found: dict[str, str] = {}
    cleared: list[str] = []
    bugs: dict[tuple[str, str], str] = {}
    kind = search.removesuffix("_narrow")
    for path, lines in by_file.items():
        if not state.in_scope(path):
            continue
        for number, text in sorted(lines.items()):
            verdict = _line_verdict(search, number, text, lines, state)
            if isinstance(verdict, str):
                bugs[(path, verdict)] = kind
            elif verdict is True:
                found.setdefault(path, f"{search} at line {number}")
            elif verdict is False:
                cleared.append(f"{path}:{number}")
    return found, cleared, bugs


def _suspicious(search: str, result: str, state: ReviewState) -> Verdicts:
    """``suspicious`` of a grep result's hits, once per search, result and what the verdicts read of the state
    (the scope and, for the helper searches, the helpers' signatures)."""
    helpers = (
        tuple((name, tuple(params)) for name, (params, _) in sorted(state.helpers.items()))
        if search.startswith(HELPER_SEARCH)
        else ()
    )
    found = _SUSPICIOUS(
        result, search, state.excluded, helpers, make=lambda: suspicious(search, list(_hits(result)), state)
    )
    return dict(found[0]), list(found[1]), dict(found[2])


_SUSPICIOUS = KeyedMemo(size=5_000)


def _line_verdict(search: str, number: int, text: str, lines: Hits, state: ReviewState) -> bool | str | None:
    """True: the line needs its file read; False: the matched lines clear it; a function name: the matched lines
    show that function's bug; None: not a line of interest."""
    search = search.removesuffix("_narrow")
    if search.startswith(HELPER_SEARCH):
        search = HELPER_SEARCH
    if search in SUSPECT:
        if text.lstrip().startswith("#") or not SUSPECT[search].search(text):
            return None  # a comment that quotes the pattern only gives context
        return _settled(search, number, text, lines)
    if search == "mutable_default":
        return True
    if search == "resource_leak":
        if "= open(" not in text:
            return None
        return not any(".close()" in lines.get(n, "") for n in range(number + 1, number + 8))
    if search == "sql_injection":
        if 'execute(f"' not in text and ".format(" not in text:
            return None
        return ".format(" in text or any(not v.isupper() for v in re.findall(r"\{(\w+)", text))
    if search == HELPER_SEARCH:
        return _swapped_call(text, state)
    return None


def _settled(search: str, number: int, text: str, lines: Hits) -> bool | str:
    """A suspect line's verdict from the matched lines around it (``_line_verdict``'s values)."""
    if search == "off_by_one":
        return not INTENDED.search(lines.get(number - 1, ""))  # the author says the extra round is meant
    if search == "zero_division":
        divisor = SUSPECT[search].search(text).group(1)
        guard = re.compile(rf"if {divisor} == 0|if not {divisor}\b")
        return not any(guard.search(lines.get(n, "")) for n in range(number - GUARD_REACH, number))
    owner = _enclosing_def(number, lines)  # inverted_comparison: the predicate's name says what it must test
    if owner and VALID_PREDICATE.match(owner):
        return False
    if owner and EXPIRED_PREDICATE.match(owner):
        return owner
    return True


def _enclosing_def(number: int, lines: Hits) -> str | None:
    """The function whose matched ``def`` line sits at most ``DEF_REACH`` lines above line ``number``, with no
    other matched top-level line between; None when the grep showed none."""
    for above in range(number - 1, max(number - DEF_REACH, 0) - 1, -1):
        text = lines.get(above)
        if text is None:
            continue
        match = DEF_LINE.match(text)
        if match or not text[:1].isspace():
            return match.group(1) if match else None
    return None


def _swapped_call(text: str, state: ReviewState) -> bool:
    """Whether a helper-call line passes a helper's own parameter names positionally in another order."""
    for name, args in re.findall(r"\b(\w+)\(([\w ,]*)\)", text):
        if name in state.helpers and "=" not in args:
            given = comma_list(args)
            params = state.helpers[name][0]
            if sorted(given) == sorted(params) and given != params:
                return True
    return False


def fold_results(state: ReviewState, visible: list[Exchange]) -> None:
    """Fold every visible result into ``state`` (idempotent: what the ledger holds stays as it is)."""
    for exchange in visible:
        text = exchange.result
        if text is None or exchange.is_error:
            continue
        if text.startswith(LISTING_HEADER) and state.modules is None:
            state.modules = [p for p in LISTING_LINE.findall(text) if p.startswith("app/common/")]
        elif read := numbered(text):
            path, source = read
            state.contents[path] = source
            if path in (state.modules or []) and UNREAD not in source:
                for name, params in helper_signatures(source).items():
                    state.helpers.setdefault(name, (params, path))
    for exchange in visible:
        if exchange.name != "grep" or exchange.result is None or exchange.is_error:
            continue
        search = search_id(str(exchange.args.get("pattern")), state)
        if search is None or search in state.searched:
            continue
        if search in VERIFY:
            state.searched.add(search)
            continue
        if TRUNCATED_NOTE in exchange.result and (search in NARROW or search == HELPER_SEARCH):
            state.truncated.add(search)  # its candidates may be among the lines not shown: narrow it
        found, cleared, bugs = _suspicious(search, exchange.result, state)
        for key, kind in bugs.items():
            state.bugs.setdefault(key, kind)
        for path, why in found.items():
            if path not in state.reviewed:
                state.candidates.setdefault(path, why)
        if cleared:
            state.cleared[search] = cleared
        state.searched.add(search)
    signatures = {name: params for name, (params, _) in state.helpers.items()}
    for path, source in state.contents.items():
        if path in state.candidates and path not in state.reviewed and UNREAD not in source and state.in_scope(path):
            bugs = detect(source, signatures)
            for func, kind in bugs:
                state.bugs[(path, func)] = kind
            state.reviewed[path] = "bugs in " + ", ".join(f"{f} ({k})" for f, k in bugs) if bugs else "clean"
            del state.candidates[path]


def review_state(messages: list[dict], visible: list[Exchange] | None = None) -> ReviewState:
    """The reviewer's state from the newest visible ledger and the visible results (``exchanges(messages)``,
    parsed once per request by the caller that has them), nothing else."""
    state = ReviewState(rules=task_rules(messages))
    newest = newest_ledger(messages)
    if newest is not None:
        from_ledger(state, newest[1])
    fold_results(state, exchanges(messages) if visible is None else visible)
    return state


def pending_calls(state: ReviewState) -> list[dict]:
    """What is still to do, in order: list, search, read the helper modules, search their calls, read candidates."""
    calls: list[dict] = []
    if state.modules is None:
        calls.append(make_call("list_files"))
    calls += [make_call("grep", pattern=SEARCHES[s]) for s in SEARCHES if s not in state.searched]
    calls += [
        make_call("grep", pattern=NARROW[s])
        for s in sorted(state.truncated)
        if s in NARROW and f"{s}_narrow" not in state.searched
    ]
    if HELPER_SEARCH in state.truncated:
        calls += [
            make_call("grep", pattern=p) for key, p in module_patterns(state).items() if key not in state.searched
        ]
    missing_modules = [m for m in state.modules or [] if not any(module == m for _, module in state.helpers.values())]
    calls += [make_call("read_file", path=m) for m in missing_modules]
    pattern = helper_pattern(state)
    if pattern and not missing_modules and state.modules is not None and HELPER_SEARCH not in state.searched:
        calls.append(make_call("grep", pattern=pattern))
    calls += [make_call("read_file", path=p) for p in state.candidates]
    if not calls:
        calls = [make_call("grep", pattern=VERIFY[s]) for s in VERIFY if s not in state.searched]
    return calls


def ledger_of(state: ReviewState) -> Ledger:
    """The ledger that restates ``state`` in full."""
    facts = [f"Bug: {p}::{f} ({k})" for (p, f), k in sorted(state.bugs.items())]
    if state.modules is not None:
        facts.append("Helper modules: " + (", ".join(state.modules) or "none"))
    facts += [f"Helper: {n}({', '.join(ps)}) in {m}" for n, (ps, m) in sorted(state.helpers.items())]
    narrowed = [f"{s}_narrow" for s in NARROW] + list(module_patterns(state))
    checked = [f"Searched {s}" for s in [*SEARCHES, *narrowed, HELPER_SEARCH, *VERIFY] if s in state.searched]
    checked += [f"Truncated {s}" for s in sorted(state.truncated)]
    checked += [f"Cleared by search {s}: {', '.join(v)}" for s, v in state.cleared.items()]
    checked += [f"Reviewed {p}: {v}" for p, v in state.reviewed.items()]
    remaining = [f"Search {s}" for s in SEARCHES if s not in state.searched]
    remaining += [
        f"Search {s}_narrow (its broad search was cut)"
        for s in sorted(state.truncated)
        if s in NARROW and f"{s}_narrow" not in state.searched
    ]
    if HELPER_SEARCH in state.truncated:
        remaining += [
            f"Search {key} (the helper search was cut)" for key in module_patterns(state) if key not in state.searched
        ]
    if HELPER_SEARCH not in state.searched:
        remaining.append(f"Search {HELPER_SEARCH} (after the helper modules)")
    remaining += [f"Read {p} ({why})" for p, why in state.candidates.items()]
    remaining += [f"Search {s} (the sweep before submitting)" for s in VERIFY if s not in state.searched]
    return Ledger(rules=list(state.rules), facts=facts, checked=checked, remaining=remaining)


def review_plan(messages: list[dict]) -> Plan:
    """The reviewer's turn: its ledger and the calls still to make, or the findings to submit."""
    rules = task_rules(messages) or next((list(n[1].rules) for n in [newest_ledger(messages)] if n), [])
    if is_small(rules):
        return small_plan(messages, rules)
    visible = exchanges(messages)
    state = review_state(messages, visible)
    calls = pending_calls(state)
    ledger = ledger_of(state)
    if calls:
        return Plan(ledger, calls)
    findings = [{"file": p, "function": f} for p, f in sorted(state.bugs)]
    unread = [p for p in listed_files(visible) if state.in_scope(p) and p not in state.reviewed]
    searched = [unread_verdict(p, state) for p in unread]
    note = "\n".join(["Every search is done and every candidate read; submitting.", *searched])
    return Plan(ledger, answer={"findings": findings}, note=note)


def unread_verdict(path: str, state: ReviewState) -> str:
    """The review note of a file it never read: the bugs its grep lines showed, or clean."""
    bugs = [f"{f} ({k})" for (p, f), k in sorted(state.bugs.items()) if p == path]
    if bugs:
        return f"Reviewed {path}: bugs in {', '.join(bugs)} (its grep lines show them; not read)"
    return f"Reviewed {path}: clean (every search ran over it; no line needed a read)"


def listed_files(visible: list[Exchange]) -> list[str]:
    """The paths of the newest visible listing (none when it is not in view)."""
    listed: list[str] = []
    for exchange in visible:
        if exchange.result and exchange.result.startswith(LISTING_HEADER):
            listed = LISTING_LINE.findall(exchange.result)
    return listed


# --- a small repository: read every file (relay protocol 2, calibration/code_review__*__smoke) ---------------------
# At 8 files the LLM ran three greps beside the listing (mutable defaults, open(), execute()), read the four
# in-scope service files in one turn, the three shared helper modules in the next (to check the positional
# helper calls) and submitted at step 4, with no sweep. Under headtail at 3k each request showed only its newest
# round: its replies restated the bugs and the files judged, not the helper signatures nor the call sites, so it
# re-read a service file together with the helper modules its calls need, and, seeing the cut note, re-grepped
# every bug category before it submitted (steps 4-7 of that run). ``small_plan`` does the same from the same view.
SMALL_REPOSITORY = 8  # at most this many files (the task's count; the smoke size, the only one recorded) is read whole
FIRST_SEARCHES = ("mutable_default", "resource_leak", "sql_injection")  # the LLM's first-turn greps
REPO_SIZE = re.compile(r"\((\d+) files")
CUT_NOTE = re.compile(r"^\[(?:context note\]|summary of the earlier work)")
FILES_FACT = re.compile(r"^Files to review: (.*)$")
CONFIRMED = re.compile(r"^Confirmed by search (\w+)$")
PENDING = re.compile(r"^Read (app/\S+\.py) with ([^(]*?) \(")


@dataclass
class SmallReview:
    """What the small-repository reviewer knows: its newest ledger plus the visible results."""

    rules: list[str] = field(default_factory=list)
    bugs: dict[tuple[str, str], str] = field(default_factory=dict)
    files: list[str] | None = None  # the in-scope files, service files first, then the helper modules
    modules: list[str] = field(default_factory=list)
    searched: set[str] = field(default_factory=set)
    confirmed: set[str] = field(default_factory=set)  # the category greps re-run after a cut
    reviewed: dict[str, str] = field(default_factory=dict)
    pending: dict[str, list[str]] = field(default_factory=dict)  # path -> helper modules its calls need
    contents: dict[str, str] = field(default_factory=dict)


def is_small(rules: list[str]) -> bool:
    """Whether the task's rules name a repository of at most ``SMALL_REPOSITORY`` files."""
    sizes = [int(m.group(1)) for rule in rules for m in [REPO_SIZE.search(rule)] if m]
    return bool(sizes) and sizes[0] <= SMALL_REPOSITORY


def small_from_ledger(state: SmallReview, ledger: Ledger) -> None:
    """Fold a small-repository ledger into ``state`` (bugs, files, verdicts, searches, pending reads)."""
    state.rules = state.rules or list(ledger.rules)
    for line in ledger.facts:
        if m := BUG_FACT.match(line):
            state.bugs[(m.group(1), m.group(2))] = m.group(3)
        elif m := FILES_FACT.match(line):
            state.files = comma_list(m.group(1))
        elif m := MODULES_FACT.match(line):
            state.modules = comma_list(m.group(1))
    for line in ledger.checked:
        if m := SEARCHED.match(line):
            state.searched.add(m.group(1))
        elif m := CONFIRMED.match(line):
            state.confirmed.add(m.group(1))
        elif m := VERDICT.match(line):
            state.reviewed[m.group(1)] = m.group(2)
    for line in ledger.remaining:
        if m := PENDING.match(line):
            state.pending[m.group(1)] = comma_list(m.group(2))


def small_fold(state: SmallReview, visible: list[Exchange], cut: bool) -> None:
    """Fold the visible listing, files and greps into ``state``, then judge every file it can judge now."""
    excluded = ReviewState(rules=state.rules).excluded
    for exchange in visible:
        text = exchange.result
        if text is None or exchange.is_error:
            continue
        if text.startswith(LISTING_HEADER) and state.files is None:
            listed = [p for p in LISTING_LINE.findall(text) if not p.startswith(excluded)]
            state.modules = [p for p in listed if p.startswith("app/common/")]
            state.files = [p for p in listed if p not in state.modules] + state.modules
        elif read := numbered(text):
            state.contents[read[0]] = read[1]
    for path in [p for p in state.files or [] if p not in state.reviewed and p in state.contents]:
        bugs, needed = small_judge(path, state.contents)
        if needed:
            state.pending[path] = needed
            continue
        for func, kind in bugs:
            state.bugs[(path, func)] = kind
        state.reviewed[path] = "bugs in " + ", ".join(f"{f} ({k})" for f, k in bugs) if bugs else "clean"
        state.pending.pop(path, None)
    done = state.files is not None and all(p in state.reviewed for p in state.files)
    for exchange in visible:
        if exchange.name != "grep" or exchange.result is None or exchange.is_error:
            continue
        search = next((k for k, v in SEARCHES.items() if v == exchange.args.get("pattern")), None)
        if search is not None:
            state.searched.add(search)
            if done and cut:
                state.confirmed.add(search)


def small_judge(path: str, contents: dict[str, str]) -> tuple[list[tuple[str, str]], list[str]]:
    """The bugs of a visible file, or what it must have in view first: the helper modules its positional calls
    need (their signatures), with the file itself when its text is not complete (a line it did not read)."""
    source = contents[path]
    needed = [path] if UNREAD in source else []
    signatures: dict[str, list[str]] = {}
    for module, names in helper_imports(source).items():
        called = [n for n in names if re.search(rf"\b{n}\((?![^)]*=)", source)]
        found = helper_signatures(contents.get(module, ""))
        if called and (module not in contents or any(n not in found for n in called)):
            needed.append(module)
        signatures.update(found)
    if needed:
        return [], needed
    return detect(source, signatures), []


def small_calls(state: SmallReview, cut: bool) -> list[dict]:
    """List and grep; read each file not judged (with the helper modules it needs); after a cut, re-grep every
    bug category before submitting."""
    calls: list[dict] = [] if state.files is not None else [make_call("list_files")]
    calls += [make_call("grep", pattern=SEARCHES[s]) for s in FIRST_SEARCHES if s not in state.searched]
    reads: list[str] = []
    for path in [p for p in state.files or [] if p not in state.reviewed]:
        needed = [m for m in state.pending.get(path, []) if m != path]
        if path in state.contents:  # in view: only what it lacks
            wanted = [p for p in [path, *needed] if p not in state.contents or UNREAD in state.contents[p]]
        else:  # gone from view: the file with every module it needs, so that all are in view together
            wanted = [path, *needed]
        reads += [p for p in wanted if p not in reads]
    calls += [make_call("read_file", path=p) for p in reads]
    if not calls and cut:
        calls = [make_call("grep", pattern=SEARCHES[s]) for s in SEARCHES if s not in state.confirmed]
    return calls


def small_ledger(state: SmallReview) -> Ledger:
    """The small reviewer's ledger: bugs, the files, the verdicts and searches; no signatures, no call sites."""
    facts = [f"Bug: {p}::{f} ({k})" for (p, f), k in sorted(state.bugs.items())]
    if state.files is not None:
        facts.append("Files to review: " + ", ".join(state.files))
        facts.append("Helper modules: " + (", ".join(state.modules) or "none"))
    checked = [f"Searched {s}" for s in SEARCHES if s in state.searched]
    checked += [f"Confirmed by search {s}" for s in SEARCHES if s in state.confirmed]
    checked += [f"Reviewed {p}: {v}" for p, v in state.reviewed.items()]
    remaining = [f"Search {s}" for s in FIRST_SEARCHES if s not in state.searched]
    for path in [p for p in state.files or [] if p not in state.reviewed]:
        needed = [m for m in state.pending.get(path, []) if m != path]
        why = " (its positional helper calls need their signatures)"
        remaining.append(f"Read {path} with {', '.join(needed)}{why}" if needed else f"Read {path}")
    return Ledger(rules=list(state.rules), facts=facts, checked=checked, remaining=remaining)


def small_plan(messages: list[dict], rules: list[str]) -> Plan:
    """The small-repository reviewer's turn (see ``SMALL_REPOSITORY``)."""
    state = SmallReview(rules=rules)
    newest = newest_ledger(messages)
    if newest is not None:
        small_from_ledger(state, newest[1])
    cut = any(m.get("role") == "user" and CUT_NOTE.match(str(m.get("content") or "")) for m in messages)
    small_fold(state, exchanges(messages), cut)
    calls = small_calls(state, cut)
    ledger = small_ledger(state)
    if calls:
        return Plan(ledger, calls)
    findings = [{"file": p, "function": f} for p, f in sorted(state.bugs)]
    return Plan(ledger, answer={"findings": findings}, note="Every in-scope file is read and judged; submitting.")

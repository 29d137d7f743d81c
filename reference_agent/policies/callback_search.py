"""``callback_search`` reference policy: search, then verify (source 002 §2.7.6), keeping a ledger.

Two phases, as the calibration LLM worked:

* search: ``list_files`` with ``grep(r"def \\w*callback\\w*\\(")``; the candidates are ranked by their
  def lines (the payment one first, a versioned or legacy twin last) and read one at a time, each
  batched with the grep for its name; the first whose docstring speaks of the payment gateway and is
  not deprecated is the handler (``TARGET: path:function``);
* verify: the use grep's ``import NAME as ALIAS`` line (the facade's re-export) gives the alias, which
  is searched for too; then the files in scope (``src/``) whose grep lines call the name or the alias
  are read, and each call is attributed to its enclosing ``def`` (``Verified path: ...``);
* final check: a search the call sites rest on (the use grep, the alias grep) whose round a strategy cut whole is
  run again, once, before it submits, as the calibration LLM did (headtail at 3K);
* submit.

Every reply restates the whole ledger (``reference_agent/kit/ledger.py``): the task's rules quoted (the scope
among them), the target, the alias, the call sites with their grep lines as evidence, the candidates
and files checked, and what remains; so a cut loses nothing the ledger holds. It reads a file again
when a line a grep pointed at (or one between a call and its ``def``) was not attended to. Summaries
keep the target, the alias and the confirmed call sites but not the list of files already checked.
"""

from __future__ import annotations

import re
from typing import Iterable

from harness.conversation import parse_arguments
from reference_agent.kit.ledger import Ledger
from reference_agent.policy_kit import (
    REPORT_PREFIX,
    deferred_args,
    exchanges,
    format_summary,
    is_rate_limited,
    latest_results,
    make_call,
    rate_limited_notes,
    real_failures,
    reply,
    submit,
    tools_used,
)
from tasks.callback_search.formats import DEF, FILE_HEADER, GREP_HEADER, GREP_LINE, NUMBERED

TARGET_NOTE = re.compile(r"TARGET: (src/\S+\.py):(\w+)")
ALIAS_NOTE = re.compile(r"Alias: (src/\S+\.py) re-exports (\w+) as (\w+)")  # noted once, after the use grep
FOUND_NOTE = re.compile(r"Handler found: (src/\S+\.py):(\w+)")  # search phase: judged, more candidates to check
CANDIDATES_NOTE = re.compile(r"Candidates: ([^\n]*)")
CHECKED_NOTE = re.compile(r"Checked (src/\S+\.py)")
VERIFY_NOTE = re.compile(r"Verified (src/\S+\.py): ([^\n]*)")
TO_VERIFY_NOTE = re.compile(r"To verify: ([^\n]*)")
CHECKED_LIST = re.compile(r"Candidates checked: ([^\n]*)")  # restated every reply of the search phase
VERIFIED_LIST = re.compile(r"Verified so far: ([^\n]*)")  # restated every reply of the verify phase
SITES = re.compile(r"Call sites so far: ([^\n]*)")
RECHECK_NOTE = re.compile(r"Final check: my grep (\S+) was cut")  # a search run again before submitting
RECHECKED_LIST = re.compile(r"Searches run again: ([^\n]*)")  # restated every reply once there is one
EVIDENCE_NOTE = re.compile(r"^Evidence (src/\S+:\d+): (.*)$")  # a grep line that shows the handler or a call of it
SITE = re.compile(r"(src/\S+\.py):(\w+)")
DEF_GREP = r"def \w*callback\w*\("
# the task's rules, quoted in the ledger so that they survive a cut of the task statement
RULES = (
    re.compile(r"Find the function that handles the payment gateway's callbacks[^.]*\."),
    re.compile(r"Then find every call site of it in the application code under src/ \(tests and docs do not count\)\."),
    re.compile(r"A call site is a function whose body calls it[^.]*\."),
    re.compile(r"The API allows at most \d+ [^\n]*? per turn[^\n]*?\."),
)
SCOPE_RULE = re.compile(r"application code under src/")  # the task's scope rule (prompt and sub-task both say it)
# delegation (strategy ``isolate``): one sub-agent does the whole search; its report is parsed
REPORT_TARGET = re.compile(r"^Sub-agent report: the payment-callback handler is (src/\S+\.py):(\w+)", re.M)
REPORT_SITES = re.compile(r"^Call sites \(\d+\): ([^\n]*)", re.M)
SUBTASK = (
    "Find the function in this Python codebase (the Shoply backend; tools list_files, read_file, grep) that handles "
    "the payment gateway's callbacks: the handler that runs when the gateway reports a payment as completed, failed "
    "or refunded. Other callbacks (SMS delivery, carriers, OAuth, hooks) and deprecated handlers do not count. Then "
    "find every call site of it in the application code under src/: a call site is the function whose body calls it, "
    "possibly through an import alias or a module attribute; tests, docs, comments and log strings do not count. "
    "Confirm both by reading the code. Report the handler as file:function and every call site as file:function."
)


def _again(path: str, called: set, limited: set) -> str:
    """Why a file is read again: its last read was rate limited (not done), or its content and note are out of view."""
    if path in limited:
        return " (rate limited before, reading it now)"
    return " (out of view, reading it again)" if path in called else ""


def _paths(listing: str) -> list[str]:
    """The paths of a restated list (``a.py, b.py`` or ``none``)."""
    return [p for p in listing.split(", ") if p and p != "none"]


UNREAD = "    # (line not read)"  # stands for a numbered line missing from what the agent attended to


def _file_contents(text: str) -> tuple[str, list[str]] | None:
    """(path, lines) of a ``read_file`` result; a line number the agent did not attend to is ``UNREAD``."""
    header = FILE_HEADER.match(text)
    if not header:
        return None
    numbered: dict[int, str] = {}
    for raw in text.splitlines()[1:]:
        m = NUMBERED.match(raw)
        if m:
            numbered[int(m.group(1))] = m.group(2)
    return header.group(1), [numbered.get(n, UNREAD) for n in range(1, int(header.group(2)) + 1)]


def _merge(old: list[str] | None, new: list[str]) -> list[str]:
    """Two visible copies of one file, line by line: a line read in either copy is read."""
    if old is None or len(old) != len(new):
        return new
    return [b if b != UNREAD else a for a, b in zip(old, new, strict=False)]


def _unclear(lines: list[str], numbers: Iterable[int]) -> bool:
    """Whether a line the greps pointed at (1-based ``numbers``), or the docstring after a def among them, is unread."""
    for number in numbers:
        span = (
            lines[number - 1 : number + 5]
            if lines[number - 1].lstrip().startswith("def ")
            else lines[number - 1 : number]
        )
        if any(line == UNREAD for line in span):
            return True
    return False


def _enclosing_unclear(lines: list[str], name: str, aliases: Iterable[str]) -> bool:
    """Whether an unread line lies between a call of ``name`` (or an alias) and the ``def`` it is attributed to."""
    call = re.compile(r"(?<![\w])(?:\w+\.)?(" + "|".join(map(re.escape, sorted({name, *aliases}))) + r")\(")
    last_def = 0
    for index, line in enumerate(lines):
        if re.match(r"^def \w+\(", line):
            last_def = index
        elif call.search(line) and not line.lstrip().startswith(("from ", "import ")):
            if any(row == UNREAD for row in lines[last_def:index]):
                return True
    return False


def _functions(lines: list[str]) -> list[tuple[str, str]]:
    """(name, docstring) of every def in a file."""
    found = []
    for i, line in enumerate(lines):
        m = re.match(r"^def (\w+)\(", line)
        if m:
            doc = []
            for follow in lines[i + 1 : i + 6]:
                doc.append(follow.strip())
                if follow.strip().endswith('"""') and len(doc) > 1 or follow.strip().count('"""') == 2:
                    break
            found.append((m.group(1), " ".join(doc)))
    return found


def _call_sites(lines: list[str], name: str, aliases: Iterable[str] = ()) -> list[str]:
    """Functions whose body calls ``name`` (or an import alias of it), skipping comments and docstrings.

    ``aliases``: alias names already known (the use grep shows ``import NAME as ALIAS`` lines),
    so a file whose own import line the agent did not attend to still counts its aliased call.

    A ``def`` line ends any docstring (none spans a definition), so a docstring quote line the
    agent did not attend to (profile ``realistic``) confuses one function, not the rest of the file.
    """
    names = {name, *aliases}
    for line in lines:
        m = re.search(rf"import {name} as (\w+)", line)
        if m:
            names.add(m.group(1))
    call = re.compile(r"(?<![\w])(?:\w+\.)?(" + "|".join(map(re.escape, sorted(names))) + r")\(")
    sites: list[str] = []
    current = None
    in_doc = False
    for line in lines:
        stripped = line.strip()
        d = re.match(r"^def (\w+)\(", line)
        if d:
            current, in_doc = d.group(1), False
            continue
        if stripped.count('"""') == 1:
            in_doc = not in_doc
            continue
        if in_doc or stripped.startswith("#") or stripped.count('"""') == 2:
            continue
        code = re.sub(r"\"[^\"]*\"|'[^']*'", "", line.split("#", 1)[0])
        if current and call.search(code) and not code.lstrip().startswith(("def ", "from ", "import ")):
            if current not in sites:
                sites.append(current)
    return sites


def _calls(line: str, names: set[str]) -> bool:
    """Whether a grep line reads as a call of one of ``names`` (not a def, an import, a comment or a string)."""
    code = re.sub(r"\"[^\"]*\"|'[^']*'", "", line.split("#", 1)[0]).strip()
    if code.startswith(("def ", "from ", "import ")):
        return False
    return bool(re.search(r"(?<![\w])(?:\w+\.)?(" + "|".join(map(re.escape, sorted(names))) + r")\(", code))


def empty_knowledge() -> dict:
    """What the policy knows before it reads a message: the one set of keys that ``_knowledge`` (the context)
    and ``summarize`` (a history's text) fill in as they read."""
    return {
        "listed": False,
        "def_grep": None,
        "candidates": None,
        "checked": {},
        "target": None,
        "use_grep": None,
        "to_verify": None,
        "verified": {},
        "sites": set(),
        "lines": {},
        "found": None,
        "aliases": set(),
        "pointed": {},
        "unclear": set(),
        "scope": "",
        "use_hits": None,
        "alias_hits": {},
        "alias_paths": {},
        "greps": {},
        "rules": [],
        "evidence": {},
        "rechecked": set(),
    }


def _likelihood(path: str, line: str) -> tuple[int, int, str]:
    """How a searcher orders the callback definitions it found (most likely first): the task names the payment
    gateway, and an old or versioned twin (``_v1``, ``legacy``) is the deprecated one more often than not."""
    name = (DEF.search(line) or re.search(r"(\w+)", line)).group(1)
    payment = 0 if "payment" in name or "payment" in path else 1
    old = 1 if re.search(r"_v\d|legacy|old", name + " " + path) else 0
    return payment, old, path


class CallbackSearchPolicy:
    """Reference policy for ``callback_search`` (see the module docstring).

    With the ``isolate`` strategy (``delegate`` on offer) it does what source 002 §2.7.6
    describes: it delegates the whole search (``SUBTASK``, self-contained) to ONE sub-agent
    and submits the sub-agent's conclusion, read from the visible ``delegate`` result; the
    main context gains two messages. A delegate result that is not a report (the sub-agent
    failed) makes it search itself.
    """

    def delegate_plan(self, messages: list[dict]) -> str | None:
        """The search as one sub-task, unless a delegation is already visible (then act: submit)."""
        if any(e.name == "delegate" for e in exchanges(messages)):
            return None
        return SUBTASK

    def subagent_policy(self, task: str) -> "CallbackSubPolicy":
        """The policy of the sub-agent (it reads its task from its own context)."""
        return CallbackSubPolicy()

    def _knowledge(self, messages: list[dict]) -> dict:
        k = empty_knowledge()
        for message in messages:
            role, text = message.get("role"), str(message.get("content") or "")
            if role == "tool":
                self._read_tool(text, k)
            elif role in ("user", "assistant"):
                self._read_text(text, k)
        return k

    def _read_tool(self, text: str, k: dict) -> None:
        if text.startswith(REPORT_PREFIX):  # a sub-agent's conclusion (strategy isolate)
            k["reported"] = True
            target = REPORT_TARGET.search(text)
            if target:
                k["target"] = (target.group(1), target.group(2))
                sites = REPORT_SITES.search(text)
                k["sites"] |= set(SITE.findall(sites.group(1))) if sites else set()
            return
        if re.match(r"\d+ files:\n", text):
            k["listed"] = True
        grep = GREP_HEADER.match(text)
        if grep:
            hits = self._grep_hits(grep.group(1), int(grep.group(2)), text, k)
            if hits is None:
                return  # fewer lines in view than the header counts: it greps again
            if grep.group(1) == DEF_GREP:
                ranked = sorted({(_likelihood(p, line), p) for p, _, line in hits if p.startswith("src/")})
                k["candidates"] = list(dict.fromkeys(p for _, p in ranked))
                for p, n, _ in hits:
                    k["pointed"].setdefault(p, set()).add(n)
            elif k["target"] and grep.group(1) == rf"\b{k['target'][1]}\b":
                self._use_grep(hits, k)
            elif grep.group(1) in {rf"\b{alias}\b" for alias in k["aliases"]}:
                alias = grep.group(1)[2:-2]
                k["alias_hits"][alias] = sorted(
                    {p for p, _, line in hits if p.startswith(k["scope"]) and _calls(line, {alias})}
                )
                k["evidence"].update(
                    {
                        f"{p}:{n}": line.strip()
                        for p, n, line in hits
                        if p.startswith(k["scope"]) and _calls(line, {alias})
                    }
                )
                for p, n, _ in hits:
                    k["pointed"].setdefault(p, set()).add(n)
        parsed = _file_contents(text)
        if parsed:
            path, lines = parsed
            lines = k["lines"][path] = _merge(k["lines"].get(path), lines)
            if self._unclear_file(path, lines, k):
                k["unclear"].add(path)  # read again before it is noted (a careful reader looks again)
                return
            k["unclear"].discard(path)
            k["checked"][path] = _functions(lines)
            if k["target"]:
                k["verified"][path] = _call_sites(lines, k["target"][1], k["aliases"])

    @staticmethod
    def _use_grep(hits: list[tuple[str, int, str]], k: dict) -> None:
        """The target's use grep: aliases from its import lines; files to verify are those with a line that calls it."""
        tpath, tname = k["target"]
        for p, _, line in hits:
            m = re.search(rf"import {tname} as (\w+)", line)
            if m:
                k["aliases"].add(m.group(1))
                k["alias_paths"][m.group(1)] = p
        k["use_hits"] = sorted(
            {
                p
                for p, _, line in hits
                if p.startswith(k["scope"])
                and _calls(line, {tname})
                and not (p == tpath and line.startswith(f"def {tname}("))
            }
        )
        k["evidence"].update(
            {
                f"{p}:{n}": line.strip()
                for p, n, line in hits
                if p.startswith(k["scope"]) and (_calls(line, {tname}) or line.startswith(f"def {tname}("))
            }
        )
        for p, n, _ in hits:
            k["pointed"].setdefault(p, set()).add(n)

    @staticmethod
    def _grep_hits(pattern: str, count: int, text: str, k: dict) -> list[tuple[str, int, str]] | None:
        """The hits of every visible copy of a grep, merged; ``None`` while fewer are in view than the header's
        count says (a line it did not attend to; the output's own "more matches not shown" note excuses it)."""
        seen = k["greps"].setdefault(pattern, set())
        seen |= {(p, int(n), line) for p, n, line in GREP_LINE.findall(text)}
        if len(seen) < count and "more matches not shown" not in text:
            return None
        return sorted(seen)

    @staticmethod
    def _unclear_file(path: str, lines: list[str], k: dict) -> bool:
        """Whether a line it must judge is unread: a line a grep pointed at (a callback ``def`` and its
        docstring, a use of the target), or a line between a call and the ``def`` it belongs to."""
        if _unclear(lines, k["pointed"].get(path, ())):
            return True
        return bool(k["target"]) and _enclosing_unclear(lines, k["target"][1], k["aliases"])

    def _read_text(self, text: str, k: dict) -> None:
        if SCOPE_RULE.search(text):
            k["scope"] = "src/"  # the task's rule (quoted in every ledger): tests and docs do not count
        if not k["rules"]:
            k["rules"] = [m.group(0) for rule in RULES for m in [rule.search(text)] if m]
        if "files:" in text and "Listed the repository" in text:
            k["listed"] = True
        for line in text.splitlines():
            line = line.removeprefix("- ")  # a line of a notes block (strategy notes) reads as the note itself
            evidence = EVIDENCE_NOTE.match(line)
            if evidence:
                k["evidence"].setdefault(evidence.group(1), evidence.group(2))
            if line.startswith("Listed the repository"):
                k["listed"] = True
            m = CANDIDATES_NOTE.match(line)
            if m:
                k["candidates"] = [c for c in m.group(1).split(", ") if c and c != "none"]
            m = CHECKED_NOTE.match(line)
            if m:
                k["checked"].setdefault(m.group(1), [])
            m = TARGET_NOTE.search(line)
            if m:
                k["target"] = (m.group(1), m.group(2))
            m = FOUND_NOTE.match(line)
            if m:
                k["found"] = (m.group(1), m.group(2))
            m = ALIAS_NOTE.match(line)
            if m:
                k["aliases"].add(m.group(3))
                k["alias_paths"][m.group(3)] = m.group(1)
            m = TO_VERIFY_NOTE.match(line)
            if m:
                k["to_verify"] = [c for c in m.group(1).split(", ") if c and c != "none"]
            m = CHECKED_LIST.match(line)
            if m:
                for path in _paths(m.group(1)):
                    k["checked"].setdefault(path, [])
            m = VERIFIED_LIST.match(line)
            if m:
                for path in _paths(m.group(1)):
                    k["verified"].setdefault(path, [])
            m = VERIFY_NOTE.match(line)
            if m:
                k["verified"][m.group(1)] = [f for _, f in SITE.findall(m.group(2))]
            m = SITES.search(line)
            if m:
                k["sites"] |= set(SITE.findall(m.group(1)))
            m = RECHECK_NOTE.match(line)
            if m:
                k["rechecked"].add(m.group(1))
            m = RECHECKED_LIST.match(line)
            if m:
                k["rechecked"] |= set(_paths(m.group(1)))

    @staticmethod
    def _judge(functions: list[tuple[str, str]]) -> str | None:
        for name, doc in functions:
            low = doc.lower()
            if "callback" in name and "payment gateway" in low and "deprecated" not in low:
                return name
        return None

    def _resolved(self, messages: list[dict]) -> dict:
        """What the visible messages establish, with the conclusions drawn from it: the target judged from
        the checked candidates, the files to verify that are still in view, and the call sites so far."""
        k = self._knowledge(messages)
        if k.get("reported"):
            return k
        if k["target"] is None:
            self._settle_target(k)
        if k["target"] and k["use_hits"] is None:  # its use grep came before the reply that settled the target
            hits = k["greps"].get(rf"\b{k['target'][1]}\b")
            if hits is not None:
                self._use_grep(sorted(hits), k)
        if k["to_verify"] is None and k["use_hits"] is not None and not self._pending_aliases(k):
            k["to_verify"] = sorted(set(k["use_hits"]).union(*k["alias_hits"].values()))
        elif k["to_verify"] is not None and k["use_hits"] is not None:  # a re-run search may show a file to read
            k["to_verify"] = sorted(set(k["to_verify"]).union(k["use_hits"], *k["alias_hits"].values()))
        if k["target"]:  # files still in view need no second read
            for path in k["to_verify"] or []:
                if (
                    path not in k["verified"]
                    and path in k["lines"]
                    and not self._unclear_file(path, k["lines"][path], k)
                ):
                    k["verified"][path] = _call_sites(k["lines"][path], k["target"][1], k["aliases"])
        for path, funcs in k["verified"].items():
            k["sites"] |= {(path, f) for f in funcs}
        return k

    @staticmethod
    def _pending_aliases(k: dict) -> list[str]:
        """Aliases of the target known now whose uses it has not searched for yet (their grep is not in view)."""
        return [alias for alias in sorted(k["aliases"]) if alias not in k["alias_hits"]]

    def _settle_target(self, k: dict) -> None:
        """Judge the visible candidates (``found``); the target is settled once every candidate is checked.

        A careful searcher checks every definition the grep found before it trusts one: the
        deprecated twin and the other callbacks look alike until their docstrings are read.
        """
        for path in k["candidates"] or []:
            name = self._judge(k["checked"].get(path, []))
            if name and k["found"] is None:
                k["found"] = (path, name)
        if k["found"]:  # the docstring confirms it: the rest are not read (the LLM read 1 of 6 candidates)
            k["target"] = k["found"]

    @staticmethod
    def _reads_due(k: dict) -> list[str]:
        """The files the current phase still has to read, in order: unchecked candidates (search) or
        unverified files of the use grep (verify); empty when the phase needs a grep first or is done."""
        if k.get("reported"):
            return []
        if k["target"] is None:
            return [p for p in k["candidates"] or [] if p not in k["checked"]][:1]
        if k["to_verify"] is None:
            return []
        done_files = set(k["verified"]) | {p for p, _ in k["sites"]}
        return [p for p in k["to_verify"] if p not in done_files]

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The calls independent of ``first`` whose arguments the visible messages already give (profile
        ``realistic`` batches them into one turn): with the listing, the definitions grep; with a read, the
        other files the phase still has to read (every candidate, or every file of the use grep). A grep
        depends on what the reads will show, so it is never batched with them."""
        function = first.get("function") or {}
        name = function.get("name")
        if name not in ("list_files", "read_file"):
            return []
        k = self._resolved(messages)
        if k.get("reported"):
            return []
        if name == "list_files":
            return [make_call("grep", pattern=DEF_GREP)] if k["candidates"] is None else []
        path = parse_arguments(function.get("arguments") or "{}").get("path")
        reads = [make_call("read_file", path=p) for p in self._reads_due(k) if p != path]
        if k["target"] is None and path in (k["candidates"] or [])[:1]:
            return reads + [make_call("grep", pattern=rf"\b{n}\b") for n in self._likely_names(path, k)[:1]]
        return reads

    @staticmethod
    def _likely_names(path: str, k: dict) -> list[str]:
        """The callback definitions the definitions grep showed in ``path``, most likely first (its uses are
        searched while the file is read, as the LLM did: the search and the read are independent)."""
        hits = sorted(k["greps"].get(DEF_GREP, ()), key=lambda h: _likelihood(h[0], h[2]))
        return [m.group(1) for p, _, line in hits if p == path for m in [DEF.search(line)] if m]

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The answer it would submit now: the target and the call sites confirmed so far (None: no target yet)."""
        k = self._resolved(messages)
        if k["target"] is None:
            return None
        return {
            "file": k["target"][0],
            "function": k["target"][1],
            "call_sites": [{"file": p, "function": f} for p, f in sorted(k["sites"])],
        }

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Search phase, then verify phase, then submit."""
        k = self._resolved(messages)
        if k.get("reported"):  # a sub-agent did the search: submit its conclusion
            if k["target"] is None:
                return submit(
                    "The sub-agent found no payment-gateway callback handler; submitting nothing.",
                    file="",
                    function="",
                    call_sites=[],
                )
            path, name = k["target"]
            sites = [{"file": p, "function": f} for p, f in sorted(k["sites"])]
            return submit(
                f"The sub-agent found {path}:{name} with {len(sites)} call sites; submitting its conclusion.",
                file=path,
                function=name,
                call_sites=sites,
            )
        note = self._note(messages, k)
        called = {e.args.get("path") for e in exchanges(messages) if e.name == "read_file"}
        limited = deferred_args(messages, "read_file", "path")
        # search phase
        if k["target"] is None:
            if self._first_move(messages, k):  # the listing orients; nothing reads it, so it is never re-run
                return reply(note + "\nSearch phase: listing the repository.", make_call("list_files"))
            if k["candidates"] is None:
                return reply(
                    note + "\nSearch phase: looking for callback definitions.", make_call("grep", pattern=DEF_GREP)
                )
            for path in self._reads_due(k):
                return reply(
                    note + f"\nSearch phase: reading candidate {path}{_again(path, called, limited)}.",
                    make_call("read_file", path=path),
                )
            return submit(
                note + "\nNo payment-gateway callback handler found; submitting nothing.",
                file="",
                function="",
                call_sites=[],
            )
        # verify phase
        path, name = k["target"]
        if k["to_verify"] is None and k["use_hits"] is None:
            return reply(
                note + f"\nVerify phase: searching for uses of {name}.", make_call("grep", pattern=rf"\b{name}\b")
            )
        for alias in self._pending_aliases(k) if k["to_verify"] is None else []:
            return reply(
                note + f"\nVerify phase: searching for uses of its alias {alias}.",
                make_call("grep", pattern=rf"\b{alias}\b"),
            )
        for candidate in self._reads_due(k):
            return reply(
                note + f"\nVerify phase: reading {candidate}{_again(candidate, called, limited)}.",
                make_call("read_file", path=candidate),
            )
        for pattern in self._cut_searches(messages, k):
            k["rechecked"].add(pattern)  # the ledger below says so: each search is run again once at most
            note = self._note(messages, k)
            return reply(
                note + f"\nFinal check: my grep {pattern} was cut from the context; running it again before I submit.",
                make_call("grep", pattern=pattern),
            )
        sites = [{"file": p, "function": f} for p, f in sorted(k["sites"])]
        return submit(note + "\nVerification done; submitting.", file=path, function=name, call_sites=sites)

    @staticmethod
    def _cut_searches(messages: list[dict], k: dict) -> list[str]:
        """The searches the call sites rest on (the target's use grep, then one per alias) whose call is no longer
        among the visible exchanges: a strategy cut its round whole, so only the ledger says what it found.

        Before submitting, the calibration LLM ran such a grep again (headtail at 3K: "The earlier rounds with my
        alias grep were cut, so before I submit I'll grep once more for the alias"), to see for itself that no call
        site was missed; a result cleared in place (``clear_tool_results``) leaves the call and the reply that judged
        it in view, and it did not.
        A search the ledger says was run again is not run a third time (a tight budget could cut it again).
        """
        name = k["target"][1]
        searched = {
            e.args.get("pattern") for e in exchanges(messages) if e.name == "grep" and not is_rate_limited(e.result)
        }
        wanted = [rf"\b{name}\b", *(rf"\b{alias}\b" for alias in sorted(k["aliases"]))]
        return [pattern for pattern in wanted if pattern not in searched and pattern not in k["rechecked"]]

    @staticmethod
    def _first_move(messages: list[dict], k: dict) -> bool:
        """Whether nothing of the search is visible yet: no exchange of its tools, no candidate, no checked file."""
        searched = any(
            e.name in ("list_files", "grep", "read_file") and not is_rate_limited(e.result) for e in exchanges(messages)
        )  # a rate-limited call was not done
        return not searched and k["candidates"] is None and not k["checked"] and not k["listed"]

    def _note(self, messages: list[dict], k: dict) -> str:
        """Notes on the newest results, then the restated state of the phase (so that it survives cuts)."""
        lines = []
        for text in latest_results(messages):  # the newest results, even with a status bar or notes after them
            if re.match(r"\d+ files:\n", text):
                lines.append("Listed the repository.")
            if k["target"] and text.startswith(f"grep \\b{k['target'][1]}\\b "):
                name = k["target"][1]
                lines += [
                    f"Alias: {p} re-exports {name} as {m.group(1)}; its uses are call sites too."
                    for p, _, line in GREP_LINE.findall(text)
                    for m in [re.search(rf"import {name} as (\w+)", line)]
                    if m
                ]
            parsed = _file_contents(text)
            if parsed:
                path = parsed[0]
                if path in k["unclear"]:
                    lines.append(f"Part of {path} did not read clearly; I will read it again.")
                elif k["target"] and path in (k["to_verify"] or []):
                    found = k["verified"].get(path, [])
                    lines.append(
                        f"Verified {path}: " + (", ".join(f"{path}:{f}" for f in found) or "no call (mention only)")
                    )
                else:
                    names = [n for n, _ in k["checked"].get(path, []) if "callback" in n]
                    lines.append(f"Checked {path}: callback functions {', '.join(names) or 'none'}")
        lines += rate_limited_notes(messages)
        return "\n".join(lines + self._recitation(k))

    @staticmethod
    def _recitation(k: dict) -> list[str]:
        """The whole ledger, restated in every reply (tasks/README.md): the task's rules, the target, the
        alias and the call sites so far (facts), the candidates checked and the files verified (checked),
        the candidates and files still to read (remaining)."""
        rules = [r for r in k["rules"]]
        facts: list[str] = []
        checked: list[str] = []
        remaining: list[str] = []
        if k["target"] is None:
            if k["candidates"] is not None:
                done = [p for p in k["candidates"] if p in k["checked"]]
                if k["found"]:
                    facts.append(f"Handler found: {k['found'][0]}:{k['found'][1]}")
                checked.append("Candidates checked: " + (", ".join(done) or "none"))
                remaining.append("Candidates: " + (", ".join(k["candidates"]) or "none"))
        else:
            facts.append(f"TARGET: {k['target'][0]}:{k['target'][1]}")
            facts += [
                f"Alias: {path} re-exports {k['target'][1]} as {alias}; its uses are call sites too."
                for alias, path in sorted(k["alias_paths"].items())
            ]
            facts.append("Call sites so far: " + (", ".join(f"{p}:{f}" for p, f in sorted(k["sites"])) or "none"))
            facts += [f"Evidence {where}: {line}" for where, line in sorted(k["evidence"].items())]
            if k["to_verify"] is not None:
                verified = [p for p in k["to_verify"] if p in k["verified"]]
                checked.append("Verified so far: " + (", ".join(verified) or "none"))
                remaining.append("To verify: " + (", ".join(k["to_verify"]) or "none"))
            if k["rechecked"]:
                checked.append("Searches run again: " + ", ".join(sorted(k["rechecked"])))
        return [Ledger(rules=rules, facts=facts, checked=checked, remaining=remaining).render()]

    def summarize(self, history_text: str) -> str:
        """Target and confirmed call sites; not which files were already checked."""
        k = empty_knowledge()
        for block in history_text.split("\n["):
            if block.startswith("tool ") and "]: " in block:
                self._read_tool(block.split("]: ", 1)[1], k)
            else:
                self._read_text(block.split("]: ", 1)[-1], k)
        for path, funcs in k["verified"].items():
            k["sites"] |= {(path, f) for f in funcs}
        findings = []
        if k["target"] is None:
            self._settle_target(k)
        if k["target"] is None and k["found"]:
            findings.append(f"Handler found: {k['found'][0]}:{k['found'][1]}")
        if k["target"]:
            findings.append(f"TARGET: {k['target'][0]}:{k['target'][1]}")
            findings += [
                f"Alias: {path} re-exports {k['target'][1]} as {alias}; its uses are call sites too."
                for alias, path in sorted(k["alias_paths"].items())
            ]
            findings.append("Call sites so far: " + (", ".join(f"{p}:{f}" for p, f in sorted(k["sites"])) or "none"))
        else:
            findings.append("target not identified yet")
        progress = [
            "search phase done" if k["target"] else "search phase in progress",
            f"files checked: {len(k['checked']) + len(k['verified'])}",
        ]
        return format_summary(findings, tools_used(history_text), real_failures(history_text), progress)


class CallbackSubPolicy(CallbackSearchPolicy):
    """The sub-agent: the same search and verify phases on its fresh context; it reports instead of submitting.

    It batches like the main policy (``parallel_calls`` is inherited) but never submits early:
    a sub-agent ends with ``report``, which only its ``act`` writes.
    """

    def early_answer(self, messages: list[dict]) -> dict | None:
        """None: a sub-agent cannot submit (an early ``submit`` would be an unknown tool to it)."""
        return None

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Search, verify, then ``report`` what it would have submitted."""
        message = super().act(messages, tools)
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            if function.get("name") != "submit":
                continue
            answer = parse_arguments(function.get("arguments") or "{}")
            if answer.get("file") and answer.get("function"):
                sites = [f"{s['file']}:{s['function']}" for s in answer.get("call_sites") or []]
                conclusion = (
                    f"{REPORT_PREFIX}: the payment-callback handler is {answer['file']}:{answer['function']}\n"
                    f"Call sites ({len(sites)}): {', '.join(sites) or 'none'}"
                )
            else:
                conclusion = f"{REPORT_PREFIX}: no payment-callback handler found"
            return reply(message.get("content") or "", make_call("report", conclusion=conclusion))
        return message

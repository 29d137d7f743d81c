"""``code_review`` reference policy: a competent reviewer that knows the planted bug patterns.

It lists the files, reads them in listing order (the files of the task's scope while the task
statement is in view) and writes one verdict per file in its reply (``Reviewed PATH: clean`` or
``Reviewed PATH: bugs in f (kind)``), reciting ``Findings so far`` and ``Progress ... last
reviewed: PATH``. To judge a file that calls a shared helper positionally it needs the helper
module's text in view: when that text is not visible (cut or cleared) it reads the helper module
again; its notes keep verdicts, never helper signatures, so compaction costs re-reads. A file whose
read is still visible but whose text and verdict are gone is read again; anything that vanished
without trace is not (it moves on from the latest ``last reviewed``). When the listing is not in
view it lists again (the latest summary's ``remaining files`` stands in for it). It merges every
visible copy of a file line by line and reads a file again before reporting a function with a line
it did not attend to (profile ``realistic``). Batching: ``parallel_calls`` offers the next files of
the listing and any helper module a visible file needs, and nothing once it had to list again after
a cut (tasks/README.md).

Reference summary (lossy, documented): keeps the findings, the last reviewed file, the
count and the remaining files; drops every file text and every per-file verdict, so the
helper definitions must be re-read after a summary.
"""
from __future__ import annotations

import re

from tasks.code_review.tools import HEADER, LISTING_HEADER, LISTING_LINE, NUMBERED, SCOPE, VERDICT
from tasks.policy_kit import (REPORT_PREFIX, delegation_failed, failed_attempts, format_summary, make_call,
                              other_calls, rate_limit_note, reply, submit, texts, tool_texts, tools_used)

# the reviewer's own notes and the delegation protocol (strategy ``isolate``), read back from visible messages
FINDINGS = re.compile(r"Findings so far: ([^\n]*)")
NOTED_BUG = re.compile(r"(\w+) \((\w+)\)")  # "bugs in parse_row (off_by_one), ..." of a verdict note
FINDING_ITEM = re.compile(r"(app/\S+\.py)::(\w+)(?: \((\w+)\))?")
LAST_REVIEWED = re.compile(r"last reviewed: (\S+\.py)")
REMAINING = re.compile(r"remaining files: ([^\n]*)")
# delegation (strategy ``isolate``): the sub-task names its files; the report names the files reviewed and the bugs
SUBTASK_FILES = re.compile(r"^Files to review \((\d+)\): ([^\n]*)$", re.M)
REPORT_REVIEWED = re.compile(r"Sub-agent report: reviewed \d+ files: ([^\n]*)")
REPORT_BUGS = re.compile(r"^Bugs found: ([^\n]*)$", re.M)
REPO_NAME = re.compile(r"Review the Python repository (.+?) \(\d+ files")


UNREAD = "    # (line not read)"  # stands for a numbered line missing from what the agent attended to


def _numbered_lines(text: str) -> dict[int, str]:
    """Line number -> code of a ``read_file`` result (the lines the agent has in view)."""
    lines: dict[int, str] = {}
    for line in text.splitlines()[1:]:
        match = NUMBERED.match(line)
        if match:
            lines[int(match.group(1))] = match.group(2)
    return lines


def _source(lines: dict[int, str], total: int) -> str:
    """The file's text from its numbered lines; a number it did not read becomes ``UNREAD`` (a gap it can see)."""
    return "\n".join(lines.get(number, UNREAD) for number in range(1, total + 1))


def _functions(source: str) -> list[tuple[str, str]]:
    """Top-level functions as (name, text)."""
    found: list[tuple[str, str]] = []
    current: list[str] | None = None
    name = ""
    for line in source.splitlines():
        if line and not line[0].isspace():
            if current is not None:
                found.append((name, "\n".join(current)))
                current = None
            match = re.match(r"def (\w+)\(", line)
            if match:
                name, current = match.group(1), [line]
                continue
        if current is not None:
            current.append(line)
    if current is not None:
        found.append((name, "\n".join(current)))
    return found


def helper_imports(source: str) -> dict[str, list[str]]:
    """Shared-helper module path -> imported names."""
    found: dict[str, list[str]] = {}
    for module, names in re.findall(r"^from (app\.common\.\w+) import ([\w, ]+)$", source, re.M):
        found[module.replace(".", "/") + ".py"] = [n.strip() for n in names.split(",")]
    return found


def helper_signatures(source: str) -> dict[str, list[str]]:
    """Function name -> parameter names, from a helper module's text."""
    return {name: [p.strip() for p in params.split(",") if p.strip()]
            for name, params in re.findall(r"^def (\w+)\(([^)]*)\):", source, re.M)}


def detect(source: str, signatures: dict[str, list[str]]) -> list[tuple[str, str]]:
    """The planted bug patterns a competent reviewer spots: (function, kind)."""
    bugs = []
    for name, body in _functions(source):
        kind = None
        header = body.splitlines()[0]
        loop = re.search(r"for (\w+) in range\(len\((\w+)\) \+ 1\):", body)
        if loop and re.search(rf"\b{loop.group(2)}\[{loop.group(1)}\]", body):
            kind = "off_by_one"
        elif (("has expired" in body or re.match(r"def is_\w+_expired\(", header))
              and re.search(r"\.expires_at > now|now < \w+\.expires_at", body)):  # the name or the docstring says so
            kind = "inverted_comparison"
        elif re.search(r"=\s*(\[\]|\{\}|set\(\))\s*[,)]", header):
            kind = "mutable_default"
        elif any(f"{v}.close()" not in body and "with open" not in body
                 for v in re.findall(r"(\w+) = open\(", body)):
            kind = "resource_leak"
        elif any(not var.isupper() for q in re.findall(r'execute\(f"([^"]*)"', body) for var in re.findall(r"\{(\w+)", q)) \
                or re.search(r'execute\("[^"]*"\.format\(', body):
            kind = "sql_injection"
        else:
            for num, den in re.findall(r"return (\w+) / (\w+)\s*$", body, re.M):
                if not den.isdigit() and not re.search(rf"if {den} == 0|if not {den}\b", body):
                    kind = "zero_division"
            for helper, args in re.findall(r"\b(\w+)\(([\w ,]*)\)", body):
                params = signatures.get(helper)
                positional = [a.strip() for a in args.split(",") if a.strip()]
                if params and positional and "=" not in args and sorted(positional) == sorted(params) and positional != params:
                    kind = "wrong_arg_order"
        if kind:
            bugs.append((name, kind))
    return bugs


RELISTED = "The file listing is not in view"  # its note when it lists again (the listing was cut)


def _relisted(messages: list[dict]) -> bool:
    """Whether a visible reply of its own lists the files again after work began (the listing was cut).

    The first listing's note says the same, but it comes right after the task; a re-listing
    follows earlier replies, a strategy's note or a summary.
    """
    task = next((i for i, m in enumerate(messages) if m.get("role") == "user"), len(messages))
    return any(m.get("role") == "assistant" and RELISTED in str(m.get("content") or "")
               for m in messages[task + 2:])


class ReviewPolicy:
    """Reference policy for ``code_review`` (see the module docstring).

    With the ``isolate`` strategy (``delegate`` on offer) it lists the files, then hands them
    to sub-agents in consecutive chunks of at most ``chunk`` files in listing order (44 files:
    6 sub-agents of 7-8 files). Eight files of about 1k tokens each keep a sub-agent's own,
    unmanaged context near 10k tokens at its last step while the main context gains only one
    short task and one short report per chunk. Each sub-task is self-contained: the file
    list, the bug kinds, and the instruction to read a shared helper module (whichever chunk
    it belongs to) before judging a positional call to it; so a sub-agent re-reads helper
    modules it needs, which the summed file coverage shows. The main agent merges the
    visible reports (files reviewed, ``Bugs found``) and submits; a chunk whose report is no
    longer visible is delegated again. A delegate result that is not a report (the
    sub-agent failed) ends delegation: the main agent then reviews the rest itself.
    """

    chunk = 8

    def _state(self, tool_outputs: list[str], notes: list[str]):
        seen: dict[str, tuple[int, dict[int, str]]] = {}  # every visible copy of a file, merged line by line
        order: list[str] = []
        for text in tool_outputs:
            header = HEADER.match(text)
            if header:
                total, lines = seen.get(header.group(1), (int(header.group(2)), {}))
                seen[header.group(1)] = (total, {**lines, **_numbered_lines(text)})
            elif text.startswith(LISTING_HEADER):
                order = LISTING_LINE.findall(text)
        contents = {path: _source(lines, total) for path, (total, lines) in seen.items()}
        verdicts: dict[str, str] = {}
        findings: dict[tuple[str, str], str] = {}
        last: list[str] = []
        remaining: list[str] | None = None
        total = None
        for text in notes:
            for path, verdict in VERDICT.findall(text):
                verdicts[path] = verdict
                last.append(path)
            for line in FINDINGS.findall(text):
                for path, func, kind in FINDING_ITEM.findall(line):
                    findings[(path, func)] = kind
            last += LAST_REVIEWED.findall(text)
            for line in REMAINING.findall(text):
                remaining = [p.strip() for p in line.split(",") if p.strip().endswith(".py")]
            match = re.search(r"\((\d+) files; list_files", text) or re.search(r"of (\d+) files", text)
            if match:
                total = int(match.group(1))
            for line in REPORT_REVIEWED.findall(text):  # a sub-agent's report: its files count as reviewed
                for path in (p.strip() for p in line.split(",")):
                    if path.endswith(".py"):
                        verdicts.setdefault(path, "reported by a sub-agent")
                        last.append(path)
            for line in REPORT_BUGS.findall(text):
                for path, func, kind in FINDING_ITEM.findall(line):
                    findings[(path, func)] = kind
        excluded = tuple(p for text in notes for m in [SCOPE.search(text)] if m for p in m.group(1).split(", "))
        offset = 0
        if not order and remaining is not None:
            order = remaining
            offset = max((total or len(order)) - len(order), 0)
        order = [p for p in order if not p.startswith(excluded)]  # the task's scope, while it is in view
        return contents, order, verdicts, findings, last, total, offset

    @staticmethod
    def _notes(messages: list[dict]) -> list[str]:
        """The agent's own notes plus the visible sub-agent reports (``delegate`` results)."""
        return texts(messages) + [t for t in tool_texts(messages) if t.startswith(REPORT_PREFIX)]

    def delegate_plan(self, messages: list[dict]) -> str | None:
        """The next chunk of files for a sub-agent; None to act normally (list first, or merge and submit)."""
        _, order, verdicts, _, _, _, offset = self._state(tool_texts(messages), self._notes(messages))
        if not order or offset:
            return None
        if delegation_failed(messages):
            return None  # a sub-agent failed: review the rest in this context
        count = -(-len(order) // self.chunk)
        size, extra = divmod(len(order), count)
        start = 0
        for index in range(count):
            files = order[start:start + size + (index < extra)]
            start += len(files)
            pending = [p for p in files if p not in verdicts]
            if pending:
                break
        else:
            return None
        repo = next((m.group(1) for t in texts(messages, ("user",)) for m in [REPO_NAME.search(t)] if m), None)
        where = f"the Python repository {repo}" if repo else "the Python repository"
        return (f"Review some files of {where} with read_file (grep searches every file).\n"
                f"Files to review ({len(pending)}): {', '.join(pending)}\n"
                "Find every function in these files with a real bug of these kinds: wrong argument order in a "
                "positional call to a shared helper defined in another module (read that helper's module, e.g. under "
                "app/common/, to check its parameter order, even when it is not in your list), off-by-one loop bounds, "
                "inverted comparisons, mutable default arguments, files opened and never closed, SQL built by string "
                "formatting from arguments, divisions without a zero guard. Some code only looks suspicious; report "
                "real bugs only. Report the files you reviewed and each bug as file::function (kind).")

    def subagent_policy(self, task: str) -> "ReviewSubPolicy":
        """The policy of a sub-agent given ``task`` (it reads the task from its own context)."""
        return ReviewSubPolicy()

    def _judge(self, path: str, contents: dict[str, str]) -> tuple[list[tuple[str, str]] | None, str | None]:
        """Bugs of ``path``, or the file to read first: a helper module it needs that is not visible (or whose
        definition of a called helper it did not read), or ``path`` itself when a function it would report
        has a line it did not read (a careful reviewer looks again before reporting)."""
        source = contents[path]
        signatures: dict[str, list[str]] = {}
        for module, names in helper_imports(source).items():
            called = [n for n in names if re.search(rf"\b{n}\((?![^)]*=)", source)]
            if not called:
                continue
            if module not in contents:
                return None, module
            found = helper_signatures(contents[module])
            if any(name not in found for name in called):
                return None, module
            signatures.update(found)
        bugs = detect(source, signatures)
        unclear = {name for name, body in _functions(source) if UNREAD in body}
        if any(name in unclear for name, _ in bugs):
            return None, path
        return bugs, None

    @staticmethod
    def _why(path: str, needed: str) -> str:
        """The note that says why it reads ``needed`` before judging ``path``."""
        if needed == path:
            return f"Part of {path} did not read clearly; reading it again before I report on it."
        return f"To check the helper calls in {path} I need the definitions in {needed}; reading it."

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """List, read the next file (or a helper module it needs), judge, or submit."""
        contents, order, verdicts, findings, last, total, offset = self._state(tool_texts(messages), self._notes(messages))
        if not order:
            return reply(RELISTED + "; listing the repository.", make_call("list_files"))
        position = {p: i for i, p in enumerate(order)}
        frontier = max((position[p] for p in last if p in position), default=-1)
        notes: list[str] = [line for line in [rate_limit_note(messages)] if line]  # rejected calls are issued again
        sent_back = self._sent_back(messages, verdicts)
        if sent_back:
            for path in sent_back:
                if path not in contents:
                    return reply(f"The completion check sent me back to {len(sent_back)} files; re-reading {path}.",
                                 make_call("read_file", path=path))
                bugs, needed = self._judge(path, contents)
                if needed is not None:
                    return reply(f"Re-checking {path} needs {needed}; reading it.", make_call("read_file", path=needed))
                for func, kind in bugs:
                    findings[(path, func)] = kind
                notes.append(f"Reviewed {path}: " + ("bugs in " + ", ".join(f"{f} ({k})" for f, k in bugs) if bugs else "clean"))
        index = frontier + 1
        action = None
        while index < len(order):
            path = order[index]
            if path in verdicts and path not in contents:
                index += 1
                continue
            if path not in contents:
                action = make_call("read_file", path=path)
                break
            bugs, needed = self._judge(path, contents)
            if needed is not None:
                notes.append(self._why(path, needed))
                action = make_call("read_file", path=needed)
                break
            for func, kind in bugs:
                findings[(path, func)] = kind
            verdict = "bugs in " + ", ".join(f"{f} ({k})" for f, k in bugs) if bugs else "clean"
            notes.append(f"Reviewed {path}: {verdict}")
            frontier = index
            index += 1
        count = offset + frontier + 1
        total_text = total or offset + len(order)
        last_text = order[frontier] if frontier >= 0 else (last[-1] if last else "none")
        notes.append("Findings so far: " + (", ".join(f"{p}::{f} ({k})" for (p, f), k in sorted(findings.items())) or "none"))
        notes.append(f"Progress: last reviewed: {last_text} ({count} of {total_text} files)")
        if action is not None:
            return reply("\n".join(notes), action)
        answer = [{"file": p, "function": f} for p, f in sorted(findings)]
        return submit("\n".join(notes) + "\nEvery file reviewed; submitting the findings.", findings=answer)

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The other reads whose paths are known now, in the order ``act`` would issue them.

        Files the completion check sent it back to, then every file of the visible listing
        after the last reviewed one that is not in view (and not already judged), and any
        shared helper module a visible file needs to be judged. Nothing before the listing
        is visible (what to read depends on it).
        """
        contents, order, verdicts, _, last, _, _ = self._state(tool_texts(messages), self._notes(messages))
        if not order or _relisted(messages):
            return []  # no listing yet, or its own note shows the listing was cut: one read per turn
        position = {p: i for i, p in enumerate(order)}
        frontier = max((position[p] for p in last if p in position), default=-1)
        paths = self._sent_back(messages, verdicts)
        paths += [p for p in order[frontier + 1:] if not (p in verdicts and p not in contents)]
        return other_calls((make_call("read_file", path=p) for p in self._reads(paths, contents)), first)

    def _reads(self, paths: list[str], contents: dict[str, str]) -> list[str]:
        """What judging ``paths`` needs read: each one not in view, or the helper module a visible one needs."""
        reads: list[str] = []
        for path in paths:
            needed = path if path not in contents else self._judge(path, contents)[1]
            if needed is not None and needed not in reads:
                reads.append(needed)
        return reads

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The findings noted so far plus those of the visible files it can judge now; None before any review."""
        contents, order, verdicts, findings, _, _, _ = self._state(tool_texts(messages), self._notes(messages))
        judged = False
        for path in [p for p in order if p in contents]:
            bugs, needed = self._judge(path, contents)
            if needed is None:
                judged = True
                findings.update({(path, func): kind for func, kind in bugs})
        if not (judged or verdicts or findings):
            return None
        return {"findings": [{"file": p, "function": f} for p, f in sorted(findings)]}

    @staticmethod
    def _sent_back(messages: list[dict], verdicts: dict[str, str]) -> list[str]:
        """Files the latest visible stop-hook refusal named that still have no visible review."""
        named: list[str] = []
        for text in tool_texts(messages):
            if text.startswith("[stop hook]") and "no visible review:" in text:
                named = re.findall(r"app/\S+?\.py", text.split("no visible review:", 1)[1])
        return [p for p in named if p not in verdicts]

    def summarize(self, history_text: str) -> str:
        """Keep findings, the last reviewed file and the remaining files; drop file texts and verdicts."""
        blocks = ["[" + b for b in history_text.split("\n[")]
        outputs = [b.split("]: ", 1)[1] for b in blocks if b.startswith("[tool ") and "]: " in b]
        contents, order, verdicts, findings, last, total, _ = self._state(outputs, [history_text])
        position = {p: i for i, p in enumerate(order)}
        frontier = max((position[p] for p in last if p in position), default=-1)
        last_path = order[frontier] if frontier >= 0 else (last[-1] if last else "none")
        items = ", ".join(f"{p}::{f} ({k})" for (p, f), k in sorted(findings.items())) or "none"
        progress = [f"last reviewed: {last_path}"]
        if order:
            progress.append("remaining files: " + (", ".join(order[frontier + 1:]) or "none"))
        else:
            progress.append("file listing not seen yet")
        return format_summary([f"Findings so far: {items}"], tools_used(history_text), failed_attempts(history_text),
                              progress)


class ReviewSubPolicy(ReviewPolicy):
    """A sub-agent reviewing the files its task names (``Files to review (N): ...``), then reporting.

    It reads its files in order, reads a shared helper module when a positional call needs
    its signature (the module's text must be visible, as for the main policy), writes one
    verdict per file, and ends with ``report``: the files reviewed and ``Bugs found``.
    """

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Read the next file (or a helper module it needs), judge, or report."""
        files = self._task_files(messages)
        if files is None:
            return reply("I cannot tell which files to review.", make_call("report", conclusion="no file list given"))
        contents = self._state(tool_texts(messages), [])[0]
        noted = {path: verdict for text in texts(messages, ("assistant",)) for path, verdict in VERDICT.findall(text)}
        notes: list[str] = [line for line in [rate_limit_note(messages)] if line]  # every verdict so far, restated
        findings: list[str] = []  # in each reply (a cut loses no review); rejected calls are issued again
        for path in files:
            if path in noted and path not in contents:  # reviewed earlier; its text is gone, its verdict is not
                notes.append(f"Reviewed {path}: {noted[path]}")
                findings += [f"{path}::{f} ({k})" for f, k in NOTED_BUG.findall(noted[path])]
                continue
            if path not in contents:
                return reply("\n".join(notes), make_call("read_file", path=path))
            bugs, needed = self._judge(path, contents)
            if needed is not None:
                notes.append(self._why(path, needed))
                return reply("\n".join(notes), make_call("read_file", path=needed))
            findings += [f"{path}::{f} ({k})" for f, k in bugs]
            notes.append(f"Reviewed {path}: " + ("bugs in " + ", ".join(f"{f} ({k})" for f, k in bugs) if bugs else "clean"))
        helpers = sorted(p for p in contents if p not in files)
        conclusion = (f"{REPORT_PREFIX}: reviewed {len(files)} files: {', '.join(files)}\n"
                      f"Bugs found: {', '.join(findings) or 'none'}\n"
                      f"Helper modules also read: {', '.join(helpers) or 'none'}")
        return reply("\n".join(notes), make_call("report", conclusion=conclusion))

    def _task_files(self, messages: list[dict]) -> list[str] | None:
        """The files the task names (``Files to review (N): ...``), or None when the task is not visible."""
        task = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
        match = SUBTASK_FILES.search(task)
        return [p.strip() for p in match.group(2).split(",") if p.strip().endswith(".py")] if match else None

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The other reads its files need now: each file not in view and not yet judged, or a helper module."""
        files = self._task_files(messages)
        if not files:
            return []
        contents = self._state(tool_texts(messages), [])[0]
        noted = {path for text in texts(messages, ("assistant",)) for path, _ in VERDICT.findall(text)}
        paths = [p for p in files if not (p in noted and p not in contents)]
        return other_calls((make_call("read_file", path=p) for p in self._reads(paths, contents)), first)

    def early_answer(self, messages: list[dict]) -> dict | None:
        """None: a sub-agent reports its files; it never submits the task's answer."""
        return None


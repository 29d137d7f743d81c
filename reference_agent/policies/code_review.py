"""``code_review`` reference policy: a reviewer that searches, reads the candidates and keeps a ledger.

Its turns come from ``ledger_review.review_plan``: list the files and grep for every planted bug
kind, clear decoys from the matching lines (or settle a bug there when its lines name the function),
read the shared helper modules and grep their positional calls, read the files whose lines stay
suspicious, sweep, submit. Every reply restates
the whole ledger (``reference_agent/kit/ledger.py``; its contents are in ``ledger_review``'s docstring and
tasks/README.md), so a cut loses nothing the ledger holds. The methods kept here serve the
strategies that need more: sub-agents (``isolate``: chunks of files, merged from their reports),
the reference summary and the stop hook's refusal.

Reference summary (lossy, documented): keeps the findings, the last reviewed file, the
count and the remaining files; drops every file text and every per-file verdict.
"""

from __future__ import annotations

import re

from reference_agent.kit.ledger import LedgerPolicy, Plan
from reference_agent.policies.code_review_ledger import review_plan, review_state
from reference_agent.policies.code_review_patterns import (
    UNREAD,
    _functions,
    detect,
    helper_imports,
    helper_signatures,
    numbered_lines,
    source_of,
)
from reference_agent.policy_kit import (
    REPORT_PREFIX,
    delegation_failed,
    failed_attempts,
    format_summary,
    make_call,
    other_calls,
    rate_limit_note,
    reply,
    submit,
    texts,
    tool_texts,
    tools_used,
)
from tasks.code_review.formats import HEADER, LISTING_HEADER, LISTING_LINE, SCOPE, VERDICT

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


class ReviewPolicy(LedgerPolicy):
    """Reference policy for ``code_review``: the ledger reviewer of ``ledger_review`` (search, then read).

    ``plan`` (``reference_agent/policies/code_review_ledger.py``) decides every turn from the newest visible
    ledger and the visible results. The methods below serve the strategies that need more: the
    sub-agents of ``isolate`` (``delegate_plan``, ``subagent_policy``), the reference summary and
    the stop hook's refusal (a file it names is read and reviewed).

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
                seen[header.group(1)] = (total, {**lines, **numbered_lines(text)})
            elif text.startswith(LISTING_HEADER):
                order = LISTING_LINE.findall(text)
        contents = {path: source_of(lines, total) for path, (total, lines) in seen.items()}
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
            files = order[start : start + size + (index < extra)]
            start += len(files)
            pending = [p for p in files if p not in verdicts]
            if pending:
                break
        else:
            return None
        repo = next((m.group(1) for t in texts(messages, ("user",)) for m in [REPO_NAME.search(t)] if m), None)
        where = f"the Python repository {repo}" if repo else "the Python repository"
        return (
            f"Review some files of {where} with read_file (grep searches every file).\n"
            f"Files to review ({len(pending)}): {', '.join(pending)}\n"
            "Find every function in these files with a real bug of these kinds: wrong argument order in a "
            "positional call to a shared helper defined in another module (read that helper's module, e.g. under "
            "app/common/, to check its parameter order, even when it is not in your list), off-by-one loop bounds, "
            "inverted comparisons, mutable default arguments, files opened and never closed, SQL built by string "
            "formatting from arguments, divisions without a zero guard. Some code only looks suspicious; report "
            "real bugs only. Report the files you reviewed and each bug as file::function (kind)."
        )

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
        """The ledger reviewer's turn; with ``delegate`` on offer, list and merge the sub-agents' reports."""
        if self._delegating(messages, tools):
            return self.merge_reports(messages)
        return super().act(messages, tools)

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The other planned calls (none while it delegates: the sub-agents do the reading)."""
        return [] if self._delegating(messages, tools) else super().parallel_calls(messages, tools, first)

    @staticmethod
    def _delegating(messages: list[dict], tools: list[dict]) -> bool:
        """Whether it hands the review to sub-agents: ``delegate`` is offered and no sub-agent failed."""
        offered = {t.get("function", {}).get("name") for t in tools}
        return "delegate" in offered and not delegation_failed(messages)

    def merge_reports(self, messages: list[dict]) -> dict:
        """List the files first; once every chunk is reported (``delegate_plan`` has no more), submit the merge."""
        _, order, _, findings, _, _, _ = self._state(tool_texts(messages), self._notes(messages))
        if not order:
            return reply("Listing the repository to split it among sub-agents.", make_call("list_files"))
        answer = [{"file": p, "function": f} for p, f in sorted(findings)]
        items = ", ".join(f"{p}::{f} ({k})" for (p, f), k in sorted(findings.items())) or "none"
        return submit(f"Every chunk is reported. Findings so far: {items}", findings=answer)

    def plan(self, messages: list[dict]) -> Plan:
        """The ledger reviewer's turn; files the stop hook named without a visible review are read first."""
        plan = review_plan(messages)
        reviewed = {path: verdict for line in plan.ledger.checked for path, verdict in VERDICT.findall(line)}
        sent_back = self._sent_back(messages, reviewed)
        if sent_back:
            reads = [make_call("read_file", path=p) for p in sent_back]
            plan.ledger.remaining[:0] = [f"Read {p} (the completion check named it)" for p in sent_back]
            return Plan(plan.ledger, reads, note=f"The completion check sent me back to {len(sent_back)} files.")
        return plan

    def _reads(self, paths: list[str], contents: dict[str, str]) -> list[str]:
        """What judging ``paths`` needs read: each one not in view, or the helper module a visible one needs."""
        reads: list[str] = []
        for path in paths:
            needed = path if path not in contents else self._judge(path, contents)[1]
            if needed is not None and needed not in reads:
                reads.append(needed)
        return reads

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The bugs its ledger and the visible files hold so far; None before it found any."""
        state = review_state(messages)
        if not state.bugs:
            return None
        return {"findings": [{"file": p, "function": f} for p, f in sorted(state.bugs)]}

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
            progress.append("remaining files: " + (", ".join(order[frontier + 1 :]) or "none"))
        else:
            progress.append("file listing not seen yet")
        return format_summary(
            [f"Findings so far: {items}"], tools_used(history_text), failed_attempts(history_text), progress
        )


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
            notes.append(
                f"Reviewed {path}: " + ("bugs in " + ", ".join(f"{f} ({k})" for f, k in bugs) if bugs else "clean")
            )
        helpers = sorted(p for p in contents if p not in files)
        conclusion = (
            f"{REPORT_PREFIX}: reviewed {len(files)} files: {', '.join(files)}\n"
            f"Bugs found: {', '.join(findings) or 'none'}\n"
            f"Helper modules also read: {', '.join(helpers) or 'none'}"
        )
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

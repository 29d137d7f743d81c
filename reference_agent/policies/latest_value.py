"""The reference policy of ``latest_value``: the careful reconciler.

It reads the channel page by page and keeps a ledger (``reference_agent/kit/ledger.py``) of what a careful
reader notes at reading time: the value now in force of every shipment's four fields with the message that
set it (the asked fields are named only in the last message), the pages read with the cursor of each, and
the request once read, and, as the recorded LLM did (calibration/issue-34), each field's superseded values with
the message that set them (``Was ...``), so that a withdrawal ("... the ETA from #17 stands again") is resolved
from its own notes. It does not note proposals (``note_proposals``): an adoption ("go ahead with the dock
proposed in #48") is resolved from #48 if it is in view, else by re-reading #48's page (its cursor is in the
ledger). A page the channel has archived cannot be re-read: the field keeps its value and the ledger says so
(``Not recovered``). At the end it submits the asked values. Its summaries (``summarize``) keep, besides the
ledger, every proposal the summarized pages state, as the recorded LLM summarizer did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reference_agent.kit.ledger import HEADER, Ledger, LedgerPolicy, Plan, parse_ledger, quoted_rules
from reference_agent.policy_kit import format_summary, make_call, real_failures, tools_used
from strategies.summarize import SUMMARY_PREFIX
from tasks.kit.cursors import NEXT_CURSOR
from tasks.latest_value.world import (
    COPY_PATTERNS,
    DIRECT_PATTERNS,
    FIELD_OF_LABEL,
    FIELDS,
    ADOPT_PATTERNS,
    MESSAGE_LINE,
    PLAN_PATTERN,
    PROPOSAL_PATTERNS,
    REQUEST_ITEM,
    REVERT_PATTERNS,
)

PAGE_HEADER = re.compile(r"^=== \S+ · page (\d+) of (\d+) · messages #(\d+)-#(\d+) ===")
ARCHIVED = re.compile(r"^ERROR: page (\d+) \(messages #\d+-#\d+\) has been archived")
REQUEST_LINE = re.compile(r"Could someone send me the current values of: ([^?]*)\?")
RULES = (
    re.compile(r"Catch up on the \S+ channel with read_updates[^.]*\."),
    re.compile(r"After it, messages change [^.]*\."),
    re.compile(r"Proposals, estimates and questions change nothing by themselves\."),
    re.compile(r"The channel's last message asks for some current values: [^\n]*"),
)
# ledger lines (their "- " prefix stripped); a summary restates the same lines
VALUES_LINE = re.compile(r"^(SHP-\d{4}): (.+)$")
VALUE_ITEM = re.compile(r"^(eta|carrier|dock|pallets) (.+) \(#(\d+)\)$")
ASKED_LINE = re.compile(r"^Asked: (.+)$")
LOST_LINE = re.compile(r"^Not recovered: .+$")
PAGE_LINE = re.compile(r"^Read p(\d+) of (\d+): #(\d+)-#(\d+) with cursor (\S+)$")
ARCHIVED_LINE = re.compile(r"^Archived: p(\d+)$")
NEXT_LINE = re.compile(r"^Next: (read page \d+ with cursor (\S+)|end of channel)$")
RESOLVE_LINE = re.compile(r"^Resolve #(\d+): (SHP-\d{4}) (\w+) back to the value of #(\d+)$")
ADOPT_LINE = re.compile(r"^Resolve #(\d+): (SHP-\d{4}) (\w+) to the value proposed in #(\d+)$")
PROPOSED_LINE = re.compile(r"^Proposed #(\d+): (SHP-\d{4}) (\w+) (.+)$")
WAS_LINE = re.compile(r"^Was (SHP-\d{4}) (eta|carrier|dock|pallets): (.+)$")
WAS_ITEM = re.compile(r"^(.+) \(#(\d+)\)$")
KEPT_PAGES = 4  # pages whose cursor the ledger keeps (the channel serves a few pages behind the newest)
FIRST = "start"  # the ledger's name for page 1's cursor (an empty string)


@dataclass
class State:
    """What the agent knows: values in force with their setters, pages read, the request, withdrawals to resolve."""

    values: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    pages: dict[int, tuple[int, int, str]] = field(default_factory=dict)  # page -> (first id, last id, cursor)
    total: int | None = None
    next_cursor: str | None = ""  # None: the end was reached
    asked: list[tuple[str, str]] | None = None
    pending: list[tuple[int, str, str, int]] = field(default_factory=list)  # (withdrawal, shipment, field, restored)
    adopting: list[tuple[int, str, str, int]] = field(default_factory=list)  # (adoption, shipment, field, proposal)
    proposed: dict[int, tuple[str, str, str]] = field(default_factory=dict)  # proposal -> (shipment, field, value)
    was: dict[tuple[str, str], list[tuple[str, int]]] = field(default_factory=dict)  # superseded (value, setter)

    def put(self, key: tuple[str, str], value: str, setter: int) -> None:
        """``value`` (set by message ``setter``) is now in force; the value it replaces goes to the history."""
        old = self.values.get(key)
        if old is not None and old[1] != setter:
            self.was.setdefault(key, []).append(old)
        self.values[key] = (value, setter)

    def value_of(self, key: tuple[str, str], setter: int) -> str | None:
        """The value message ``setter`` gave the field, from the history kept (None: not kept)."""
        found = [v for v, m in [*self.was.get(key, []), self.values.get(key, ("", -1))] if m == setter]
        return found[-1] if found else None

    archived: set[int] = field(default_factory=set)
    lost: list[str] = field(default_factory=list)

    @property
    def furthest(self) -> int:
        return max(self.pages, default=0)

    def lose(self, key: tuple[str, str], what: str) -> None:
        """Note that ``what`` set ``key`` to a value the agent cannot recover; the field keeps its value."""
        self.lost.append(f"Not recovered: {what}; kept {self.values.get(key, ('unknown', 0))[0]}")

    def gone(self, page: int | None) -> bool:
        """Whether ``page`` cannot be read again: unknown, or at or before a page the channel said is archived
        (the channel archives its oldest pages first)."""
        return page is None or page <= max(self.archived, default=0)

    def page_of(self, message_id: int) -> int | None:
        return next((p for p, (a, b, _) in self.pages.items() if a <= message_id <= b), None)


def parse_state(lines: list[str]) -> State:
    """The state a ledger's (or a summary's) lines state."""
    state = State()
    for line in lines:
        if match := VALUES_LINE.match(line):
            for item in match.group(2).split("; "):
                if found := VALUE_ITEM.match(item):
                    state.values[(match.group(1), found.group(1))] = (found.group(2), int(found.group(3)))
        elif match := ASKED_LINE.match(line):
            state.asked = [tuple(i.split(" ", 1)) for i in match.group(1).split(", ") if " " in i]  # type: ignore[misc]
        elif LOST_LINE.match(line):
            state.lost.append(line)
        elif match := PAGE_LINE.match(line):
            page, total, first, last, cursor = match.groups()
            state.pages[int(page)] = (int(first), int(last), "" if cursor == FIRST else cursor)
            state.total = int(total)
        elif match := ARCHIVED_LINE.match(line):
            state.archived.add(int(match.group(1)))
        elif match := NEXT_LINE.match(line):
            state.next_cursor = match.group(2)
        elif match := RESOLVE_LINE.match(line):
            state.pending.append((int(match.group(1)), match.group(2), match.group(3), int(match.group(4))))
        elif match := ADOPT_LINE.match(line):
            state.adopting.append((int(match.group(1)), match.group(2), match.group(3), int(match.group(4))))
        elif match := PROPOSED_LINE.match(line):
            state.proposed[int(match.group(1))] = (match.group(2), match.group(3), match.group(4))
        elif match := WAS_LINE.match(line):
            items = [WAS_ITEM.match(item) for item in match.group(3).split("; ")]
            state.was[(match.group(1), match.group(2))] = [(i.group(1), int(i.group(2))) for i in items if i]
    return state


def newest_state(messages: list[dict]) -> tuple[int, State]:
    """The newest ledger (or summary) in view with its message index (-1 and an empty state when none is)."""
    for index in range(len(messages) - 1, -1, -1):
        content = str(messages[index].get("content") or "")
        role = messages[index].get("role")
        if role == "assistant" and HEADER in content:
            ledger = parse_ledger(content)
            if ledger is not None:
                return index, parse_state([*ledger.facts, *ledger.checked, *ledger.remaining])
        if role == "user" and content.startswith(SUMMARY_PREFIX.split("{", 1)[0]):
            return index, parse_state([line[2:] for line in content.splitlines() if line.startswith("- ")])
    return -1, State()


def page_messages(text: str) -> dict[int, list[str]]:
    """Message number -> its lines (the message line, then attachment or plan rows) of one page's text."""
    found: dict[int, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if match := MESSAGE_LINE.match(line):
            current = found.setdefault(int(match.group("id")), [])
            current.append(match.group("text"))
        elif current is not None and line.startswith("  "):
            current.append(line)
        else:
            current = None
    return found


def stated_value(lines: list[str], shipment: str, name: str) -> str | None:
    """The value that message lines state for a shipment's field: a plan row or a direct change."""
    for line in lines:
        plan = PLAN_PATTERN.match(line)
        if plan and plan.group("sid") == shipment:
            return plan.group(name)
        for field_name, pattern in DIRECT_PATTERNS:
            direct = pattern.match(line)
            if field_name == name and direct and direct.group("sid") == shipment:
                return direct.group("value")
    return None


def proposed_value(lines: list[str], shipment: str, name: str) -> str | None:
    """The value a proposal's line states for a shipment's field (None: the lines hold no such proposal)."""
    found = PROPOSAL_PATTERNS[name].match(lines[0]) if lines and name in PROPOSAL_PATTERNS else None
    return found.group("value") if found and found.group("sid") == shipment else None


def proposal_lines(text: str) -> list[str]:
    """``Proposed #P: SHP-x field value`` for every proposal message in ``text`` (a channel page or a history), and
    every such line an earlier summary in ``text`` kept."""
    found = []
    for line in text.splitlines():
        kept = PROPOSED_LINE.match(line.removeprefix("- "))  # one an earlier summary kept
        if kept:
            found.append(kept.group(0))
        message = MESSAGE_LINE.match(line)
        for name, pattern in PROPOSAL_PATTERNS.items():
            proposal = pattern.match(message.group("text")) if message else None
            if message and proposal:
                found.append(
                    f"Proposed #{message.group('id')}: {proposal.group('sid')} {name} {proposal.group('value')}"
                )
    return found


class LatestValuePolicy(LedgerPolicy):
    """Reads on page by page, resolves each withdrawal from the restored message and each adoption from the
    proposal it names (re-reading its page when it is out of view, or from its notes of proposals), and submits
    the asked values once the channel's end and its request are read."""

    note_proposals = False
    """Whether the ledger keeps every proposal's value. Off: in the recorded runs (calibration/issue-34) most LLM
    calls kept the value in force and its history, and noted a proposal only in that page's one-line summary."""

    def plan(self, messages: list[dict]) -> Plan:
        """The turn's plan from the newest ledger in view and the visible results after it."""
        index, state = newest_state(messages)
        for message in messages:  # a summary in view keeps proposals the agent's own notes lack
            content = str(message.get("content") or "")
            if message.get("role") == "user" and content.startswith(SUMMARY_PREFIX.split("{", 1)[0]):
                for line in proposal_lines(content):
                    kept = PROPOSED_LINE.match(line)
                    if kept:
                        state.proposed.setdefault(int(kept.group(1)), (kept.group(2), kept.group(3), kept.group(4)))
        visible: dict[int, list[str]] = {}
        new_pages: list[tuple[int, int, int, int, str]] = []
        for position, message in enumerate(messages):
            if message.get("role") != "tool":
                continue
            text = str(message.get("content") or "")
            if archived := ARCHIVED.match(text):
                state.archived.add(int(archived.group(1)))
            header = PAGE_HEADER.match(text)
            if header is None:
                continue
            visible.update(page_messages(text))
            page, total, first, last = map(int, header.groups())
            if position > index and page > state.furthest and all(p[0] != page for p in new_pages):
                new_pages.append((page, total, first, last, text))
        notes = []
        for page, total, first, last, text in sorted(new_pages):
            cursor = NEXT_CURSOR.search(text)
            if page != state.furthest + 1 or (cursor is None and page < total):
                break  # a gap, or the page's next_cursor was overlooked: the page is read again
            state.pages[page] = (first, last, state.next_cursor or "")
            state.total = total
            state.next_cursor = cursor.group(1) if cursor and cursor.group(1) != "none" else None
            notes.append(f"Page {page}: " + self._apply(state, page_messages(text), visible))
        if state.asked is None:  # a request overlooked on the last page and now re-read
            for message_id, lines in sorted(visible.items()):
                if REQUEST_LINE.search(lines[0]) and state.page_of(message_id) == state.total:
                    notes.append(f"Re-read: {self._apply(state, {message_id: lines}, visible)}")
        self._resolve(state, visible)
        return self._decide(messages, state, notes)

    def _apply(self, state: State, page: dict[int, list[str]], visible: dict[int, list[str]]) -> str:
        """Apply one page's messages in order; what changed, in a few words."""
        changes = []
        for message_id, lines in sorted(page.items()):
            text = lines[0]
            if request := REQUEST_LINE.search(text):
                state.asked = [
                    (m.group("sid"), FIELD_OF_LABEL[m.group("label")]) for m in REQUEST_ITEM.finditer(request.group(1))
                ]
                changes.append(f"#{message_id} asks for {len(state.asked)} values")
                continue
            for line in lines:
                if plan := PLAN_PATTERN.match(line):
                    for name in FIELDS:
                        state.put((plan.group("sid"), name), plan.group(name), message_id)
            for name, pattern in DIRECT_PATTERNS:
                if direct := pattern.match(text):
                    state.put((direct.group("sid"), name), direct.group("value"), message_id)
                    changes.append(f"#{message_id} {direct.group('sid')} {name} {direct.group('value')}")
            for pattern in COPY_PATTERNS:
                if copy := pattern.match(text):
                    name = FIELD_OF_LABEL[copy.group("label")]
                    source = state.values.get((copy.group("other"), name))
                    if source is not None:
                        state.put((copy.group("sid"), name), source[0], message_id)
                        changes.append(
                            f"#{message_id} {copy.group('sid')} {name} {source[0]} (as {copy.group('other')})"
                        )
            for pattern in REVERT_PATTERNS:
                if revert := pattern.match(text):
                    name = FIELD_OF_LABEL[revert.group("label")]
                    state.pending.append((message_id, revert.group("sid"), name, int(revert.group("m"))))
                    self._resolve(state, visible)
            for pattern in ADOPT_PATTERNS:
                if adopt := pattern.match(text):
                    name = FIELD_OF_LABEL[adopt.group("label")]
                    state.adopting.append((message_id, adopt.group("sid"), name, int(adopt.group("p"))))
                    self._resolve(state, visible)
            if self.note_proposals:
                for name, pattern in PROPOSAL_PATTERNS.items():
                    if proposal := pattern.match(text):
                        state.proposed[message_id] = (proposal.group("sid"), name, proposal.group("value"))
        return "; ".join(changes) or "no changes"

    @staticmethod
    def _resolve(state: State, visible: dict[int, list[str]]) -> None:
        """Resolve every withdrawal whose restored message is in view; give up on those whose page is archived."""
        still = []
        for withdrawal, shipment, name, restored in state.pending:
            value = stated_value(visible.get(restored, []), shipment, name) or state.value_of(
                (shipment, name), restored
            )
            if value is not None:
                state.put((shipment, name), value, withdrawal)
            elif state.gone(state.page_of(restored)):
                state.lose(
                    (shipment, name),
                    f"#{withdrawal} brings back {shipment} {name} of #{restored}, whose page "
                    f"{state.page_of(restored)} is archived",
                )
            else:
                still.append((withdrawal, shipment, name, restored))
        state.pending = still
        adopting = []
        for adoption, shipment, name, proposal in state.adopting:
            noted = state.proposed.get(proposal)
            value = proposed_value(visible.get(proposal, []), shipment, name)
            if value is None and noted and noted[:2] == (shipment, name):
                value = noted[2]
            if value is not None:
                state.put((shipment, name), value, adoption)
            elif state.gone(state.page_of(proposal)):
                state.lose(
                    (shipment, name),
                    f"#{adoption} adopts the {shipment} {name} proposed in #{proposal}, which is neither in view "
                    "nor in my notes",
                )
            else:
                adopting.append((adoption, shipment, name, proposal))
        state.adopting = adopting

    def _decide(self, messages: list[dict], state: State, notes: list[str]) -> Plan:
        """Re-read the pages of unresolved withdrawals, else read on, else submit the asked values."""
        ledger = self._ledger(messages, state)
        note = "\n".join(notes)
        wanted = [m for _, _, _, m in state.pending] + [p for _, _, _, p in state.adopting]
        rereads = sorted({p for m in wanted if (p := state.page_of(m)) is not None})
        if rereads:
            calls = [make_call("read_updates", cursor=state.pages[p][2]) for p in rereads]
            return Plan(ledger, calls, note=note + "\nRe-reading to resolve a withdrawal.")
        if state.next_cursor is not None and state.furthest + 1 not in state.archived:
            return Plan(ledger, [make_call("read_updates", cursor=state.next_cursor)], note=note)
        if state.asked is None and state.furthest in state.pages and state.furthest not in state.archived:
            last = make_call("read_updates", cursor=state.pages[state.furthest][2])  # the request was overlooked
            return Plan(ledger, [last], note=note + "\nThe last page's request is not in my notes; reading it again.")
        return Plan(ledger, answer={"values": self._answer(state)}, note=note + "\nChannel read to its end.")

    @staticmethod
    def _answer(state: State) -> list[dict]:
        return [
            {"shipment": sid, "field": name, "value": state.values.get((sid, name), ("unknown", 0))[0]}
            for sid, name in state.asked or []
        ]

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The asked values as noted now (None before the request is read)."""
        state = newest_state(messages)[1]
        return {"values": self._answer(state)} if state.asked else None

    @staticmethod
    def _ledger(messages: list[dict], state: State) -> Ledger:
        """Rules quoted; facts: the values in force per shipment, the request, what was not recovered; checked:
        every page read with its cursor, archived pages; remaining: withdrawals to resolve, the next page."""
        shipments = sorted({sid for sid, _ in state.values})
        facts = [
            f"{sid}: "
            + "; ".join(
                f"{name} {state.values[(sid, name)][0]} (#{state.values[(sid, name)][1]})"
                for name in FIELDS
                if (sid, name) in state.values
            )
            for sid in shipments
        ]
        if state.asked:
            facts.append("Asked: " + ", ".join(f"{sid} {name}" for sid, name in state.asked))
        facts += state.lost
        facts += [f"Proposed #{m}: {sid} {name} {value}" for m, (sid, name, value) in sorted(state.proposed.items())]
        facts += [
            f"Was {sid} {name}: " + "; ".join(f"{value} (#{setter})" for value, setter in history)
            for (sid, name), history in sorted(state.was.items())
        ]
        recent = sorted(state.pages.items())[-KEPT_PAGES:]  # older pages are archived: their cursors are of no use
        checked = [
            f"Read p{page} of {state.total}: #{first}-#{last} with cursor {cursor or FIRST}"
            for page, (first, last, cursor) in recent
        ] + [f"Archived: p{page}" for page in sorted(state.archived)[-1:]]
        remaining = [f"Resolve #{w}: {sid} {name} back to the value of #{m}" for w, sid, name, m in state.pending]
        remaining += [f"Resolve #{a}: {sid} {name} to the value proposed in #{p}" for a, sid, name, p in state.adopting]
        remaining += [
            f"Next: read page {state.furthest + 1} with cursor {state.next_cursor or FIRST}"
            if state.next_cursor is not None
            else "Next: end of channel"
        ]
        return Ledger(quoted_rules(messages, RULES), facts, checked, remaining)

    def summarize(self, history_text: str) -> str:
        """The newest ledger's values, history, pages and open work, and every proposal the summarized pages state
        (the recorded LLM summarizer kept them)."""
        start = history_text.rfind(HEADER)
        ledger = parse_ledger(history_text[start:]) if start >= 0 else None
        lines = [*ledger.facts, *ledger.checked] if ledger else []
        lines += [line for line in proposal_lines(history_text) if line not in lines]
        progress = ledger.remaining if ledger else ["read the channel from its first page"]
        return format_summary(lines, tools_used(history_text), real_failures(history_text), progress)

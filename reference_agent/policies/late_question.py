"""The reference policy of ``late_question``: a careful night-desk assistant reading a one-pass feed.

It reads the feed batch by batch with the ack token the latest batch ended with (or that its ledger
kept), and after each batch notes the gist of every record, as a careful reader does who does not
know the question yet: ``Record ID TIME VESSEL CONTAINER OUTCOME``. Restating every field of every
record would make its notes as long as the records, so it does not. When the feed is drained it asks
``get_request`` for the question and copies it into its ledger. It answers from the records whose
full text is still in view (``tasks.late_question.world.matches`` on their printed fields); when its
notes name records whose text is gone, it asks the feed for them once (``read_next`` with an empty
ack: the queue refuses, acknowledged records are deleted), then submits what the visible records give.

Its whole state is its ledger (``reference_agent/kit/ledger.py``): the task's rules quoted, one note
per record and the request (facts), the batches read and a refused re-read (checked), the next ack
token or the next step (remaining). A summary keeps the same lines (``summarize``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reference_agent.kit.incremental import TextMemo, per_request
from reference_agent.kit.ledger import Ledger, LedgerPolicy, Plan, quoted_rules
from reference_agent.policy_kit import (
    exchanges,
    failed_attempts,
    format_summary,
    make_call,
    parse_ranges,
    ranges,
    texts,
    tool_texts,
    tools_used,
)
from tasks.late_question.tools import (
    ACK,
    BATCH_HEADER,
    DRAINED,
    READ,
    REQUEST,
    REQUEST_HEADER,
    parse_record,
    record_blocks,
)
from tasks.late_question.world import Question, matches, parse_question

RULES = (
    re.compile(r"Process tonight's inspection feed \(\d+ records\)\."),
    re.compile(r"The feed is a queue: [^.]*\."),
    re.compile(r"When the feed is drained, [^.]*get_request\."),
    re.compile(r"Answer with submit\(values=\[\.\.\.\]\): [^.]*\."),
)
NOTE = re.compile(r"^- (Record (IR-\d+) \d{2}:\d{2} .+)$", re.M)
REQUEST_NOTE = re.compile(r"^- Request: (.+)$", re.M)
REQUEST_RESULT = re.compile(rf"{REQUEST_HEADER} \(\d{{2}}:\d{{2}}\): (.+)")  # the request in a rendered history
READ_NOTE = re.compile(r"^- Batches read: ([\d, -]+) of (\d+)$", re.M)
NEXT_NOTE = re.compile(r'^- Next: read_next\(ack="(cur_[0-9a-f]{10})"\) for batch (\d+) of (\d+)$', re.M)
DRAINED_NOTE = "Feed drained: every batch was read"
REFUSED_NOTE = "Re-read refused: the queue deleted the acknowledged batches"
REFUSALS = ("cannot be delivered again", "the feed is drained")  # what the queue says to a re-read


@dataclass
class Seen:
    """What the visible messages say: notes, records in full, batches, the next ack, the request."""

    notes: dict[str, str] = field(default_factory=dict)  # record id -> its note line
    records: dict[str, dict[str, str]] = field(default_factory=dict)  # record id -> printed fields in view
    batches: set[int] = field(default_factory=set)
    total: int | None = None
    next_ack: tuple[int, str] | None = None  # (batch, token) of the furthest batch known
    drained: bool = False
    request: str | None = None
    refused: bool = False

    def ack(self, batch: int, token: str, total: int) -> None:
        """A known ack token for ``batch``; the furthest one is the one to pass."""
        self.total = total
        if self.next_ack is None or batch > self.next_ack[0]:
            self.next_ack = (batch, token)


def note_line(fields: dict[str, str]) -> str | None:
    """The gist a careful reader notes of a record (``None`` when its first lines are not in view)."""
    if not all(k in fields for k in ("id", "time", "vessel", "container", "outcome")):
        return None
    return f"Record {fields['id']} {fields['time']} {fields['vessel']} {fields['container']} {fields['outcome']}"


def _text_facts(text: str) -> tuple:
    """The ledger or summary lines of one text: notes, request, batches read, next ack, drained, refused."""
    notes = tuple((m.group(2), m.group(1)) for m in NOTE.finditer(text))
    request = REQUEST_NOTE.findall(text) + REQUEST_RESULT.findall(text)
    read = tuple((frozenset(parse_ranges(r)), int(n)) for r, n in READ_NOTE.findall(text))
    nexts = tuple((int(b), tok, int(n)) for tok, b, n in NEXT_NOTE.findall(text))
    return notes, request, read, nexts, DRAINED_NOTE in text, REFUSED_NOTE in text


def _result_facts(text: str) -> tuple:
    """A tool result's batch (number, total), records, ack tokens, end of feed and request."""
    header = BATCH_HEADER.search(text)
    records = tuple(parse_record(block) for block in record_blocks(text))
    acks = tuple((int(b), tok, int(n)) for tok, b, n in ACK.findall(text))
    request = text.split(": ", 1)[1].split("\n")[0] if text.startswith(REQUEST_HEADER) else None
    batch = (int(header.group(1)), int(header.group(2))) if header else None
    return batch, records, acks, DRAINED in text, request


_TEXT_FACTS = TextMemo(_text_facts)
_RESULT_FACTS = TextMemo(_result_facts)


def read_seen(notes: list[str], results: list[str], refused: bool = False) -> Seen:
    """``Seen`` from the visible notes (the agent's texts, summaries) and tool results."""
    seen = Seen(refused=refused)
    for text in notes:
        found, request, read, nexts, drained, was_refused = _TEXT_FACTS(text)
        seen.notes.update(found)
        seen.request = request[-1] if request else seen.request
        for batches, total in read:
            seen.batches |= batches
            seen.total = total
        for batch, token, total in nexts:
            seen.ack(batch, token, total)
        seen.drained |= drained
        seen.refused |= was_refused
    for text in results:
        batch, records, acks, drained, request = _RESULT_FACTS(text)
        if batch is not None:
            seen.batches.add(batch[0])
            seen.total = batch[1]
        for fields in records:
            if "id" in fields:
                seen.records.setdefault(fields["id"], {}).update(fields)
                line = note_line(fields)
                if line is not None:
                    seen.notes.setdefault(fields["id"], line)
        for batch_no, token, total in acks:
            seen.ack(batch_no, token, total)
        seen.drained |= drained
        seen.request = request or seen.request
    return seen


class LateQuestionPolicy(LedgerPolicy):
    """Reference policy for ``late_question`` (see the module docstring)."""

    @per_request
    def seen(self, messages: list[dict]) -> Seen:
        """What the visible messages say (once per request)."""
        refused = any(
            e.name == READ and e.result is not None and any(r in e.result for r in REFUSALS)
            for e in exchanges(messages)
        )
        return read_seen(texts(messages), tool_texts(messages), refused)

    def plan(self, messages: list[dict]) -> Plan:
        """Read the next batch; when drained, get the request; then answer (after one refused re-read if needed)."""
        seen = self.seen(messages)
        question = parse_question(seen.request) if seen.request else None
        if question is not None:
            missing = sorted(set(seen.notes) - set(seen.records))
            if missing and not seen.refused:
                note = (
                    f"The request needs details I did not note, and the full text of {len(missing)} records "
                    f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}) is no longer in view; "
                    "asking the feed for them again."
                )
                return Plan(self._ledger(messages, seen, "Answer the request"), [make_call(READ, ack="")], note=note)
            note = f"Answering from the {len(seen.records)} records whose full text is in view" + (
                f"; the details of {len(missing)} records are gone." if missing else "."
            )
            return Plan(
                self._ledger(messages, seen, "Answer the request"), answer=self.answer(seen, question), note=note
            )
        if seen.drained:
            return Plan(self._ledger(messages, seen, "Get the request with get_request"), [make_call(REQUEST)])
        token = seen.next_ack[1] if seen.next_ack else ""
        return Plan(self._ledger(messages, seen, None), [make_call(READ, ack=token)])

    @staticmethod
    def answer(seen: Seen, question: Question) -> dict:
        """The container numbers of the visible records that answer ``question``."""
        found = {f["container"] for f in seen.records.values() if "container" in f and matches(question, f)}
        return {"values": sorted(found)}

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The answer from the records in view, once the request is known (``None`` before)."""
        seen = self.seen(messages)
        question = parse_question(seen.request) if seen.request else None
        return None if question is None else self.answer(seen, question)

    def _ledger(self, messages: list[dict], seen: Seen, step: str | None) -> Ledger:
        """Rules quoted; a note per record and the request (facts); batches read, a refusal (checked); what next."""
        facts = [seen.notes[key] for key in sorted(seen.notes)]
        facts += [f"Request: {seen.request}"] if seen.request else []
        checked = [f"Batches read: {ranges(seen.batches)} of {seen.total}"] if seen.batches and seen.total else []
        checked += [DRAINED_NOTE] if seen.drained else []
        checked += [REFUSED_NOTE] if seen.refused else []
        if step is None and seen.next_ack is not None:
            batch, token = seen.next_ack
            step = f'Next: read_next(ack="{token}") for batch {batch} of {seen.total}'
        return Ledger(quoted_rules(messages, RULES), facts, checked, [step or "Read the first batch"])

    def summarize(self, history_text: str) -> str:
        """The record notes, the request and the progress (the records' other details are not carried)."""
        blocks = history_text.split("\n[")
        seen = read_seen([history_text], [b.split("]: ", 1)[-1] for b in blocks if BATCH_HEADER.search(b)])
        findings = [seen.notes[key] for key in sorted(seen.notes)]
        findings += [f"Request: {seen.request}"] if seen.request else []
        progress = [f"Batches read: {ranges(seen.batches)} of {seen.total}"] if seen.batches and seen.total else []
        if seen.drained:
            progress.append(DRAINED_NOTE)
        elif seen.next_ack is not None:
            progress.append(f'Next: read_next(ack="{seen.next_ack[1]}") for batch {seen.next_ack[0]} of {seen.total}')
        return format_summary(findings, tools_used(history_text), failed_attempts(history_text), progress)

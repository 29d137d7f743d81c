"""The reference policy of ``late_question``: a night-desk assistant who notes every record in full as it reads.

Fitted to the calibration LLM's recordings (issue 34, ``calibration/issue-34``). The feed is read
batch by batch with the ack token the latest batch ended with (or that its own latest reply kept). From
the first batch on, every reply **appends** compact but complete notes of the batch just read, one line
per record with every field and the remarks condensed (about three quarters of the record's text), and does
not restate the earlier notes::

    Notes, batch 9 of 24 (records 33-36):
    33. IR-24196 00:12 B2/G4 | TCLU 5863955 40' reefer (45R1) | seal SL-748571 (bolt, intact) | ... | remarks: ...
    Next: read_next(ack="cur_...") for batch 10 of 24.

When the feed is drained it asks ``get_request`` for the question and answers it from its notes and the
records still in view (``tasks.late_question.world.matches`` on their fields). So it succeeds wherever
its own replies survive (``none``, ``clear_tool_results``, a summary that keeps the notes) and fails where
old rounds, notes included, are dropped (``headtail``, ``sliding_window``). When notes are missing (fewer
records known than the night had), it asks the feed for them once (``read_next`` with an empty ack: the
queue refuses, acknowledged records are deleted) and then submits what the visible notes and records give.
The LLM did one of two things there: on one instance it refused to submit and ran to the step limit, on
the other it submitted the partial list in view. Both fail; this policy submits after one refused
re-read, so a trial does not burn its remaining steps on refusals.

It keeps no restated ledger (the LLM did not): its state is its visible notes, the ``Next:`` line of its
latest reply and the visible tool results, rebuilt at every step (tests/test_policy_purity.py). A summary
keeps every note in full, the request and the next step (``summarize``), as the LLM's summarizer did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reference_agent.kit.incremental import TextMemo, per_request
from reference_agent.policy_kit import (
    exchanges,
    failed_attempts,
    format_summary,
    make_call,
    reply,
    submit,
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
    NUMBERS,
    REQUEST_HEADER,
    parse_record,
    plain_numbers,
    record_blocks,
)
from tasks.late_question.world import Question, matches, parse_question

NOTE = re.compile(r"^(?:- )?(\d+)\. (IR-\d+) (\d{2}:\d{2}) (\S+)/(\S+) \| (.+)$", re.M)
NOTE_HEAD = ("id", "time", "berth", "lane")
NOTE_SEPARATOR = " | "
NOTES_HEADER = "Notes, batch {batch} of {batches} (records {first}-{last}):"
NEXT_NOTE = re.compile(r'^(?:- )?Next: read_next\(ack="(cur_[0-9a-f]{10})"\) for batch (\d+) of (\d+)\.?$', re.M)
REQUEST_NOTE = re.compile(r"^- Request: (.+)$", re.M)
REQUEST_RESULT = re.compile(rf"{REQUEST_HEADER} \(\d{{2}}:\d{{2}}\): (.+)")  # the request in a rendered history
NIGHT = re.compile(r"Process tonight's inspection feed \((\d+) records\)")
REMARKS = re.compile(r"^Remarks: (.+)$", re.M)
DRAINED_NOTE = "Feed drained: every batch was read. Next: get_request."
REFUSED_NOTE = "Re-read refused: the queue deleted the acknowledged batches"
OPENING = (
    "Starting on tonight's feed. Records are deleted once acknowledged and the request comes only at the end, "
    "so I note every record in full as each batch arrives."
)
REFUSALS = ("cannot be delivered again", "the feed is drained")  # what the queue says to a re-read
FILLER = frozenset("a an and the on of as at to for was were by with in into from once".split())  # left out of remarks
SENTENCE_END = re.compile(r"(?<=[a-z0-9])\. (?=[A-Z])")  # not after an initial: "Driver B. Silva"
# The segments of a note line after its head: field names, how the note writes them, how a note reads them back.
# A segment whose fields are not all in view is left out. Patterns are tried in this order.
SEGMENTS: tuple[tuple[tuple[str, ...], str, re.Pattern], ...] = (
    (("remarks",), "remarks: {remarks}", re.compile(r"^remarks: (.*)$")),
    (("seal", "seal_kind"), "seal {seal} ({seal_kind})", re.compile(r"^seal (\S+) \((.+)\)$")),
    (("shipper",), "shipper {shipper}", re.compile(r"^shipper (.+)$")),
    (("consignee",), "consignee {consignee}", re.compile(r"^consignee (.+)$")),
    (
        NUMBERS,
        "decl {declared_kg} / VGM {weighed_kg} / tare {tare_kg} kg",
        re.compile(r"^decl ([\d,]+) / VGM ([\d,]+) / tare ([\d,]+) kg$"),
    ),
    (("reefer",), "reefer {reefer}", re.compile(r"^reefer (.+)$")),
    (
        ("scanner", "image", "scan_result"),
        "scan {scanner} {image} {scan_result}",
        re.compile(r"^scan (\S+) (\S+) (.+)$"),
    ),
    (
        ("officer", "badge", "k9", "minutes"),
        "officer {officer} ({badge}), K9 {k9}, {minutes} min",
        re.compile(r"^officer (.+?) \((\d+)\), K9 (\S+), (\d+) min$"),
    ),
    (("plate", "driver", "haulier"), "truck {plate}, {driver}, {haulier}", re.compile(r"^truck (\S+), (.+?), (.+)$")),
    (("container", "size"), "{container} {size}", re.compile(r"^([A-Z]{4} \d+) (.+)$")),
    (
        ("vessel", "imo", "voyage", "agent"),
        "{vessel} (IMO {imo}) v{voyage}, {agent}",
        re.compile(r"^(.+?) \(IMO (\d+)\) v(\S+), (.+)$"),
    ),
    (
        ("cargo", "hs_code", "origin", "destination"),
        "{cargo} HS {hs_code}, {origin} -> {destination}",
        re.compile(r"^(.+) HS (\S+), (.+?) -> (.+)$"),
    ),
    (("outcome",), "{outcome}", re.compile(r"^([A-Z]{4,}(?: [a-z].*)?)$")),
)
ORDER: tuple[str, ...] = (  # the segments in the order a note writes them (each by its first field)
    "container",
    "seal",
    "vessel",
    "shipper",
    "consignee",
    "cargo",
    "declared_kg",
    "reefer",
    "scanner",
    "officer",
    "plate",
    "outcome",
    "remarks",
)
BY_FIRST = {names[0]: (names, template) for names, template, _ in SEGMENTS}


def condensed(remarks: str) -> str:
    """A record's remarks without filler words, its sentences joined by semicolons."""
    sentences = [s.strip().rstrip(".") for s in SENTENCE_END.split(remarks) if s.strip()]
    return "; ".join(" ".join(w for w in s.split() if w.lower() not in FILLER) for s in sentences)


def note_line(number: int, fields: dict[str, str]) -> str:
    """One record's note: its number and head, then every segment whose fields are in view."""
    head = f"{number}. {fields['id']} {fields['time']} {fields['berth']}/{fields['lane']}"
    shown = {k: f"{int(v):,}" if k in NUMBERS and v.isdigit() else v for k, v in fields.items()}
    segments = [
        template.format(**shown)
        for names, template in map(BY_FIRST.__getitem__, ORDER)
        if all(name in shown for name in names)
    ]
    return NOTE_SEPARATOR.join([head, *segments])


def parse_note(line: str) -> tuple[int, dict[str, str]] | None:
    """A note line read back: the record's number and its fields (``None`` when the line is no note)."""
    match = NOTE.match(line)
    if match is None:
        return None
    fields = dict(zip(NOTE_HEAD, match.groups()[1:5], strict=True))
    for segment in match.group(6).split(NOTE_SEPARATOR):
        for names, _, pattern in SEGMENTS:
            found = pattern.match(segment)
            if found:
                fields.update(zip(names, found.groups(), strict=True))
                break
    return int(match.group(1)), plain_numbers(fields)


@dataclass
class Seen:
    """What the visible messages say: notes, records in full, the next ack, the request, the night's size."""

    notes: dict[str, dict[str, str]] = field(default_factory=dict)  # record id -> fields its note gives
    records: dict[str, dict[str, str]] = field(default_factory=dict)  # record id -> printed fields in view
    numbers: dict[str, int] = field(default_factory=dict)  # record id -> its number in the feed
    batches: dict[int, tuple[int, int, list[str]]] = field(default_factory=dict)  # batch -> (first, last, ids)
    total_batches: int | None = None
    total_records: int | None = None
    next_ack: tuple[int, str] | None = None  # (batch, token) of the furthest batch known
    drained: bool = False
    request: str | None = None
    refused: bool = False

    def ack(self, batch: int, token: str, total: int) -> None:
        """A known ack token for ``batch``; the furthest one is the one to pass."""
        self.total_batches = total
        if self.next_ack is None or batch > self.next_ack[0]:
            self.next_ack = (batch, token)

    def fields(self, record: str) -> dict[str, str]:
        """What the notes and the record in view give of one record."""
        return {**self.notes.get(record, {}), **self.records.get(record, {})}

    def unnoted_batches(self) -> list[int]:
        """The batches in view with a record that no visible note covers, in order."""
        return [b for b, (_, _, ids) in sorted(self.batches.items()) if any(i not in self.notes for i in ids)]

    def lost(self) -> int:
        """How many of the night's records neither a note nor the feed in view gives (0 when the size is unknown)."""
        known = set(self.notes) | set(self.records)
        return max(0, (self.total_records or 0) - len(known))


def _text_facts(text: str) -> tuple:
    """The notes, request, next ack, end of feed, refusal and night size one note or summary text gives."""
    notes = tuple(found for line in text.splitlines() for found in [parse_note(line)] if found)
    request = REQUEST_NOTE.findall(text) + REQUEST_RESULT.findall(text)
    nexts = tuple((int(b), tok, int(n)) for tok, b, n in NEXT_NOTE.findall(text))
    night = NIGHT.search(text)
    return notes, request, nexts, DRAINED_NOTE in text, REFUSED_NOTE in text, int(night.group(1)) if night else None


def _result_facts(text: str) -> tuple:
    """A tool result's batch (number, total, first record, records), records with remarks, acks, end, request."""
    header = BATCH_HEADER.search(text)
    records = []
    for block in record_blocks(text):
        fields = parse_record(block)
        remarks = REMARKS.search(block)
        if remarks:
            fields["remarks"] = condensed(remarks.group(1))
        records.append(fields)
    acks = tuple((int(b), tok, int(n)) for tok, b, n in ACK.findall(text))
    request = text.split(": ", 1)[1].split("\n")[0] if text.startswith(REQUEST_HEADER) else None
    batch = tuple(int(g) for g in header.groups()) if header else None
    return batch, tuple(records), acks, DRAINED in text, request


_TEXT_FACTS = TextMemo(_text_facts)
_RESULT_FACTS = TextMemo(_result_facts)


def read_seen(notes: list[str], results: list[str], refused: bool = False) -> Seen:
    """``Seen`` from the visible notes (the task, the agent's texts, summaries) and tool results."""
    seen = Seen(refused=refused)
    for text in notes:
        found, request, nexts, drained, was_refused, night = _TEXT_FACTS(text)
        for number, fields in found:
            seen.notes[fields["id"]] = fields
            seen.numbers[fields["id"]] = number
        seen.request = request[-1] if request else seen.request
        for batch, token, total in nexts:
            seen.ack(batch, token, total)
        seen.drained |= drained
        seen.refused |= was_refused
        seen.total_records = night or seen.total_records
    for text in results:
        batch, records, acks, drained, request = _RESULT_FACTS(text)
        ids = [fields["id"] for fields in records if "id" in fields]
        for fields in records:
            if "id" in fields:
                seen.records.setdefault(fields["id"], {}).update(fields)
        if batch is not None:
            number, seen.total_batches, first, last, seen.total_records = batch
            seen.batches[number] = (first, last, ids)
            seen.numbers.update({record: first + index for index, record in enumerate(ids)})
        for batch_no, token, total in acks:
            seen.ack(batch_no, token, total)
        seen.drained |= drained
        seen.request = request or seen.request
    return seen


def batch_notes(seen: Seen, batch: int) -> list[str]:
    """The notes of one batch in view: its header and a line per record its text gives."""
    first, last, ids = seen.batches[batch]
    header = NOTES_HEADER.format(batch=batch, batches=seen.total_batches, first=first, last=last)
    lines = [note_line(seen.numbers[i], seen.records[i]) for i in ids if set(NOTE_HEAD) <= set(seen.records[i])]
    return [header, *lines]


def next_line(seen: Seen) -> str:
    """The progress line a reply ends with: the ack to pass next, or that the request is next."""
    if seen.drained:
        return DRAINED_NOTE
    if seen.next_ack is None:
        return "Next: read the first batch."
    batch, token = seen.next_ack
    return f'Next: read_next(ack="{token}") for batch {batch} of {seen.total_batches}.'


class LateQuestionPolicy:
    """Reference policy for ``late_question`` (see the module docstring)."""

    @per_request
    def seen(self, messages: list[dict]) -> Seen:
        """What the visible messages say (once per request)."""
        refused = any(
            e.name == READ and e.result is not None and any(r in e.result for r in REFUSALS)
            for e in exchanges(messages)
        )
        return read_seen(texts(messages), tool_texts(messages), refused)

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Note the batch just read and read the next; when drained, get the request; then answer it."""
        seen = self.seen(messages)
        notes = [line for batch in seen.unnoted_batches() for line in batch_notes(seen, batch)]
        question = parse_question(seen.request) if seen.request else None
        if question is not None:
            return self.respond(seen, question, notes)
        opening = [] if seen.batches or seen.next_ack or seen.notes else [OPENING]
        text = "\n".join([*opening, *notes, next_line(seen)])
        if seen.drained:
            return reply(text, make_call(REQUEST))
        return reply(text, make_call(READ, ack=seen.next_ack[1] if seen.next_ack else ""))

    def respond(self, seen: Seen, question: Question, notes: list[str]) -> dict:
        """Answer from the notes and records in view, after one re-read when notes are missing."""
        lost, total = seen.lost(), seen.total_records
        if lost and not seen.refused:
            text = (
                f"The request needs every record of the night, and my notes of {lost} of the {total} records "
                "are no longer in view; asking the feed for them again."
            )
            return reply("\n".join([*notes, text]), make_call(READ, ack=""))
        answer = self.answer(seen, question)
        found = ", ".join(f"{r} ({seen.fields(r)['container']})" for r in self.answering(seen, question))
        text = f"Answering from my notes and the records in view: {found or 'no record matches'}." + (
            f" {REFUSED_NOTE}; my notes of {lost} of the {total} records are gone, so the list may be short."
            if lost
            else ""
        )
        return submit("\n".join([*notes, text]), **answer)

    @staticmethod
    def answering(seen: Seen, question: Question) -> list[str]:
        """The noted or visible records that answer ``question``, in feed order."""
        known = sorted(set(seen.notes) | set(seen.records), key=lambda record: seen.numbers.get(record, 0))
        return [r for r in known if "container" in seen.fields(r) and matches(question, seen.fields(r))]

    def answer(self, seen: Seen, question: Question) -> dict:
        """The container numbers of the noted or visible records that answer ``question``."""
        return {"values": sorted({seen.fields(record)["container"] for record in self.answering(seen, question)})}

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The answer from the notes and records in view, once the request is known (``None`` before)."""
        seen = self.seen(messages)
        question = parse_question(seen.request) if seen.request else None
        return None if question is None else self.answer(seen, question)

    def summarize(self, history_text: str) -> str:
        """Every record's note in full, the request and the next step, as the calibration LLM's summaries kept."""
        blocks = history_text.split("\n[")
        seen = read_seen([history_text], [b.split("]: ", 1)[-1] for b in blocks if BATCH_HEADER.search(b)])
        noted = sorted(set(seen.notes) | set(seen.records), key=lambda r: seen.numbers.get(r, 0))
        findings = [note_line(seen.numbers[r], seen.fields(r)) for r in noted if set(NOTE_HEAD) <= set(seen.fields(r))]
        findings += [f"Request: {seen.request}"] if seen.request else []
        progress = [next_line(seen)] + ([REFUSED_NOTE] if seen.refused else [])
        return format_summary(findings, tools_used(history_text), failed_attempts(history_text), progress)

"""The tools of ``late_question``: ``read_next(ack)``, a one-pass inspection feed, and ``get_request()``.

The feed is a message queue (as SQS, RabbitMQ or a Kafka consumer with commits): ``read_next``
delivers the next batch of records, and each batch ends with the ack token that acknowledges it
and asks for the one after it. An acknowledged batch is deleted from the queue: an old token (or
an empty one once the feed has started) is refused, so no record can be delivered twice. The ack
tokens also keep the batches arriving one round at a time, however many calls an agent batches.
``get_request`` gives the duty supervisor's request once the feed is drained, and says it is not
there yet before that; it can be called again at any time.

``render_record`` prints a record; ``parse_record`` reads the fields of a printed record back (the
lines it finds: a line not read leaves its fields out).
"""

from __future__ import annotations

import re

from tasks.base import ToolResult, tool_schema
from tasks.kit.cursors import CURSOR_PATTERN, CursorPages
from tasks.late_question.world import Record

READ = "read_next"
REQUEST = "get_request"
RECORD_START = "--- Record "
ACK = re.compile(rf"ack: ({CURSOR_PATTERN}) \(pass it to read_next for batch (\d+) of (\d+)\)")
BATCH_HEADER = re.compile(r"Valmera inspection feed \| batch (\d+) of (\d+) \| records (\d+)-(\d+) of (\d+)")
DRAINED = "End of feed: every record was delivered and the queue is empty."
REQUEST_HEADER = "Request from the duty supervisor"
ANSWER_SENTENCE = "Answer with submit(values=[...]): the container numbers the request asks for, every one of them."
RECORD_LINES = {  # field names -> the pattern of the printed line that holds them (one line each)
    ("id", "time", "berth", "lane"): re.compile(
        r"^--- Record (IR-\d+) \| logged (\d{2}:\d{2}) \| berth (\S+) \| gate lane (\S+) ---$"
    ),
    ("vessel", "imo", "voyage", "agent"): re.compile(r"^Vessel: (.+?) \(IMO (\d+)\), voyage (\S+), agent (.+)$"),
    ("container", "size", "seal", "seal_kind"): re.compile(r"^Container: (.+?) \| (.+?) \| seal (\S+) \((.+)\)$"),
    ("shipper",): re.compile(r"^Shipper: (.+)$"),
    ("consignee",): re.compile(r"^Consignee: (.+)$"),
    ("cargo", "hs_code", "origin", "destination"): re.compile(r"^Cargo: (.+?) \| HS (\S+) \| from (.+?) to (.+)$"),
    ("declared_kg", "weighed_kg", "tare_kg"): re.compile(
        r"^Weights: declared gross ([\d,]+) kg \| weighed \(VGM\) ([\d,]+) kg \| tare ([\d,]+) kg$"
    ),
    ("reefer",): re.compile(r"^Reefer: (.+)$"),
    ("scanner", "image", "scan_result"): re.compile(r"^Scan: scanner (\S+) \| image (\S+) \| result: (.+)$"),
    ("officer", "badge", "k9", "minutes"): re.compile(
        r"^Inspection: officer (.+?) \(badge (\d+)\) \| K9 team: (\S+) \| (\d+) minutes$"
    ),
    ("plate", "driver", "haulier"): re.compile(r"^Truck: plate (\S+) \| driver (.+?) \| haulier (.+)$"),
    ("outcome",): re.compile(r"^Outcome: (.+)$"),
}
NUMBERS = ("declared_kg", "weighed_kg", "tare_kg")  # printed with thousands separators


def tool_schemas() -> list[dict]:
    """The schemas of ``read_next`` and ``get_request``."""
    return [
        tool_schema(
            READ,
            "Deliver the next batch of tonight's inspection records (oldest first). Pass an empty ack for the "
            "first batch, then the ack token the latest batch ended with; acknowledged batches are deleted from "
            "the queue.",
            {"ack": {"type": "string", "description": '"" for the first batch, else the latest batch\'s ack token'}},
        ),
        tool_schema(REQUEST, "The duty supervisor's request, available once the feed is drained.", {}),
    ]


def render_record(record: Record) -> str:
    """A record as the feed prints it."""
    return "\n".join(
        [
            f"{RECORD_START}{record.id} | logged {record.time} | berth {record.berth} | gate lane {record.lane} ---",
            f"Vessel: {record.vessel} (IMO {record.imo}), voyage {record.voyage}, agent {record.agent}",
            f"Container: {record.container} | {record.size} | seal {record.seal} ({record.seal_kind})",
            f"Shipper: {record.shipper}",
            f"Consignee: {record.consignee}",
            f"Cargo: {record.cargo} | HS {record.hs_code} | from {record.origin} to {record.destination}",
            f"Weights: declared gross {record.declared_kg:,} kg | weighed (VGM) {record.weighed_kg:,} kg | "
            f"tare {record.tare_kg:,} kg",
            f"Reefer: {record.reefer}",
            f"Scan: scanner {record.scanner} | image {record.image} | result: {record.scan_result}",
            f"Inspection: officer {record.officer} (badge {record.badge}) | K9 team: {record.k9} | "
            f"{record.minutes} minutes",
            f"Truck: plate {record.plate} | driver {record.driver} | haulier {record.haulier}",
            f"Outcome: {record.outcome}",
            "Remarks: " + " ".join(record.remarks) if record.remarks else "Remarks: none",
        ]
    )


def parse_record(block: str) -> dict[str, str]:
    """The fields of one printed record that its visible lines give (``Record`` field name -> text)."""
    fields: dict[str, str] = {}
    for line in block.splitlines():
        for names, pattern in RECORD_LINES.items():
            match = pattern.match(line)
            if match:
                fields.update(zip(names, match.groups(), strict=True))
                break
    return plain_numbers(fields)


def plain_numbers(fields: dict[str, str]) -> dict[str, str]:
    """``fields`` with the weights (``NUMBERS``) written without thousands separators, as a record holds them."""
    for name in NUMBERS:
        if name in fields:
            fields[name] = fields[name].replace(",", "")
    return fields


def record_blocks(text: str) -> list[str]:
    """The printed records of a batch result, one text each."""
    return [RECORD_START + part for part in text.split(RECORD_START)[1:]]


class Feed:
    """The queue of one trial: the records in batches, how many were delivered, and the request behind them."""

    def __init__(self, records: list[Record], per_batch: int, listing: CursorPages, request: str) -> None:
        self.records, self.per_batch, self.listing, self.request = records, per_batch, listing, request
        self.delivered = 0  # batches delivered (and so acknowledged once the next is asked for)

    @property
    def batches(self) -> int:
        """How many batches the night's records make."""
        return self.listing.pages

    @property
    def drained(self) -> bool:
        """Whether every batch was delivered."""
        return self.delivered >= self.batches

    def batch_text(self, batch: int) -> str:
        """The text of ``batch`` (1-based): header, records and the ack token (or the end of the feed)."""
        start = (batch - 1) * self.per_batch
        shown = self.records[start : start + self.per_batch]
        lines = [
            f"Valmera inspection feed | batch {batch} of {self.batches} | records {start + 1}-{start + len(shown)} "
            f"of {len(self.records)}",
            *(render_record(record) for record in shown),
        ]
        if batch < self.batches:
            lines.append(
                f"ack: {self.listing.cursor_for(batch + 1)} (pass it to read_next for batch {batch + 1} of "
                f"{self.batches})"
            )
        else:
            lines.append(f"{DRAINED} The duty supervisor's request is now available from get_request.")
        return "\n".join(lines)

    def read_next(self, args: dict) -> ToolResult:
        """The batch the ack token asks for, or the error a queue gives for a used, unknown or missing token."""
        unknown = sorted(set(args) - {"ack"})
        if unknown:
            return ToolResult(f"ERROR: unknown argument(s) {', '.join(unknown)}; read_next takes ack", is_error=True)
        if self.drained:
            return ToolResult(
                f"ERROR: the feed is drained: all {self.batches} batches were delivered and acknowledged, and "
                "acknowledged records are deleted from the queue. The request is available from get_request.",
                is_error=True,
            )
        ack = args.get("ack", "")
        batch = self.listing.page_for(ack)
        if batch is None or batch > self.delivered + 1:
            return ToolResult(
                f"ERROR: unknown ack token {ack!r}; pass an empty ack for the first batch, then the ack token "
                "the latest batch ended with",
                is_error=True,
            )
        if batch <= self.delivered:
            return ToolResult(
                f"ERROR: batch {batch} was already delivered and acknowledged; acknowledged records are deleted "
                f"from the queue and cannot be delivered again. The next batch is {self.delivered + 1} of "
                f"{self.batches}: pass the ack token the latest batch ended with.",
                is_error=True,
            )
        self.delivered = batch
        return ToolResult(self.batch_text(batch), resource=f"batch:{batch}")

    def get_request(self, args: dict) -> ToolResult:
        """The supervisor's request once the feed is drained; before that, a note that it is not there yet."""
        if args:
            return ToolResult(f"ERROR: get_request takes no arguments (got {', '.join(map(str, args))})", is_error=True)
        if not self.drained:
            return ToolResult(
                f"No request yet: the duty supervisor's request is released when the feed is drained "
                f"({self.delivered} of {self.batches} batches delivered)."
            )
        return ToolResult(f"{REQUEST_HEADER} (05:52): {self.request}\n{ANSWER_SENTENCE}", resource="request")

    def call(self, name: str, args: dict) -> ToolResult:
        """Dispatch ``read_next`` and ``get_request``."""
        if not isinstance(args, dict):
            return ToolResult("ERROR: arguments must be an object", is_error=True)
        if name == READ:
            return self.read_next(args)
        if name == REQUEST:
            return self.get_request(args)
        return ToolResult(f"ERROR: unknown tool {name!r}; available: {READ}, {REQUEST}", is_error=True)

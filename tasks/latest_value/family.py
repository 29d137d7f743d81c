"""The ``latest_value`` family and its instances: report the values now in force after a long change feed.

The agent catches up on a freight consolidation channel with ``read_updates(cursor)`` (``tools.py``): the
plan of record, then changes to shipments' ETA, carrier, dock and pallet count, some of them copies of
another shipment's value and some withdrawals that bring back the value of an earlier message (``world.py``),
among chatter, proposals and packing lists. The last message asks for some current values.

Answer: ``submit(values=[{"shipment", "field", "value"}, ...])``. Grade (``grade.py``): success = every asked
value right; score = the share right.
"""

from __future__ import annotations

import random

from tasks.base import Grade, KnobError, TaskFamily, TaskInstance, ToolResult
from tasks.kit.cursors import CursorPages
from tasks.latest_value.grade import grade_values
from tasks.latest_value.tools import CHANNEL, ChannelReader, render_page, tool_schemas
from tasks.latest_value.world import FIELDS, Channel, generate_channel


class LatestValue(TaskFamily):
    """Family generator. Knobs: ``shipments``, ``pages``, ``messages_per_page``, ``updates_per_page``,
    ``retention`` (pages the channel still serves behind the newest page reached), ``asked`` (values the last
    message asks for) and ``attachment_lines`` (lines of each packing list)."""

    name = "latest_value"

    def __init__(
        self,
        shipments: int = 10,
        pages: int = 20,
        messages_per_page: int = 8,
        updates_per_page: int = 3,
        retention: int = 3,
        asked: int = 10,
        attachment_lines: int = 30,
    ) -> None:
        self.shipments = self.check_knob("shipments", shipments, 2, 200)
        self.pages = self.check_knob("pages", pages, 3, 1000)
        self.messages_per_page = self.check_knob("messages_per_page", messages_per_page, 2, 100)
        self.updates_per_page = self.check_knob("updates_per_page", updates_per_page, 1, messages_per_page - 1)
        self.retention = self.check_knob("retention", retention, 1, 1000)
        self.asked = self.check_knob("asked", asked, 1, shipments * len(FIELDS))
        self.attachment_lines = self.check_knob("attachment_lines", attachment_lines, 1, 500)
        if asked > shipments * len(FIELDS):
            raise KnobError(f"task knob asked={asked} is more than the {shipments * len(FIELDS)} fields")

    def generate(self, seed: int) -> "LatestValueInstance":
        """Generate the channel for ``seed``."""
        rng = random.Random(f"latest_value:{seed}")
        channel = generate_channel(
            rng,
            self.shipments,
            self.pages,
            self.messages_per_page,
            self.updates_per_page,
            self.retention,
            self.asked,
            self.attachment_lines,
        )
        return LatestValueInstance(self, seed, channel)


class LatestValueInstance(TaskInstance):
    """One generated channel."""

    family = LatestValue.name

    def __init__(self, family: LatestValue, seed: int, channel: Channel) -> None:
        self.seed = seed
        self.id = f"latest_value-s{family.shipments}p{family.pages}-s{seed}"
        self.channel = channel
        self.expected = {key: channel.final[key] for key in channel.asked}
        self.listing = CursorPages(f"{self.id}:channel", family.pages)
        self.reader = ChannelReader(channel.messages, self.listing, family.retention)
        self.system_prompt = (
            "You are the operations assistant of a freight forwarder's consolidation desk. You work only through "
            "the tools you are given. Report values exactly as the channel states them. When you are done, call "
            "submit."
        )
        self.user_prompt = (
            f"Catch up on the {CHANNEL} channel with read_updates: pass an empty cursor for the first page, then "
            "the next_cursor each page ends with, until a page says it is the last. "
            f"The channel opens with the plan of record for {family.shipments} shipments. "
            "After it, messages change a shipment's ETA, carrier, dock or pallet count; a later change replaces "
            "an earlier one, and when a change is withdrawn the value it names as standing again applies. "
            "Proposals, estimates and questions change nothing by themselves. "
            "The channel's last message asks for some current values: submit exactly those with "
            'submit(values=[{"shipment": "SHP-1234", "field": "eta", "value": "2026-04-21"}, ...]), '
            "where field is one of eta, carrier, dock, pallets."
        )
        self.tools = tool_schemas()
        self.answer_schema = {
            "type": "object",
            "required": ["values"],
            "properties": {
                "values": {
                    "type": "array",
                    "description": "one entry per value asked for",
                    "items": {
                        "type": "object",
                        "properties": {
                            "shipment": {"type": "string", "description": "SHP-NNNN"},
                            "field": {"type": "string", "enum": list(FIELDS)},
                            "value": {"type": "string", "description": "the value in force now"},
                        },
                    },
                }
            },
        }

    def page_text(self, page: int) -> str:
        """The text of one page, as the channel prints it."""
        return render_page(self.channel.messages, self.listing, page)

    def call(self, name: str, args: dict) -> ToolResult:
        """``read_updates(cursor)``."""
        return self.reader.call(name, args)

    def grade(self, answer: dict) -> Grade:
        """Every asked value, each compared with the value in force at the end of the channel."""
        return grade_values(answer, self.expected)

    def answer_key(self) -> dict:
        """Each asked value in force at the end of the channel (what ``grade_values`` compares with)."""
        values = [{"shipment": s, "field": f, "value": str(v)} for (s, f), v in self.expected.items()]
        return {"values": values}

    def trial_metrics(self, tool_log: list[dict]) -> dict:
        """Reads of archived pages (a value the agent went back for and could not get)."""
        return {
            "archived_reads": sum(
                1
                for call in tool_log
                if call.get("is_error")
                and isinstance(call.get("args"), dict)
                and self.listing.page_for(call["args"].get("cursor", "")) is not None
            )
        }

    def data_fingerprint(self) -> list:
        """Every message, the asked pairs, their values, the reverts and the adoptions."""
        return [
            [vars(m) for m in self.channel.messages],
            [list(k) for k in self.channel.asked],
            sorted([*k, v] for k, v in self.expected.items()),
            self.channel.reverts,
            self.channel.adoptions,
        ]

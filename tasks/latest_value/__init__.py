"""``latest_value``: report the values now in force after a long feed of changes (issue 34; source 004).

What it models: a freight consolidation channel that the agent catches up on page by page
(``read_updates(cursor)``). Message #1 is the plan of record (ETA, carrier, dock and pallet count of every
shipment); after it, each field is changed several times: directly ("SHP-4821: ETA is now 2026-04-23"), by
copy ("same carrier as SHP-5170"), or by withdrawal ("Update #41 on SHP-4821 was entered in error: the ETA
from #17 stands again"), which restates no value, so applying it needs message #17's text. Chatter,
proposals, questions and long packing lists change nothing. The channel's last message asks for some
current values; only the latest value counts (graded by code, per value).

Why a careful note-taker cannot fully prevent the loss: the asked fields are named only at the end, so the
agent keeps the current value of every field (and the message that set it), as a careful reader does; it
does not keep every superseded value. A withdrawal brings back a superseded value by reference to an
earlier message. While that message is in view, or re-readable, the agent resolves it. The channel is live
and keeps a limited history (``retention`` pages behind the newest page reached, like a chat plan's
history limit, stated only in the error of an archived read), and the withdrawals the generator prefers
refer to messages already archived when they arrive. A strategy that dropped or cleared that page
(sliding_window, headtail, summarize, clear_tool_results) leaves the agent with the withdrawn, stale value
standing; ``none`` keeps the page in view. Withdrawals of recent messages stay re-readable, so clearing is
partly recoverable at the cost of a re-read.

Source claims: a summary "may miss details"; updates cleared from context must be recovered or are lost
(source 004). Published anchor: MemoryAgentBench's "conflict resolution" competency (facts updated over a
long context; the latest must win).

Sizes (knobs of ``LatestValue``): default ``shipments=10, pages=24, messages_per_page=8, updates_per_page=3,
retention=3, asked=10, attachment_lines=30``; long ``pages=80, shipments=16, asked=16`` (80+ steps, ``none``
past 150K tokens); smoke ``shipments=3, pages=4, messages_per_page=4, updates_per_page=2, retention=1,
asked=4, attachment_lines=3`` (a few steps).

Layout: ``world.py`` (generation and its templates), ``tools.py`` (the channel reader), ``grade.py``,
``family.py``. The reference policy is ``reference_agent/policies/latest_value.py``.
"""

from tasks.base import FamilySpec
from tasks.latest_value.family import LatestValue, LatestValueInstance
from tasks.latest_value.grade import grade_values

__all__ = ["FAMILY", "LatestValue", "LatestValueInstance"]

FAMILY = FamilySpec(
    LatestValue.name,
    LatestValue,
    LatestValueInstance,
    grade_values,
    policy="reference_agent.policies.latest_value:LatestValuePolicy",  # the page-by-page reconciler
)
"""The family's registration (``tasks.registry``)."""

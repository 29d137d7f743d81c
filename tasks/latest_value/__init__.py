"""``latest_value``: report the values now in force after a long feed of changes (issue 34; source 004).

What it models: a freight consolidation channel that the agent catches up on page by page
(``read_updates(cursor)``). Message #1 is the plan of record (ETA, carrier, dock and pallet count of every
shipment); after it, each field is changed several times: directly ("SHP-4821: ETA is now 2026-04-23"), by
copy ("same carrier as SHP-5170"), by withdrawal ("Update #41 on SHP-4821 was entered in error: the ETA
from #17 stands again"), which restates no value, so applying it needs message #17's text, or, in the second
half, by adopting an earlier proposal ("SHP-4821: go ahead with the dock proposed in #48"), which restates
no value either. Chatter, questions and long packing lists change nothing; proposals change nothing by
themselves. The channel's last message asks for some
current values; only the latest value counts (graded by code, per value).

Why a careful note-taker cannot fully prevent the loss: the asked fields are named only at the end, and the
adopted fields are asked first. The channel keeps a limited history (``retention`` pages behind the newest
page reached, stated only in the error of an archived read), and an adoption names a proposal whose page is
archived by then. The recorded LLM (calibration/issue-34) restated every field's value in force with its
history each turn, so withdrawals resolved from its own notes; whether it also kept the pending proposals
varied from call to call. Where it did not, an adoption needed the proposal's page: in view under ``none``
(and kept by the summarizer under ``summarize``), gone under ``headtail``, ``sliding_window`` and
``clear_tool_results`` at 8k, which then submitted the adopted values as unknown.

Source claims: a summary "may miss details"; updates cleared from context must be recovered or are lost
(source 004). Published anchor: MemoryAgentBench's "conflict resolution" competency (facts updated over a
long context; the latest must win).

Sizes (knobs of ``LatestValue``; steps and peaks per suite: tasks/README.md's generated tables): default
``shipments=10, pages=20, messages_per_page=8, updates_per_page=3, retention=3, asked=10,
attachment_lines=30``; long ``pages=70, attachment_lines=15`` (``configs/suite/long.yaml``); smoke
``shipments=3, pages=4, messages_per_page=4, updates_per_page=2, retention=1, asked=4``.

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

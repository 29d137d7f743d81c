"""``failure_memory``: keep failures in context so they are not retried (sources 000 §7.3, 004 §6).

An escalation for one account: (1) its total refunds in a first quarter, (2) read the open
support tickets to find the one escalated to finance, which names a second quarter, (3) the
account's total refunds in that quarter. The refunds data has two ways in:

* ``query_api(endpoint, auth)``: the billing API, the natural first choice. Every call fails
  with a long (~600-token) authentication error stack trace: the service credentials were
  rotated and the ``token`` mode is disabled. Retrying cannot help.
* ``export_report(dataset, period)`` then ``read_export(export_id, page)``: works.

Between the first and the second quarter the agent reads ``tickets`` long ticket threads
(distractors: other accounts' refund figures, other quarters, a withdrawn escalation), so
the failure scrolls far back.

Answer: ``submit(first_total, escalated_ticket, second_period, second_total)``.
Grade: success = all four fields right (the totals in exact cents: a one-cent error is wrong)
AND no repeated failed call; score = the fraction of right fields, halved for each repeated
failed call.

``repeated_failed_calls`` (also a ``trial_metrics`` column) counts the calls that either
(a) are identical in name and arguments to an earlier call that returned an error, or
(b) call ``query_api`` after an earlier ``query_api`` call failed with the authentication
error (a retry of the known-broken approach, whatever the arguments). A call matching both
counts once.

Reference policy (``reference_agent/policies/failure_memory.py``, context-faithful): to get a
quarter's data it calls ``query_api`` unless it can see that the API failed: the error result,
its own notes (``FAILED: query_api ...``, written once, right after the failure, and
``The billing API is known to fail ...``, its reason for each export it creates afterwards) or
a summary's failed-attempts line naming ``query_api``. It then exports and reads the pages,
noting the account's amounts per page; it reads the tickets in order, noting each, until it
finds the escalated one. Its running recitation carries the findings (totals, ticket, period)
but not the failure: a strategy that compacts the error away and drops the note makes it try
the API again for the second quarter, which is the incident the seed describes.

Batched turns (profile ``realistic``): ``parallel_calls`` adds every ticket still to read to
the first quarter's query, the second quarter's export to the first's, and every missing page
of both exports to one page: the calibration LLM's four turns. At most one ``query_api`` per
turn; no page of an export whose id is not visible; and at most 4 calls per turn in all: the
support and reporting APIs document a limit of 4 calls per turn (``max_calls_per_turn``, said
in the prompt), so the 22 tickets of the default size take 6-7 turns and the
failure is 6-7 rounds back when the escalated ticket names the second quarter. A rate-limited result (``ERROR: rate
limited``) is a call not done: made again, never taken for the API's failure.

Summaries (``summarize``) keep the findings, the export ids and the failed attempts, but not
the per-page amounts of an export still being read (that export is read again) nor the list
of tickets already reviewed (only the furthest one).

Layout: ``world.py`` generation (account, tickets, exports and their text formats), ``tools.py``
the instance (prompt, tools, the auth error, pages, threads), ``grade.py``.
Rules of every template: tasks/README.md.
"""

from __future__ import annotations

from tasks.base import FamilySpec, TaskFamily
from tasks.failure_memory.grade import grade_escalation
from tasks.failure_memory.tools import FailureMemoryInstance
from tasks.failure_memory.world import (
    CALLS_PER_TURN,
    DATASETS,
    EXPORT_HEADER,
    EXPORT_READY,
    PERIODS,
    ROW,
    World,
    generate_world,
)

__all__ = [
    "FAMILY",
    "CALLS_PER_TURN",
    "DATASETS",
    "EXPORT_HEADER",
    "EXPORT_READY",
    "FailureMemory",
    "FailureMemoryInstance",
    "PERIODS",
    "ROW",
    "World",
]


class FailureMemory(TaskFamily):
    """Family generator. Knobs: ``tickets`` (long ticket threads between the two data pulls),
    ``rows`` (rows per quarterly export), ``page_rows`` (rows per export page) and
    ``ticket_messages`` (messages per ticket thread)."""

    name = "failure_memory"

    def __init__(self, tickets: int = 22, rows: int = 90, page_rows: int = 30, ticket_messages: int = 32) -> None:
        self.tickets = self.check_knob("tickets", tickets, 2, 200)
        self.rows = self.check_knob("rows", rows, 5, 5000)
        self.page_rows = self.check_knob("page_rows", page_rows, 5, 500)
        self.ticket_messages = self.check_knob("ticket_messages", ticket_messages, 1, 100)

    def generate(self, seed: int) -> FailureMemoryInstance:
        """Account, quarters, tickets and the quarterly refund exports for ``seed``."""
        return FailureMemoryInstance(self.tickets, self.page_rows, seed, generate_world(self, seed))


FAMILY = FamilySpec(
    FailureMemory.name,
    FailureMemory,
    FailureMemoryInstance,
    grade_escalation,
    policy="reference_agent.policies.failure_memory:FailureMemoryPolicy",  # tries the API first, then the exports
)
"""The family's registration (``tasks.registry``)."""

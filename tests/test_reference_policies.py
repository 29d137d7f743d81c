"""Reference policies across families: what a strategy appends after the newest result must not change a reply."""

from __future__ import annotations

import pytest

from reference_agent.policies import reference_policy
from strategies.notes import NOTES_HEADER
from strategies.status_bar import StatusBar
from tasks.brand_report import BrandReport
from tasks.call_budget import CallBudget
from tasks.callback_search import CallbackSearch
from tasks.failure_memory import FailureMemory
from tasks.invoice_audit import InvoiceAudit
from tasks.people_tracker import PeopleTracker
from tests.family_helpers import unmanaged_requests

FAMILIES = {
    "brand_report": lambda: BrandReport(pages=3, posts_per_page=8, weeks=2),
    "call_budget": lambda: CallBudget(merchants=4, noise=2),
    "callback_search": lambda: CallbackSearch(files=24, functions_per_file=2),
    "failure_memory": lambda: FailureMemory(tickets=3, ticket_messages=2, rows=12, page_rows=6),
    "invoice_audit": lambda: InvoiceAudit(pages=6, duplicates=2, max_distance=4),
    "people_tracker": lambda: PeopleTracker(people=2, moves=2, roundups=1, noise=3),
}


def status_bar_message(messages: list[dict]) -> dict:
    """The message the ``status_bar`` strategy appends after the history."""
    return {"role": "user", "content": StatusBar().status(messages)}


def notes_block(messages: list[dict]) -> dict:
    """A ``notes`` block re-injected after the history (content irrelevant to the task)."""
    return {"role": "user", "content": NOTES_HEADER + "\n- started the task"}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("injected", [status_bar_message, notes_block], ids=["status_bar", "notes"])
def test_a_message_after_the_newest_result_does_not_stop_the_notes(family, injected):
    """Policies note the newest tool results wherever they sit: a status bar or notes block after them
    (strategies status_bar and notes) leaves the reply as it is without it."""
    instance = FAMILIES[family]().generate(0)
    policy = reference_policy(instance)
    steps = 0
    for messages in unmanaged_requests(instance):
        plain = policy.act(messages, instance.tools)
        with_injected = policy.act([*messages, injected(messages)], instance.tools)
        assert with_injected.get("content") == plain.get("content"), f"step {steps}"
        steps += 1
    assert steps > 3

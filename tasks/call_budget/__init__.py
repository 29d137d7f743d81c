"""``call_budget``: negotiate with merchants by phone, at most 3 calls each (source 002 §2.6, exp. 2-8).

The agent asks each of ``merchants`` merchants for a volume discount with
``call_merchant(merchant, offer)``. Every call returns a long, noisy transcript (IVR menus,
hold music, small talk that mentions other merchants) that ends with the phone system's
disposition line: ``ACCEPTED at N%``, ``DECLINED``, ``CALL BACK LATER`` or
``COUNTER-OFFER N%`` (call back with ``offer=N`` to take it). Each merchant follows a
hidden script over its attempts, e.g. "call back later" twice and then accepted, or a
counter-offer that only arrives on the third call (too late to take).

The rule: **at most 3 calls per merchant.** A 4th call to a merchant is placed (phones do
not stop you) but recorded as a violation in the instance's per-trial state.

Answer: ``submit(accepted=[merchant ids])``: the merchants whose deal was closed.
Grade: success = the exact set of merchants that can be closed within 3 calls, every one of
them actually closed in this trial, and no violation; score = F1 (a claimed merchant counts
only if its deal was closed in this trial) minus 0.25 per violation, floored at 0.
``trial_metrics``: ``call_violations`` (calls beyond the 3rd to a merchant) and
``max_calls_per_merchant``.

Reference policy (``reference_agent/policies/call_budget.py``, context-faithful): it decides
whether a merchant may be called again by COUNTING the visible evidence: visible
``call_merchant`` calls to it, its own per-call notes (``Call note: M07 call #2 of 3: ...``),
the number it gave a visible placed call in the message that placed it
(``Calling M07 (call #2 of 3) ...``, itself counted from the notes then visible, so the
running count carries forward when earlier calls were cut but their notes were not), a status
message (``calls to M07: 2`` or ``M07: 2/3 calls``) and the latest ``status_bar``
(``call_merchant: merchant=M07 2/3``, lines of one merchant summed), taking the largest. It
keeps no hidden counter. Outcomes: visible call results override what its free texts say (a
``notes`` block re-injected after the results holds older recitations). Its running recitation
(``Accepted so far`` / ``Declined so far`` / ``Open`` / ``Given up``) carries outcomes but not
call counts, as a reasoning agent recites conclusions and recounts from the record when it
needs a count. So a strategy that hides earlier calls to a merchant makes it call a 4th time,
the failure of the seed's control group A. It calls open merchants in passes (fewest calls
first), so the calls to one merchant are far apart in the history.

Batched turns (profile ``realistic``): ``parallel_calls`` adds this round's call to every
other open merchant with calls left (one per merchant and turn). The reply after a batched
round restates its counts (``M01, M02 have each used 2 of 3 calls``), and a batched turn's
calls other than the one its ``Calling`` line names are numbered from the notes before them.
A rate-limited result (``ERROR: rate limited``) is a call not placed: not counted, made again.

Memory pressure: the phone system has 4 outbound lines, a documented limit of
4 ``call_merchant`` calls per turn (``max_calls_per_turn``, said in the prompt), so a batching
agent places a round of 24 merchants in 6 turns and a merchant's three calls are 6 turns apart.

Summaries (``summarize``) keep the outcomes (accepted / declined / open with its state /
given up) but not the per-merchant call counts: a summary states conclusions, not how many
attempts each took. That loss is deliberate; it is what a status bar repairs.

Layout: ``world.py`` merchants, scripts and the transcript's format, ``tools.py`` the instance
(prompt, ``call_merchant``, transcripts), ``grade.py``. Rules of every template: tasks/README.md.
"""

from __future__ import annotations

from tasks.base import FamilySpec, TaskFamily
from tasks.call_budget.grade import grade_accepted
from tasks.call_budget.tools import CallBudgetInstance
from tasks.call_budget.world import (
    ACC,
    CB,
    CLOSABLE,
    CTR,
    DEC,
    DISPOSITION,
    HEADER,
    MAX_CALLS,
    PHONE_LINES,
    SCRIPTS,
    STANDARD_OFFER,
    generate_merchants,
)

__all__ = [
    "FAMILY",
    "ACC",
    "CB",
    "CLOSABLE",
    "CTR",
    "CallBudget",
    "CallBudgetInstance",
    "DEC",
    "DISPOSITION",
    "HEADER",
    "MAX_CALLS",
    "PHONE_LINES",
    "SCRIPTS",
    "STANDARD_OFFER",
]


class CallBudget(TaskFamily):
    """Family generator. Knobs: ``merchants`` (how many to call) and ``noise`` (filler lines per
    call transcript: hold music, IVR, small talk)."""

    name = "call_budget"

    def __init__(self, merchants: int = 24, noise: int = 16) -> None:
        self.merchants = self.check_knob("merchants", merchants, 3, 99)
        self.noise = self.check_knob("noise", noise, 0, 400)

    def generate(self, seed: int) -> CallBudgetInstance:
        """Names, phone numbers, scripts and counter-offer rates for ``seed``."""
        return CallBudgetInstance(self.merchants, self.noise, seed, generate_merchants(self.merchants, seed))


FAMILY = FamilySpec(
    CallBudget.name,
    CallBudget,
    CallBudgetInstance,
    grade_accepted,
    policy="reference_agent.policies.call_budget:CallBudgetPolicy",  # the counting negotiator
)
"""The family's registration (``tasks.registry``)."""

"""``one_shot_queue``: results that cannot be fetched twice, beside results that can (source 004, tier 1).

What it models: an order desk's change-request queue. ``pop_ticket()`` claims the next ticket and acknowledges
it (a consuming queue: the ticket is gone, popping again returns the next one, then "the queue is empty").
Each ticket carries a one-time authorisation code, the order it concerns, the customer's request (an address,
quantity or date change) and, in passing, references the customer mentions (an approved artwork proof
``PRF-``, their own dock booking ``DCK-``, a marketplace seller case ``MKT-``) and, in the sign-off, the
customer's callback number (``0nnnn nnnnnn``), which the ``freight`` policy section asks actions to
cite. Beside it sit re-readable
reference pages: ``lookup_order(order_id)`` (the order's fulfilment program, status, pick list ``PL-``,
subscription ``SUB-``, lines, history) and ``get_policy(section)`` (one section per program: the action code
per request kind and the one reference every action of that program must cite). The prompt says to claim
the whole queue first (tickets left queued are reassigned), then work the claimed tickets, and to submit the
nightly batch: one line per ticket, ``{ticket, auth_code, action, reference}``.

Why a careful note-taker cannot prevent the loss: which reference a ticket's action needs depends on the
order's program (only on the order page) and on the program's policy section, both read after the queue
is drained. At claiming time nothing says which detail of a customer's message will matter, and the
recorded LLM (calibration/issue-34) noted each ticket's code, order, request and every reference the
customer mentioned, but not the phone number of the sign-off, which the ``freight`` section turns out to
require. A strategy that cleared or cut the ticket results before then lost it for good: popping again
claims nothing. Order pages and policy sections can be re-read, so clearing those is recoverable (read it
again), as the source says of observation masking. Recorded: ``none`` and ``summarize`` (whose summaries kept
the phone numbers) succeed; ``clear_tool_results``, ``headtail`` and ``sliding_window`` at 8k fail. Graded per
ticket (set F1 of the lines), so partial loss is partial failure.

Source claim: clearing tool results is safe only because results can be fetched again (source 004,
tier 1: observation masking relies on re-fetchable results); dropping old rounds "is free but the
information is simply gone". Anchor: Anthropic's context-editing evaluation (a 100-turn web search; the
tool results ``clear_tool_uses`` clears must be re-fetchable).

Sizes (``configs/task/one_shot_queue.yaml``; steps and peaks per suite: tasks/README.md's generated tables):
default ``tickets=24``; long ``tickets=120`` (``configs/suite/long.yaml``); smoke ``tickets=3`` with short
messages and pages. A documented limit of 4 calls per turn (``max_calls_per_turn``): an agent claims up to
four tickets a turn.

Layout: ``world.py`` (generation and templates), ``tools.py`` (prompts, schemas, rendering), ``grade.py``,
``family.py`` (the ``TaskFamily`` and ``TaskInstance``). Reference policy:
``reference_agent/policies/one_shot_queue.py``.
"""

from tasks.base import FamilySpec
from tasks.one_shot_queue.family import OneShotQueue, OneShotQueueInstance
from tasks.one_shot_queue.grade import grade_batch

__all__ = ["FAMILY", "OneShotQueue", "OneShotQueueInstance"]

FAMILY = FamilySpec(
    OneShotQueue.name,
    OneShotQueue,
    OneShotQueueInstance,
    grade_batch,
    policy="reference_agent.policies.one_shot_queue:OneShotQueuePolicy",  # claims, notes, looks up, batches
)
"""The family's registration (``tasks.registry``)."""

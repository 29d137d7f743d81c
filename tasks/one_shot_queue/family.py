"""The ``one_shot_queue`` family and its instances: claim a queue of one-time tickets, then action them in a batch.

``world.py`` generates the shift, ``tools.py`` renders it; the instance serves the tools and keeps the queue's
per-trial state (how many tickets were claimed): a popped ticket is gone from the queue for good.
"""

from __future__ import annotations

from tasks.base import Grade, TaskFamily, TaskInstance, ToolResult
from tasks.one_shot_queue.grade import grade_batch
from tasks.one_shot_queue.tools import (
    QUEUE_EMPTY,
    SYSTEM_PROMPT,
    TOOL_NAMES,
    answer_schema,
    render_order,
    render_policy,
    render_ticket,
    tool_schemas,
    user_prompt,
)
from tasks.one_shot_queue.world import (
    CALLS_PER_TURN,
    PROGRAMS,
    REFERENCE_KIND,
    TICKET_REFERENCES,
    World,
    generate_world,
)


class OneShotQueue(TaskFamily):
    """Family generator. Knobs: ``tickets`` (in the queue), ``ticket_sentences`` (length of a customer's message),
    ``order_lines`` and ``order_events`` (length of an order page), ``policy_paragraphs`` (of a policy section)."""

    name = "one_shot_queue"

    def __init__(
        self,
        tickets: int = 24,
        ticket_sentences: int = 16,
        order_lines: int = 22,
        order_events: int = 12,
        policy_paragraphs: int = 12,
    ) -> None:
        self.tickets = self.check_knob("tickets", tickets, 1, 500)
        self.ticket_sentences = self.check_knob("ticket_sentences", ticket_sentences, 3, 40)
        self.order_lines = self.check_knob("order_lines", order_lines, 1, 200)
        self.order_events = self.check_knob("order_events", order_events, 1, 27)
        self.policy_paragraphs = self.check_knob("policy_paragraphs", policy_paragraphs, 0, 200)

    def generate(self, seed: int) -> "OneShotQueueInstance":
        """The queue, the orders and the policy for ``seed``."""
        return OneShotQueueInstance(self, seed, generate_world(self, seed))


class OneShotQueueInstance(TaskInstance):
    """One shift's queue; ``pop_ticket`` consumes it (per-trial state), the other tools are plain reads."""

    family = OneShotQueue.name
    max_calls_per_turn = CALLS_PER_TURN

    def __init__(self, family: OneShotQueue, seed: int, world: World) -> None:
        self.seed = seed
        self.id = f"one_shot_queue-t{family.tickets}-s{seed}"
        self.world = world
        self.policy_paragraphs = family.policy_paragraphs
        self.claimed = 0  # tickets popped so far: the queue's head
        self.pops_after_empty = 0
        self.system_prompt = SYSTEM_PROMPT
        self.user_prompt = user_prompt()
        self.tools = tool_schemas()
        self.answer_schema = answer_schema()

    def call(self, name: str, args: dict) -> ToolResult:
        """``pop_ticket()`` consumes the next ticket; ``lookup_order(order_id)`` and ``get_policy(section)`` read."""
        if not isinstance(args, dict):
            return ToolResult("ERROR: arguments must be an object", is_error=True)
        if name == "pop_ticket":
            return self._pop(args)
        if name == "lookup_order":
            order_id = args.get("order_id")
            order = self.world.orders.get(order_id.strip()) if isinstance(order_id, str) else None
            if order is None:
                return ToolResult(
                    f"ERROR: no order {str(order_id)[:80]!r}; order ids look like SO-12345", is_error=True
                )
            return ToolResult(render_order(order), resource=f"order:{order.id}")
        if name == "get_policy":
            section = args.get("section")
            section = section.strip() if isinstance(section, str) else section
            if section not in PROGRAMS:
                return ToolResult(
                    f"ERROR: no policy section {str(section)[:80]!r}; sections: {', '.join(PROGRAMS)}", is_error=True
                )
            return ToolResult(render_policy(section, self.seed, self.policy_paragraphs), resource=f"policy:{section}")
        return ToolResult(f"ERROR: unknown tool {str(name)[:80]!r}; available: {', '.join(TOOL_NAMES)}", is_error=True)

    def _pop(self, args: dict) -> ToolResult:
        if args:
            return ToolResult("ERROR: pop_ticket takes no arguments; it claims the next ticket", is_error=True)
        tickets = self.world.tickets
        if self.claimed >= len(tickets):
            self.pops_after_empty += 1
            return ToolResult(QUEUE_EMPTY)
        ticket = tickets[self.claimed]
        self.claimed += 1
        return ToolResult(render_ticket(ticket, len(tickets) - self.claimed), resource=f"ticket:{ticket.id}")

    def grade(self, answer: dict) -> Grade:
        """One exact line per ticket (code, action, reference); score = F1 of the lines."""
        return grade_batch(answer, self.world.expected)

    def answer_key(self) -> dict:
        """One right batch line per ticket (what ``grade_batch`` compares with)."""
        lines = [
            {"ticket": ticket, "auth_code": code, "action": action, "reference": reference}
            for ticket, (code, action, reference) in self.world.expected.items()
        ]
        return {"actions": lines}

    def trial_metrics(self, tool_log: list[dict]) -> dict:
        """Tickets claimed, pops of an empty queue, and how many actions need a reference only the ticket states."""
        pops = sum(1 for entry in tool_log if entry.get("name") == "pop_ticket" and not entry.get("is_error"))
        orders = self.world.orders
        return {
            "tickets_claimed": min(pops, len(self.world.tickets)),
            "pops_after_empty": max(0, pops - len(self.world.tickets)),
            "ticket_only_references": sum(
                1 for t in self.world.tickets if REFERENCE_KIND[orders[t.order].program] in TICKET_REFERENCES
            ),
        }

    def data_fingerprint(self) -> list:
        """Tickets, orders, the policy and the expected batch."""
        policy = [render_policy(section, self.seed, self.policy_paragraphs) for section in PROGRAMS]
        return [
            [render_ticket(t, 0) for t in self.world.tickets],
            [render_order(o) for o in self.world.orders.values()],
            policy,
            sorted(self.world.expected.items()),
        ]

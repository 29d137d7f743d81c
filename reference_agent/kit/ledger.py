"""The ledger: the reference agent's whole state, restated in full in every reply.

The calibration LLM (``calibration/README.md``) opens every reply with its complete state,
rewritten each turn: the task's rules in its own words, every confirmed fact with its evidence,
what it checked and found clean, and what remains. After any cut it continues from the newest
ledger in view and re-reads only what that ledger does not cover. This module is that mechanism
for every family's policy:

* ``Ledger`` holds four sections of lines: ``rules``, ``facts``, ``checked``, ``remaining``. What a
  line says is the family's business (tasks/README.md documents each family's ledger and its
  bound); the kit only renders, finds and parses it.
* ``Ledger.render()`` is the reply text; ``newest_ledger(messages)`` is the newest ledger visible in
  a request, with the index of the message that holds it (what came after it is what the ledger
  does not cover yet); ``quoted_rules`` carries the task's rule sentences across a cut.

A policy rebuilds its state from ``newest_ledger`` plus the visible results, never from memory
(tests/test_policy_purity.py replays every request on a fresh session).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from reference_agent.policy_kit import other_calls, reply, submit

HEADER = "Ledger (my whole state, restated each turn):"
SECTIONS = ("Rules", "Facts", "Checked", "Remaining")
NONE = "(none)"


@dataclass
class Ledger:
    """Four sections of lines: the task's rules, facts with evidence, what was checked, what remains."""

    rules: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    remaining: list[str] = field(default_factory=list)

    def sections(self) -> dict[str, list[str]]:
        """Section title -> its lines, in rendering order."""
        return dict(zip(SECTIONS, (self.rules, self.facts, self.checked, self.remaining), strict=False))

    def render(self) -> str:
        """The ledger as reply text (``parse_ledger`` reads it back exactly)."""
        lines = [HEADER]
        for title, items in self.sections().items():
            lines.append(f"{title}:")
            lines.extend(f"- {item}" for item in (items or [NONE]))
        return "\n".join(lines)


def parse_ledger(text: str) -> Ledger | None:
    """The ledger in ``text`` (the first one), or ``None`` when the text holds none."""
    start = text.find(HEADER)
    if start < 0:
        return None
    sections: dict[str, list[str]] = {title: [] for title in SECTIONS}
    current: list[str] | None = None
    for line in text[start + len(HEADER) :].splitlines():
        title = line[:-1] if line.endswith(":") else None
        if title in sections:
            current = sections[title]
        elif line.startswith("- ") and current is not None:
            if line[2:] != NONE:
                current.append(line[2:])
        elif line.strip() and current is not None:
            break  # the ledger ends where the first line that is not an item begins
    return Ledger(*(sections[title] for title in SECTIONS))


def newest_ledger(messages: Iterable[dict]) -> tuple[int, Ledger] | None:
    """The newest ledger in a visible assistant message, with that message's index (``None``: none visible)."""
    messages = list(messages)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "assistant" and HEADER in str(message.get("content") or ""):
            ledger = parse_ledger(str(message["content"]))
            if ledger is not None:
                return index, ledger
    return None


@dataclass
class Plan:
    """A policy's decision for one turn: its ledger, the calls it would make now (in order), or its answer."""

    ledger: Ledger
    calls: list[dict] = field(default_factory=list)
    answer: dict | None = None
    note: str = ""


class LedgerPolicy:
    """A family policy whose whole state is its ledger (see the module docstring).

    A subclass implements ``plan(messages) -> Plan``: it rebuilds its state from
    ``newest_ledger(messages)`` and the visible results, and returns its new ledger with either the
    calls it would make now, in order, or its answer. This class turns the plan into the profile's
    hooks: ``act`` replies with the ledger and the first call (or submits), ``parallel_calls`` offers
    the rest of the calls (the realistic profile batches them up to the turn's limit), and
    ``early_answer`` is what it would submit now. The plan is computed once per request.
    """

    def plan(self, messages: list[dict]) -> Plan:  # pragma: no cover - the families implement it
        """The turn's plan from the visible messages only."""
        raise NotImplementedError

    def planned(self, messages: list[dict]) -> Plan:
        """``plan(messages)``, computed once for one request (``act`` and ``parallel_calls`` share it)."""
        cached = getattr(self, "_planned", None)
        if cached is not None and cached[0] is messages and cached[1] == len(messages):
            return cached[2]
        plan = self.plan(messages)
        self._planned = (messages, len(messages), plan)
        return plan

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Reply with the whole ledger and the first planned call, or submit the answer."""
        plan = self.planned(messages)
        text = "\n".join(part for part in (plan.note, plan.ledger.render()) if part)
        if plan.answer is not None or not plan.calls:
            return submit(text, **(plan.answer or {}))
        return reply(text, plan.calls[0])

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The other planned calls, in order (independent of the first: the plan needs none's result)."""
        plan = self.planned(messages)
        return [] if plan.answer is not None else other_calls(plan.calls, first)


def quoted_rules(messages: list[dict], patterns: tuple) -> list[str]:
    """The task's rule sentences (each ``pattern``'s match in the task statement), or, when the task statement is
    cut, the rules of the newest ledger in view (they quote the same sentences)."""
    task = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
    found = [m.group(0) for pattern in patterns for m in [pattern.search(task)] if m]
    if found:
        return found
    newest = newest_ledger(messages)
    return list(newest[1].rules) if newest else []

"""``tally``: page through a ledger, one page per call, and submit one account's total.

The smallest complete task family, a template to copy (docs/new_task.md walks through it):

* ``Tally`` is the family: its knobs are its constructor's arguments (checked with ``check_knob``, so a bad
  value is one line and exit 2), and ``generate(seed)`` is deterministic (one ``random.Random`` seeded by
  the family's name and the seed, nothing else);
* ``TallyInstance`` is one generated task: the prompts, the tool schemas, ``call`` (a bad argument is an
  error result, never an exception; a read names its ``resource``, so re-reads are counted), ``grade``
  (code, never an LLM), ``answer_key`` (the answer that grades as a success) and ``reference_policy``
  (what ``model=scripted`` runs; tally_task/policy.py).
"""

from __future__ import annotations

import random
from typing import Any

from tasks.base import Grade, TaskFamily, TaskInstance, ToolResult, tool_schema
from tasks.kit.args import digits

ACCOUNTS = ("ACC-117", "ACC-204", "ACC-356", "ACC-481", "ACC-592")
PAGE_HEADER = "Ledger page {page} of {pages}"
"""How every page starts; the reference policy reads the page number from it."""


class Tally(TaskFamily):
    """The family. Knobs: ``pages`` (how many pages the ledger has) and ``rows_per_page``."""

    name = "tally"

    def __init__(self, pages: int = 4, rows_per_page: int = 5) -> None:
        self.pages = self.check_knob("pages", pages, 1, 100)
        self.rows_per_page = self.check_knob("rows_per_page", rows_per_page, 1, 50)

    def generate(self, seed: int) -> "TallyInstance":
        """The ledger for ``seed``: random accounts and amounts; the asked account is the first of a seeded shuffle."""
        rng = random.Random(f"{self.name}:{seed}")
        accounts = rng.sample(ACCOUNTS, len(ACCOUNTS))
        rows = [
            [(rng.choice(accounts), rng.randint(1, 500)) for _ in range(self.rows_per_page)] for _ in range(self.pages)
        ]
        return TallyInstance(self, seed, accounts[0], rows)


class TallyInstance(TaskInstance):
    """One ledger: ``rows[page - 1]`` holds that page's (account, amount) rows; the agent totals ``account``'s."""

    family = Tally.name

    def __init__(self, family: Tally, seed: int, account: str, rows: list[list[tuple[str, int]]]) -> None:
        self.seed, self.account, self.rows = seed, account, rows
        self.pages = len(rows)
        self.id = f"tally-p{family.pages}x{family.rows_per_page}-s{seed}"
        self.system_prompt = (
            "You are a bookkeeper. Read the ledger with read_page; when you know the total, call submit."
        )
        self.user_prompt = (
            f"Submit the total of account {account} over all {self.pages} ledger pages, as a whole number: "
            f"submit(total=N). Read them with read_page (page=1 to {self.pages}, one page per call)."
        )
        self.tools = [tool_schema("read_page", "Read one ledger page.", {"page": {"type": "integer"}})]
        self.answer_schema = {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}

    def call(self, name: str, args: dict) -> ToolResult:
        """``read_page(page)``: the page's rows; an unknown tool or a bad page is an error result."""
        if name != "read_page":
            return ToolResult(f"ERROR: unknown tool {name!r}", is_error=True)
        page = whole_number(args.get("page"))
        if page is None or not 1 <= page <= self.pages:
            return ToolResult(f"ERROR: page must be a number from 1 to {self.pages}", is_error=True)
        lines = [PAGE_HEADER.format(page=page, pages=self.pages)]
        lines += [f"{account} {amount}" for account, amount in self.rows[page - 1]]
        return ToolResult("\n".join(lines), resource=f"page-{page}")

    def total(self) -> int:
        """The true total of the asked account."""
        return sum(amount for page in self.rows for account, amount in page if account == self.account)

    def grade(self, answer: dict) -> Grade:
        """Success when ``total`` is the account's total; anything else (a wrong or missing total) fails."""
        given = whole_number(answer.get("total")) if isinstance(answer, dict) else None
        success = given == self.total()
        return Grade(success, float(success), {"expected": self.total(), "given": given})

    def answer_key(self) -> dict:
        """The answer that grades as a success (``python -m harness check`` grades it)."""
        return {"total": self.total()}

    def data_fingerprint(self) -> Any:
        """The hidden data, for the byte-identical generation check."""
        return {"account": self.account, "rows": self.rows}

    def reference_policy(self) -> Any:
        """A fresh reference policy for one trial under ``model=scripted`` (tally_task/policy.py).

        It gets nothing from the instance: it reads the task from the request. The import is here, not at the
        top, so the family loads without the reference agent."""
        from tally_task.policy import TallyPolicy

        return TallyPolicy()


def whole_number(value: object) -> int | None:
    """A non-negative integer given as a number or as digits (``12``, ``"12"``), else ``None``; never raises."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value >= 0 else None
    return digits(value)

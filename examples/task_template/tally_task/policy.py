"""``tally``'s reference policy: what ``model=scripted`` does on a tally instance.

A reference policy acts only on the messages of the request it is given (what the strategy left in
view), never on the instance. This one reads the task (account, page count) from the visible task
statement or from its own notes, reads the pages it has no subtotal for, and restates the task and every
page's subtotal in each reply (``page 2: 431``), so its notes outlive a page or a task statement that a
strategy cut. When every page's subtotal is in view, it submits their sum.
"""

from __future__ import annotations

import re

from reference_agent.policy_kit import failed_attempts, format_summary, make_call, reply, submit, tools_used
from tasks.kit.messages import texts, tool_texts

TASK = re.compile(r"account (ACC-\d+) over all (\d+) ledger pages")
"""The task as the prompt states it, and as every reply of the policy restates it."""
PAGE = re.compile(r"^Ledger page (\d+) of \d+$", re.MULTILINE)
NOTE = re.compile(r"\bpage (\d+): (\d+)\b")


class TallyPolicy:
    """Reads every page it has no subtotal for, noting subtotals as it goes, then submits their sum."""

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Read the first page with no visible subtotal, or submit the total when none is missing."""
        task = self.task(messages)
        if task is None:
            return submit("The task is no longer in view; I cannot tell which account to total.", total=0)
        account, pages = task
        known = self.subtotals(messages, account)
        notes = "\n".join([f"Total of account {account} over all {pages} ledger pages:"] + self.notes(known))
        missing = [page for page in range(1, pages + 1) if page not in known]
        if missing:
            return reply(notes, make_call("read_page", page=missing[0]))
        return submit(f"{notes}\nsum: {sum(known.values())}", total=sum(known.values()))

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The other pages it would read now (the ``realistic`` profile batches them with ``first``)."""
        task = self.task(messages)
        if task is None:
            return []
        known = self.subtotals(messages, task[0])
        return [make_call("read_page", page=page) for page in range(1, task[1] + 1) if page not in known]

    @staticmethod
    def task(messages: list[dict]) -> tuple[str, int] | None:
        """The account and the page count, from the first visible message that states them."""
        for text in texts(messages):
            match = TASK.search(text)
            if match:
                return match.group(1), int(match.group(2))
        return None

    @staticmethod
    def subtotals(messages: list[dict], account: str) -> dict[int, int]:
        """Page -> ``account``'s subtotal, from the visible notes of earlier replies and the visible pages."""
        known = {
            int(page): int(value) for text in texts(messages, ("assistant",)) for page, value in NOTE.findall(text)
        }
        for text in tool_texts(messages):
            header = PAGE.search(text)
            if header:
                rows = (line.split() for line in text.splitlines()[1:])
                known[int(header.group(1))] = sum(int(amount) for name, amount in rows if name == account)
        return known

    @staticmethod
    def notes(known: dict[int, int]) -> list[str]:
        """One ``page N: subtotal`` line per known page, in page order."""
        return [f"page {page}: {known[page]}" for page in sorted(known)]

    def summarize(self, history_text: str) -> str:
        """The seed's four-part summary: the task and the subtotals noted so far."""
        task = TASK.search(history_text)
        notes = {int(page): int(value) for page, value in NOTE.findall(history_text)}
        findings = [task.group(0)] if task else []
        return format_summary(
            findings + self.notes(notes),
            tools_used(history_text),
            failed_attempts(history_text),
            [f"pages noted: {len(notes)}; read the others, then submit the sum"],
        )

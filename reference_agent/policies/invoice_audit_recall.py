"""When the ``invoice_audit`` auditor stops restating its ledger, and what it does once the ledger it points to is gone.

The protocol-2 calibration LLM (calibration/invoice_audit__*__default) restated its notes of every page in every
reply, except twice, and both times it wrote only the pages since its last full notes and pointed back to them:

* ``clear_tool_results``: it restated 25 pages (16,437 characters) at step 26, then wrote "the notes for pages 1-25
  are in my previous message and still apply" and only pages 26 onward (1,950 to 3,800 characters). Tool results
  are cleared, its replies are kept, so the pointed notes stayed in view and it submitted a correct answer in 31
  steps (it would have run past the 131K window at about step 29 had it gone on restating);
* ``sliding_window``: at step 12 its notes of pages 1-10 (7,157 characters) were 56% of everything it saw (53% one
  step before, when it restated them); it wrote only page 11, "added to the cumulative notes for pages 1-10 above".
  The window dropped that reply at the next step; it wrote "the detailed notes for pages 1-10 are no longer in my
  context", restated its notes of pages 11 onward in full from then on, and after page 30 read pages 1-10 again to
  compare them with the later pages: the step limit (40) stopped it on page 10.

It never pointed back where a note in view said that earlier rounds were cut or summarized (``headtail``: 18,134
characters restated at step 30; ``summarize``) nor under ``none`` (14,959 characters at step 24, the last reply
before the window overflowed). This module is that behaviour, read off the visible messages only:

* ``points_back``: point back when the newest full ledger is in view, nothing in view is lost, no note says that
  rounds were cut, and restating is costly: the ledger would be longer than ``LONG_LEDGER`` characters, or the
  newest full ledger is at least ``SALIENT_SHARE`` of the request (then it is most of what the agent reads);
* a reply that points back says which pages it does not index (``pointer_line``); once no visible ledger indexes
  them, they are lost: the agent restates in full from then on and says which pages to compare again
  (``recheck_line``), and re-reads them after the last page (``recheck_moves``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reference_agent.kit.cursor_reading import CursorMove
from reference_agent.kit.ledger import HEADER
from reference_agent.policy_kit import parse_ranges, ranges

# The LLM restated 16,437 characters (clear_tool_results, step 26) and pointed back when the next restatement would
# have been about 17,100; it restated at most 15,200 under ``none`` and ``summarize``, and more only under ``headtail``
# (a cut note in view).
LONG_LEDGER = 17_000
# The LLM pointed back when its newest notes were 56% of the request's characters (sliding_window, step 12) and
# restated them at 53%. The reference's ledger of the same pages is about 9% longer than the LLM's notes (the month
# index carries each whole id), so the same request gives it a share about 3 points higher (56.2% at step 11, 58.5%
# at step 12): the threshold sits between, where the LLM's step falls.
SALIENT_SHARE = 0.57

POINTER = re.compile(r"pages ([\d,\- ]+) are indexed in my earlier ledger")
RECHECK = re.compile(r"re-check pages ([\d,\- ]+) against the pages read since")
CUT_NOTE = re.compile(r"^\[(?:context note\]|summary of the earlier work)")
INVOICE_REF = re.compile(r"#(INV-\d{4}-\d{5})")
REVIEWED = re.compile(r"pages reviewed: ([\d,\- none]+) of")


def pointer_line(pages: set[int]) -> str:
    """The ledger line of a reply that does not restate ``pages`` (their index is in the newest full ledger)."""
    return f"pages {ranges(pages)} are indexed in my earlier ledger (above), not restated here"


def recheck_line(pages: set[int]) -> str:
    """The ledger line of pages whose index is gone: they were compared only with the pages read before the loss."""
    return f"re-check pages {ranges(pages)} against the pages read since: their index is no longer in view"


def pointed_pages(line: str) -> set[int]:
    """The pages a ``pointer_line`` in ``line`` names."""
    return {p for found in POINTER.findall(line) for p in parse_ranges(found)}


def recheck_pages(line: str) -> set[int]:
    """The pages a ``recheck_line`` in ``line`` names."""
    return {p for found in RECHECK.findall(line) for p in parse_ranges(found)}


@dataclass(frozen=True)
class Anchor:
    """The newest full ledger in view: its text, the pages its index covers and the invoice ids it holds."""

    text: str
    pages: frozenset[int]
    ids: frozenset[str]


def newest_full_ledger(messages: list[dict]) -> Anchor | None:
    """The newest visible reply of the agent whose ledger indexes invoices and points back to none."""
    for message in reversed(messages):
        text = str(message.get("content") or "")
        if message.get("role") != "assistant" or HEADER not in text or POINTER.search(text):
            continue
        ids = frozenset(INVOICE_REF.findall(text))
        if not ids:
            continue
        reviewed = {p for found in REVIEWED.findall(text) for p in parse_ranges(found)}
        return Anchor(text, frozenset(reviewed - recheck_pages(text)), ids)
    return None


def history_rewritten(messages: list[dict]) -> bool:
    """Whether a visible note says that earlier rounds were cut or summarized (``headtail``, ``summarize``)."""
    return any(m.get("role") == "user" and CUT_NOTE.match(str(m.get("content") or "")) for m in messages)


def newest_points_back(messages: list[dict]) -> bool:
    """Whether the agent's newest visible reply already points back to an earlier ledger."""
    text = next((str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "assistant"), "")
    return bool(POINTER.search(text))


def points_back(messages: list[dict], full_ledger: str, loss_in_view: bool) -> Anchor | None:
    """The ledger to point back to instead of restating ``full_ledger`` (see the module docstring), or ``None``."""
    if loss_in_view or history_rewritten(messages):
        return None
    anchor = newest_full_ledger(messages)
    if anchor is None:
        return None
    if newest_points_back(messages) or len(full_ledger) > LONG_LEDGER:
        return anchor
    seen = sum(len(str(m.get("content") or "")) for m in messages)
    return anchor if len(anchor.text) >= SALIENT_SHARE * seen else None


def recheck_moves(lost: set[int], cursors: dict[int, str]) -> list[CursorMove]:
    """Re-reads of the lost pages whose cursors are known, lowest first; else a walk from the nearest earlier one."""
    moves = [CursorMove("recheck", page, cursors[page]) for page in sorted(lost) if page in cursors]
    if moves or not lost:
        return moves
    back = max(page for page in cursors if page < min(lost))
    return [CursorMove("walk", back, cursors[back])]

"""Pieces every task family shares: cursor pagination, the per-turn call limit, renderers.

* ``cursors``: opaque, deterministic page cursors (each page names the next one), so an agent
  cannot fetch page 7 before it has read page 6.
* ``pages``: a tool result of one page of items, with its footer.
* ``limits``: the per-turn tool-call limit a family declares, and the sentence its prompt says.
* ``args``: ``digits``, the integer a string argument spells, never an exception.
* ``repo``: ``grep`` over a generated repository (``code_review``, ``callback_search``).
* ``messages``: the visible texts of a request, by role (``code_review``'s stop-hook check).
* ``grading``: set precision/recall/F1 and the exact-set grade, exact money in cents, one exact answer field.

The reference agent's own pieces (ledger, incremental readers, cursor reading) are in
``reference_agent/kit/``.
"""

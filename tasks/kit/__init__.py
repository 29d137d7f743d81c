"""Pieces every task family shares: cursor pagination, the per-turn call limit, renderers.

* ``cursors``: opaque, deterministic page cursors (each page names the next one), so an agent
  cannot fetch page 7 before it has read page 6 (issue 13 §1).
* ``limits``: the per-turn tool-call limit a family declares, and the sentence its prompt says.
* ``args``: ``digits``, the integer a string argument spells, never an exception (issue 22).
* ``repo``: ``grep`` over a generated repository (``code_review``, ``callback_search``).
"""

"""The per-turn tool-call limit a family declares (``TaskInstance.max_calls_per_turn``).

The loop enforces it (``harness/trial.py``): calls of one reply beyond the limit are answered
with ``tasks.base.rate_limited_message`` and not executed. A family states the limit in its
prompt with ``limit_sentence`` so that an agent can plan for it, as it would for a real API's
documented concurrency limit; ``DOCUMENTED_LIMIT`` reads the number back from that sentence.
"""

from __future__ import annotations

import re


def limit_sentence(limit: int, what: str = "tool calls") -> str:
    """The prompt sentence that documents a per-turn limit."""
    return (
        f"The API allows at most {limit} {what} per turn; further calls in the same turn are rejected "
        "as rate limited and must be retried in a later turn."
    )


DOCUMENTED_LIMIT = re.compile(r"allows at most (\d+) .+? per turn")  # group 1: the limit ``limit_sentence`` states

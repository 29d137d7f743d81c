"""Memory pressure of one unmanaged trial under the ``greedy`` batcher (issue 13 §1), for the family tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.batch_helpers import profiled_row


@dataclass(frozen=True)
class Pressure:
    """What a trial demanded of memory: agent steps, the final history and the largest growth of one round."""

    success: bool
    steps: int
    final_history: int
    largest_round: int

    @property
    def largest_share(self) -> float:
        """The largest round's share of the final history."""
        return self.largest_round / max(1, self.final_history)


def greedy_pressure(directory: Path, instance: Any, profile: str = "greedy") -> Pressure:
    """Run ``instance`` under strategy none with the ``profile`` batcher and measure its history, round by round."""
    row = profiled_row(directory, instance, profile=profile)
    steps_file = directory / f"{profile}-{instance.seed}-0" / "steps.jsonl"
    history = [
        s["history_tokens"] for s in map(json.loads, steps_file.read_text().splitlines()) if s["kind"] == "agent"
    ]
    growth = max((b - a for a, b in zip(history, history[1:], strict=False)), default=0)
    return Pressure(bool(row["success"]), int(row["steps"]), int(row["final_history_tokens"]), growth)

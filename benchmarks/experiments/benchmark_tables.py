"""Tables printed by other benchmark scripts (no run folder): calibration.py and memory_pressure.py."""

from __future__ import annotations

import tempfile
from pathlib import Path


def calibration(results: Path) -> str:
    """The realistic reference agent on every recorded LLM run in this repository (benchmarks/calibration.py; no run
    folder). ``shared/calibration/`` is left out so that the docs reproduce from a clone alone."""
    import calibration as cal  # benchmarks/calibration.py

    found = cal.calibrate("realistic", 3, folders=cal.REPO_FOLDERS)
    if not found:
        return "(no calibration runs found)"
    return cal.report(found, "realistic", 3)


def issue34_families(results: Path) -> str:
    """The three families of issue 34: per strategy, the recorded LLM's successes and input tokens over its two
    instances (calibration/issue-34) beside the realistic reference agent's, 3 trials per recorded run."""
    import calibration as cal  # benchmarks/calibration.py

    found = cal.calibrate("realistic", 3, folders=(cal.ROOT / "calibration" / "issue-34",))
    if not found:
        return "(no recorded runs found in calibration/issue-34)"
    return (
        cal.strategy_table(found) + "\n\nLLM: a frontier-class LLM under relay protocol 2, one run per instance "
        "(seeds 0 and 1), budget 8k except `none`; ref: the reference agent (scripted, not an LLM), profile "
        "`realistic`, 3 trials per recorded run. Input tokens are means over the instances (all calls of a run)."
    )


def _memory_pressure(suite: str, instances: int, profiles: tuple[str, ...]) -> str:
    """benchmarks/memory_pressure.py's table for ``suite`` under ``profiles`` (no run folder)."""
    import memory_pressure as mp  # benchmarks/memory_pressure.py

    with tempfile.TemporaryDirectory() as tmp:
        rows = {p: mp.run(suite, p, instances, Path(tmp) / p) for p in profiles}
    return (
        mp.table(rows) + f"\n\nReference agent (scripted, not an LLM), strategy `none` at budget 1M, suite `{suite}` "
        f"({instances} instance(s) per family, 1 trial): `perfect` makes one call per step, `realistic` batches up "
        "to 8 calls it knows the arguments of, `greedy` every such call, up to the task's `max_calls_per_turn`; "
        "the early-submit draw is off (the table measures what the task demands)."
    )


def memory_pressure(results: Path) -> str:
    """History per family at default size, three profiles (issue 13 §1: past 40K over many rounds)."""
    return _memory_pressure("default", 2, ("perfect", "realistic", "greedy"))


def memory_pressure_long(results: Path) -> str:
    """History per family at long size, the two batching agents (issue 13 §1: past 120K over many rounds;
    ``perfect``, one call per step, is the slowest to run and batches nothing: ``memory_pressure.py --suite long``)."""
    return _memory_pressure("long", 1, ("realistic", "greedy"))

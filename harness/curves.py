"""Token-curve diagnosis (seed 000 §7.3): is a trial's curve a healthy sawtooth, monotonic, or pinned?

The curve is the prepared-request tokens of the trial's *agent* steps, in step order
(``request_tokens`` in ``steps.jsonl``), read against the trial's budget ``B``.

Shapes, decided in this order (thresholds are module constants, documented in
docs/analysis.md):

``short``      fewer than ``MIN_STEPS`` (3) agent steps: too short to have a shape.
``pinned``     at least ``PINNED_SHARE`` (50%) of the steps lie in the band
               ``|tokens - B| <= NEAR * B`` (NEAR = 10%): the curve runs flat along the budget
               line and the strategy is cutting at almost every step ("贴线平走").
``sawtooth``   not pinned, and at least one *drop*: a step-to-step decrease larger than
               ``DROP * B`` (DROP = 10%): the context grows, is brought down, grows again
               ("健康锯齿"). Small jitters of a window that slides by one message are not drops.
``monotonic``  no drop, and the curve grows: ``max - min > FLAT * max`` (FLAT = 10%) (only
               rises, never managed, "单调上涨"); this includes a curve that shoots past the budget.
``flat``       no drop, no growth worth the name (a trivial curve far below the budget).

``thrashing`` is flagged when the shape is ``pinned`` and the trial's re-read rate is above
``THRASH_REREAD`` (15%): the budget is so tight that what was just cut is fetched again
("抖动"; the seed's rule: above 15%, loosen the budget first).
"""
from __future__ import annotations

from typing import Iterable, Sequence

SHAPES = ("sawtooth", "monotonic", "pinned", "flat", "short")
MIN_STEPS = 3
NEAR = 0.10
PINNED_SHARE = 0.50
DROP = 0.10
FLAT = 0.10
THRASH_REREAD = 0.15


def curve_stats(tokens: Sequence[float], budget: float) -> dict:
    """Numbers the classification uses: steps, near-budget share, drops, growth."""
    values = [float(t) for t in tokens if t is not None]
    n = len(values)
    budget = float(budget or 0)
    if n == 0:
        return {"n": 0, "near_share": 0.0, "drops": 0, "growth": 0.0, "peak": 0.0}
    near = sum(1 for v in values if budget > 0 and abs(v - budget) <= NEAR * budget)
    drops = sum(1 for a, b in zip(values, values[1:]) if budget > 0 and a - b > DROP * budget)
    peak = max(values)
    return {"n": n, "near_share": near / n, "drops": drops, "growth": peak - min(values), "peak": peak}


def classify(tokens: Sequence[float], budget: float) -> str:
    """The shape of one curve: ``sawtooth``, ``monotonic``, ``pinned``, ``flat`` or ``short``."""
    stats = curve_stats(tokens, budget)
    if stats["n"] < MIN_STEPS:
        return "short"
    if stats["near_share"] >= PINNED_SHARE:
        return "pinned"
    if stats["drops"] >= 1:
        return "sawtooth"
    if stats["growth"] > FLAT * stats["peak"]:
        return "monotonic"
    return "flat"


def is_thrashing(shape: str, reread_rate: float | None) -> bool:
    """Pinned and re-reading more than 15% of its reads."""
    return shape == "pinned" and (reread_rate or 0.0) > THRASH_REREAD


def trial_curve_fields(tokens: Iterable[float], budget: float, reread_rate: float | None) -> dict:
    """The fields a trial row carries: ``curve_shape`` and ``thrashing``."""
    shape = classify(list(tokens), budget)
    return {"curve_shape": shape, "thrashing": is_thrashing(shape, reread_rate)}

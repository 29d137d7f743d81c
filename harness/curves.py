"""Token-curve diagnosis (source 000 §7.3): is a trial's curve a healthy sawtooth, monotonic, pinned, a plateau?

The curve is the prepared-request tokens of the trial's *agent* steps, in step order
(``request_tokens`` in ``steps.jsonl``), read as ``v = tokens / B`` against the trial's budget
``B``. Constants are module-level and documented in docs/analysis.md; the rules are built to be
robust to jitter (a window that slides by one message), to plateaus and to a single dip.

Two derived series:

- the *level*: the trailing mean of ``v`` over ``SMOOTH`` (4) steps (a jittery curve that cycles
  between 0.7 B and 0.95 B has a level near 0.85 B);
- the *cuts*, counted with hysteresis: a cut is a fall of more than ``CUT`` (20%) of ``B`` below
  the highest point since the previous cut; after a cut, the next one is only counted once the
  curve has risen again by more than ``CUT`` of ``B`` above its low point (jitter is not a cut).

Shapes, decided in this order:

``short``      fewer than ``MIN_STEPS`` (3) agent steps: too short to have a shape.
``monotonic``  *runaway*: at least ``RUNAWAY_SHARE`` (25%) of the steps above
               ``(1 + OVER) * B`` (OVER = 25%): the context escaped the budget, whatever dips it
               had on the way (growth to 4x the budget after one dip is monotonic, "单调上涨").
``pinned``     the curve *settles in the band* ``|level - B| <= BAND * B`` (BAND = 20%): from
               the first step whose level is in the band there are at least ``PIN_MIN_STEPS`` (5)
               steps and ``PIN_MIN_SHARE`` (25%) of the trial's steps, at least ``PINNED_SHARE``
               (75%) of them have their level in the band, and the mean level of their second half
               is within ``PIN_DRIFT`` (10%) of ``B`` of their first half's (it runs flat, it is
               not still climbing through the band). A ramp that runs flat along the budget line,
               or jitters just under it, is pinned: the strategy cuts at almost every step ("贴线平走").
``sawtooth``   not pinned and at least one cut: the context grows, is brought down, grows again
               ("健康锯齿").
``flat``       no cut, and ``max - min <= FLAT * max`` (FLAT = 10%): a trivial curve.
``plateau``    no cut, and the curve levels off below the band: its last ``PLATEAU_MIN_STEPS`` (8)
               and ``PLATEAU_SHARE`` (30%) of the steps or more have levels within ``PLATEAU_TOL``
               (15%) of their mean (held steady below the budget without cuts).
``monotonic``  otherwise: it only grows (never managed); this includes a curve past the budget.

``thrashing`` is decided from re-reads whatever the shape: the trial's re-read rate is above
``THRASH_REREAD`` (15%; the seed's rule: above 15%, loosen the budget first), or one resource
was read ``THRASH_REPEATS`` (4) or more times by the agent (fetched, cut, fetched again, again:
"抖动"). Records without the per-resource count use the re-read rate alone.
"""

from __future__ import annotations

from typing import Iterable, Sequence

SHAPES = ("sawtooth", "monotonic", "pinned", "plateau", "flat", "short")
CURVE_RULES = 2  # version of these rules; rows labelled by older rules are re-diagnosed on load
MIN_STEPS = 3
SMOOTH = 4
CUT = 0.20
OVER = 0.25
RUNAWAY_SHARE = 0.25
BAND = 0.20
PINNED_SHARE = 0.75
PIN_MIN_STEPS = 5
PIN_MIN_SHARE = 0.25
PIN_DRIFT = 0.10
FLAT = 0.10
PLATEAU_MIN_STEPS = 8
PLATEAU_SHARE = 0.30
PLATEAU_TOL = 0.15
THRASH_REREAD = 0.15
THRASH_REPEATS = 4
# kept for callers of the first version (the old names of the band and the drop)
NEAR = BAND
DROP = CUT


def _values(tokens: Sequence[float]) -> list[float]:
    return [float(t) for t in tokens if t is not None]


def smoothed(values: Sequence[float], window: int = SMOOTH) -> list[float]:
    """Trailing mean over ``window`` steps (fewer at the start)."""
    out = []
    for i in range(len(values)):
        part = values[max(0, i - window + 1) : i + 1]
        out.append(sum(part) / len(part))
    return out


def count_cuts(values: Sequence[float], depth: float) -> int:
    """Falls of more than ``depth`` below the running peak, re-armed by a rise of ``depth`` (hysteresis)."""
    cuts, armed = 0, True
    peak = low = values[0] if values else 0.0
    for v in values:
        if armed:
            peak = max(peak, v)
            if peak - v > depth:
                cuts, armed, low = cuts + 1, False, v
        else:
            low = min(low, v)
            if v - low > depth:
                armed, peak = True, v
    return cuts


def settled_in_band(level: Sequence[float], budget: float) -> tuple[int, float, float]:
    """From the first step whose level is within ``BAND`` of the budget: (steps, in-band share, drift).

    ``drift``: mean level of the second half of those steps minus that of the first half (tokens).
    """
    near = [abs(x - budget) <= BAND * budget for x in level]
    if budget <= 0 or not any(near):
        return 0, 0.0, 0.0
    start = near.index(True)
    tail, levels = near[start:], list(level[start:])
    half = len(levels) // 2
    drift = (sum(levels[half:]) / len(levels[half:]) - sum(levels[:half]) / half) if half else 0.0
    return len(tail), sum(tail) / len(tail), drift


def trailing_plateau(level: Sequence[float]) -> int:
    """Length of the longest final run of levels within ``PLATEAU_TOL`` of the run's mean (the curve levelled off)."""
    best = 0
    for start in range(len(level) - 1, -1, -1):
        run = level[start:]
        mean = sum(run) / len(run)
        if mean <= 0 or max(run) - min(run) > PLATEAU_TOL * mean:
            break
        best = len(run)
    return best


def curve_stats(tokens: Sequence[float], budget: float) -> dict:
    """Numbers the classification uses (see the module docstring)."""
    values = _values(tokens)
    n = len(values)
    budget = float(budget or 0)
    if n == 0:
        return {
            "n": 0,
            "cuts": 0,
            "over_share": 0.0,
            "settled": 0,
            "settled_share": 0.0,
            "drift": 0.0,
            "growth": 0.0,
            "peak": 0.0,
            "plateau": 0,
        }
    level = smoothed(values)
    settled, share, drift = settled_in_band(level, budget)
    over = sum(1 for v in values if budget > 0 and v > (1 + OVER) * budget)
    peak = max(values)
    return {
        "n": n,
        "cuts": count_cuts(values, CUT * budget) if budget > 0 else 0,
        "over_share": over / n,
        "settled": settled,
        "settled_share": share,
        "drift": drift,
        "growth": peak - min(values),
        "peak": peak,
        "plateau": trailing_plateau(level),
    }


def classify(tokens: Sequence[float], budget: float) -> str:
    """The shape of one curve: ``sawtooth``, ``monotonic``, ``pinned``, ``plateau``, ``flat`` or ``short``."""
    s = curve_stats(tokens, budget)
    n = s["n"]
    if n < MIN_STEPS:
        return "short"
    if s["over_share"] >= RUNAWAY_SHARE:
        return "monotonic"
    if (
        s["settled"] >= max(PIN_MIN_STEPS, PIN_MIN_SHARE * n)
        and s["settled_share"] >= PINNED_SHARE
        and abs(s["drift"]) <= PIN_DRIFT * float(budget)
    ):
        return "pinned"
    if s["cuts"] >= 1:
        return "sawtooth"
    if s["growth"] <= FLAT * s["peak"]:
        return "flat"
    if s["plateau"] >= max(PLATEAU_MIN_STEPS, PLATEAU_SHARE * n):
        return "plateau"
    return "monotonic"


def is_thrashing(shape: str | None, reread_rate: float | None, max_resource_reads: int | None = None) -> bool:
    """Re-read rate above 15%, or one resource read ``THRASH_REPEATS`` or more times; the shape does not matter.

    ``shape`` is accepted for the callers of the first version and ignored.
    """
    del shape
    return (reread_rate or 0.0) > THRASH_REREAD or (max_resource_reads or 0) >= THRASH_REPEATS


def trial_curve_fields(
    tokens: Iterable[float], budget: float, reread_rate: float | None, max_resource_reads: int | None = None
) -> dict:
    """The fields a trial row carries: ``curve_shape``, ``thrashing`` and ``curve_rules`` (the rules' version).

    ``max_resource_reads``: the most times the agent read any one resource in the trial (sub-agent
    reads excluded); ``None`` when unknown.
    """
    shape = classify(list(tokens), budget)
    return {
        "curve_shape": shape,
        "thrashing": is_thrashing(shape, reread_rate, max_resource_reads),
        "curve_rules": CURVE_RULES,
    }

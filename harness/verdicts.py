"""The decision of ``compare``: Holm's correction, the verdict of a candidate against the base, the Pareto frontier.

Plain Python on plain values (no pandas), so that the rules read and test on their own; harness/analysis.py
applies them to the paired comparison's rows and harness/report.py prints them (docs/regression_gate.md).

Per stratum of a candidate against the base (``verdict``):

- success is **higher** (**lower**) when McNemar's exact p, Holm-adjusted over the candidates, is below alpha
  and the candidate solved more (fewer) pairs;
- cost is **higher** when the cost ratio or the input-token ratio (candidate / base, paired) is above
  ``1 + tolerance`` with its 95% interval above 1; **lower** when the cost ratio (the input-token ratio when
  the base costs 0) is below ``1 - tolerance`` with its interval below 1, and no ratio is higher.

| success \\ cost | higher | same | lower |
|---|---|---|---|
| higher | trade-off: +N points for xR | better | better |
| same | worse | no detectable difference | better (no detectable difference when fewer successes) |
| lower | worse | worse | trade-off: -N points for xR |

"Same" success with fewer candidate successes than the base (a loss McNemar cannot show at this sample size) is
never called better: a lower cost then reads "no detectable difference ... (not significant) at lower cost".

The regression gate fails a candidate (``regression``) on lower success, and on higher cost only when success
is not higher: every ``worse`` and the trade-off that loses success.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

BETTER = "better"
TRADE_OFF = "trade-off"
WORSE = "worse"
NO_DIFFERENCE = "no detectable difference"
KINDS = (BETTER, TRADE_OFF, WORSE, NO_DIFFERENCE)
HIGHER, SAME, LOWER = "higher", "same", "lower"

RULE_LINES = (
    "rule: success differs when McNemar's exact p (Holm-adjusted over the candidates) < {alpha} (more or fewer "
    "successes); cost is higher when the cost or input-token ratio is above {high:.2f} with its 95% interval above "
    "1, lower when the cost ratio (input tokens when the base costs 0) is below {low:.2f} with its interval below 1",
    "verdicts: better = more successes at no higher cost, or lower cost at no detectable success difference "
    "(and no fewer successes); "
    "trade-off = more successes at higher cost, or fewer at lower cost; worse = fewer successes at no lower cost, "
    "or higher cost at no detectable success difference; otherwise no detectable difference at this sample size",
    "gate (--fail-on-regression exits 1): fewer successes, or higher cost or input tokens without more successes",
)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given: the i-th smallest p times (m - i + 1), made
    non-decreasing in that order and capped at 1. Reject where the adjusted p is below alpha."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class Ratio:
    """A paired ratio candidate / base of one measure (``cost`` or ``input tokens``) with its 95% interval."""

    measure: str
    value: float
    low: float
    high: float

    @property
    def known(self) -> bool:
        """Whether the ratio exists (the base's sum is above 0)."""
        return not math.isnan(self.value)

    def higher(self, tolerance: float) -> bool:
        """Above ``1 + tolerance`` with the interval's lower bound above 1."""
        return self.known and self.value > 1 + tolerance and self.low > 1

    def lower(self, tolerance: float) -> bool:
        """Below ``1 - tolerance`` with the interval's upper bound below 1."""
        return self.known and self.value < 1 - tolerance and self.high < 1

    def phrase(self) -> str:
        """``x1.26 cost`` / ``x0.57 input tokens``."""
        return f"x{self.value:.2f} {self.measure}"


@dataclass(frozen=True)
class Verdict:
    """One candidate stratum's verdict: its kind (``KINDS``), the sentence, and whether the gate fails it."""

    kind: str
    text: str
    regression: bool
    success: str
    cost: str
    reasons: list[str] = field(default_factory=list)


def ratios(row: Mapping[str, float]) -> list[Ratio]:
    """The cost and input-token ratios of a comparison row (``cost_ratio``, ``input_ratio`` and their intervals)."""
    return [
        Ratio(name, float(row[f"{key}"]), float(row[f"{key}_ci_low"]), float(row[f"{key}_ci_high"]))
        for name, key in (("cost", "cost_ratio"), ("input tokens", "input_ratio"))
    ]


def cost_change(measured: Sequence[Ratio], tolerance: float) -> tuple[str, Ratio | None]:
    """(``HIGHER``/``SAME``/``LOWER``, the ratio that says so): higher when any known ratio is higher; else lower
    when the primary ratio (the first known one: cost, else input tokens) is lower; the primary ratio for same."""
    known = [r for r in measured if r.known]
    rising = next((r for r in known if r.higher(tolerance)), None)
    if rising is not None:
        return HIGHER, rising
    primary = known[0] if known else None
    if primary is not None and primary.lower(tolerance):
        return LOWER, primary
    return SAME, primary


def success_change(base_successes: int, cand_successes: int, p_adjusted: float, alpha: float) -> str:
    """``HIGHER``/``LOWER`` when the adjusted p is below alpha and the candidate solved more/fewer, else ``SAME``."""
    if p_adjusted < alpha and cand_successes != base_successes:
        return HIGHER if cand_successes > base_successes else LOWER
    return SAME


def verdict(row: Mapping, p_adjusted: float, alpha: float, tolerance: float) -> Verdict:
    """The verdict of one comparison row (``analysis.paired``'s table) at the Holm-adjusted p (module docstring)."""
    success = success_change(int(row["base_successes"]), int(row["cand_successes"]), p_adjusted, alpha)
    measured = ratios(row)
    cost, ratio = cost_change(measured, tolerance)
    points = f"{100 * float(row['success_diff']):+.0f} points of success"
    fewer = int(row["cand_successes"]) < int(row["base_successes"])
    kind, text = _kind_and_text(success, cost, points, ratio, fewer)
    regression = success == LOWER or (cost == HIGHER and success != HIGHER)
    return Verdict(kind, text, regression, success, cost, _reasons(row, p_adjusted, success, measured, tolerance))


def _kind_and_text(success: str, cost: str, points: str, ratio: Ratio | None, fewer: bool) -> tuple[str, str]:
    """The verdict's kind and sentence for a success change and a cost change (the table of the module docstring;
    ``fewer``: the candidate solved fewer pairs, significantly or not)."""
    priced = f" ({ratio.phrase()})" if ratio is not None else ""
    if success == HIGHER:
        if cost == HIGHER and ratio is not None:
            return TRADE_OFF, f"{TRADE_OFF}: {points} for {ratio.phrase()}"
        detail = f"{points}, {ratio.phrase()}" if ratio is not None else points
        return BETTER, f"{BETTER}: more successes at equal or lower cost ({detail})"
    if success == LOWER:
        if cost == LOWER and ratio is not None:
            return TRADE_OFF, f"{TRADE_OFF}: {points} for {ratio.phrase()}"
        detail = f"{points}, {ratio.phrase()}" if ratio is not None else points
        return WORSE, f"{WORSE}: fewer successes at equal or higher cost ({detail})"
    if cost == HIGHER:
        return WORSE, f"{WORSE}: higher cost{priced} at no detectable difference in success"
    if cost == LOWER and not fewer:
        return BETTER, f"{BETTER}: lower cost{priced} at no detectable difference in success"
    if cost == LOWER:
        return NO_DIFFERENCE, f"{NO_DIFFERENCE} at this sample size: {points} (not significant) at lower cost{priced}"
    return NO_DIFFERENCE, f"{NO_DIFFERENCE} at this sample size"


def _reasons(row: Mapping, p_adjusted: float, success: str, measured: Sequence[Ratio], tolerance: float) -> list[str]:
    """Why the gate fails the row: the success loss, and each ratio that rose when success did not rise."""
    reasons = []
    if success == LOWER:
        pairs, p = int(row["pairs"]), float(row["mcnemar_p"])
        holm_part = "" if p_adjusted == p else f", Holm-adjusted {p_adjusted:.3g}"
        reasons.append(
            f"successes base {int(row['base_successes'])}/{pairs}, candidate {int(row['cand_successes'])}/{pairs} "
            f"(McNemar p={p:.3g}{holm_part})"
        )
    if success != HIGHER:
        for r in sorted(measured, key=lambda r: r.measure != "input tokens"):  # input tokens first, as before
            if r.higher(tolerance):
                reasons.append(f"{r.measure} x{r.value:.2f} [{r.low:.2f}, {r.high:.2f}]")
    return reasons


@dataclass(frozen=True)
class Point:
    """One arm on the success-vs-cost plane."""

    arm: str
    success: float
    cost: float


def pareto_frontier(points: Sequence[Point]) -> dict[str, list[str]]:
    """Per arm, the arms that dominate it (at least its success at no more cost, better in one): [] = on the
    frontier. An arm with an unknown (NaN) success or cost is dominated by nothing and dominates nothing."""

    def dominates(a: Point, b: Point) -> bool:
        if any(math.isnan(v) for v in (a.success, a.cost, b.success, b.cost)):
            return False
        return a.success >= b.success and a.cost <= b.cost and (a.success > b.success or a.cost < b.cost)

    return {p.arm: [q.arm for q in points if q.arm != p.arm and dominates(q, p)] for p in points}

"""``harness power``: how many paired instances detect a difference in success, for the gate's McNemar test.

``compare --fail-on-regression`` pairs the trials of two runs and tests their successes with McNemar's
exact two-sided test (``harness.analysis.mcnemar_exact``): of the ``m`` discordant pairs, ``b`` only the
base solves and ``c`` only the candidate solves, and p = min(1, 2 P(Binomial(m, 1/2) <= min(b, c))).
This module computes that test's power and the sample size it needs, the arithmetic docs/regression_gate.md
("How large the gate must be") sets out in prose.

Method: the exact unconditional power of the exact (conditional) McNemar test, with the pairs independent
draws of a multinomial (Miettinen, "The matched pairs design in the case of all-or-none responses",
Biometrics 24, 1968; Lachin, "Power and sample size evaluation for the McNemar test with application to
matched case-control studies", Statistics in Medicine 11, 1992). Per pair the better arm alone succeeds
with probability ``better_only``, the worse arm alone with ``worse_only``. Given ``m`` discordant pairs
(Binomial(n, better_only + worse_only)), the worse arm's wins ``c`` are Binomial(m, r) with
r = worse_only / (better_only + worse_only), and the test detects the difference when p < alpha with
``c`` the smaller count, i.e. when ``c <= k(m)``, the largest such count. So

    power(n) = sum over m of Binomial(m; n, better_only + worse_only) * P(Binomial(m, r) <= k(m)),

summed over the discordant counts within 12 standard deviations of their mean (the rest weighs less than
1e-30). The exact test's power is not monotone in n (a sawtooth): ``pairs_needed`` returns the smallest
number of pairs, in steps of one suite instance (``families x trials`` pairs), whose power reaches the target.

The discordant probabilities depend on how the two arms' outcomes go together within a pair, which the
success rates alone do not fix. By default the outcomes are taken as independent within a pair
(``better_only = p_hi (1 - p_lo)``, ``worse_only = p_lo (1 - p_hi)``); ``worse_only`` can be given instead
(docs/regression_gate.md's cases: the candidate wins 0, 1 or 2 pairs in 28 while losing 4 more than it wins).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from harness.errors import UsageError

DEFAULT_FAMILIES = 10  # the default suite's task families (configs/suite/default.yaml): pairs per instance at trials=1
MAX_PAIRS = 20_000  # the search stops here (2,000 instances of the default suite's 10 families)
TABLE_DELTAS = (0.05, 0.10, 0.15, 0.20, 0.30)  # the magnitudes of the table's rows (and the asked one)
WINDOW_SD = 12  # discordant counts summed: within this many standard deviations of their mean


class CriticalCounts:
    """``k(m)``: the most pairs the worse arm may win among ``m`` discordant pairs for McNemar's exact test to
    reject at ``alpha`` (-1 when no count does), for m = 0, 1, 2, ... The tails P(Binomial(m, 1/2) <= k) follow
    recurrences in m (floating point); a tail within ``TIE`` of the level is decided exactly, with integers."""

    TIE = 1e-9  # relative: closer than this to the level, a tail is summed exactly

    def __init__(self, alpha: float) -> None:
        self.alpha = alpha
        level = Fraction(str(alpha))
        self.num, self.den = level.numerator, level.denominator
        self.counts: list[int] = []
        self._k = -1  # k(m) of the last m computed
        self._cdf = 0.0  # P(X_m <= k), X_m ~ Binomial(m, 1/2)
        self._pmf = 0.0  # P(X_m = k)

    def _rejects(self, cdf: float, k: int, m: int) -> bool:
        """Whether McNemar's exact p of ``k`` wins of ``m``, 2 P(X_m <= k), is below the level."""
        if abs(2 * cdf - self.alpha) > self.TIE * self.alpha:
            return 2 * cdf < self.alpha
        tail = sum(math.comb(m, i) for i in range(k + 1))
        return 2 * tail * self.den < self.num << m

    def upto(self, most: int) -> list[int]:
        """``k(m)`` for every m up to ``most``."""
        while len(self.counts) <= most:
            m = len(self.counts)
            if m and self._k >= 0:  # from m - 1 to m at the same k
                self._cdf -= 0.5 * self._pmf
                self._pmf *= m / (m - self._k) * 0.5
            while self._k + 1 <= m:
                k = self._k + 1
                pmf = 0.5**m if k == 0 else self._pmf * (m - k + 1) / k
                if not self._rejects(self._cdf + pmf, k, m):
                    break
                self._k, self._pmf, self._cdf = k, pmf, self._cdf + pmf
            self.counts.append(self._k)
        return self.counts


class Detection:
    """``G(m) = P(Binomial(m, r) <= k(m))``: the chance that ``m`` discordant pairs reject, for m = 0, 1, ...
    By recurrences in m (floating point): P(X_{m+1} <= k) = P(X_m <= k) - r P(X_m = k)."""

    def __init__(self, worse_share: float, alpha: float) -> None:
        self.r = worse_share
        self.critical = CriticalCounts(alpha)
        self.values: list[float] = []
        self._k = -1
        self._cdf = 0.0  # P(X_m <= k)
        self._pmf = 0.0  # P(X_m = k)

    def upto(self, most: int) -> list[float]:
        """``G(m)`` for every m up to ``most``."""
        ks = self.critical.upto(most)
        r = self.r
        while len(self.values) <= most:
            m = len(self.values)
            if m and self._k >= 0:  # from m - 1 to m at the same k
                self._cdf -= r * self._pmf
                self._pmf *= m / (m - self._k) * (1 - r)
            while self._k < ks[m]:
                k = self._k + 1
                self._pmf = (1 - r) ** m if k == 0 else self._pmf * (m - k + 1) / k * (r / (1 - r))
                self._cdf += self._pmf
                self._k = k
            self.values.append(min(max(self._cdf, 0.0), 1.0) if self._k >= 0 else 0.0)
        return self.values


class _Tables:
    """``G(m)`` of a ``Detection`` and log-factorials as numpy arrays, grown geometrically as n grows."""

    def __init__(self, detection: Detection) -> None:
        import numpy as np  # heavy: loaded by harness power only, not at every command's start

        self.np = np
        self.detection = detection
        self.g = np.zeros(0)
        self.log_fact = np.zeros(0)

    def upto(self, most: int) -> None:
        """Make ``g`` and ``log_fact`` cover 0..``most``."""
        if len(self.g) > most:
            return
        size = max(most + 1, 2 * len(self.g), 64)
        self.g = self.np.asarray(self.detection.upto(size - 1), dtype=float)
        self.log_fact = self.np.asarray([math.lgamma(i + 1) for i in range(size)], dtype=float)


def power_at(n: int, better_only: float, worse_only: float, alpha: float, tables: _Tables | None = None) -> float:
    """The power of McNemar's exact two-sided test at level ``alpha`` on ``n`` independent pairs, to find the
    better arm better: P(p < alpha and the better arm wins more discordant pairs). ``tables``: those of a
    ``Detection`` of the same ``worse_only / (better_only + worse_only)`` and alpha, reused across n."""
    q = better_only + worse_only
    if n <= 0 or better_only <= 0:
        return 0.0
    t = tables or _Tables(Detection(worse_only / q, alpha))
    t.upto(n)
    if q >= 1:
        return float(t.g[n])
    sd = math.sqrt(n * q * (1 - q))
    low = max(0, math.floor(n * q - WINDOW_SD * sd - WINDOW_SD))
    high = min(n, math.ceil(n * q + WINDOW_SD * sd + WINDOW_SD))
    m = t.np.arange(low, high + 1)
    log_pmf = t.log_fact[n] - t.log_fact[m] - t.log_fact[n - m] + m * math.log(q) + (n - m) * math.log1p(-q)
    return min(1.0, float(t.np.exp(log_pmf) @ t.g[low : high + 1]))


def pairs_needed(
    better_only: float, worse_only: float, alpha: float, target: float, step: int = 1, most: int = MAX_PAIRS
) -> tuple[int, float] | None:
    """The smallest multiple of ``step`` pairs whose power (``power_at``) reaches ``target``, and that power;
    ``None`` when none up to ``most`` pairs does."""
    if better_only <= 0:
        return None
    tables = _Tables(Detection(worse_only / (better_only + worse_only), alpha))
    for n in range(step, most + 1, step):
        power = power_at(n, better_only, worse_only, alpha, tables)
        if power >= target:
            return n, power
    return None


# ---------------------------------------------------------------- the command


@dataclass(frozen=True)
class Question:
    """What ``harness power`` is asked: success ``base`` of the base arm, ``delta`` = candidate - base, the
    level, the power, trials per instance, task families per instance, and optionally the share of pairs
    that only the worse arm solves (``None``: the arms' outcomes independent within a pair)."""

    base: float
    delta: float
    alpha: float = 0.05
    power: float = 0.80
    trials: int = 1
    families: int = DEFAULT_FAMILIES
    worse_wins: float | None = None

    @property
    def cand(self) -> float:
        """The candidate's success rate."""
        return self.base + self.delta

    def discordant(self, delta: float | None = None) -> tuple[float, float]:
        """``(better_only, worse_only)``: per pair, the chance that only the better arm, or only the worse
        arm, succeeds (at ``delta``, by default the asked one)."""
        delta = self.delta if delta is None else delta
        hi, lo = max(self.base, self.base + delta), min(self.base, self.base + delta)
        if self.worse_wins is None:
            return hi * (1 - lo), lo * (1 - hi)
        return self.worse_wins + abs(delta), self.worse_wins


def feasible(question: Question, delta: float) -> str | None:
    """Why ``delta`` cannot be asked of ``question`` (``None`` when it can)."""
    cand = question.base + delta
    if not 0 <= cand <= 1:
        return f"base + delta = {cand:g} is not a success rate in [0, 1]"
    if question.worse_wins is not None:
        hi, lo = max(question.base, cand), min(question.base, cand)
        better, worse = question.discordant(delta)
        if worse > min(lo, 1 - hi) + 1e-12 or better > min(hi, 1 - lo) + 1e-12:
            return (
                f"--worse-wins {question.worse_wins:g} cannot hold with success rates {question.base:g} and {cand:g} "
                f"(at most {min(lo, 1 - hi):g})"
            )
    return None


def check(question: Question) -> None:
    """Raise ``UsageError`` (one line, exit 2) on a question that has no answer."""
    q = question
    for name, value in (("--base", q.base), ("--delta", q.delta), ("--alpha", q.alpha), ("--power", q.power)):
        if not math.isfinite(value):
            raise UsageError(f"power: {name} must be a number, not {value}")
    if not 0 <= q.base <= 1:
        raise UsageError(f"power: --base {q.base:g} is not a success rate in [0, 1]")
    if q.delta == 0:
        raise UsageError("power: --delta 0 asks for no difference (give candidate - base, e.g. --delta -0.2)")
    if not 0 < q.alpha < 1:
        raise UsageError(f"power: --alpha {q.alpha:g} must be in (0, 1)")
    if not 0 < q.power < 1:
        raise UsageError(f"power: --power {q.power:g} must be in (0, 1)")
    if q.trials < 1 or q.families < 1:
        raise UsageError(f"power: --trials and --families must be at least 1 (got {q.trials}, {q.families})")
    if q.worse_wins is not None and not (math.isfinite(q.worse_wins) and q.worse_wins >= 0):
        raise UsageError(f"power: --worse-wins {q.worse_wins:g} must be a share of pairs, at least 0")
    why = feasible(q, q.delta)
    if why:
        raise UsageError(f"power: {why}")


def answer(question: Question, delta: float | None = None) -> tuple[int, float] | None:
    """``(pairs, power)`` for ``delta`` (by default the asked one), pairs in steps of one instance."""
    better, worse = question.discordant(delta)
    return pairs_needed(better, worse, question.alpha, question.power, question.families * question.trials)


def _size(question: Question, pairs: int) -> str:
    """``90 pairs = suite.instances=9 x 10 families x trials=1``."""
    instances = pairs // (question.families * question.trials)
    return f"{pairs:,} pairs = suite.instances={instances} x {question.families} families x trials={question.trials}"


def _sides(delta: float, better: float, worse: float) -> tuple[float, float]:
    """``(base-only, candidate-only)`` from the better and worse arm's lone successes at ``delta``."""
    return (worse, better) if delta > 0 else (better, worse)


def report_lines(question: Question) -> list[str]:
    """What ``harness power`` prints: the answer in one line, what it assumes, and a table of a few deltas."""
    q = question
    change = f"success {q.base:.2f} -> {q.cand:.2f} ({q.delta:+.2f})"
    found = answer(q)
    if found is None:
        head = f"power: more than {MAX_PAIRS:,} pairs are needed to detect {change} with power {q.power:.2f}"
    else:
        pairs, power = found
        head = f"power: {_size(q, pairs)} detect {change} with power {power:.3f} (wanted {q.power:.2f})"
    base_only, cand_only = _sides(q.delta, *q.discordant())
    how = (
        "the two arms' outcomes independent within a pair; --worse-wins sets the rarer one"
        if q.worse_wins is None
        else "--worse-wins"
    )
    lines = [
        f"{head} at alpha {q.alpha:g}",
        f"assumes: McNemar's exact two-sided test (compare --fail-on-regression) on independent pairs; per pair "
        f"P(base alone succeeds) {base_only:.4f}, P(candidate alone) {cand_only:.4f} ({how})",
    ]
    if q.trials > 1:
        lines.append(
            "note: repeated trials of one instance are not independent draws (docs/regression_gate.md): "
            "more instances are the safer way to more pairs"
        )
    sign = 1 if q.delta > 0 else -1
    deltas = sorted({round(sign * d, 10) for d in (*TABLE_DELTAS, abs(q.delta))}, key=abs)
    lines.append(
        f"{'delta':>6}  {'base -> cand':>12}  {'base-only':>9}  {'cand-only':>9}  {'pairs':>8}  "
        f"{'suite.instances':>15}  power"
    )
    for delta in deltas:
        if feasible(q, delta):
            continue
        base_only, cand_only = _sides(delta, *q.discordant(delta))
        row = answer(q, delta)
        cells = (
            (f"> {MAX_PAIRS:,}", "", "")
            if row is None
            else (f"{row[0]:,}", str(row[0] // (q.families * q.trials)), f"{row[1]:.3f}")
        )
        lines.append(
            f"{delta:+6.2f}  {q.base:.2f} -> {q.base + delta:.2f}  {base_only:9.4f}  {cand_only:9.4f}  "
            f"{cells[0]:>8}  {cells[1]:>15}  {cells[2]}".rstrip()
        )
    return lines


def cmd_power(question: Question) -> int:
    """``harness power``: print ``report_lines``; a question without an answer is one line, exit 2."""
    check(question)
    for line in report_lines(question):
        print(line)
    return 0

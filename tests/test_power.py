"""``harness power``: the McNemar power arithmetic of docs/regression_gate.md, exact small cases, the command."""

import itertools
from fractions import Fraction
from math import comb

import pytest

from harness.analysis import mcnemar_exact
from harness.errors import UsageError
from harness.power import CriticalCounts, Question, check, pairs_needed, power_at, report_lines
from tests.test_cli import harness


def exact_power(n: int, better_only: Fraction, worse_only: Fraction, alpha: float) -> Fraction:
    """The power by enumerating every (b, c) of n pairs, with the gate's own p-value (``mcnemar_exact``)."""
    rest = 1 - better_only - worse_only
    return sum(
        (
            comb(n, b) * comb(n - b, c) * better_only**b * worse_only**c * rest ** (n - b - c)
            for b in range(n + 1)
            for c in range(n - b + 1)
            if c < b and mcnemar_exact(b, c) < alpha
        ),
        Fraction(0),
    )


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.1, 0.0625, 0.03125])  # 2 x 0.5**5, 0.5**5: p-values equal to alpha
def test_critical_counts_are_the_gates_rejections(alpha):
    counts = CriticalCounts(alpha).upto(80)
    for m in range(81):
        rejected = [c for c in range(m + 1) if c < m - c and mcnemar_exact(m - c, c) < alpha]
        assert counts[m] == max(rejected, default=-1), m


@pytest.mark.parametrize(
    "better_only,worse_only,alpha",
    [
        (Fraction(4, 28), Fraction(0), 0.05),
        (Fraction(5, 28), Fraction(1, 28), 0.05),
        (Fraction(3, 10), Fraction(1, 5), 0.1),
    ],
)
def test_power_is_the_exact_enumeration(better_only, worse_only, alpha):
    for n in itertools.chain(range(1, 26), (40,)):
        assert power_at(n, float(better_only), float(worse_only), alpha) == pytest.approx(
            float(exact_power(n, better_only, worse_only, alpha)), abs=1e-12
        ), n


@pytest.mark.parametrize(
    "wins,pairs,power",  # docs/regression_gate.md: the candidate loses 4 pairs in 28 more than it wins
    [(0, 60, 0.8752), (1, 90, 0.8263), (2, 120, 0.8111)],  # the page: 60 (0.87), 90 (0.83), 120 (0.81)
)
def test_the_gate_page_numbers(wins, pairs, power):
    found = pairs_needed((4 + wins) / 28, wins / 28, 0.05, 0.80, step=10)  # in instances of 10 families
    assert found is not None and found[0] == pairs and found[1] == pytest.approx(power, abs=5e-5)
    exact = exact_power(pairs, Fraction(4 + wins, 28), Fraction(wins, 28), 0.05)
    assert found[1] == pytest.approx(float(exact), abs=1e-12)


def test_independent_arms_and_given_worse_wins():
    assert Question(0.6, -0.2).discordant() == pytest.approx((0.6 * 0.6, 0.4 * 0.4))
    assert Question(0.6, 0.2).discordant() == pytest.approx((0.8 * 0.4, 0.6 * 0.2))
    assert Question(0.6, -0.2, worse_wins=0.05).discordant() == pytest.approx((0.25, 0.05))


@pytest.mark.parametrize(
    "question,needle",
    [
        (Question(1.2, -0.2), "--base 1.2 is not a success rate"),
        (Question(0.6, 0.0), "--delta 0 asks for no difference"),
        (Question(0.6, 0.5), "base + delta = 1.1 is not a success rate"),
        (Question(0.6, -0.2, alpha=1.0), "--alpha 1 must be in (0, 1)"),
        (Question(0.6, -0.2, power=0.0), "--power 0 must be in (0, 1)"),
        (Question(0.6, -0.2, trials=0), "--trials and --families must be at least 1"),
        (Question(0.6, 0.2, worse_wins=0.5), "--worse-wins 0.5 cannot hold"),
        (Question(float("nan"), 0.2), "--base must be a number"),
    ],
)
def test_bad_questions_are_refused(question, needle):
    with pytest.raises(UsageError) as refused:
        check(question)
    assert needle in str(refused.value)


def test_report_lines_answer_in_one_line_and_tabulate_a_few_deltas():
    lines = report_lines(Question(0.6, -0.2, trials=2))
    assert lines[0] == (
        "power: 120 pairs = suite.instances=6 x 10 families x trials=2 detect success 0.60 -> 0.40 (-0.20) "
        "with power 0.848 (wanted 0.80) at alpha 0.05"
    )
    assert lines[1].startswith("assumes: McNemar's exact two-sided test") and lines[2].startswith("note: repeated")
    table = lines[lines.index(next(line for line in lines if line.lstrip().startswith("delta"))) + 1 :]
    assert [row.split()[0] for row in table] == ["-0.05", "-0.10", "-0.15", "-0.20", "-0.30"]
    assert table[3].split()[-3:] == ["120", "6", "0.848"]


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_the_command(tmp_path):
    ok = harness("power", "--base", "0.6", "--delta", "-0.2", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines()[0].startswith("power: 110 pairs = suite.instances=11 x 10 families x trials=1 detect")
    for args in (["--base", "0.6"], ["--base", "0.6", "--delta", "0.5"], ["--base", "x", "--delta", "0.1"]):
        bad = harness("power", *args, cwd=tmp_path)
        assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1, args

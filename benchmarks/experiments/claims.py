"""The source chapters' published claims (configs/claims/<preset>.yaml) and the one verdict function.

A claim file names its preset and a default source and lists claims; each claim has an ``id``, the published
``figure`` (a number or a text), its ``source`` ("source 00N §x.y" or a chapter title), the ``measure`` it is
compared with (what the preset's measure function computes), a ``tolerance`` and a ``compare`` rule:

- ``near``: reproduced when |measured - figure| <= tolerance;
- ``ratio``: reproduced when |measured / figure - 1| <= tolerance;
- ``at_least`` / ``at_most``: reproduced when measured >= figure - tolerance / <= figure + tolerance;
- ``above`` / ``below``: the same, strictly.

``partly`` (optional): a weaker bound, ``{compare: RULE, bound: NUMBER}``; met, the verdict is ``partly``.
``otherwise`` (default ``not``): the verdict when neither is met. ``ceiling`` (default ``reproduced``): the best
verdict the claim can get (``partly`` where ours is a model of the effect, not a measurement).
``text`` is the claim as a verdict table shows it (default: the figure). A table cell that only shows a
published figure is a claim too (``compare: near``). The measure functions of benchmarks/experiments/<preset>.py
compute the measured value and the reason and call ``judge``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from .common import ROOT, table

CLAIMS_DIR = ROOT / "configs" / "claims"
VERDICTS = ("reproduced", "partly", "not")
COMPARE = ("near", "ratio", "at_least", "at_most", "above", "below")
REQUIRED = ("id", "figure", "source", "measure", "tolerance")
VERDICT_HEADER = ["published figure", "ours", "verdict", "reason"]


@dataclass(frozen=True)
class Claim:
    """One published claim of a source chapter, and how a measured value is judged against it."""

    preset: str
    id: str
    figure: float | int | str
    source: str
    measure: str
    tolerance: float
    compare: str = "near"
    partly: dict | None = None
    otherwise: str = "not"
    ceiling: str = "reproduced"
    text: str = ""

    @property
    def shown(self) -> str:
        """The claim as a verdict table's first column shows it."""
        return self.text or str(self.figure)


@dataclass(frozen=True)
class Verdict:
    """reproduced / partly / not, and why."""

    verdict: str
    reason: str


def holds(compare: str, value: float, bound: float, tolerance: float = 0.0) -> bool:
    """Whether ``value`` meets ``bound`` under rule ``compare`` (module docstring), ``tolerance`` allowed."""
    if compare == "near":
        return abs(value - bound) <= tolerance
    if compare == "ratio":
        return abs(value / bound - 1) <= tolerance
    low, high = round(bound - tolerance, 12), round(bound + tolerance, 12)
    checks = {
        "at_least": value >= low,
        "at_most": value <= high,
        "above": value > low,
        "below": value < high,
    }
    if compare not in checks:
        raise ValueError(f"unknown compare rule {compare!r} (valid: {', '.join(COMPARE)})")
    return checks[compare]


def judge(claim: Claim, measured: float, *, gate: bool = True, partly: bool | None = None, reason: str = "") -> Verdict:
    """The verdict on ``claim`` given the ``measured`` value, and why.

    ``gate`` False: ``not`` whatever the value (a precondition the measure function checked failed).
    ``partly``: overrides the claim's partly bound with the measure function's own finding.
    ``reason``: the measure function's explanation; by default the comparison itself.
    """
    if not gate:
        verdict = "not"
    elif holds(claim.compare, measured, float(claim.figure), claim.tolerance):
        verdict = "reproduced"
    elif partly if partly is not None else _partly_bound(claim, measured):
        verdict = "partly"
    else:
        verdict = claim.otherwise
    verdict = max(verdict, claim.ceiling, key=VERDICTS.index)
    return Verdict(verdict, reason or _default_reason(claim, measured, verdict))


def _partly_bound(claim: Claim, measured: float) -> bool:
    """Whether ``measured`` meets the claim's weaker (partly) bound; False when it has none."""
    if not claim.partly:
        return False
    return holds(claim.partly.get("compare", claim.compare), measured, float(claim.partly["bound"]))


def _default_reason(claim: Claim, measured: float, verdict: str) -> str:
    """``measure``: measured against the figure, the rule and the tolerance."""
    return (
        f"{claim.measure}: {measured:g} against {claim.figure} ({claim.compare}, tolerance {claim.tolerance:g}): "
        f"{verdict}"
    )


def verdict_row(claim: Claim, ours: str, verdict: Verdict) -> tuple[str, str, str, str]:
    """One row of a verdict table."""
    return (claim.shown, ours, verdict.verdict, verdict.reason)


def verdict_table(rows: list[tuple[str, str, str, str]]) -> str:
    """A preset's verdict: published figure | ours | reproduced / partly / not | why (every cell computed)."""
    return table(VERDICT_HEADER, [list(r) for r in rows])


def claim_files() -> list[Path]:
    """Every claim file, sorted."""
    return sorted(CLAIMS_DIR.glob("*.yaml"))


def parse(data: dict[str, Any], name: str) -> list[Claim]:
    """The claims of one claim file's data (``name``: the file's stem, the preset by default)."""
    preset = data.get("preset", name)
    default = {"source": data.get("source")} if data.get("source") else {}
    return [Claim(preset=preset, **{**default, **item}) for item in data.get("claims", [])]


@cache
def claims(preset: str) -> dict[str, Claim]:
    """Preset ``preset``'s claims by id (configs/claims/<preset>.yaml)."""
    path = CLAIMS_DIR / f"{preset}.yaml"
    return {c.id: c for c in parse(yaml.safe_load(path.read_text()) or {}, preset)}


def figure(preset: str, claim_id: str) -> float | int | str:
    """The published figure of one claim."""
    return claims(preset)[claim_id].figure

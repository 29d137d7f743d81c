"""configs/claims/*.yaml: the claims' schema, their presets, and the one verdict function on made-up inputs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from experiments.claims import COMPARE, REQUIRED, VERDICTS, Claim, claim_files, claims, judge, parse  # noqa: E402

TITLES = {"Lost in the Middle"}  # chapter titles a claim may name as its source instead of "source 00N ..."
FILES = claim_files()


def load(path: Path) -> dict:
    """One claim file's data."""
    return yaml.safe_load(path.read_text()) or {}


def test_there_is_a_claim_file_per_preset_with_a_verdict():
    from experiments.registry import TABLES

    verdicts = {name.removesuffix("_verdict") for name in TABLES if name.endswith("_verdict")}
    assert verdicts <= {p.stem for p in FILES}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_claim_has_the_schema(path):
    data = load(path)
    assert data.get("claims"), f"{path.name}: no claims"
    ids = [item.get("id") for item in data["claims"]]
    assert len(ids) == len(set(ids)), f"{path.name}: duplicate ids"
    for claim in parse(data, path.stem):
        where = f"{path.name}: {claim.id}"
        for field in REQUIRED:
            assert getattr(claim, field) not in (None, ""), f"{where}: no {field}"
        assert isinstance(claim.figure, int | float | str), where
        assert claim.source.startswith("source ") or claim.source in TITLES, f"{where}: source {claim.source!r}"
        assert "seed" not in claim.source.lower(), where
        assert isinstance(claim.tolerance, int | float) and not isinstance(claim.tolerance, bool), where
        assert claim.tolerance >= 0, where
        assert claim.compare in COMPARE, where
        assert claim.otherwise in VERDICTS and claim.ceiling in VERDICTS, where
        if claim.partly is not None:
            assert claim.partly.get("compare", claim.compare) in COMPARE, where
            assert isinstance(claim.partly["bound"], int | float), where


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_claim_names_an_existing_preset(path):
    """A claim's preset is a file of configs/experiment/, or (``computed: true``) a demo computed without a run."""
    from experiments.registry import TABLES, source_of
    from experiments.runner import PRESETS

    data = load(path)
    for claim in parse(data, path.stem):
        if data.get("computed"):
            assert claim.preset in TABLES and source_of(claim.preset) == claim.preset, claim.preset
            assert claim.preset not in PRESETS
        else:
            assert (ROOT / "configs" / "experiment" / f"{claim.preset}.yaml").exists(), claim.preset
            assert claim.preset == path.stem


def _claim(**kw) -> Claim:
    base = {"preset": "review44", "id": "x", "figure": 0.76, "source": "source 002", "measure": "m", "tolerance": 0.1}
    return Claim(**{**base, **kw})


def test_the_verdict_function_returns_each_verdict():
    saving = _claim(compare="at_least", partly={"compare": "above", "bound": 0.1})
    assert judge(saving, 0.70).verdict == "reproduced"
    assert judge(saving, 0.66).verdict == "reproduced", "the bound is figure - tolerance, rounded"
    assert judge(saving, 0.40).verdict == "partly"
    assert judge(saving, 0.10).verdict == "not", "partly's bound is strict here"
    assert judge(saving, 0.90, gate=False).verdict == "not"
    assert {judge(saving, v).verdict for v in (0.7, 0.4, 0.0)} == set(VERDICTS)


def test_near_ratio_at_most_below_otherwise_and_ceiling():
    near = _claim(figure=50_000, tolerance=10_000, otherwise="partly")
    assert [judge(near, v).verdict for v in (41_000, 61_000, float("nan"))] == ["reproduced", "partly", "partly"]
    ratio = _claim(figure=21_633, compare="ratio", tolerance=0.1)
    assert [judge(ratio, v).verdict for v in (23_000, 30_000)] == ["reproduced", "not"]
    below = _claim(figure=0, compare="below", tolerance=0)
    assert [judge(below, v).verdict for v in (-0.1, 0.0)] == ["reproduced", "not"]
    assert judge(below, 0.0, partly=True).verdict == "partly", "the measure function's own partly finding"
    capped = _claim(figure=1, compare="at_least", tolerance=0, ceiling="partly")
    assert [judge(capped, v).verdict for v in (3, 0)] == ["partly", "not"]


def test_a_verdict_has_a_reason():
    claim = _claim(compare="at_most", figure=3, tolerance=0, measure="budget / working set")
    assert judge(claim, 2.5).reason.startswith("budget / working set: 2.5 against 3")
    assert judge(claim, 4, reason="too small").reason == "too small"
    with pytest.raises(ValueError):
        judge(_claim(compare="roughly"), 1)


def test_the_tables_read_their_figures_from_the_claims():
    assert claims("review44")["none.input_tokens"].figure == 915_591
    assert claims("three_versions")["baseline.tokens"].figure == 21_633
    assert claims("status_bar")["cost_model.alpha"].figure == 0.1

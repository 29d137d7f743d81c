"""The default pricing (issue 35): an offline run is priced as a named representative model, said in the run
header; ``pricing=none`` prices nothing; the docs name the same default as configs/config.yaml."""

import pytest

from harness.pricing import (
    REPRESENTATIVE_MODEL,
    RepresentativePrice,
    database_version,
    header,
    lookup,
    pricing_from,
)
from harness.records import read_jsonl
from tests.test_cli import ROOT, VOLATILE, harness

SCRIPTED_SPEC = {"name": "scripted", "_target_": "reference_agent.scripted.ScriptedModel"}
COST_FIELDS = ("pricing", "price_source")  # besides every field whose name ends in "cost" or "cost_uncached"
HEADER = "pricing: auto -> priced as openai/gpt-4.1-mini (representative: the reference agent is not an LLM; "
SOURCE = f"genai-prices {database_version()} openai/gpt-4.1-mini (representative: the reference agent is not an LLM)"


def test_auto_prices_the_reference_agent_as_the_representative_model():
    price = pricing_from({"name": "auto"}, SCRIPTED_SPEC)
    known = lookup(REPRESENTATIVE_MODEL, "https://api.openai.com/v1")
    assert isinstance(price, RepresentativePrice) and price.name == "auto" and price.source == SOURCE
    assert price.per_million() == known.per_million() and price.input > 0 and price.output > 0
    assert price.cost(10_000, 4_000, 300) == pytest.approx(known.cost(10_000, 4_000, 300), rel=1e-12)
    assert "pricing: " + header(price) == HEADER + "pricing=none to turn off)"


def test_pricing_none_stays_free_and_says_only_its_name():
    price = pricing_from({"name": "none", "input": 0.0, "cached_input": 0.0, "output": 0.0}, SCRIPTED_SPEC)
    assert price.name == "none" and price.cost(10_000, 4_000, 300) == 0.0 and header(price) == "none"


def _without_costs(rows: list[dict]) -> list[dict]:
    return [
        {
            k: v
            for k, v in row.items()
            if k not in (*COST_FIELDS, *VOLATILE) and not k.endswith(("cost", "cost_uncached"))
        }
        for row in rows
    ]


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_an_offline_run_is_priced_by_default_and_pricing_none_changes_only_its_costs(tmp_path):
    common = ["suite=smoke", "strategy=headtail", "budget=2k", "trials=1", "progress=false", "plots=false"]
    priced = harness("run", *common, f"hydra.run.dir={tmp_path / 'auto'}", cwd=tmp_path)
    free = harness("run", *common, "pricing=none", f"hydra.run.dir={tmp_path / 'none'}", cwd=tmp_path)
    assert priced.returncode == 0 and free.returncode == 0, priced.stderr + free.stderr
    assert HEADER in priced.stdout and "pricing: none  cache profile:" in free.stdout
    auto_rows, none_rows = (read_jsonl(tmp_path / name / "trials.jsonl") for name in ("auto", "none"))
    assert all(row["cost"] > 0 and row["pricing"] == "auto" and row["price_source"] == SOURCE for row in auto_rows)
    assert all(row["cost"] == 0 and row["pricing"] == "none" for row in none_rows)
    assert _without_costs(auto_rows) == _without_costs(none_rows)
    cost_line = next(line for line in priced.stdout.splitlines() if line.startswith("headtail@2k"))
    assert not cost_line.endswith(" 0.0000")


def test_the_docs_name_the_configured_default():
    config = (ROOT / "configs" / "config.yaml").read_text()
    assert "  - pricing: auto " in config
    backends = (ROOT / "docs" / "backends.md").read_text()
    pricing = (ROOT / "docs" / "pricing.md").read_text()
    assert "`none` (default)" not in backends and "`auto` (the default" in backends
    assert "`pricing=auto` (the default)" in pricing and REPRESENTATIVE_MODEL in pricing

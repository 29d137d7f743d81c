"""pricing=auto: every call priced from the genai-prices database by the model that made it (offline)."""

import pickle
import re

import genai_prices
import pytest
from genai_prices import data_snapshot

from harness import pricing as pricing_module
from harness.accounting import CallRecorder
from harness.cache_sim import PROFILES
from harness.trial import TrialSettings, run_trial
from harness.models.openai_backend import OpenAIModel
from harness.pricing import (
    AutoPricing,
    ModelRef,
    Pricing,
    database_version,
    disagreement,
    lookup,
    price_line,
    pricing_from,
)
from harness.records import RunWriter, read_jsonl
from harness.tokens import TokenCounter
from strategies.none import NoManagement
from tasks.invoice_audit import InvoiceAudit
from tests.test_cli import harness
from tests.test_openai_backend import Fake, body, call_message, httpx, ok

OPENAI_SPEC = {
    "name": "openai",
    "_target_": "harness.models.openai_backend.OpenAIModel",
    "base_url": "https://api.openai.com/v1",
    "model": "gpt-4.1-mini",
    "api_key_env": "OPENAI_API_KEY",
}
SCRIPTED_SPEC = {"name": "scripted", "_target_": "reference_agent.scripted.ScriptedModel"}
VERSION = database_version()


def db_cost(model_ref: str, prompt: int, cached: int, output: int, writes: int = 0) -> float:
    """What genai-prices itself says one call costs."""
    usage = genai_prices.Usage(
        input_tokens=prompt, cache_read_tokens=cached, cache_write_tokens=writes, output_tokens=output
    )
    return float(genai_prices.calc_price(usage, model_ref).total_price)


def db_prices(model_ref: str) -> dict:
    """genai-prices' own per-1M prices of ``model_ref`` (input, cache read, cache write, output)."""
    found = genai_prices.calc_price(genai_prices.Usage(input_tokens=0), model_ref).model_price
    return {
        "input": float(found.input_mtok),
        "cached_input": float(found.cache_read_mtok),
        "output": float(found.output_mtok),
        "cache_write": None if found.cache_write_mtok is None else float(found.cache_write_mtok),
    }


@pytest.fixture
def warned(monkeypatch):
    """The warning lines ``harness.pricing.warn`` prints (each test sees its own, once per line)."""
    seen = []
    monkeypatch.setattr(pricing_module, "_warned", set())
    monkeypatch.setattr(pricing_module, "log", pricing_module.logging.getLogger("ctxbench-test-pricing"))
    original = pricing_module.warn

    def capture(line):
        if line not in pricing_module._warned:  # what is printed: each line once
            seen.append(line)
        original(line)

    monkeypatch.setattr(pricing_module, "warn", capture)
    return seen


# ---------------------------------------------------------------- the database, offline


def test_lookup_uses_the_bundled_data_even_when_another_snapshot_is_set():
    lookup.cache_clear()
    data_snapshot.set_custom_snapshot(data_snapshot.DataSnapshot(providers=[], from_auto_update=True))
    try:
        price = lookup("gpt-4.1-mini")
    finally:
        data_snapshot.set_custom_snapshot(None)
        lookup.cache_clear()
    assert price is not None and price.source == f"genai-prices {VERSION} openai/gpt-4.1-mini"
    assert pricing_module._snapshot().from_auto_update is False


def test_a_database_price_costs_what_genai_prices_says():
    for ref, call in [
        ("gpt-4.1-mini", (120_000, 80_000, 3_000, 0)),
        ("claude-sonnet-4-6", (50_000, 20_000, 900, 10_000)),
    ]:
        price = lookup(ref)
        assert price.cost(*call) == pytest.approx(db_cost(ref, *call), rel=1e-12)
        assert {k: price.per_million()[k] for k in ("input", "cached_input", "output", "cache_write")} == db_prices(ref)


def test_auto_pricing_survives_pickling_for_process_workers():
    auto = pricing_from({"name": "auto"}, OPENAI_SPEC)
    again = pickle.loads(pickle.dumps(auto))
    assert isinstance(again, AutoPricing) and again.source == auto.source and again.input == auto.input


# ---------------------------------------------------------------- which model a call is priced by


def test_the_reported_model_comes_first_then_the_configured_one(warned):
    auto = pricing_from({"name": "auto"}, OPENAI_SPEC)
    assert auto.price_for("agent").source.endswith("openai/gpt-4.1-mini")
    assert auto.price_for("agent", "gpt-4.1-2025-04-14").source.endswith("openai/gpt-4.1")
    assert auto.price_for("agent", "a-proxy-name-for-it").source.endswith("openai/gpt-4.1-mini")
    assert warned == []


def test_the_summarizer_is_priced_by_its_own_model():
    summarizer = {**OPENAI_SPEC, "name": "summ", "model": "gpt-4.1"}
    auto = pricing_from({"name": "auto"}, OPENAI_SPEC, summarizer)
    assert auto.price_for("summarizer").source.endswith("openai/gpt-4.1")
    assert auto.price_for("subagent").source.endswith("openai/gpt-4.1-mini")


def test_the_reference_agent_is_priced_as_the_representative_model():
    price = pricing_from({"name": "auto"}, SCRIPTED_SPEC)  # issue 35: never silently $0 (tests/test_pricing_default.py)
    assert price.name == "auto" and price.source == f"genai-prices {VERSION} openai/gpt-4.1-mini " + (
        "(representative: the reference agent is not an LLM)"
    )
    assert price.cost(10_000, 5_000, 300) == pytest.approx(db_cost("gpt-4.1-mini", 10_000, 5_000, 300), rel=1e-12)
    summarizer = pricing_from({"name": "auto"}, SCRIPTED_SPEC, OPENAI_SPEC)  # the summarizer is an LLM: its own model
    assert summarizer.price_for("summarizer").source == f"genai-prices {VERSION} openai/gpt-4.1-mini"
    assert summarizer.price_for("agent") == price


def test_an_unknown_model_warns_once_and_costs_nothing(warned, capsys):
    spec = {**OPENAI_SPEC, "model": "no-such-model-xyz", "base_url": "https://llm.example/v1"}
    auto = pricing_from({"name": "auto"}, spec)
    auto.price_for("agent", "no-such-model-xyz")
    assert auto.cost(1_000, 0, 100) == 0.0
    assert auto.source == f"genai-prices {VERSION}: unknown model no-such-model-xyz (cost 0)"
    assert len(warned) == 1 and "model no-such-model-xyz is not in genai-prices" in warned[0]
    err = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(err) == 1 and err[0].startswith("warning: pricing=auto: model no-such-model-xyz")


def test_a_model_served_on_this_machine_costs_nothing_without_a_warning(warned):
    auto = pricing_from(
        {"name": "auto"},
        {
            **OPENAI_SPEC,
            "model": "Qwen/Qwen2.5-Coder-7B-Instruct",
            "base_url": "http://127.0.0.1:8000/v1",
            "api_key_env": None,
        },
    )
    assert auto.cost(1_000, 0, 100) == 0.0 and auto.source.startswith("none: a model served on this machine")
    assert warned == []


# ---------------------------------------------------------------- overrides


def test_an_override_that_disagrees_by_more_than_20_percent_warns(warned):
    profile = {"name": "openai-like", "input": 2.0, "cached_input": 0.5, "output": 8.0}
    assert pricing_from(profile, OPENAI_SPEC) == Pricing(**profile)  # the override still prices the run
    assert len(warned) == 1
    assert warned[0].startswith(
        f"pricing=openai-like differs from genai-prices {VERSION} openai/gpt-4.1-mini by more than 20%"
    )
    mini = db_prices("gpt-4.1-mini")
    assert f"input 2.00 vs {mini['input']:.2f}" in warned[0]


def test_an_override_within_20_percent_or_none_does_not_warn(warned):
    mini = db_prices("gpt-4.1-mini")
    close = {
        "name": "close",
        "input": mini["input"] * 1.15,
        "cached_input": mini["cached_input"] * 0.9,
        "output": mini["output"] * 1.19,
    }
    pricing_from(close, OPENAI_SPEC)
    pricing_from({"name": "none"}, OPENAI_SPEC)
    pricing_from({"name": "openai-like", "input": 2.0, "cached_input": 0.5, "output": 8.0}, SCRIPTED_SPEC)
    assert warned == []
    assert disagreement(Pricing(**close), ModelRef("gpt-4.1-mini")) is None


def test_auto_takes_no_prices():
    with pytest.raises(TypeError, match="pricing=auto takes no prices"):
        pricing_from({"name": "auto", "input": 3.0}, OPENAI_SPEC)


# ---------------------------------------------------------------- the records


def test_a_trial_row_records_its_price_source_and_database_cost(tmp_path):
    usage = [
        {"prompt_tokens": 2006, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 1920}},
        {"prompt_tokens": 2400, "completion_tokens": 40, "prompt_tokens_details": {"cached_tokens": 1980}},
    ]
    fake = Fake(
        ok(body(call_message(), usage[0], model="gpt-4.1-mini-2025-04-14")),
        ok(body(call_message("submit", '{"invoice_ids": []}', "call_2"), usage[1], model="gpt-4.1-mini-2025-04-14")),
    )
    instance = InvoiceAudit(pages=3, invoices_per_page=3, duplicates=1, min_distance=1, max_distance=2).generate(0)
    settings = TrialSettings(
        budget=100_000,
        max_steps=5,
        strategy_name="none",
        strategy_params={},
        model_name="openai",
        pricing=pricing_from({"name": "auto"}, OPENAI_SPEC),
    )
    writer = RunWriter(tmp_path)
    row = run_trial(
        trial_id="t",
        trial_index=0,
        instance=instance,
        strategy=NoManagement(),
        model=OpenAIModel(
            base_url="http://fake.test/v1",
            model="gpt-4.1-mini",
            api_key="sk-test",
            http_client=httpx.Client(transport=httpx.MockTransport(fake)),
        ),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    assert row["outcome"] == "submitted"
    assert row["pricing"] == "auto" and row["price_source"] == f"genai-prices {VERSION} openai/gpt-4.1-mini"
    expected = sum(
        db_cost("gpt-4.1-mini", u["prompt_tokens"], u["prompt_tokens_details"]["cached_tokens"], u["completion_tokens"])
        for u in usage
    )
    assert row["cost"] == pytest.approx(expected, abs=1e-8) and row["cost"] > 0
    assert [s["pricing"] for s in read_jsonl(tmp_path / "steps.jsonl")] == ["auto", "auto"]


def test_a_trial_without_calls_records_the_configured_source():
    recorder = CallRecorder(
        "t", TokenCounter(), Pricing(name="openai-like", input=2.0), PROFILES["openai"], lambda row: None
    )
    assert recorder.price_source() == "pricing=openai-like"


# ---------------------------------------------------------------- the dry run

ESTIMATE = re.compile(r"estimate: input ([\d,]+) tok \(cached ([\d,]+)\), output ([\d,]+) tok, cost \$([\d.]+)")


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_dry_run_of_openai_is_priced_from_the_database_and_names_the_missing_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = harness("run", "model=openai", "suite=smoke", "trials=1", "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    mini = db_prices("gpt-4.1-mini")
    assert (
        f"pricing: auto [genai-prices {VERSION} openai/gpt-4.1-mini] (USD per 1M tokens: input {mini['input']:.2f}, "
        f"cached input {mini['cached_input']:.2f}, output {mini['output']:.2f})"
    ) in out
    tokens, cached, output, cost = ESTIMATE.search(out).groups()
    tokens, cached, output = (int(x.replace(",", "")) for x in (tokens, cached, output))
    assert float(cost) == pytest.approx(db_cost("gpt-4.1-mini", tokens, cached, output), abs=2e-4) and float(cost) > 0
    assert "api key: OPENAI_API_KEY is not set (model openai)" in out
    assert "warning" not in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_dry_run_with_a_disagreeing_override_warns_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    result = harness("run", "model=openai", "pricing=openai-like", "suite=smoke", "trials=1", "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: pricing=openai-like differs from genai-prices")
    assert "pricing: openai-like (USD per 1M tokens: input 2.00" in result.stdout and "api key" not in result.stdout


def test_price_line_of_a_profile_is_its_name():
    assert price_line(Pricing(name="x", input=1, cached_input=0.5, output=2, cache_write=1.25)) == (
        "pricing: x (USD per 1M tokens: input 1.00, cached input 0.50, cache write 1.25, output 2.00)"
    )

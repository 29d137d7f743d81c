"""Summarizer calls are billed to the trial, and the `summarizer` config group chooses their model."""

from hydra import compose, initialize_config_dir

from harness.cli import CONFIG_DIR, UsageError, validate_overrides
from harness.trial import TrialSettings, run_trial
from harness.records import RunWriter, read_jsonl
from harness.runner import build
from reference_agent.scripted import ScriptedModel
from strategies.adaptive_window import AdaptiveWindow
from strategies.summarize import Summarize
from tasks.invoice_audit import InvoiceAudit

FAMILY = InvoiceAudit(pages=10, invoices_per_page=8, duplicates=3, min_distance=1, max_distance=4)


def trial(tmp_path, strategy, summarizer, budget=3_000):
    writer = RunWriter(tmp_path)
    settings = TrialSettings(budget=budget, max_steps=60, strategy_name="x", strategy_params={}, model_name="scripted")
    row = run_trial(
        trial_id="t0",
        trial_index=0,
        instance=FAMILY.generate(0),
        strategy=strategy,
        model=ScriptedModel(profile="perfect"),
        summarizer=summarizer,
        settings=settings,
        writer=writer,
    )
    writer.trial(row)
    writer.close()
    return row, read_jsonl(tmp_path / "steps.jsonl")


def check_billing(row, steps):
    summ = [s for s in steps if s["kind"] == "summarizer"]
    agent = [s for s in steps if s["kind"] == "agent"]
    assert row["summarizer_calls"] == len(summ) > 0
    assert row["summarizer_input_tokens"] == sum(s["prompt_tokens"] for s in summ) > 0
    assert row["summarizer_output_tokens"] == sum(s["output_tokens"] for s in summ) > 0
    assert row["input_tokens"] == sum(s["prompt_tokens"] for s in agent)
    assert len(agent) == row["steps"]


def test_summarize_bills_a_separate_summarizer(tmp_path):
    row, steps = trial(
        tmp_path, Summarize(keep_recent_rounds=2), ScriptedModel(profile="perfect", name="scripted-summarizer")
    )
    assert row["outcome"] == "submitted", row["error"]
    check_billing(row, steps)
    assert row["compactions"] == row["summarizer_calls"]


def test_summarize_with_the_agent_model_is_still_billed_as_summarizer(tmp_path):
    row, steps = trial(tmp_path, Summarize(keep_recent_rounds=2), None)
    check_billing(row, steps)


def test_adaptive_window_bills_one_call_per_compressed_message(tmp_path):
    row, steps = trial(tmp_path, AdaptiveWindow(), None)
    assert row["outcome"] == "submitted", row["error"]
    check_billing(row, steps)
    assert row["summarizer_calls"] >= row["compactions"] >= 1


def test_summarizer_config_group():
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        default = compose(config_name="config", overrides=["strategy=summarize"])
        assert default.get("summarizer") is None
        chosen = compose(
            config_name="config", overrides=["strategy=summarize", "summarizer=scripted", "summarizer.name=tiny"]
        )
    model = build(dict(chosen.summarizer), "summarizer")
    assert isinstance(model, ScriptedModel) and chosen.summarizer.name == "tiny"  # `name` is a label, as for models
    validate_overrides(["summarizer=scripted"])
    validate_overrides(["summarizer=null"])
    try:
        validate_overrides(["summarizer=gpt-nothing"])
    except UsageError as exc:
        assert "unknown summarizer" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("a bad summarizer name must be refused")

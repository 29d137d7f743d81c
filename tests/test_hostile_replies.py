"""A model reply, a tool argument or a grader cannot crash a run (issue 22 §1): each becomes an error the model
sees, or a recorded outcome with its reason, and the run goes on."""
from __future__ import annotations

import json

import pytest

from harness.conversation import parse_arguments
from harness.hooks import Hooks
from harness.loop import TrialSettings, run_trial
from harness.models.base import Completion, ModelError, Usage
from harness.records import RunWriter, read_jsonl
from strategies.none import NoManagement
from tasks.failure_memory import FailureMemory

SMALL = dict(tickets=3, ticket_messages=2, rows=12, page_rows=6)


class Replies:
    """A fake LLM that plays ``script`` (one list of (tool, raw arguments) per turn), then submits; its stop-hook
    judge call raises ``ModelError`` when ``judge_fails``."""

    name = "fake-llm"
    context_window = 100_000
    is_reference = False

    def __init__(self, script: list[list[tuple[str, str]]], judge_fails: bool = False) -> None:
        self.script, self.judge_fails, self.turn = list(script), judge_fails, 0

    def complete(self, messages, tools):
        if messages[0]["content"].startswith("You are an independent completion checker"):
            if self.judge_fails:
                raise ModelError("HTTP 500 from the judge")
            return Completion({"role": "assistant", "content": "COMPLETE"}, Usage())
        calls = self.script[self.turn] if self.turn < len(self.script) else [("submit", '{"first_total": 0}')]
        self.turn += 1
        tool_calls = [{"id": f"c{self.turn}_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                      for i, (n, a) in enumerate(calls)]
        return Completion({"role": "assistant", "content": "", "tool_calls": tool_calls}, Usage())


def trial(tmp_path, model, hooks=Hooks()):
    writer = RunWriter(tmp_path)
    settings = TrialSettings(budget=100_000, max_steps=10, strategy_name="none", strategy_params={}, model_name="m",
                             hooks=hooks)
    row = run_trial(trial_id="t", trial_index=0, instance=FailureMemory(**SMALL).generate(0), strategy=NoManagement(),
                    model=model, summarizer=None, settings=settings, writer=writer)
    writer.close()
    return row, read_jsonl(tmp_path / "transcripts" / "t.jsonl")


def tool_results(events):
    return [e for e in events if e.get("event") == "tool"]


@pytest.mark.parametrize("raw", ['{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}', '{"a":' * 100_000])
def test_arguments_json_does_not_allow_are_a_parse_error(raw):
    with pytest.raises(ValueError):
        parse_arguments(raw)


@pytest.mark.parametrize("raw", ['{"endpoint": NaN}', '{"a":' * 5_000 + "1" + "}" * 5_000])
def test_a_reply_with_such_arguments_is_answered_with_an_error_and_the_run_goes_on(tmp_path, raw):
    row, events = trial(tmp_path, Replies([[("query_api", raw)]]))
    first = tool_results(events)[0]
    assert first["is_error"] and first["name"] == "query_api"
    assert row["outcome"] == "submitted" and row["steps"] == 2


def test_a_tool_that_raises_is_a_tool_error_the_model_sees(tmp_path):
    row, events = trial(tmp_path, Replies([[("read_export", json.dumps({"export_id": []}))]]))
    bodies = {e["ref"]: e["message"]["content"] for e in events if e.get("event") == "message"}
    first = tool_results(events)[0]
    assert first["is_error"] and "TypeError" in bodies[first["ref"]]
    assert row["tool_exceptions"] == 1 and row["outcome"] == "submitted"


def test_a_grader_that_raises_is_a_failed_trial_with_its_reason(tmp_path):
    row, _ = trial(tmp_path, Replies([[("submit", json.dumps({"first_total": 1e30}))]]))
    assert row["outcome"] == "submitted" and not row["success"]
    assert "grader raised InvalidOperation" in row["error"]


def test_a_judge_call_that_fails_ends_the_trial_as_a_model_error(tmp_path):
    row, _ = trial(tmp_path, Replies([], judge_fails=True), hooks=Hooks(completion_check=True))
    assert row["outcome"] == "model_error" and "judge" in row["error"]


class BadUsage(Replies):
    """Replies as ``Replies`` does, with a usage block that holds no valid count."""

    def complete(self, messages, tools):
        completion = super().complete(messages, tools)
        completion.usage = Usage(prompt_tokens=-5, cached_tokens=10**30, output_tokens="lots", reasoning_tokens=-1,
                                 cached_source="reported", tokens_source="reported")
        return completion


def test_an_invalid_usage_block_is_dropped_and_recorded_as_invalid(tmp_path):
    from harness.pricing import Pricing

    writer = RunWriter(tmp_path)
    settings = TrialSettings(budget=100_000, max_steps=10, strategy_name="none", strategy_params={}, model_name="m",
                             pricing=Pricing(name="openai-like", input=2.0, cached_input=0.5, output=8.0))
    row = run_trial(trial_id="t", trial_index=0, instance=FailureMemory(**SMALL).generate(0), strategy=NoManagement(),
                    model=BadUsage([]), summarizer=None, settings=settings, writer=writer)
    writer.close()
    steps = read_jsonl(tmp_path / "steps.jsonl")
    assert all("prompt_tokens=-5" in s["usage_invalid"] and "output_tokens='lots'" in s["usage_invalid"] for s in steps)
    assert all(s["tokens_source"] == "tiktoken" and 0 <= s["cached_tokens"] <= s["prompt_tokens"] for s in steps)
    assert 0 < row["cost"] < 1.0, "priced from the harness's own counts, not from 1e30 cached tokens"

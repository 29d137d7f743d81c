"""The agent loop on the reference agent: outcomes, validation, context-faithfulness."""

import re

import pytest

from harness.trial import TrialSettings, run_trial
from harness.records import RunWriter, read_jsonl, read_transcript, transcript_path
from reference_agent.scripted import ScriptedModel
from strategies.headtail import HeadTail
from strategies.none import NoManagement
from tasks.invoice_audit import InvoiceAudit

SMALL = dict(pages=5, invoices_per_page=5, duplicates=2, min_distance=1, max_distance=3)


def trial(tmp_path, strategy, budget=100_000, max_steps=50, window=131_072, family=None, trial_id="t0"):
    instance = (family or InvoiceAudit(**SMALL)).generate(0)
    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=budget, max_steps=max_steps, strategy_name="x", strategy_params={}, model_name="scripted"
    )
    row = run_trial(
        trial_id=trial_id,
        trial_index=0,
        instance=instance,
        strategy=strategy,
        model=ScriptedModel(profile="perfect", context_window=window),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.trial(row)
    writer.close()
    return row, instance


def test_reference_agent_solves_with_full_context(tmp_path):
    row, instance = trial(tmp_path, NoManagement())
    assert row["outcome"] == "submitted" and row["success"] and row["score"] == 1.0
    assert row["steps"] == instance.pages + 1
    assert row["reads"] == instance.pages and row["rereads"] == 0
    assert row["reference_agent"] is True
    steps = read_jsonl(tmp_path / "steps.jsonl")
    assert len(steps) == row["steps"]
    curve = [s["request_tokens"] for s in steps]
    assert curve == sorted(curve), "with no management the request only grows"
    assert row["peak_context"] == max(curve)
    assert row["input_tokens"] == sum(s["prompt_tokens"] for s in steps)
    assert transcript_path(tmp_path, "t0") == tmp_path / "transcripts" / "t0.jsonl.gz"


def test_transcript_holds_every_request(tmp_path):
    row, _ = trial(tmp_path, HeadTail(), budget=3_000)
    events = read_transcript(tmp_path, "t0")
    bodies = {e["ref"]: e["message"] for e in events if e["event"] == "message"}
    requests = [e for e in events if e["event"] == "request"]
    assert len(requests) == row["steps"]
    for request in requests:
        assert all(ref in bodies for ref in request["refs"])
    assert events[0]["event"] == "trial_start" and events[-1]["event"] == "trial_end"


class HidePageOnce:
    """Hides the first result of page 2 (read by the cursor page 1 named) and the agent's ledger note on it."""

    def prepare(self, messages):
        out = []
        first = next((m for m in messages if m.get("role") == "tool" and " page 2 of " in str(m.get("content"))), None)
        for m in messages:
            if m is first:
                m = {**m, "content": "[result removed]"}
            elif m.get("role") == "assistant" and "Ledger p2:" in (m.get("content") or ""):
                m = {**m, "content": re.sub(r"Ledger p2:[^\n]*", "", m["content"])}
            out.append(m)
        return out


def test_context_faithful_agent_rereads_what_it_cannot_see(tmp_path):
    row, instance = trial(tmp_path, HidePageOnce())
    assert row["rereads"] == 1 and row["reads"] == instance.pages + 1
    assert row["success"]
    tools = [e for e in read_transcript(tmp_path, "t0") if e["event"] == "tool"]
    page2 = instance.listing.cursor_for(2)
    assert [t["args"]["cursor"] for t in tools if t["name"] == "get_invoice_page"].count(page2) == 2


class Breaks:
    def prepare(self, messages):
        return messages[:-1] if len(messages) > 4 else list(messages)


class Raises:
    def prepare(self, messages):
        if len(messages) > 3:
            raise RuntimeError("boom")
        return list(messages)


@pytest.mark.parametrize("strategy,needle", [(Breaks(), "invalid projection"), (Raises(), "boom")])
def test_strategy_errors_end_the_trial_cleanly(tmp_path, strategy, needle):
    row, _ = trial(tmp_path, strategy)
    assert row["outcome"] == "strategy_error" and not row["success"] and needle in row["error"]


def test_context_window_overflow(tmp_path):
    row, _ = trial(tmp_path, NoManagement(), window=3_000)
    assert row["outcome"] == "context_overflow" and "context window" in row["error"]
    assert row["peak_context"] > 3_000


def test_step_limit(tmp_path):
    row, _ = trial(tmp_path, NoManagement(), max_steps=2)
    assert row["outcome"] == "step_limit" and row["steps"] == 2 and not row["success"]


def test_headtail_stays_under_budget_and_drops_old_pages(tmp_path):
    family = InvoiceAudit(pages=12, invoices_per_page=10, duplicates=3, max_distance=8)
    row, _ = trial(tmp_path, HeadTail(), budget=5_000, family=family)
    steps = read_jsonl(tmp_path / "steps.jsonl")
    assert max(s["request_tokens"] for s in steps) <= 5_000
    assert row["compactions"] > 0
    assert row["outcome"] == "submitted"


class ChattyModel:
    """Replies without tool calls twice, then with a malformed call, then submits."""

    is_reference = False
    name = "chatty"
    context_window = 100_000

    def __init__(self):
        self.n = 0

    def complete(self, messages, tools):
        from harness.models.base import Completion, Usage

        self.n += 1
        if self.n <= 2:
            message = {"role": "assistant", "content": "thinking"}
        elif self.n == 3:
            message = {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "x", "type": "function", "function": {"name": "get_invoice_page", "arguments": "{bad json"}}
                ],
            }
        else:
            message = {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "y", "type": "function", "function": {"name": "submit", "arguments": '{"invoice_ids": []}'}}
                ],
            }
        return Completion(message, Usage(prompt_tokens=10, cached_tokens=0, output_tokens=1))


def test_malformed_replies_go_back_to_the_model(tmp_path):
    instance = InvoiceAudit(**SMALL).generate(0)
    writer = RunWriter(tmp_path)
    model = ChattyModel()
    settings = TrialSettings(budget=10_000, max_steps=10, strategy_name="none", strategy_params={}, model_name="chatty")
    row = run_trial(
        trial_id="c",
        trial_index=0,
        instance=instance,
        strategy=NoManagement(),
        model=model,
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    assert row["outcome"] == "submitted" and not row["success"] and row["steps"] == 4
    events = read_transcript(tmp_path, "c")
    errors = [e for e in events if e["event"] == "tool" and e["is_error"]]
    assert errors and errors[0]["name"] == "get_invoice_page"

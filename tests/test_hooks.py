"""Loop hooks: the start hook's plan instruction and the stop hook's completion check."""
import json

from harness.hooks import PLAN_INSTRUCTION, Hooks
from harness.loop import TrialSettings, run_trial
from harness.models.base import Completion, Usage
from harness.models.scripted import ScriptedModel
from harness.records import RunWriter, read_jsonl
from strategies.headtail import HeadTail
from strategies.none import NoManagement
from tasks.code_review import CodeReview
from tasks.invoice_audit import InvoiceAudit


def trial(tmp_path, instance, strategy, hooks, budget=100_000, model=None, max_steps=300):
    writer = RunWriter(tmp_path)
    settings = TrialSettings(budget=budget, max_steps=max_steps, strategy_name="x", strategy_params={},
                             model_name="m", hooks=hooks)
    row = run_trial(trial_id="t", trial_index=0, instance=instance, strategy=strategy, model=model or ScriptedModel(profile="perfect"),
                    summarizer=None, settings=settings, writer=writer)
    writer.close()
    events = [json.loads(line) for line in (tmp_path / "transcripts" / "t.jsonl").open()]
    return row, events


def test_plan_hook_adds_the_instruction_before_the_first_call(tmp_path):
    instance = InvoiceAudit(pages=3, invoices_per_page=4, duplicates=1, max_distance=2).generate(0)
    row, events = trial(tmp_path, instance, NoManagement(), Hooks(plan=True))
    first = next(e for e in events if e["event"] == "request")
    bodies = {e["ref"]: e["message"] for e in events if e["event"] == "message"}
    assert [bodies[r]["content"] for r in first["refs"]][2] == PLAN_INSTRUCTION
    assert row["success"] and any(e["event"] == "hook" and e["name"] == "plan" for e in events)


def test_completion_check_accepts_complete_work_at_once(tmp_path):
    instance = CodeReview(files=8, bugs=3).generate(0)
    row, _ = trial(tmp_path, instance, NoManagement(), Hooks(completion_check=True))
    assert row["success"] and row["hook_continues"] == 0


def test_completion_check_sends_a_compacted_agent_back_and_costs_rereads(tmp_path):
    instance = CodeReview(files=12, bugs=3).generate(0)
    without, _ = trial(tmp_path / "a", instance, HeadTail(), Hooks(), budget=6_000)
    instance = CodeReview(files=12, bugs=3).generate(0)
    with_hook, events = trial(tmp_path / "b", instance, HeadTail(), Hooks(completion_check=True, max_continues=2),
                              budget=6_000)
    assert with_hook["hook_continues"] >= 1
    assert with_hook["rereads"] > without["rereads"]
    refusals = [e for e in events if e["event"] == "hook" and e["name"] == "completion_check"]
    assert refusals and "no visible review" in refusals[0]["gaps"]


class JudgedModel:
    """An 'LLM' that submits at once; its judge answers INCOMPLETE once, then COMPLETE."""

    name = "fake-llm"
    context_window = 100_000
    is_reference = False

    def __init__(self):
        self.judged = 0

    def complete(self, messages, tools):
        if messages[0]["content"].startswith("You are an independent completion checker"):
            self.judged += 1
            text = "INCOMPLETE: pages 2-3 were not read" if self.judged == 1 else "COMPLETE"
            return Completion({"role": "assistant", "content": text}, Usage(prompt_tokens=50, cached_tokens=0, output_tokens=5))
        call = {"id": f"s{len(messages)}", "type": "function",
                "function": {"name": "submit", "arguments": "{\"invoice_ids\": []}"}}
        return Completion({"role": "assistant", "content": "", "tool_calls": [call]},
                          Usage(prompt_tokens=100, cached_tokens=0, output_tokens=10))


def test_llm_backends_get_a_billed_judge_call(tmp_path):
    instance = InvoiceAudit(pages=3, invoices_per_page=4, duplicates=1, max_distance=2).generate(0)
    row, events = trial(tmp_path, instance, NoManagement(), Hooks(completion_check=True), model=JudgedModel())
    assert row["outcome"] == "submitted" and row["hook_continues"] == 1
    assert row["stop_hook_calls"] == 2 and row["stop_hook_input_tokens"] == 100
    kinds = [s["kind"] for s in read_jsonl(tmp_path / "steps.jsonl")]
    assert kinds.count("stop_hook") == 2 and kinds.count("agent") == 2

"""Loop hooks: the start hook's plan instruction and the stop hook's completion check."""

from harness.hooks import CONTINUE_MESSAGE, PLAN_INSTRUCTION, Hooks
from harness.trial import TrialSettings, run_trial
from harness.models.base import Completion, Usage
from harness.records import RunWriter, read_jsonl, read_transcript
from reference_agent.policies import reference_policy
from reference_agent.scripted import ScriptedModel
from strategies.headtail import HeadTail
from strategies.none import NoManagement
from tasks.code_review import CodeReview
from tasks.invoice_audit import InvoiceAudit


def trial(tmp_path, instance, strategy, hooks, budget=100_000, model=None, max_steps=300):
    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=budget, max_steps=max_steps, strategy_name="x", strategy_params={}, model_name="m", hooks=hooks
    )
    row = run_trial(
        trial_id="t",
        trial_index=0,
        instance=instance,
        strategy=strategy,
        model=model or ScriptedModel(profile="perfect"),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    events = read_transcript(tmp_path, "t")
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


def test_completion_check_accepts_the_ledger_reviewer_under_compaction(tmp_path):
    """Its ledger and its closing note show every review, whatever headtail cut: the hook accepts at once."""
    instance = CodeReview(files=12, bugs=3).generate(0)
    row, events = trial(tmp_path, instance, HeadTail(), Hooks(completion_check=True, max_continues=2), budget=6_000)
    assert row["success"] and row["compactions"] > 0 and row["hook_continues"] == 0


def test_a_refusal_sends_the_reviewer_back_to_the_files_it_names():
    instance = CodeReview(files=8, bugs=3).generate(0)
    path = sorted(instance.files)[1]
    submit_call = {"id": "c1", "type": "function", "function": {"name": "submit", "arguments": '{"findings": []}'}}
    refusal = CONTINUE_MESSAGE.format(gaps=f"1 listed files have no visible review: {path}")
    messages = [
        {"role": "system", "content": instance.system_prompt},
        {"role": "user", "content": instance.user_prompt},
        {"role": "assistant", "content": "done", "tool_calls": [submit_call]},
        {"role": "tool", "tool_call_id": "c1", "content": refusal},
    ]
    reply = reference_policy(instance).act(messages, instance.tools)
    assert [c["function"]["name"] for c in reply["tool_calls"]] == ["read_file"]
    assert path in reply["tool_calls"][0]["function"]["arguments"]


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
            return Completion(
                {"role": "assistant", "content": text}, Usage(prompt_tokens=50, cached_tokens=0, output_tokens=5)
            )
        call = {
            "id": f"s{len(messages)}",
            "type": "function",
            "function": {"name": "submit", "arguments": '{"invoice_ids": []}'},
        }
        return Completion(
            {"role": "assistant", "content": "", "tool_calls": [call]},
            Usage(prompt_tokens=100, cached_tokens=0, output_tokens=10),
        )


def test_llm_backends_get_a_billed_judge_call(tmp_path):
    instance = InvoiceAudit(pages=3, invoices_per_page=4, duplicates=1, max_distance=2).generate(0)
    row, events = trial(tmp_path, instance, NoManagement(), Hooks(completion_check=True), model=JudgedModel())
    assert row["outcome"] == "submitted" and row["hook_continues"] == 1
    assert row["stop_hook_calls"] == 2 and row["stop_hook_input_tokens"] == 100
    kinds = [s["kind"] for s in read_jsonl(tmp_path / "steps.jsonl")]
    assert kinds.count("stop_hook") == 2 and kinds.count("agent") == 2

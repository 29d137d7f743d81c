"""What a trial cost and whether it held its budget (issue 11, sections 1, 2, 6 and 8)."""

from __future__ import annotations

from harness.hooks import Hooks
from harness.trial import TrialSettings, run_trial
from harness.models.base import Completion, Usage
from harness.records import RunWriter, read_jsonl, read_transcript
from harness.runner import execute, recorded_strategy_name
from reference_agent.scripted import ScriptedModel
from strategies.clear_tool_results import ClearToolResults
from strategies.headtail import HeadTail
from strategies.none import NoManagement
from tasks.invoice_audit import InvoiceAudit
from tests.helpers import compose

NO_HOOKS = Hooks()  # every hook off (a frozen dataclass: one shared default is safe)


def _trial(tmp_path, strategy, budget, model=None, hooks=NO_HOOKS, pages=20):
    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=budget, max_steps=80, strategy_name="x", strategy_params={}, model_name="scripted", hooks=hooks
    )
    row = run_trial(
        trial_id="t",
        trial_index=0,
        instance=InvoiceAudit(pages=pages).generate(0),
        strategy=strategy,
        model=model or ScriptedModel(profile="perfect"),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    return row, read_jsonl(tmp_path / "steps.jsonl")


def test_over_budget_steps_and_ratio_are_recorded_per_step_and_per_trial(tmp_path):
    row, steps = _trial(tmp_path, NoManagement(), budget=4_000)
    agent = [s for s in steps if s["kind"] == "agent"]
    over = [s for s in agent if s["request_tokens"] > 4_000]
    assert over, "an unmanaged history outgrows 4K"
    assert all(s["over_budget"] == (s["request_tokens"] > 4_000) for s in agent)
    assert all(s["budget_ratio"] == round(s["request_tokens"] / 4_000, 4) for s in agent)
    assert row["over_budget_steps"] == len(over)
    assert row["max_budget_ratio"] == max(s["budget_ratio"] for s in agent) > 1


def test_a_strategy_that_holds_its_budget_has_no_over_budget_step(tmp_path):
    # 10K: the newest round (a page and the ledger's index of 400 invoices, about 7K) fits, so headtail holds
    row, _ = _trial(tmp_path, HeadTail(), budget=10_000)
    assert row["over_budget_steps"] == 0 and 0.5 < row["max_budget_ratio"] <= 1.0


def test_clearing_alone_can_exceed_the_budget_and_the_row_says_so(tmp_path):
    row, _ = _trial(tmp_path, ClearToolResults(keep=3), budget=3_000, pages=20)
    assert row["over_budget_steps"] > 0 and row["max_budget_ratio"] > 1


class _JudgingModel(ScriptedModel):
    """The reference agent, but its stop hook goes through a (fake) model call with a price."""

    is_reference = False

    def for_trial(self, instance):
        session = super().for_trial(instance)
        session.is_reference = False
        original = session.complete

        def complete(messages, tools):
            if not tools:  # the stop hook's judge call
                return Completion(
                    {"role": "assistant", "content": "COMPLETE"},
                    Usage(prompt_tokens=1_000, cached_tokens=0, output_tokens=3),
                )
            return original(messages, tools)

        session.complete = complete
        return session


def test_stop_hook_calls_enter_the_trial_totals(tmp_path):
    row, steps = _trial(
        tmp_path, NoManagement(), budget=100_000, model=_JudgingModel(), hooks=Hooks(completion_check=True)
    )
    assert row["stop_hook_calls"] == 1 and row["stop_hook_input_tokens"] == 1_000
    assert row["total_input_tokens"] == row["input_tokens"] + 1_000
    assert row["total_output_tokens"] == row["output_tokens"] + 3
    assert row["total_input_tokens"] == sum(s["prompt_tokens"] for s in steps)


def test_a_changed_target_is_recorded_as_the_class_that_ran(tmp_path):
    spec = {"name": "none", "_target_": "strategies.headtail.HeadTail"}
    assert recorded_strategy_name(spec) == "strategies.headtail.HeadTail"
    assert recorded_strategy_name({"name": "none", "_target_": "strategies.none.NoManagement"}) == "none"
    assert recorded_strategy_name({"name": "my_plugin", "_target_": "pkg.Mine"}) == "my_plugin"
    cfg = compose(
        "suite=smoke",
        "task=invoice_audit",
        "trials=1",
        "progress=false",
        "plots=false",
        "strategy._target_=strategies.headtail.HeadTail",
        "budget=4k",
    )
    rows = execute(cfg, tmp_path, echo=lambda _: None)
    assert rows and all(r["strategy"] == "strategies.headtail.HeadTail" for r in rows)
    assert all(r["strategy_class"] == "strategies.headtail.HeadTail" for r in rows)


def test_a_per_turn_call_limit_rejects_the_extra_calls_without_executing_them(tmp_path):
    """A task's max_calls_per_turn: calls beyond it get the rate-limited result, never reach the task,
    count as failed calls, and the batching agent re-issues them and still succeeds."""
    from tasks.base import rate_limited_message
    from tasks.code_review import CodeReview

    # code_review batches its file reads (invoice_audit's cursor pages come one per turn since issue 13)
    instance = CodeReview(files=20, bugs=5).generate(0)
    instance.max_calls_per_turn = 2
    executed = []
    original = instance.call

    def counting_call(name, args):
        executed.append((name, args.get("path")))
        return original(name, args)

    instance.call = counting_call
    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=1_000_000, max_steps=60, strategy_name="x", strategy_params={}, model_name="scripted"
    )
    row = run_trial(
        trial_id="t",
        trial_index=0,
        instance=instance,
        strategy=NoManagement(),
        model=ScriptedModel(profile="realistic"),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    events = read_transcript(tmp_path, "t")
    limited = [e for e in events if e.get("event") == "tool" and e["is_error"]]
    assert row["rate_limited_calls"] == len(limited) > 0
    bodies = {e["ref"]: e["message"]["content"] for e in events if e.get("event") == "message"}
    assert all(bodies[e["ref"]] == rate_limited_message(2) for e in limited)
    per_step: dict[int, int] = {}
    for e in events:
        if e.get("event") == "tool" and not e["is_error"] and e["name"] != "submit":
            per_step[e["step"]] = per_step.get(e["step"], 0) + 1
    assert max(per_step.values()) <= 2, "no turn executes more than the limit"
    assert len(executed) == sum(per_step.values()), "rejected calls never reach the task"
    read = {p for name, p in executed if name == "read_file"}
    in_scope = {p for p in instance.files if not p.startswith(instance.out_of_scope)}
    assert row["success"] and read and read <= in_scope, "it searches first: only files in scope are read"

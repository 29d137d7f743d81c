"""Sub-agents run the one agent loop (harness/agent_loop.py): the task's per-turn limit, the strategy's choice of
tools and its server options hold inside a sub-agent as they do for the main agent."""

from __future__ import annotations

import itertools
import json

from harness.trial import TrialSettings, run_trial
from harness.models.base import Completion, Usage, current_request_options
from harness.records import RunWriter, read_jsonl, read_transcript
from harness.subagent import REPORT_TOOL
from strategies.base import FINAL_TOOLS, BaseStrategy, tool_name
from strategies.isolate import Isolate
from strategies.select_tools import SelectTools
from tasks.base import RATE_LIMITED, Grade, TaskInstance, ToolResult, tool_schema

IDS = itertools.count()


def reply(*calls: tuple[str, dict]) -> Completion:
    """An assistant reply making ``calls`` (name, arguments), each with a fresh id."""
    tool_calls = [
        {"id": f"c{next(IDS)}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for name, args in calls
    ]
    return Completion({"role": "assistant", "content": "", "tool_calls": tool_calls}, Usage())


class Pages(TaskInstance):
    """A task of pages to read, at most two task calls a turn; ``peek`` is a second tool."""

    family, id, seed = "pages", "pages-0", 0
    system_prompt = "Read the pages with read(page). At most 2 tool calls per turn."
    user_prompt = "Find what the pages say; delegate the reading."
    answer_schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    max_calls_per_turn = 2

    def __init__(self) -> None:
        self.tools = [
            tool_schema("read", "Read one page.", {"page": {"type": "integer"}}),
            tool_schema("peek", "Peek at the index.", {}),
        ]
        self.executed: list[tuple[str, dict]] = []

    def call(self, name: str, args: dict) -> ToolResult:
        self.executed.append((name, args))
        return ToolResult(f"{name} {args.get('page', '')}", resource=f"page:{args.get('page')}")

    def grade(self, answer: dict) -> Grade:
        return Grade(success=answer.get("answer") == "done", score=1.0)


class Session:
    """A scripted model session: one reply per call, in order; it keeps the tools, results and options it saw."""

    is_reference = False
    name = "scripted-test"
    context_window = 100_000

    def __init__(self, replies: list[Completion]) -> None:
        self.replies = list(replies)
        self.offered: list[list[str]] = []
        self.options: list[dict] = []
        self.requests: list[list[dict]] = []

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        self.offered.append([tool_name(t) for t in tools])
        self.options.append(current_request_options())
        self.requests.append(messages)
        return self.replies.pop(0)


class Delegator(Session):
    """The main agent delegates once, then submits; ``sub`` is the sub-agent's session."""

    def __init__(self, sub: Session) -> None:
        super().__init__([reply(("delegate", {"task": "Read pages 1 to 3."})), reply(("submit", {"answer": "done"}))])
        self.sub = sub

    def for_subtask(self, instance: TaskInstance, task: str) -> Session:
        return self.sub


class HidesPeek(BaseStrategy):
    """Offers every tool but ``peek`` and sends a request option; the history unchanged."""

    def prepare(self, messages: list[dict]) -> list[dict]:
        return list(messages)

    def expose_tools(self, tools: list[dict]) -> list[dict]:
        return [t for t in tools if tool_name(t) != "peek"]

    def server_options(self) -> dict:
        return {"betas": ["test-beta"]}


def run(tmp_path, strategy, sub: Session) -> tuple[dict, Pages, list[dict]]:
    instance = Pages()
    writer = RunWriter(tmp_path)
    settings = TrialSettings(budget=100_000, max_steps=10, strategy_name="x", strategy_params={}, model_name="m")
    row = run_trial(
        trial_id="t0",
        trial_index=0,
        instance=instance,
        strategy=strategy,
        model=Delegator(sub),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    return row, instance, read_transcript(tmp_path, "t0")


def sub_tool_results(sub: Session) -> dict[str, str]:
    """The tool results of the sub-agent's last request, by call name."""
    request = sub.requests[-1]
    names = {
        c["id"]: c["function"]["name"] for m in request if m["role"] == "assistant" for c in m.get("tool_calls") or []
    }
    return {f"{names[m['tool_call_id']]}#{i}": m["content"] for i, m in enumerate(request) if m["role"] == "tool"}


def test_a_subagent_keeps_the_per_turn_limit_the_strategys_tools_and_its_options(tmp_path):
    sub = Session(
        [
            reply(("read", {"page": 1}), ("read", {"page": 2}), ("read", {"page": 3})),
            reply(("peek", {})),
            reply(("report", {"conclusion": "pages 1 and 2 read"})),
        ]
    )
    row, instance, events = run(tmp_path, Isolate(base=HidesPeek()), sub)
    assert row["outcome"] == "submitted" and row["success"]
    assert instance.executed == [("read", {"page": 1}), ("read", {"page": 2})], "the third call and peek never ran"
    results = list(sub_tool_results(sub).values())
    assert results[2].startswith(RATE_LIMITED), "the third call of the turn is over the limit of 2"
    assert "is not offered at this step" in results[3]
    assert all("peek" not in offered and "report" in offered for offered in sub.offered)
    assert all(options == {"betas": ["test-beta"]} for options in sub.options), "server options travel with its calls"
    assert row["rate_limited_calls"] == 1 and row["unoffered_calls"] == 1, "counted in the trial's row"
    tools = [e for e in events if e["event"] == "tool" and e.get("subagent") == 1]
    assert [(e["name"], e["is_error"]) for e in tools] == [
        ("read", False),
        ("read", False),
        ("read", True),
        ("peek", True),
    ]
    assert row["subagent_reads"] == 2
    end = next(e for e in events if e["event"] == "subagent_end")
    assert end["conclusion"] == "pages 1 and 2 read"
    steps = [s for s in read_jsonl(tmp_path / "steps.jsonl") if s["kind"] == "subagent"]
    assert [s["substep"] for s in steps] == [1, 2, 3] and all(s["step"] == 1 and s["subagent"] == 1 for s in steps)


def test_the_main_agent_keeps_the_wrappers_own_tool_while_the_base_chooses(tmp_path):
    sub = Session([reply(("report", {"conclusion": "nothing to read"}))])
    run(tmp_path, Isolate(base=HidesPeek()), sub)
    main_requests = [e for e in read_transcript(tmp_path, "t0") if e["event"] == "request"]
    assert all(e["tools_offered"] == ["read", "delegate", "submit"] for e in main_requests)


def test_select_tools_in_a_subagent_keeps_report(tmp_path):
    sub = Session([reply(("report", {"conclusion": "ok"}))])
    row, _, _ = run(tmp_path, Isolate(base=SelectTools(max_tools=0, keep_recent_rounds=0, always=[])), sub)
    assert row["outcome"] == "submitted"
    assert sub.offered == [["report"]], "the final tool of the sub-agent's loop is always offered"
    assert tool_name(REPORT_TOOL) in FINAL_TOOLS


class FailsInSubagents(HidesPeek):
    """Raises in ``prepare`` once bound to a sub-agent's context."""

    def prepare(self, messages: list[dict]) -> list[dict]:
        if getattr(self.ctx, "subagent", None) is not None:
            raise RuntimeError("boom")
        return list(messages)


def test_a_subagent_whose_strategy_fails_returns_why_and_the_trial_goes_on(tmp_path):
    row, instance, events = run(tmp_path, Isolate(base=FailsInSubagents()), Session([]))
    end = next(e for e in events if e["event"] == "subagent_end")
    assert end["conclusion"].startswith("[sub-agent stopped: its strategy failed: strategy raised at step 1")
    assert row["outcome"] == "submitted" and instance.executed == []

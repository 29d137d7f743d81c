"""A model reply, a tool argument or a grader cannot crash a run (issue 22 §1): each becomes an error the model
sees, or a recorded outcome with its reason, and the run goes on."""

from __future__ import annotations

import json

import pytest

from harness.conversation import parse_arguments
from harness.hooks import Hooks
from harness.trial import TrialSettings, run_trial
from harness.models.base import Completion, ModelError, Usage
from harness.records import RunWriter, read_jsonl, read_transcript
from strategies.none import NoManagement
from tasks.failure_memory import FailureMemory

SMALL = dict(tickets=3, ticket_messages=2, rows=12, page_rows=6)
NO_HOOKS = Hooks()  # every hook off (a frozen dataclass: one shared default is safe)


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
        tool_calls = [
            {"id": f"c{self.turn}_{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ]
        return Completion({"role": "assistant", "content": "", "tool_calls": tool_calls}, Usage())


class Broken:
    """A task instance whose ``read_export`` tool and grader raise as a buggy family's would (the families
    themselves no longer raise: tests/test_fuzz_tools.py)."""

    def __init__(self, instance, tool_raises=False, grader_raises=False):
        self.instance, self.tool_raises, self.grader_raises = instance, tool_raises, grader_raises

    def __getattr__(self, name):
        return getattr(self.instance, name)

    def call(self, name, args):
        if self.tool_raises and name == "read_export":
            raise TypeError("unhashable type: 'list'")
        return self.instance.call(name, args)

    def grade(self, answer):
        if self.grader_raises:
            raise ArithmeticError("decimal.InvalidOperation")
        return self.instance.grade(answer)


def trial(tmp_path, model, hooks=NO_HOOKS, **broken):
    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=100_000, max_steps=10, strategy_name="none", strategy_params={}, model_name="m", hooks=hooks
    )
    instance = FailureMemory(**SMALL).generate(0)
    row = run_trial(
        trial_id="t",
        trial_index=0,
        instance=Broken(instance, **broken) if broken else instance,
        strategy=NoManagement(),
        model=model,
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    return row, read_transcript(tmp_path, "t")


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
    row, events = trial(tmp_path, Replies([[("read_export", json.dumps({"export_id": []}))]]), tool_raises=True)
    bodies = {e["ref"]: e["message"]["content"] for e in events if e.get("event") == "message"}
    first = tool_results(events)[0]
    assert first["is_error"] and "TypeError" in bodies[first["ref"]]
    assert row["tool_exceptions"] == 1 and row["outcome"] == "submitted"


def test_a_grader_that_raises_is_a_failed_trial_with_its_reason(tmp_path):
    row, _ = trial(tmp_path, Replies([[("submit", json.dumps({"first_total": 1e30}))]]), grader_raises=True)
    assert row["outcome"] == "submitted" and not row["success"]
    assert "grader raised ArithmeticError" in row["error"]


def test_a_judge_call_that_fails_ends_the_trial_as_a_model_error(tmp_path):
    row, _ = trial(tmp_path, Replies([], judge_fails=True), hooks=Hooks(completion_check=True))
    assert row["outcome"] == "model_error" and "judge" in row["error"]


class BadUsage(Replies):
    """Replies as ``Replies`` does, with a usage block that holds no valid count."""

    def complete(self, messages, tools):
        completion = super().complete(messages, tools)
        completion.usage = Usage(
            prompt_tokens=-5,
            cached_tokens=10**30,
            output_tokens="lots",
            reasoning_tokens=-1,
            cached_source="reported",
            tokens_source="reported",
        )
        return completion


def test_an_invalid_usage_block_is_dropped_and_recorded_as_invalid(tmp_path):
    from harness.pricing import Pricing

    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=100_000,
        max_steps=10,
        strategy_name="none",
        strategy_params={},
        model_name="m",
        pricing=Pricing(name="openai-like", input=2.0, cached_input=0.5, output=8.0),
    )
    row = run_trial(
        trial_id="t",
        trial_index=0,
        instance=FailureMemory(**SMALL).generate(0),
        strategy=NoManagement(),
        model=BadUsage([]),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    steps = read_jsonl(tmp_path / "steps.jsonl")
    assert all("prompt_tokens=-5" in s["usage_invalid"] and "output_tokens='lots'" in s["usage_invalid"] for s in steps)
    assert all(s["tokens_source"] == "tiktoken" and 0 <= s["cached_tokens"] <= s["prompt_tokens"] for s in steps)
    assert 0 < row["cost"] < 1.0, "priced from the harness's own counts, not from 1e30 cached tokens"


# ---------------------------------------------------------------- §2: the outcome names the party at fault


class Raw(Replies):
    """A fake LLM that sends ``first`` (an assistant message, as a backend would build it) and then submits."""

    def __init__(self, first: dict) -> None:
        super().__init__([])
        self.first = first

    def complete(self, messages, tools):
        for message in messages:  # what a real client does with the history: encode it
            json.dumps(message, ensure_ascii=False).encode("utf-8")
        if self.turn == 0 and not messages[0]["content"].startswith("You are an independent"):
            self.turn += 1
            return Completion(dict(self.first), Usage())
        return super().complete(messages, tools)


def call(call_id, name="query_api", arguments='{"endpoint": "/x"}'):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize("calls", [[call("c1"), call("c1")], [call(""), call("c2")], [{"id": "c1"}]])
def test_tool_calls_that_share_or_lack_an_id_are_an_error_the_model_sees(tmp_path, calls):
    row, events = trial(tmp_path, Raw({"role": "assistant", "content": None, "tool_calls": calls}))
    assert row["outcome"] == "submitted", row["error"]
    bodies = [e["message"]["content"] for e in events if e.get("event") == "message"]
    assert any("could not be read as a tool call" in (b or "") for b in bodies)
    assert not tool_results(events) or tool_results(events)[0]["name"] == "submit", "the bad calls were not run"


def test_a_lone_surrogate_in_a_reply_is_escaped_and_the_run_goes_on(tmp_path):
    row, events = trial(
        tmp_path,
        Raw(
            {
                "role": "assistant",
                "content": "thinking \ud800 aloud",
                "tool_calls": [call("c1", arguments='{"endpoint": "/\ud83d"}')],
            }
        ),
    )
    assert row["outcome"] == "submitted" and row["steps"] == 2, row["error"]
    replies = [e["message"] for e in events if e.get("event") == "message" and e["message"]["role"] == "assistant"]
    assert replies[0]["content"] == "thinking \\ud800 aloud"
    assert tool_results(events)[0]["args"] == {"endpoint": "/\\ud83d"}


def test_arguments_that_decode_to_a_lone_surrogate_are_escaped():
    assert parse_arguments('{"p": "/memories/\\ud800"}') == {"p": "/memories/\\ud800"}
    assert parse_arguments({"p": "\udfff"}) == {"p": "\\udfff"}


class FailingSummarizer:
    """A summarizer whose every call fails as a provider outage does (or, with ``bug``, as a backend bug does)."""

    name = "summarizer"
    context_window = 100_000

    def __init__(self, bug: bool = False) -> None:
        self.bug = bug

    def complete(self, messages, tools):
        if self.bug:
            raise KeyError("choices")
        raise ModelError("HTTP 503 from the summarizer")


@pytest.mark.parametrize("bug", [False, True])
def test_a_summarizer_call_that_fails_is_a_model_error_not_the_strategys(tmp_path, bug):
    from strategies.summarize import Summarize

    writer = RunWriter(tmp_path)
    settings = TrialSettings(budget=600, max_steps=10, strategy_name="summarize", strategy_params={}, model_name="m")
    script = [[("query_api", json.dumps({"endpoint": f"/e{i}"}))] for i in range(6)]
    row = run_trial(
        trial_id="t",
        trial_index=0,
        instance=FailureMemory(**SMALL).generate(0),
        strategy=Summarize(),
        model=Replies(script),
        summarizer=FailingSummarizer(bug),
        settings=settings,
        writer=writer,
    )
    writer.close()
    assert row["outcome"] == "model_error" and "summarizer" in row["error"], (row["outcome"], row["error"])


def test_a_memory_path_with_a_lone_surrogate_is_a_tool_error(tmp_path):
    from strategies.memory_tool import MemoryTool

    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=100_000, max_steps=10, strategy_name="memory_tool", strategy_params={}, model_name="m"
    )
    memory_call = {"command": "create", "path": "/memories/\ud800.md", "file_text": "x"}
    model = Raw(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "m1", "type": "function", "function": {"name": "memory", "arguments": memory_call}}],
        }
    )
    row = run_trial(
        trial_id="t",
        trial_index=0,
        instance=FailureMemory(**SMALL).generate(0),
        strategy=MemoryTool(),
        model=model,
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    events = read_transcript(tmp_path, "t")
    assert row["outcome"] == "submitted", row["error"]
    assert tool_results(events)[0]["name"] == "memory" and tool_results(events)[0]["is_error"]
    from strategies.memory_tool import MemoryStore
    from strategies.base import ToolError

    with pytest.raises(ToolError):
        MemoryStore(tmp_path / "m").resolve("/memories/\ud800")

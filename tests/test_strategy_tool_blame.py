"""Issue 36: a model's argument that makes a strategy tool fail is a tool error the model sees, never a
``strategy_error`` (harness/tool_runner.py, strategies/memory_tool.py's caps)."""

import json

import pytest

from harness.contracts import ToolError
from harness.models.base import Completion, Usage
from harness.records import RunWriter
from harness.tool_runner import argument_problem
from harness.trial import TrialSettings, run_trial
from strategies.memory_tool import (
    MAX_ENTRIES,
    MAX_PATH_CHARS,
    MAX_PATH_DEPTH,
    MAX_TOTAL_BYTES,
    SCHEMA,
    MemoryTool,
)
from tasks.invoice_audit import InvoiceAudit
from tests.helpers import FakeContext
from tests.test_loop import SMALL

DEEP_PATH = "/memories/" + "/".join(["a"] * 1000) + ".md"


def memory_call(call_id: str, arguments: object) -> dict:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": "memory", "arguments": text}}


class ScriptedCalls:
    """Sends one reply per entry of ``script`` (a list of tool-call lists), then submits; keeps each request."""

    is_reference = False
    name = "script"
    context_window = 10**7

    def __init__(self, script: list[list[dict]]):
        self.script, self.requests = script, []

    def complete(self, messages, tools):
        self.requests.append(messages)
        n = len(self.requests)
        if n <= len(self.script):
            calls = self.script[n - 1]
        else:
            submit = {"name": "submit", "arguments": '{"invoice_ids": []}'}
            calls = [{"id": "end", "type": "function", "function": submit}]
        return Completion(
            {"role": "assistant", "content": "", "tool_calls": calls}, Usage(prompt_tokens=1, output_tokens=1)
        )


def run_memory_trial(tmp_path, script: list[list[dict]], **params) -> tuple[dict, dict[str, str]]:
    """The trial's row and each tool result the model saw, by call id."""
    model = ScriptedCalls(script)
    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=10**7, max_steps=20, strategy_name="memory_tool", strategy_params={}, model_name="s"
    )
    row = run_trial(
        trial_id="m",
        trial_index=0,
        instance=InvoiceAudit(**SMALL).generate(0),
        strategy=MemoryTool(**params),
        model=model,
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    seen = {m["tool_call_id"]: m["content"] for m in model.requests[-1] if m.get("role") == "tool"}
    return row, seen


def test_hostile_memory_calls_are_tool_errors_and_the_trial_goes_on(tmp_path):
    script = [
        [
            memory_call("deep", {"command": "create", "path": DEEP_PATH, "file_text": "x"}),
            memory_call("levels", {"command": "create", "path": "/memories/" + "d/" * 12 + "x.md", "file_text": "x"}),
            memory_call("huge", {"command": "create", "path": "/memories/huge.md", "file_text": "x" * 1_200_000}),
            memory_call("typed", {"command": "create", "path": 7, "file_text": "x"}),
            memory_call("enum", {"command": ["view"], "path": "/memories"}),
            memory_call("missing", {"path": "/memories"}),
            memory_call("items", {"command": "view", "path": "/memories", "view_range": ["1", 2]}),
        ],
        [
            memory_call(f"f{i}", {"command": "create", "path": f"/memories/f{i}.md", "file_text": "x"})
            for i in range(201)
        ],
        [memory_call("ok", {"command": "view", "path": "/memories/f0.md"})],
    ]
    row, seen = run_memory_trial(tmp_path, script, max_file_chars=2_000_000)
    assert row["outcome"] == "submitted" and row["error"] is None
    assert seen["deep"] == f"ERROR: the path has 2,012 characters (max {MAX_PATH_CHARS}); use a shorter one"
    assert f"13 levels below /memories (max {MAX_PATH_DEPTH})" in seen["levels"]
    assert f"(max {MAX_TOTAL_BYTES:,})" in seen["huge"]
    assert (
        seen["typed"]
        == "ERROR: memory: argument path must be string, not integer; check the arguments against the tool's schema."
    )
    assert "argument command must be string, not array" in seen["enum"]
    assert "missing required argument command" in seen["missing"]
    assert "argument view_range must hold integer items, not string" in seen["items"]
    refused = [seen[f"f{i}"] for i in range(201) if seen[f"f{i}"].startswith("ERROR")]
    assert len(refused) == 201 - MAX_ENTRIES and f"(max {MAX_ENTRIES})" in refused[0]
    assert seen["ok"] == "     1\tx"
    assert all("\n" not in text for text in seen.values() if text.startswith("ERROR"))  # one line each


def test_a_genuine_strategy_bug_is_still_a_strategy_error(tmp_path):
    class BrokenTool(MemoryTool):
        def own_call(self, name, args):
            raise KeyError("a bug")

    model = ScriptedCalls([[memory_call("v", {"command": "view", "path": "/memories"})]])
    writer = RunWriter(tmp_path)
    settings = TrialSettings(budget=10**7, max_steps=5, strategy_name="x", strategy_params={}, model_name="s")
    row = run_trial(
        trial_id="b",
        trial_index=0,
        instance=InvoiceAudit(**SMALL).generate(0),
        strategy=BrokenTool(),
        model=model,
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    assert row["outcome"] == "strategy_error" and "strategy tool memory raised: KeyError" in row["error"]


@pytest.fixture
def store(tmp_path):
    strategy = MemoryTool()
    strategy.bind(FakeContext(10_000, store=tmp_path / "store"))
    return strategy


def test_a_rename_may_not_take_a_tree_below_the_depth_cap(store):
    path = "/memories/" + "/".join(f"d{i}" for i in range(MAX_PATH_DEPTH - 1)) + "/x.md"
    store.call("memory", {"command": "create", "path": path, "file_text": "x"})
    with pytest.raises(ToolError, match=f"levels below /memories \\(max {MAX_PATH_DEPTH}\\)"):
        store.call("memory", {"command": "rename", "old_path": "/memories/d0", "new_path": "/memories/deeper/d0"})
    store.call("memory", {"command": "rename", "old_path": "/memories/d0", "new_path": "/memories/e0"})


def test_a_failed_write_leaves_the_store_as_it_was(store, tmp_path):
    store.call("memory", {"command": "create", "path": "/memories/a.md", "file_text": "keep"})
    with pytest.raises(ToolError):
        store.call("memory", {"command": "create", "path": DEEP_PATH, "file_text": "x"})
    root = tmp_path / "store" / "memories"
    assert [p.name for p in root.rglob("*")] == ["a.md"] and (root / "a.md").read_text() == "keep"


@pytest.mark.parametrize(
    "args,problem",
    [
        ({"command": "view"}, None),
        ({"command": "view", "view_range": [1.0, 2]}, None),  # a whole number is an integer in JSON Schema
        ({"command": "view", "insert_line": True}, "argument insert_line must be integer, not boolean"),
        ({"command": "shred"}, "argument command must be one of view, create"),
        ({"command": "view", "extra": object()}, None),  # properties the schema does not declare are the tool's
    ],
)
def test_arguments_are_checked_against_the_declared_schema(args, problem):
    found = argument_problem(args, SCHEMA)
    assert found == problem if problem is None else found.startswith(problem)
    assert argument_problem(args, None) is None  # no schema, nothing to check

"""Issue 37: a strategy that edits the history in place ends the trial as ``strategy_error`` (harness/agent_loop.py).

The strategies below are loaded by class path too (``strategy=tests.test_mutation_guard:ClearsInPlace``).
"""

import pytest
from harness.history import History, frozen_copy
from harness.models.base import Completion, Usage
from harness.records import read_jsonl
from harness.tool_runner import CallResult
from tasks.invoice_audit import InvoiceAudit
from tests.test_cli import harness
from tests.test_loop import SMALL, trial

MUTATION = "strategy mutated the history in place"


class ClearsInPlace:
    """Clears every tool result but the last by editing the history's own messages (the bug of issue 37)."""

    def prepare(self, messages):
        results = [m for m in messages if m.get("role") == "tool"]
        for message in results[:-1]:
            message["content"] = "[cleared]"
        return list(messages)


class EditsToolCallArguments:
    """Rewrites the arguments of the first tool call in place, a nested edit (``tool_calls[0]["function"]``)."""

    def prepare(self, messages):
        for message in messages:
            if message.get("tool_calls") and len(messages) > 6:
                message["tool_calls"][0]["function"]["arguments"] = "{}"
                break
        return list(messages)


class DropsAKey:
    """Removes a private key from a tool result in place."""

    def prepare(self, messages):
        for message in messages:
            if message.get("role") == "tool":
                message.pop("_resource", None)
        return list(messages)


class DeletesFromItsList:
    """Deletes messages from the list it received: a projection, not an edit of the history."""

    def prepare(self, messages):
        if len(messages) > 6:
            del messages[2:4]  # an assistant reply and its result: the projection stays valid
        return messages


class CopiesBeforeEditing:
    """Clears old tool results the right way: new messages, the history untouched."""

    def prepare(self, messages):
        results = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
        out = list(messages)
        for index in results[:-1]:
            out[index] = {**messages[index], "content": "[cleared]"}
        return out


def test_an_edited_content_ends_the_trial_naming_step_message_and_key(tmp_path):
    row, _ = trial(tmp_path, ClearsInPlace())
    assert row["outcome"] == "strategy_error" and not row["success"]
    assert row["error"].startswith(f"{MUTATION} at step ")
    assert "(prepare): message " in row["error"] and "(tool) changed its content" in row["error"]
    assert "prepare must return new messages (copy before editing)" in row["error"]
    assert row["steps"] < 10  # caught at the first edit, not after 150 steps of re-reads


def test_a_nested_tool_call_edit_and_a_removed_key_are_caught(tmp_path):
    nested, _ = trial(tmp_path / "nested", EditsToolCallArguments())
    assert nested["outcome"] == "strategy_error" and "(assistant) changed its tool_calls" in nested["error"]
    dropped, _ = trial(tmp_path / "dropped", DropsAKey())
    assert dropped["outcome"] == "strategy_error" and "(tool) lost its _resource" in dropped["error"]


def test_list_level_projections_and_copies_run_clean(tmp_path):
    for name, strategy in (("list", DeletesFromItsList()), ("copies", CopiesBeforeEditing())):
        row, _ = trial(tmp_path / name, strategy)
        assert row["outcome"] != "strategy_error", row["error"]
        assert row["steps"] > 3


class CallsNoteTool:
    """Calls the strategy's ``note`` tool at every step until it has done so three times, then submits."""

    is_reference = False
    name = "notes"
    context_window = 100_000

    def __init__(self):
        self.n = 0

    def complete(self, messages, tools):
        self.n += 1
        name, arguments = ("note", "{}") if self.n <= 3 else ("submit", '{"invoice_ids": []}')
        call = {"id": f"c{self.n}", "type": "function", "function": {"name": name, "arguments": arguments}}
        message = {"role": "assistant", "content": "", "tool_calls": [call]}
        return Completion(message, Usage(prompt_tokens=10, cached_tokens=0, output_tokens=1))


class EditsInItsTool:
    """Keeps the messages ``prepare`` received and edits one of them when its ``note`` tool is called."""

    def __init__(self):
        self.seen: list[dict] = []

    def tools(self):
        return [{"type": "function", "function": {"name": "note", "parameters": {"type": "object", "properties": {}}}}]

    def call(self, name, args):
        self.seen[1]["content"] = "rewritten"
        return "noted"

    def prepare(self, messages):
        self.seen = messages
        return list(messages)


def test_an_edit_by_a_strategy_tool_is_caught_naming_the_tool(tmp_path):
    from harness.records import RunWriter
    from harness.trial import TrialSettings, run_trial

    writer = RunWriter(tmp_path)
    settings = TrialSettings(budget=10_000, max_steps=10, strategy_name="x", strategy_params={}, model_name="notes")
    row = run_trial(
        trial_id="n",
        trial_index=0,
        instance=InvoiceAudit(**SMALL).generate(0),
        strategy=EditsInItsTool(),
        model=CallsNoteTool(),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    assert row["outcome"] == "strategy_error" and row["steps"] == 1
    assert "at step 1 (strategy tool note): message 1 (user) changed its content" in row["error"]
    assert "strategy tool note must not edit the messages" in row["error"]


class Tokens:
    def message(self, message):
        return 1


def test_first_change_sees_edits_removals_and_takes_direct_appends():
    history = History([{"role": "system", "content": "s"}], Tokens())
    history.messages.append({"role": "user", "content": "u"})  # appended directly, as Trial.start does
    history.freeze_new()
    history.append_result("c1", "read", {"n": [1, 2]}, CallResult("page"), 1, "page:1")
    assert history.first_change() is None
    history.messages[2]["_args"]["n"].append(3)  # three levels deep
    assert history.first_change() == "message 2 (tool) changed its _args"
    history.messages[2]["_args"]["n"].pop()
    history.messages[1]["extra"] = True
    assert history.first_change() == "message 1 (user) gained extra"
    del history.messages[1]["extra"]
    history.messages.pop()
    assert history.first_change() == "1 of its 3 messages were removed"


def test_a_frozen_copy_shares_leaves_and_stops_at_its_depth():
    text = "x" * 100
    deep = {"a": {"b": {"c": {"d": {"e": 1}}}}}
    copy = frozen_copy({"content": text, "deep": deep})
    assert copy["content"] is text and copy["deep"] is not deep
    assert copy["deep"]["a"]["b"]["c"] is deep["a"]["b"]["c"]  # four levels copied, the fifth shared


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_the_cli_run_of_a_mutating_class_path_strategy_is_a_strategy_error(tmp_path):
    strategy = "strategy=tests.test_mutation_guard:ClearsInPlace"
    result = harness(
        "run", strategy, "suite=smoke", "task=invoice_audit", "trials=1", "progress=false", "plots=false", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr[-2000:]
    [run] = list((tmp_path / "results" / "runs").iterdir())
    [row] = read_jsonl(run / "trials.jsonl")
    assert row["outcome"] == "strategy_error" and row["error"].startswith(MUTATION)
    assert row["steps"] < 10

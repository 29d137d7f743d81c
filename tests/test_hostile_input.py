"""Hostile model output: lone surrogates in tool arguments and text, repeated tool-call ids.

End to end through ``harness.runner.execute`` with the fake models of ``tests/fake_models.py``,
so these tests do not depend on how ``harness/trial.py`` is organised.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from harness.records import dumps, read_jsonl, transcript_files
from harness.runner import execute
from harness.tokens import TokenCounter
from tests.helpers import compose

TASK = (
    "suite=smoke",
    "task=invoice_audit",
    "task.pages=4",
    "task.invoices_per_page=5",
    "task.duplicates=2",
    "task.max_distance=3",
    "trials=1",
    "progress=false",
    "plots=false",
    "budget=3k",
    "model._target_=tests.fake_models.ScriptModel",
    "~model.profile",
    "~model.profile_params",
)


def run(tmp_path: Path, script: str, *overrides: str) -> list[dict]:
    """Run one trial of ``script``; return the trial rows."""
    execute(compose(*TASK, f"+model.script={script}", *overrides), tmp_path, echo=lambda _: None)
    return read_jsonl(tmp_path / "trials.jsonl")


def jsonl_lines(path: Path) -> list[dict]:
    """Every line of a JSONL file, each required to be valid UTF-8 JSON."""
    data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    text = data.decode("utf-8")  # strict: a surrogate written raw would fail here
    return [json.loads(line) for line in text.splitlines()]


def test_dumps_writes_lone_surrogates_as_escapes_that_round_trip():
    row = {"args": {"page": "\ud800", "note": "x\udfffy"}, "text": "中文 ok", "ids": ["\udc80"]}
    line = dumps(row)
    line.encode("utf-8")
    assert json.loads(line) == row
    assert "中文" in line, "other text stays readable"


def test_token_counting_accepts_lone_surrogates():
    counter = TokenCounter()
    assert counter.text("a\ud800b") > 0
    assert counter.message({"role": "tool", "content": "\udfff", "tool_call_id": "x"}) > 0


@pytest.mark.parametrize("strategy", [(), ("strategy=status_bar",), ("strategy=notes",)])
def test_lone_surrogate_in_tool_arguments_is_recorded_and_the_run_goes_on(tmp_path, strategy):
    rows = run(tmp_path, "surrogate", *strategy)
    assert [r["outcome"] for r in rows] == ["submitted"]
    assert rows[0]["grade_detail"]["wrong"] == ["\\ud800"], "the loop escapes a lone surrogate in arguments"
    jsonl_lines(tmp_path / "steps.jsonl")
    (transcript,) = transcript_files(tmp_path / "transcripts").values()
    events = jsonl_lines(transcript)
    tool = next(e for e in events if e["event"] == "tool")
    assert tool["args"] == {"page": "\\ud800", "note": "x\\udfff"}
    replies = [e["message"] for e in events if e["event"] == "message" and e["message"]["role"] == "assistant"]
    assert replies[0]["content"] == "let me look \\ud800", "and in the reply's text (sent back next step)"


def bound(strategy):
    """``strategy`` bound to a fresh test context (budget 10k)."""
    from tests.helpers import FakeContext

    strategy.bind(FakeContext(10_000))
    return strategy


def tool_error(strategy, name: str, args: dict) -> str:
    """The message of the ``ToolError`` that ``strategy.call(name, args)`` must raise."""
    from strategies.base import ToolError

    with pytest.raises(ToolError) as caught:
        strategy.call(name, args)
    return str(caught.value)


def test_notes_refuse_a_lone_surrogate_and_keep_working():
    from strategies.notes import Notes

    notes = bound(Notes())
    message = tool_error(notes, "write_note", {"text": "found \ud800 here"})
    assert "surrogate" in message and len(message) < 200
    assert notes.call("write_note", {"text": "page 3 read"}) == "note 1 saved"
    assert notes.call("read_notes", {}) == "1. page 3 read"
    assert (notes.ctx.store / "notes.md").read_text(encoding="utf-8") == "page 3 read"
    assert len(tool_error(notes, "write_note", {"text": "x" * 100_000})) < 200


@pytest.mark.parametrize(
    "memory_id",
    ["mem-" + "0" * 100_000, "x" * 100_000, "../" * 30_000, "\ud800", 12, None, "mem-0001", "mem-" + "9" * 300],
)
def test_offload_read_memory_refuses_hostile_ids_briefly(memory_id):
    from strategies.offload import Offload

    message = tool_error(bound(Offload()), "read_memory", {"id": memory_id})
    assert len(message) < 200, message[:300]


def test_offload_keeps_a_result_with_a_lone_surrogate_exactly():
    from harness.conversation import validate_projection
    from strategies.offload import Offload
    from tests.helpers import SYSTEM, TASK, call

    offload = bound(Offload(threshold=10, keep_recent=0))
    text = "odd \ud800 text " + "word " * 100
    history = [
        dict(SYSTEM),
        dict(TASK),
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "read")]},
        {"role": "tool", "tool_call_id": "c1", "content": text, "_tool": "read", "_args": {}},
        {"role": "assistant", "content": "", "tool_calls": [call("c2", "read")]},  # c1 has been seen now
        {"role": "tool", "tool_call_id": "c2", "content": "ok", "_tool": "read", "_args": {}},
    ]
    out = offload.prepare(history)
    validate_projection(out, history[0])
    assert out[3]["content"].startswith("[offloaded to memory: id=mem-0001")
    assert offload.call("read_memory", {"id": "mem-0001"}) == text

"""Hostile model output: lone surrogates in tool arguments and text, repeated tool-call ids.

End to end through ``harness.runner.execute`` with the fake models of ``tests/fake_models.py``,
so these tests do not depend on how ``harness/loop.py`` is organised.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.records import dumps, read_jsonl
from harness.runner import execute
from harness.tokens import TokenCounter
from tests.helpers import compose

TASK = ("suite=smoke", "task=invoice_audit", "task.pages=4", "task.invoices_per_page=5", "task.duplicates=2", "task.max_distance=3",
        "trials=1", "progress=false", "budget=3k", "model._target_=tests.fake_models.ScriptModel")


def run(tmp_path: Path, script: str, *overrides: str) -> list[dict]:
    """Run one trial of ``script``; return the trial rows."""
    execute(compose(*TASK, f"+model.script={script}", *overrides), tmp_path, echo=lambda _: None)
    return read_jsonl(tmp_path / "trials.jsonl")


def jsonl_lines(path: Path) -> list[dict]:
    """Every line of a JSONL file, each required to be valid UTF-8 JSON."""
    text = path.read_bytes().decode("utf-8")  # strict: a surrogate written raw would fail here
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
    assert rows[0]["grade_detail"]["wrong"] == ["\ud800"], "the trials writer round-trips the surrogate"
    jsonl_lines(tmp_path / "steps.jsonl")
    (transcript,) = (tmp_path / "transcripts").glob("*.jsonl")
    events = jsonl_lines(transcript)
    tool = next(e for e in events if e["event"] == "tool")
    assert tool["args"] == {"page": "\ud800", "note": "x\udfff"}
    replies = [e["message"] for e in events if e["event"] == "message" and e["message"]["role"] == "assistant"]
    assert replies[0]["content"] == "let me look \ud800"

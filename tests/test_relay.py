"""``model=relay``: requests land as files, replies come back as files (harness/models/relay.py)."""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from pathlib import Path

from harness.models.relay import parse_reply, render_request
from harness.records import read_jsonl, read_transcript, transcript_files
from tests.helpers import compose

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("answer_needle", ROOT / "examples" / "relay" / "answer_needle.py")
answer_needle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(answer_needle)


def start_run(tmp_path: Path, *overrides: str) -> tuple[threading.Thread, Path, Path]:
    """A needle trial with model=relay, run in a thread; (thread, relay folder, run folder)."""
    from harness.runner import execute

    relay, out = tmp_path / "relay", tmp_path / "run"
    cfg = compose(
        "task=needle",
        "suite.instances=1",
        "trials=1",
        "model=relay",
        f"model.folder={relay}",
        "model.poll_s=0.02",
        "model.settle_s=0.1",
        "plots=false",
        "progress=false",
        *overrides,
    )
    thread = threading.Thread(target=execute, args=(cfg, out), kwargs={"echo": lambda _: None}, daemon=True)
    thread.start()
    return thread, relay, out


def answer_until_done(thread: threading.Thread, relay: Path, answer=answer_needle.answer) -> list[Path]:
    """Answer every request (with ``answer``) until the run ends; the request files answered."""
    answered: list[Path] = []
    deadline = time.monotonic() + 60
    while thread.is_alive() and time.monotonic() < deadline:
        for request in answer_needle.pending(relay):
            reply = answer(json.loads(request.read_text()))
            target = request.with_name(request.name.replace(".request.json", ".reply.json"))
            target.write_text(reply if isinstance(reply, str) else json.dumps(reply))
            answered.append(request)
        time.sleep(0.02)
    thread.join(5)
    assert not thread.is_alive(), "the relay run did not finish"
    return answered


def test_a_script_answers_a_relay_run_and_the_records_are_the_usual_ones(tmp_path):
    thread, relay, out = start_run(tmp_path)
    answered = answer_until_done(thread, relay)
    assert [p.name for p in answered] == ["0001.request.json", "0002.request.json"]
    text = answered[0].with_name("0001.request.txt").read_text()
    assert "# Tools" in text and "search_documents" in text and "0001.reply.json" in text
    row = read_jsonl(out / "trials.jsonl")[0]
    assert row["model"] == "relay" and row["success"] and row["steps"] == 2 and not row["reference_agent"]
    transcript = read_transcript(next(iter(transcript_files(out / "transcripts").values())))
    calls = [c for e in transcript if e.get("event") == "message" for c in e["message"].get("tool_calls") or []]
    assert [c["function"]["name"] for c in calls] == ["search_documents", "submit"]
    assert calls[0]["id"] == "call_1_0" and json.loads(calls[0]["function"]["arguments"]) == {
        "query": "vault access code"
    }


def test_a_malformed_reply_goes_back_to_the_model_as_an_error(tmp_path):
    replies = iter(["this is not json", None, None])

    def answer(request: dict):
        bad = next(replies)
        return bad if bad is not None else answer_needle.answer(request)

    thread, relay, out = start_run(tmp_path)
    answer_until_done(thread, relay, answer)
    transcript = read_transcript(next(iter(transcript_files(out / "transcripts").values())))
    nudges = [
        e["message"]["content"]
        for e in transcript
        if e.get("event") == "message" and e["message"].get("role") == "user" and e["message"].get("_nudge")
    ]
    assert nudges and "not JSON" in nudges[0]
    assert read_jsonl(out / "trials.jsonl")[0]["success"]


def test_no_reply_within_the_timeout_is_a_model_error(tmp_path):
    thread, relay, out = start_run(tmp_path, "model.timeout=0.3")
    thread.join(30)
    row = read_jsonl(out / "trials.jsonl")[0]
    assert row["outcome"] == "model_error" and "no reply" in row["error"]


def test_a_rerun_reuses_the_recorded_replies_without_waiting(tmp_path):
    thread, relay, out = start_run(tmp_path)
    answer_until_done(thread, relay)
    first = read_jsonl(out / "trials.jsonl")[0]
    from harness.runner import execute

    again = tmp_path / "again"
    cfg = compose(
        "task=needle",
        "suite.instances=1",
        "trials=1",
        "model=relay",
        f"model.folder={relay}",
        "model.timeout=1",
        "plots=false",
        "progress=false",
    )
    execute(cfg, again, echo=lambda _: None)
    second = read_jsonl(again / "trials.jsonl")[0]
    assert second["success"] and second["input_tokens"] == first["input_tokens"] and second["steps"] == first["steps"]


def test_reply_formats():
    assert parse_reply('{"content": "hi"}') == {"role": "assistant", "content": "hi"}
    openai_style = {
        "choices": [
            {
                "message": {
                    "content": "x",
                    "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"k": 1}'}}],
                }
            }
        ]
    }
    message = parse_reply(json.dumps(openai_style))
    assert message["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"k": 1}'}
    assert "_parse_error" in parse_reply("[1, 2]")
    assert "_parse_error" in parse_reply('{"tool_calls": [{"arguments": {}}]}')
    text = render_request([{"role": "user", "content": "q"}], [], "R")
    assert "## user\nq" in text and text.rstrip().endswith("by listing them.")

"""``model=relay``: requests land as files, replies come back as files (harness/models/relay.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import time
from pathlib import Path

from harness.models.relay import parse_reply, render_request
from harness.models.relay_files import PART_CHARS, render_parts, request_nonce, split_text
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
    """Answer every request (with ``answer``, the nonce added to a dict) until the run ends; the requests answered."""
    answered: list[Path] = []
    deadline = time.monotonic() + 60
    while thread.is_alive() and time.monotonic() < deadline:
        for request in answer_needle.pending(relay):
            reply = answer(json.loads(request.read_text()))
            if isinstance(reply, dict):
                reply = json.dumps({"seen": request_nonce(request), **reply})
            target = request.with_name(request.name.replace(".request.json", ".reply.json"))
            target.write_text(reply)
            answered.append(request)
        time.sleep(0.02)
    thread.join(5)
    assert not thread.is_alive(), "the relay run did not finish"
    return answered


def test_a_script_answers_a_relay_run_and_the_records_are_the_usual_ones(tmp_path):
    thread, relay, out = start_run(tmp_path)
    answered = answer_until_done(thread, relay)
    assert [p.name for p in answered] == ["0001.request.json", "0002.request.json"]
    text = answered[0].with_name("0001.request.part-01-of-01.txt").read_text()
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
    replies = iter([{"content": "x", "tool_calls": [{"arguments": {}}]}, None, None])

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
    assert nudges and "name and arguments" in nudges[0]
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


def test_a_long_request_is_cut_into_numbered_parts_that_each_carry_a_key_piece():
    text = "".join(f"line {i}: " + "x" * (i % 180) + "\n" for i in range(2_000))
    parts = render_parts(text, 7, "0007.reply.json")
    total = len(parts)
    assert total >= 9 and all(len(content) <= PART_CHARS for _, content in parts)
    assert [name for name, _ in parts][:2] == [
        "0007.request.part-01-of-%02d.txt" % total,
        f"0007.request.part-02-of-{total:02d}.txt",
    ]
    assert "".join(split_text(text)) == text
    for index, (_, content) in enumerate(parts, start=1):
        assert content.startswith(f"[request 0007, part {index} of {total}")
        assert f"[key piece {index} of {total}: " in content
    assert '"seen"' in parts[-1][1].splitlines()[-1]


def reply_then_good(first: object):
    """An answer function whose first reply is ``first`` (a raw string or a dict sent without the nonce)."""
    sent = []

    def answer(request: dict):
        if not sent:
            sent.append(True)
            return first if isinstance(first, str) else json.dumps(first)
        return answer_needle.answer(request)

    return answer


def rejection(relay: Path) -> str:
    """The text of the one trial's first request's rejection log."""
    (folder,) = [p for p in relay.iterdir() if p.is_dir()]
    return (folder / "0001.rejected.txt").read_text()


def test_a_reply_without_the_nonce_is_refused_and_never_reaches_the_trial(tmp_path):
    thread, relay, out = start_run(tmp_path)
    answer_until_done(thread, relay, reply_then_good(answer_needle.answer({"messages": [{"role": "user"}]})))
    assert 'has no "seen"' in rejection(relay)
    (folder,) = [p for p in relay.iterdir() if p.is_dir()]
    assert (folder / "0001.reply.rejected-1.json").exists()
    row = read_jsonl(out / "trials.jsonl")[0]
    assert row["success"] and row["steps"] == 2  # the refused reply was not a step
    transcript = read_transcript(next(iter(transcript_files(out / "transcripts").values())))
    assert "rejected" not in json.dumps(transcript)


def test_a_reply_with_a_wrong_or_partial_nonce_is_refused(tmp_path):
    thread, relay, out = start_run(tmp_path)
    answer_until_done(thread, relay, reply_then_good({"seen": "abc123", "content": "guess"}))
    assert "not the request's nonce" in rejection(relay)
    assert read_jsonl(out / "trials.jsonl")[0]["steps"] == 2


def test_a_reply_that_is_not_json_is_refused_and_the_relay_waits_for_another(tmp_path):
    thread, relay, out = start_run(tmp_path)
    answer_until_done(thread, relay, reply_then_good("this is not json"))
    assert "not JSON" in rejection(relay)
    assert read_jsonl(out / "trials.jsonl")[0]["success"]


def test_a_reply_file_planted_before_the_request_is_refused(tmp_path):
    folder = tmp_path / "relay" / "needle-d20x400-p10-s0-t0"
    folder.mkdir(parents=True)
    planted = folder / "0001.reply.json"
    planted.write_text(json.dumps({"seen": "", "content": "planted", "tool_calls": []}))
    old = time.time() - 60
    os.utime(planted, (old, old))
    thread, relay, out = start_run(tmp_path)
    answer_until_done(thread, relay)
    assert "older than its request" in rejection(relay)
    assert read_jsonl(out / "trials.jsonl")[0]["steps"] == 2


def test_planted_symlinks_are_neither_read_nor_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("do not touch")
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"seen": "x", "content": "from the link"}))
    folder = tmp_path / "relay" / "needle-d20x400-p10-s0-t0"
    folder.mkdir(parents=True)
    (folder / "0001.request.part-01-of-01.txt").symlink_to(victim)
    thread, relay, out = start_run(tmp_path)
    deadline = time.monotonic() + 30
    while not (folder / "0001.request.json").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    (folder / "0001.reply.json").symlink_to(secret)
    answer_until_done(thread, relay)
    assert victim.read_text() == "do not touch" and not (folder / "0001.request.part-01-of-01.txt").is_symlink()
    assert "symbolic link" in rejection(relay)
    assert (folder / "0001.reply.rejected-1.json").is_symlink() and secret.exists()
    assert read_jsonl(out / "trials.jsonl")[0]["success"]


def test_a_trial_folder_that_is_a_symlink_is_a_model_error(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "relay").mkdir()
    (tmp_path / "relay" / "needle-d20x400-p10-s0-t0").symlink_to(elsewhere)
    thread, relay, out = start_run(tmp_path)
    thread.join(30)
    row = read_jsonl(out / "trials.jsonl")[0]
    assert row["outcome"] == "model_error" and "symbolic link" in row["error"] and not list(elsewhere.iterdir())


def test_an_oversized_reply_is_refused_unread(tmp_path):
    thread, relay, out = start_run(tmp_path, "model.max_reply_bytes=2000")
    answer_until_done(thread, relay, reply_then_good({"content": "y" * 5000}))
    assert "over the cap" in rejection(relay)


def test_only_protocol_2_is_served():
    import pytest

    from harness.models.relay import RelayModel

    with pytest.raises(ValueError, match="relay_protocol 1"):
        RelayModel(relay_protocol=1)

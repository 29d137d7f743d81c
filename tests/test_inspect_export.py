"""``export RUN... --to inspect DIR``: run and sweep folders as inspect_ai eval logs, read back with inspect's API.

Skipped, with its reason, when the ``inspect`` extra is not installed. A sweep of three strategies
(headtail, summarize with its summarizer calls, isolate with its sub-agents) on the smoke suite
(code_review at 12 files, so that summarize summarizes),
two trials each, plus a run whose provider is down (``model_error``) and one cut at two steps
(``step_limit``). Each job folder becomes one log; each trial one sample whose scores, usage and
model events match ``trials.jsonl``, ``steps.jsonl`` and the transcript. The slow test opens the
logs in ``inspect view`` in headless Chromium (driven over the DevTools protocol) and finds the samples.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the inspect extra is not installed: pip install -e '.[inspect]'")

from inspect_ai.event import CompactionEvent, ModelEvent, SpanBeginEvent, ToolEvent  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.scorer import CORRECT, INCORRECT  # noqa: E402

from harness.integrations.inspect_export import export_runs, usage_of  # noqa: E402
from harness.records import read_jsonl, read_transcript  # noqa: E402
from tests.test_cli import harness  # noqa: E402

STRATEGIES = ("headtail", "summarize", "isolate")


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    """A sweep (three strategies at 2k, two trials each) and two runs that end badly (model error, step limit)."""
    tmp = tmp_path_factory.mktemp("export")
    runs = {
        # code_review at 12 files runs enough rounds for summarize to summarize at 2k (at 8 files it does not)
        "sweep": (
            f"strategy={','.join(STRATEGIES)}",
            "suite.families.code_review.files=12",
            "trials=2",
            f"hydra.sweep.dir={tmp / 'sweep'}",
        ),
        "down": ("faults=down", "trials=1", f"hydra.run.dir={tmp / 'down'}"),
        "limit": ("max_steps=2", "trials=1", f"hydra.run.dir={tmp / 'limit'}"),
    }
    for name, args in runs.items():
        sweep = ("-m",) if name == "sweep" else ()
        result = harness("run", *sweep, "suite=smoke", "budget=2k", "plots=false", "progress=false", *args, cwd=tmp)
        assert result.returncode == 0, result.stderr[-2000:]
    return {name: tmp / name for name in runs}


@pytest.fixture(scope="module")
def logs(folders, tmp_path_factory) -> dict[Path, object]:
    """The exported logs, read back with ``read_eval_log``, by the run folder each came from."""
    out = tmp_path_factory.mktemp("logs")
    written = export_runs([folders["sweep"], folders["down"], folders["limit"]], out)
    assert sorted(p.parent for p, _ in written) == [out] * len(written)
    return {Path(log.eval.metadata["run_folder"]): read_eval_log(str(path)) for path, log in written}


def job_folders(sweep: Path) -> list[Path]:
    return sorted(p.parent for p in sweep.rglob("trials.jsonl"))


def test_one_log_per_job_and_one_sample_per_trial(folders, logs):
    jobs = job_folders(folders["sweep"])
    assert len(jobs) == len(STRATEGIES) and set(logs) == {*jobs, folders["down"], folders["limit"]}
    for run, log in logs.items():
        rows = read_jsonl(run / "trials.jsonl")
        assert log.status == "success" and len(log.samples) == len(rows) == log.results.total_samples
        assert sorted((s.id, s.epoch) for s in log.samples) == sorted((r["instance_id"], r["trial"] + 1) for r in rows)
        assert log.eval.task == f"{rows[0]['strategy']}@2k" and log.eval.dataset.name == "smoke"
        assert {s.metadata["trial_id"] for s in log.samples} == {r["trial_id"] for r in rows}


def test_scores_are_the_graders_result(logs):
    for run, log in logs.items():
        rows = {r["trial_id"]: r for r in read_jsonl(run / "trials.jsonl")}
        for sample in log.samples:
            row = rows[sample.metadata["trial_id"]]
            success = sample.scores["success"]
            assert success.value == (CORRECT if row["success"] else INCORRECT)
            assert sample.scores["score"].value == row["score"]
            assert success.metadata["outcome"] == row["outcome"] == sample.metadata["outcome"]
            assert f"outcome {row['outcome']}" in success.explanation
            assert success.metadata["grade_detail"] == row["grade_detail"]
        accuracy = log.results.scores[0].metrics["accuracy"].value
        assert accuracy == pytest.approx(sum(r["success"] for r in rows.values()) / len(rows))


def test_usage_matches_the_trial_rows(logs):
    for run, log in logs.items():
        rows = {r["trial_id"]: r for r in read_jsonl(run / "trials.jsonl")}
        for sample in log.samples:
            row = rows[sample.metadata["trial_id"]]
            (usage,) = sample.model_usage.values()
            total_input = usage.input_tokens + usage.input_tokens_cache_read + usage.input_tokens_cache_write
            assert total_input == row["total_input_tokens"]
            assert usage.input_tokens_cache_read == row["total_cached_tokens"]
            assert usage.output_tokens == row["total_output_tokens"]
            kinds = {
                "agent": row["input_tokens"],
                "summarizer": row["summarizer_input_tokens"],
                "subagent": row["subagent_input_tokens"],
            }
            for kind, tokens in kinds.items():
                part = sample.role_usage.get(kind)
                found = (
                    0
                    if part is None
                    else part.input_tokens + part.input_tokens_cache_read + part.input_tokens_cache_write
                )
                assert found == tokens, (sample.id, kind)


def test_events_are_the_prepared_requests_and_their_calls(logs):
    for run, log in logs.items():
        steps = read_jsonl(run / "steps.jsonl")
        for sample in log.samples:
            trial_id = sample.metadata["trial_id"]
            requests = read_transcript(run, trial_id, only=["request"])
            agent = [e for e in sample.events if isinstance(e, ModelEvent) and e.role is None]
            assert [e.metadata["step"] for e in agent] == [r["step"] for r in requests]
            assert [len(e.input) for e in agent] == [len(r["refs"]) for r in requests]
            if agent:
                assert [m.id for m in agent[-1].input] == [f"{trial_id}/{ref}" for ref in requests[-1]["refs"]]
            rows = [r for r in steps if r["trial_id"] == trial_id and r["kind"] == "agent"]
            assert [e.output.usage for e in agent[: len(rows)]] == [usage_of(r) for r in rows]
            calls = [e for e in sample.events if isinstance(e, ModelEvent)]
            answered = [e for e in calls if e.output.usage is not None]
            assert len(answered) == len([r for r in steps if r["trial_id"] == trial_id])
            assert all(e.error for e in calls if e.output.usage is None)
            tools = read_transcript(run, trial_id, only=["tool"])
            assert [e.function for e in sample.events if isinstance(e, ToolEvent)] == [t["name"] for t in tools]


def test_metadata_holds_strategy_budget_and_compactions(folders, logs):
    kinds = set()
    for run, log in logs.items():
        rows = {r["trial_id"]: r for r in read_jsonl(run / "trials.jsonl")}
        assert log.eval.metadata["budget"] == 2000 and log.eval.task_args["budget"] == 2000
        for sample in log.samples:
            row, meta = rows[sample.metadata["trial_id"]], sample.metadata
            assert (meta["strategy"], meta["strategy_params"], meta["budget"]) == (
                row["strategy"],
                row["strategy_params"],
                row["budget"],
            )
            main = [c for c in meta["compaction_events"] if "subagent" not in c]
            assert len(main) == row["compactions"] == meta["compactions"]
            compactions = [e for e in sample.events if isinstance(e, CompactionEvent)]
            assert len(compactions) == len(meta["compaction_events"])
            kinds |= {e.type for e in compactions}
            assert meta["trial_row"] == row
    assert {"trim", "summary"} <= kinds
    isolate = next(log for run, log in logs.items() if run.parent == folders["sweep"] and "isolate" in run.name)
    assert any(
        isinstance(e, SpanBeginEvent) and e.name.startswith("sub-agent") for s in isolate.samples for e in s.events
    )


def test_the_reference_agent_is_named_as_such(logs):
    for log in logs.values():
        assert log.eval.model == "ctxbench/scripted" and log.eval.model_args["reference_agent"] is True
        assert "not an LLM" in log.eval.model_args["agent"] and "reference-agent" in log.eval.tags
        assert all(s.metadata["reference_agent"] and "not an LLM" in s.metadata["agent"] for s in log.samples)


def test_errors_and_limits(folders, logs):
    down, limit = logs[folders["down"]], logs[folders["limit"]]
    assert all(s.error is not None and s.error.message.startswith("model_error:") for s in down.samples)
    assert all(s.scores["success"].value == INCORRECT for s in down.samples)
    assert all(s.limit is not None and s.limit.type == "turn" and s.limit.limit == 2 for s in limit.samples)
    sweep = [log for run, log in logs.items() if run.parent == folders["sweep"]]
    assert all(s.error is None and s.limit is None for log in sweep for s in log.samples)


def test_a_rerun_export_gives_the_same_ids(folders, tmp_path):
    first = export_runs([folders["limit"]], tmp_path / "a")
    again = export_runs([folders["limit"]], tmp_path / "b")
    assert [p.name for p, _ in first] == [p.name for p, _ in again]
    assert [s.uuid for s in first[0][1].samples] == [s.uuid for s in again[0][1].samples]


# ---------------------------------------------------------------- the command line


def test_export_command(folders, tmp_path):
    result = harness(
        "export", str(folders["sweep"]), str(folders["down"]), "--to", "inspect", str(tmp_path / "out"), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    files = sorted((tmp_path / "out").glob("*.eval"))
    assert len(files) == len(STRATEGIES) + 1 and all(str(f) in result.stdout for f in files)
    assert f"inspect view --log-dir {tmp_path / 'out'}" in result.stdout
    hint = next(line for line in result.stdout.splitlines() if line.startswith("browse them: "))
    program = tmp_path / hint.removeprefix("browse them: ").split()[0]  # relative to where export ran, or absolute
    assert program.is_file() and os.access(program, os.X_OK), f"the hint does not run as printed: {hint}"


@pytest.mark.parametrize(
    "args,needle",
    [
        (["RUN"], "--to"),
        (["RUN", "--to", "csv", "out"], "unknown format 'csv' (valid: inspect)"),
        (["NOWHERE", "--to", "inspect", "out"], "not a run or sweep folder"),
        (["RUN", "--to", "inspect", "out", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_export_usage_errors_are_one_line(folders, tmp_path, args, needle):
    args = [str(folders["limit"]) if a == "RUN" else str(tmp_path / "nowhere") if a == "NOWHERE" else a for a in args]
    result = harness("export", *args, cwd=tmp_path)
    assert result.returncode == 2 and needle in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- inspect view in a browser


def chromium() -> str | None:
    return next(
        (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_inspect_view(log_dir: Path, port: int) -> subprocess.Popen:
    """``inspect view`` on 127.0.0.1:``port``, once it answers (its own process group, so it can be stopped whole)."""
    inspect = Path(sys.executable).with_name("inspect")
    server = subprocess.Popen(
        [str(inspect), "view", "--log-dir", str(log_dir), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/logs", timeout=2).read()
            return server
        except OSError:
            time.sleep(0.3)
    server.terminate()
    raise AssertionError("inspect view did not answer within 60 s")


async def _browse(binary: str, profile: Path, url: str, wanted: list[str], shot: Path | None, timeout: float) -> str:
    """Open ``url`` in headless Chromium, wait until the page's text holds every ``wanted`` string; its text."""
    import aiohttp  # a dependency of inspect_ai (through s3fs): the DevTools protocol's websocket

    port_file = profile / "DevToolsActivePort"
    port_file.unlink(missing_ok=True)  # the port of an earlier browser on this profile
    browser = subprocess.Popen(
        [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--remote-debugging-port=0",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and len(port_file.read_text().split()) >= 2):
            assert time.monotonic() < deadline, "chromium did not open its DevTools port"
            await asyncio.sleep(0.1)
        port = port_file.read_text().split()[0]
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/json/list") as reply:
                page = next(t for t in await reply.json() if t["type"] == "page")
            async with session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                return await _drive(ws, url, wanted, shot, timeout)
    finally:
        browser.terminate()
        browser.wait(timeout=30)


async def _drive(ws, url: str, wanted: list[str], shot: Path | None, timeout: float) -> str:
    """Navigate, poll the page's text until it holds ``wanted`` (or time runs out), take the screenshot."""
    counter = iter(range(1, 1_000_000))

    async def call(method: str, **params) -> dict:
        number = next(counter)
        await ws.send_json({"id": number, "method": method, "params": params})
        while True:
            message = await ws.receive_json()
            if message.get("id") == number:
                return message.get("result", {})

    await call("Emulation.setDeviceMetricsOverride", width=1400, height=900, deviceScaleFactor=1, mobile=False)
    await call("Page.navigate", url=url)
    deadline, text = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        result = await call(
            "Runtime.evaluate", expression="document.body ? document.body.innerText : ''", returnByValue=True
        )
        text = result.get("result", {}).get("value", "")
        if all(w in text for w in wanted):
            break
        await asyncio.sleep(0.3)
    if shot is not None:
        await asyncio.sleep(0.5)  # the last layout pass
        shot.write_bytes(base64.b64decode((await call("Page.captureScreenshot", format="png"))["data"]))
    return text


def browse(url: str, wanted: list[str], profile: Path, shot: Path | None = None, timeout: float = 60) -> str:
    """The text of ``url`` in headless Chromium once it shows every ``wanted`` string (skip without a chromium)."""
    binary = chromium()
    if binary is None:
        pytest.skip("no chromium binary (apt-get install chromium)")
    return asyncio.run(_browse(binary, profile, url, wanted, shot, timeout))


@pytest.mark.slow
def test_inspect_view_shows_the_samples(folders, tmp_path):
    """``inspect view`` lists the exported logs, and a log's page lists its samples with their scores."""
    if chromium() is None:
        pytest.skip("no chromium binary (apt-get install chromium)")
    pytest.importorskip("aiohttp", reason="aiohttp (an inspect_ai dependency) drives the browser")
    written = export_runs([folders["sweep"]], tmp_path / "logs")
    port = free_port()
    server = start_inspect_view(tmp_path / "logs", port)
    try:
        tasks = [log.eval.task for _, log in written]
        text = browse(f"http://127.0.0.1:{port}/", [*tasks, "ctxbench/scripted"], tmp_path / "profile")
        assert all(task in text for task in tasks), text[:2000]
        path, log = written[0]
        ids = sorted({str(s.id) for s in log.samples})
        text = browse(
            f"http://127.0.0.1:{port}/#/logs/{path.name}/samples/",
            ids,
            tmp_path / "profile",
            shot=tmp_path / "samples.png",
        )
        assert all(i in text for i in ids), text[:2000]
        assert (tmp_path / "samples.png").stat().st_size > 10_000
        sample = log.samples[0]
        text = browse(
            f"http://127.0.0.1:{port}/#/logs/{path.name}/samples/sample/{sample.id}/{sample.epoch}/transcript",
            ["ctxbench/scripted", sample.metadata["trial_row"]["family"]],
            tmp_path / "profile",
        )
        assert sample.id in text
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)

"""Issue 22: a hostile model server (tests/hostile_server.py) on 127.0.0.1, started and stopped by the tests, and
a short trial for each of its reply modes over both HTTP backends, built from their presets as the CLI builds
them (``model=llamacpp``: OpenAI chat completions; ``model=llamacpp_messages``: Anthropic Messages).

Whatever the server sends, the trial records its row and ends either with an error the model sees (a tool
error, or the message that its reply could not be run; the trial goes on and submits) or with a recorded
outcome and its reason (``model_error``, ``context_overflow``). Every mode runs in-process (a trial is ~0.1 s);
a sample of modes also runs through ``python -m harness run -m`` (one sweep per backend, ``model.base_url``
swept over the modes' URLs: the process exits 0), and ``-m slow`` sweeps every mode through the CLI (a job
costs ~0.6 s of hydra composition). Retries are fast: no backoff, ``Retry-After`` capped at ``MAX_RETRY_AFTER``,
real sleeps (a NaN wait raises, as ``time.sleep(nan)`` does).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from harness.cache_sim import PROFILES
from harness.trial import TrialSettings, run_trial
from harness.records import RunWriter, read_jsonl, read_transcript
from harness.runner import build_model
from strategies.none import NoManagement
from tasks.failure_memory import FailureMemory
from tests.hostile_server import ANTHROPIC, MODES, OPENAI, HostileServer
from tests.test_cli import ROOT, harness

pytest.importorskip("anthropic")

PRESETS = {OPENAI: "llamacpp", ANTHROPIC: "llamacpp_messages"}
SUBMIT = {"first_total": 0, "escalated_ticket": "T-1", "second_period": "2025-Q1", "second_total": 0}
SMOKE = dict(tickets=3, ticket_messages=2, rows=12, page_rows=6)  # failure_memory in configs/suite/smoke.yaml
MAX_RETRY_AFTER = 0.05
MODEL = {
    "context_window": 1_000_000,  # the huge replies fit: the trial goes on past them
    "retry": {"attempts": 2, "initial_wait": 0, "max_wait": 0.01, "jitter": 0, "max_retry_after": MAX_RETRY_AFTER},
}
SETTINGS = [
    f"model.context_window={MODEL['context_window']}",
    *(f"model.retry.{key}={value}" for key, value in MODEL["retry"].items()),
    "suite=smoke",
    "task=failure_memory",
    "trials=1",
    "max_steps=3",
    "progress=false",
    "plots=false",
]


@dataclass(frozen=True)
class Expect:
    """How a mode must end.

    kind: ``submit`` (at once), ``retried`` (the first attempt failed, the retry submitted), ``tool_error`` (a
    tool result that is an error, then a submit), ``unreadable`` (the model is told its reply could not be run,
    then submits), ``usage_invalid`` (the step's usage was dropped and recorded as invalid, then a submit),
    ``model_error`` or ``context_overflow`` (the trial's outcome, with ``needle`` in its error).
    needle: a piece of the text the model is told, or of the recorded error.
    """

    kind: str
    needle: str = ""


def per_backend(openai: Expect, anthropic: Expect) -> dict[str, Expect]:
    return {OPENAI: openai, ANTHROPIC: anthropic}


NOT_JSON = Expect("model_error", "the response is not JSON")
NO_ENDPOINT = "endpoint must be a path"  # query_api's answer to arguments that decode but name no endpoint
EXPECT: dict[str, Expect | dict[str, Expect]] = {
    "ok": Expect("submit"),
    "nan_args": Expect("tool_error", "NaN"),
    "infinity_args": Expect("tool_error", "Infinity"),
    "huge_float_args": per_backend(Expect("tool_error", "too large for a float"), Expect("tool_error", "Infinity")),
    "huge_int_args": per_backend(Expect("tool_error", "4300 digits"), Expect("model_error", "4300 digits")),
    "deep_args": per_backend(
        Expect("tool_error", "nested too deeply"), Expect("model_error", "the response is nested too deeply")
    ),
    "malformed_args": per_backend(
        Expect("tool_error", "not valid JSON"), Expect("tool_error", "must be a JSON object")
    ),
    "args_not_object": Expect("tool_error", "must be a JSON object"),
    "args_as_object": per_backend(Expect("tool_error", NO_ENDPOINT), Expect("tool_error", "must be a JSON object")),
    "args_number": Expect("tool_error", "must be a JSON object"),
    "args_null": Expect("tool_error", NO_ENDPOINT),
    "surrogate_args": Expect("tool_error", NO_ENDPOINT),
    "unknown_tool": Expect("tool_error", "unknown tool 'rm_rf_slash'"),
    "empty_tool_name": Expect("unreadable", "has no tool name"),
    "tool_name_not_string": Expect("unreadable", "has no tool name"),
    "missing_call_id": Expect("tool_error", "unknown tool 'rm_rf_slash'"),
    "call_id_not_string": Expect("unreadable", "has no id"),
    "duplicate_call_ids": Expect("unreadable", "share the id 'dup'"),
    "many_tool_calls": Expect("tool_error", "unknown tool"),
    "tool_calls_not_list": per_backend(Expect("unreadable", "not a list of calls"), Expect("tool_error", NO_ENDPOINT)),
    "call_without_function": per_backend(
        Expect("unreadable", "not a list of calls"), Expect("unreadable", "has no tool name")
    ),
    "null_content": per_backend(Expect("unreadable", "no tool call"), Expect("model_error", "no content blocks")),
    "content_not_string": Expect("unreadable", "no tool call"),
    "lone_surrogate": Expect("unreadable", "no tool call"),
    "surrogate_in_block": Expect("unreadable", "no tool call"),
    "nul_and_controls": Expect("unreadable", "no tool call"),
    "text_tool_call_nan": Expect("tool_error", "NaN"),
    "text_tool_call_deep": Expect("unreadable", "nested too deeply"),
    "text_tool_call_huge_float": Expect("tool_error", "Infinity"),
    "many_braces": Expect("unreadable", "no tool call"),
    "open_fence_blanks": Expect("unreadable", "no tool call"),
    "cut_at_max_tokens": Expect("unreadable", "max_tokens"),
    "unknown_block_type": Expect("unreadable", "no tool call"),
    "empty_choices": per_backend(Expect("model_error", "no choices"), Expect("unreadable", "no tool call")),
    "null_choice": per_backend(Expect("model_error", "no choices"), Expect("unreadable", "no tool call")),
    "no_message": per_backend(Expect("unreadable", "no tool call"), Expect("model_error", "no content blocks")),
    "error_in_200": Expect("model_error", "the response is an error: internal failure"),
    "json_not_object": Expect("model_error", "not a JSON object"),
    "json_null": Expect("model_error", "not a JSON object"),
    "non_json_body": NOT_JSON,
    "non_json_as_json": NOT_JSON,
    "wrong_content_type": Expect("submit"),
    "event_stream": NOT_JSON,
    "truncated_json": NOT_JSON,
    "empty_body": NOT_JSON,
    "no_content_204": NOT_JSON,
    "missing_usage": Expect("unreadable", "no tool call"),
    "usage_not_object": Expect("unreadable", "no tool call"),
    "non_numeric_tokens": Expect("usage_invalid", "prompt_tokens='lots'; output_tokens='few'"),
    "float_tokens": Expect("usage_invalid", "prompt_tokens=120.5"),
    "nan_tokens": Expect("usage_invalid", "prompt_tokens=nan; output_tokens=inf"),
    "huge_cached_tokens": Expect("usage_invalid", "cached_tokens=1000000000000000019884624838656"),  # 1e30
    "negative_tokens": Expect("usage_invalid", "output_tokens=-5"),
    "bool_tokens": Expect("usage_invalid", "prompt_tokens=True"),
    "huge_int_tokens": Expect("model_error", "4300 digits"),
    "rate_limit_429": Expect("retried"),
    "server_500_retry_after": Expect("retried"),
    "overloaded_529": Expect("retried"),
    "always_429": Expect("model_error", "gave up after 2 attempts: RateLimitError (429"),
    "retry_after_nan": Expect("retried"),
    "retry_after_ms_nan": Expect("retried"),
    "retry_after_huge": Expect("retried"),
    "retry_after_garbage": Expect("retried"),
    "unauthorized_401": Expect("model_error", "AuthenticationError (401"),
    "context_overflow_400": Expect("context_overflow", "prompt is too long"),
    "closed_mid_body": Expect("retried"),
    "dropped_connection": Expect("retried"),
    "always_dropped": Expect("model_error", "gave up after 2 attempts: APIConnectionError"),
    "bad_gzip": Expect("retried"),
    "gzip_encoded": Expect("tool_error", "unknown tool 'rm_rf_slash'"),
    "deflate_encoded": Expect("tool_error", "unknown tool 'rm_rf_slash'"),
    "gzip_bomb": Expect("model_error", "larger than model.max_response_bytes=16,777,216"),
}
SLOW = {
    "huge_content": Expect("context_overflow", "exceeds the 1,000,000-token context window"),
    "slow_reply": Expect("retried"),
    # issue 36: each attempt ends at its deadline (timeout=1.0 here; tests/test_call_deadline.py times it)
    "drip": Expect("model_error", "gave up after 2 attempts: APITimeoutError"),
    "drip_fast": Expect("model_error", "no complete reply within model.timeout=1s"),
    "drip_headers": Expect("model_error", "no complete reply within model.timeout=1s"),
}
# a reply the harness cannot count yet: tiktoken raises on a run of ~1M blanks (harness/tokens.py, in the loop)
CRASHING = {"whitespace_run": Expect("unreadable", "no tool call")}
HONOURED = ("rate_limit_429", "server_500_retry_after", "retry_after_huge")  # Retry-After asks more than the cap
CLI_SAMPLE = ["huge_float_args", "duplicate_call_ids", "non_json_body"]  # an argument, a reply and a body fault;
# every mode runs in process above, and through the command line in the slow tier
assert set(EXPECT) | set(SLOW) | set(CRASHING) == set(MODES), set(MODES) ^ (set(EXPECT) | set(SLOW) | set(CRASHING))


def expected(mode: str, backend: str) -> Expect:
    found = {**EXPECT, **SLOW, **CRASHING}[mode]
    return found[backend] if isinstance(found, dict) else found


def read_events(path: Path) -> list[dict]:
    """A transcript's events (``<trial>.jsonl.gz``, or an older ``<trial>.jsonl``), request refs expanded."""
    return read_transcript(path)


@dataclass
class Run:
    """One mode's trial as it was recorded."""

    rows: list[dict]
    steps: list[dict]
    events: list[dict]

    @classmethod
    def read(cls, run_dir: Path) -> "Run":
        transcripts = sorted(p for p in (run_dir / "transcripts").iterdir() if p.name.endswith((".jsonl", ".jsonl.gz")))
        return cls(
            read_jsonl(run_dir / "trials.jsonl"),
            read_jsonl(run_dir / "steps.jsonl"),
            read_events(transcripts[0]) if transcripts else [],
        )

    def messages(self) -> dict[str, dict]:
        return {e["ref"]: e["message"] for e in self.events if e.get("event") == "message"}

    def tool_results(self, step: int) -> list[tuple[dict, str]]:
        bodies = self.messages()
        return [(e, bodies[e["ref"]]["content"]) for e in self.events if e.get("event") == "tool" and e["step"] == step]

    def told(self) -> list[str]:
        """What the harness told the model in user messages after the task (its reply could not be run, ...)."""
        users = [m for m in self.messages().values() if m.get("role") == "user"]
        return [m["content"] for m in users[1:]]


def session(backend: str, mode: str, tag: str = "") -> str:
    return f"{tag}{backend}-{mode}"


def in_process(server: HostileServer, backend: str, mode: str, folder: Path, tag: str = "", **model: object) -> Run:
    """One trial of ``mode``, the backend built from its preset (``MODEL`` and ``model`` on top) as the CLI builds
    it."""
    spec = OmegaConf.to_container(OmegaConf.load(ROOT / "configs" / "model" / f"{PRESETS[backend]}.yaml"))
    spec.update(MODEL, base_url=server.base_url(backend, mode, session(backend, mode, tag)), **model)
    writer = RunWriter(folder)
    settings = TrialSettings(
        budget=25_000,
        max_steps=3,
        strategy_name="none",
        strategy_params={},
        model_name=PRESETS[backend],
        cache_profile=PROFILES["llamacpp"],
    )
    row = run_trial(
        trial_id="t",
        trial_index=0,
        instance=FailureMemory(**SMOKE).generate(0),
        strategy=NoManagement(),
        model=build_model(spec),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.trial(row)
    writer.close()
    return Run.read(folder)


def sweep(
    server: HostileServer, backend: str, modes: list[str], folder: Path, tag: str = "", extra: tuple[str, ...] = ()
) -> tuple[object, dict[str, Run]]:
    """One ``harness run -m`` over the modes' URLs: (the finished process, {mode: its run})."""
    urls = [server.base_url(backend, mode, session(backend, mode, tag)) for mode in modes]
    result = harness(
        "run",
        "-m",
        f"model={PRESETS[backend]}",
        "model.base_url=" + ",".join(urls),
        *SETTINGS,
        *extra,
        "hydra.sweep.dir=sweep",
        cwd=folder,
    )
    runs = {}
    for identity in (folder / "sweep").glob("*/identity.json"):
        url = json.loads(identity.read_text())["model"]["base_url"]
        runs[url.rstrip("/").removesuffix("/v1").split("/")[-1]] = Run.read(identity.parent)
    return result, runs


def check(server: HostileServer, backend: str, mode: str, run: Run, tag: str = "") -> None:
    """``run`` ended as ``mode`` must (``EXPECT``), with one trial row."""
    assert len(run.rows) == 1, "one trial row"
    row, expect = run.rows[0], expected(mode, backend)
    requests = server.count(session(backend, mode, tag))
    if expect.kind in ("model_error", "context_overflow"):
        assert row["outcome"] == expect.kind and expect.needle in (row["error"] or ""), (row["outcome"], row["error"])
        return
    assert row["outcome"] == "submitted" and row["error"] is None, (row["outcome"], row["error"], run.told())
    if expect.kind == "submit":
        assert row["steps"] == 1 and requests == 1
    elif expect.kind == "retried":
        assert row["steps"] == 1 and requests == 2
        if mode in HONOURED:  # the server's Retry-After, capped
            assert MAX_RETRY_AFTER <= server.gaps(session(backend, mode, tag))[0] < 2.0
    else:
        assert row["steps"] == 2 and requests == 2
        if expect.kind == "tool_error":
            first = run.tool_results(1)
            assert first and first[0][0]["is_error"] and expect.needle in first[0][1], first[:1]
        elif expect.kind == "unreadable":
            told = run.told()
            assert told and expect.needle in told[0], told
        else:  # usage_invalid: a text reply (the model is told to use the tools) whose usage is no count
            step = run.steps[0]
            assert expect.needle in (step["usage_invalid"] or ""), step["usage_invalid"]
            assert 0 <= step["cached_tokens"] <= step["prompt_tokens"] < 10_000_000
            assert 0 <= step["output_tokens"] < 10_000_000


def check_sweep(
    server: HostileServer, backend: str, modes: list[str], result, runs: dict[str, Run], tag: str = ""
) -> None:
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert sorted(runs) == sorted(modes), "one run folder per mode"
    for mode in modes:
        check(server, backend, mode, runs[mode], tag)


@pytest.fixture(scope="module")
def server():
    with HostileServer(SUBMIT) as hostile:
        yield hostile


@pytest.mark.parametrize("backend", list(PRESETS))
@pytest.mark.parametrize("mode", list(EXPECT))
def test_a_hostile_reply_ends_as_an_error_the_model_sees_or_a_recorded_outcome(server, tmp_path, mode, backend):
    check(server, backend, mode, in_process(server, backend, mode, tmp_path))


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@pytest.mark.parametrize("backend", list(PRESETS))
def test_hostile_replies_through_the_command_line(server, tmp_path, backend):
    result, runs = sweep(server, backend, CLI_SAMPLE, tmp_path, tag="cli-")
    check_sweep(server, backend, CLI_SAMPLE, result, runs, tag="cli-")


@pytest.mark.slow
@pytest.mark.parametrize("backend", list(PRESETS))
def test_every_mode_through_the_command_line(server, tmp_path, backend):
    result, runs = sweep(server, backend, list(EXPECT), tmp_path, tag="all-")
    check_sweep(server, backend, list(EXPECT), result, runs, tag="all-")


@pytest.mark.slow
@pytest.mark.parametrize("backend", list(PRESETS))
@pytest.mark.parametrize("mode", list(SLOW))
def test_slow_modes(server, tmp_path, mode, backend):
    check(server, backend, mode, in_process(server, backend, mode, tmp_path, tag="slow-", timeout=1.0), tag="slow-")


@pytest.mark.parametrize("backend", list(PRESETS))
def test_a_reply_with_a_million_blanks(server, tmp_path, backend):
    check(
        server,
        backend,
        "whitespace_run",
        in_process(server, backend, "whitespace_run", tmp_path, tag="crash-"),
        tag="crash-",
    )

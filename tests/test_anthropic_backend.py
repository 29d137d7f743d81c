"""The Anthropic Messages backend, offline: recorded Messages-API responses replayed through the real
``anthropic`` SDK over an httpx mock transport (tests/fixtures/anthropic/README.md says how they were written)."""

import json
from pathlib import Path

import pytest

pytest.importorskip("anthropic")

from harness.cache_sim import PROFILES  # noqa: E402
from harness.trial import TrialSettings, run_trial  # noqa: E402
from harness.models import retry as retry_module  # noqa: E402
from harness.models.anthropic_backend import AnthropicModel, http_module, normalize_usage, place_breakpoints  # noqa: E402
from harness.models.base import ContextOverflowError, ModelError, PreflightError  # noqa: E402
from harness.models.faults import FaultInjecting  # noqa: E402
from harness.models.messages_format import to_messages  # noqa: E402
from harness.models.wrappers import Delayed  # noqa: E402
from harness.pricing import Pricing  # noqa: E402
from harness.records import RunWriter, read_jsonl, read_transcript  # noqa: E402
from harness.runner import ConfigError, check_server_side  # noqa: E402
from strategies.memory_tool import MemoryTool  # noqa: E402
from strategies.none import NoManagement  # noqa: E402
from strategies.server_side import ServerClearToolUses, ServerCompaction  # noqa: E402
from tasks.invoice_audit import InvoiceAudit  # noqa: E402

httpx = http_module()
FIXTURES = Path(__file__).parent / "fixtures" / "anthropic"
ANTHROPIC_LIKE = Pricing("anthropic-like", input=3.0, cached_input=0.3, output=15.0, cache_write=3.75)
MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_invoice_page",
            "description": "d",
            "parameters": {"type": "object", "properties": {"page": {"type": "integer"}}},
        },
    }
]


def fixture(name):
    return json.loads((FIXTURES / f"{name}.json").read_text())


class Replay:
    """A mock transport serving recorded exchanges in order (the last one repeats) and keeping the requests."""

    def __init__(self, *exchanges):
        self.exchanges = list(exchanges)
        self.requests = []

    def __call__(self, request):
        self.requests.append(request)
        exchange = self.exchanges.pop(0) if len(self.exchanges) > 1 else self.exchanges[0]
        if isinstance(exchange, Exception):
            raise exchange
        return httpx.Response(exchange["status"], json=exchange["body"], headers=exchange.get("headers") or {})

    def body(self, i):
        return json.loads(self.requests[i].content)


def model(replay, **kwargs):
    kwargs.setdefault("retry", {"attempts": 4, "initial_wait": 1.0, "max_wait": 8.0, "jitter": 0.5})
    return AnthropicModel(
        base_url="http://fake.test",
        api_key="sk-ant-test",
        http_client=httpx.Client(transport=httpx.MockTransport(replay)),
        **kwargs,
    )


@pytest.fixture
def waits(monkeypatch):
    seen = []
    monkeypatch.setattr(retry_module, "sleep", seen.append)
    return seen


def instance():
    return InvoiceAudit(pages=3, invoices_per_page=20, duplicates=1, min_distance=1, max_distance=2).generate(0)


def run(tmp_path, replay, strategy=None, pricing=ANTHROPIC_LIKE, wrap=lambda m: m, **kwargs):
    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=100_000,
        max_steps=6,
        strategy_name="s",
        strategy_params={},
        model_name="anthropic",
        pricing=pricing,
        cache_profile=PROFILES["anthropic"],
    )
    row = run_trial(
        trial_id="t",
        trial_index=0,
        instance=instance(),
        strategy=strategy or NoManagement(),
        model=wrap(model(replay, **kwargs)),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    return row, read_jsonl(tmp_path / "steps.jsonl")


# ------------------------------------------------------------------ usage, cache and cost


@pytest.mark.parametrize(
    "usage,prompt,cached,writes,output",
    [
        (
            {
                "input_tokens": 12,
                "output_tokens": 5,
                "cache_read_input_tokens": 2000,
                "cache_creation_input_tokens": 30,
            },
            2042,
            2000,
            30,
            5,
        ),
        ({"input_tokens": 12, "output_tokens": 24, "cache_read_input_tokens": 2557}, 2569, 2557, 0, 24),  # llama-server
        (
            {
                "input_tokens": 180,
                "output_tokens": 38,
                "iterations": [  # a compaction's own tokens are billed too
                    {
                        "type": "compaction",
                        "input_tokens": 4450,
                        "output_tokens": 160,
                        "cache_read_input_tokens": 0,
                        "cache_creation_input_tokens": 0,
                    }
                ],
            },
            4630,
            0,
            0,
            198,
        ),
    ],
)
def test_usage_counts_cache_reads_as_cached_and_creation_as_writes(usage, prompt, cached, writes, output):
    got = normalize_usage({"usage": usage})
    assert (got.prompt_tokens, got.cached_tokens, got.cache_write_tokens, got.output_tokens) == (
        prompt,
        cached,
        writes,
        output,
    )
    assert got.cached_source == "reported"


def test_no_cache_figures_means_the_simulator_fills_in():
    got = normalize_usage({"usage": {"input_tokens": 10, "output_tokens": 1}})
    assert got.cached_tokens is None and got.cached_source == "none" and got.prompt_tokens == 10


def test_a_trial_records_server_cache_reads_writes_and_prices_the_write_premium(tmp_path):
    replay = Replay(*fixture("trial_cache")["exchanges"])
    row, steps = run(tmp_path, replay)
    assert row["outcome"] == "submitted" and row["success"]
    assert [s["cached_tokens"] for s in steps] == [0, 0, 4461]
    assert [s["cache_write_tokens"] for s in steps] == [0, 4461, 2091]
    assert [s["prompt_tokens"] for s in steps] == [339, 4473, 6564]
    assert all(s["cached_source"] == "reported" for s in steps)
    third = steps[2]
    expected = (12 * 3.0 + 4461 * 0.3 + 2091 * 3.75 + 55 * 15.0) / 1e6
    assert third["cost"] == pytest.approx(expected)
    no_premium = (12 * 3.0 + 4461 * 0.3 + 2091 * 3.0 + 55 * 15.0) / 1e6
    assert third["cost"] > no_premium  # the write premium is charged
    assert row["cache_write_tokens"] == 4461 + 2091


def test_other_pricing_profiles_price_cache_writes_as_plain_input():
    openai_like = Pricing("openai-like", input=2.0, cached_input=0.5, output=8.0)
    assert openai_like.cost(1000, 200, 10, cache_write_tokens=300) == openai_like.cost(1000, 200, 10)


def test_the_anthropic_simulator_profile_agrees_with_the_server_figures(tmp_path):
    """Same requests: the simulator hits exactly where the server read, and the cached shares agree."""
    _, steps = run(tmp_path, Replay(*fixture("trial_cache")["exchanges"]))
    for step in steps:
        assert (step["sim_cached_tokens"] > 0) == (step["cached_tokens"] > 0), step
        reported = step["cached_tokens"] / step["prompt_tokens"]
        simulated = step["sim_cached_tokens"] / step["request_tokens"]
        assert abs(reported - simulated) < 0.05, (reported, simulated)
    # step 2 reads nothing on either side: step 1 was under the 1,024-token minimum, so nothing was written
    assert steps[1]["cached_tokens"] == steps[1]["sim_cached_tokens"] == 0 and steps[1]["request_tokens"] > 1024


# ------------------------------------------------------------------ the request


def test_request_shape_parallel_tool_use_errors_and_breakpoints(tmp_path):
    replay = Replay(*fixture("trial_cache")["exchanges"])
    run(tmp_path, replay)
    second = replay.body(1)
    assert second["model"] == "claude-sonnet-4-6" and second["max_tokens"] == 4096 and second["temperature"] == 0.0
    assert second["system"][0]["type"] == "text" and second["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert [t["name"] for t in second["tools"]] == ["get_invoice_page", "submit"]
    assert "input_schema" in second["tools"][0] and second["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    user, assistant, results = second["messages"]
    assert [b["type"] for b in assistant["content"]] == ["text", "tool_use", "tool_use"]  # text + parallel tool use
    assert [b["tool_use_id"] for b in results["content"]] == ["toolu_01A", "toolu_01B"]  # one user turn of results
    headers = replay.requests[1].headers
    assert "sk-ant-test" in (headers.get("x-api-key") or headers.get("authorization") or "")
    marks = [b for m in second["messages"] for b in m["content"] if "cache_control" in b]
    assert (
        len(marks) + 2 <= 4
        and results["content"][-1].get("cache_control")
        and assistant["content"][-1].get("cache_control")
    )


def test_error_results_carry_is_error():
    request = to_messages(
        MESSAGES
        + [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                    {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "a", "content": "ERROR: page must be an integer"},
            {"role": "tool", "tool_call_id": "b", "content": "fine"},
        ],
        TOOLS,
    )
    a, b = request.messages[-1]["content"]
    assert a["is_error"] is True and "is_error" not in b


def test_at_most_four_breakpoints_and_never_on_an_empty_text():
    history = MESSAGES + [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": ""},
    ]
    request = to_messages(history, TOOLS)
    assert place_breakpoints(request) <= 4
    blocks = [b for m in request.messages for b in m["content"]] + request.system + request.tools
    assert not any("cache_control" in b and b.get("type") == "text" and not b["text"] for b in blocks)


# ------------------------------------------------------------------ errors and retries


def test_overloaded_529_is_retried_through_the_shared_wrapper(waits):
    errors = fixture("errors")
    replay = Replay(errors["overloaded"], errors["api_error"], *fixture("trial_cache")["exchanges"][:1])
    completion = model(replay).complete(MESSAGES, TOOLS)
    assert len(replay.requests) == 3 and len(waits) == 2 and completion.message["tool_calls"]


def test_rate_limit_honours_retry_after(waits):
    replay = Replay(fixture("errors")["rate_limit"], *fixture("trial_cache")["exchanges"][:1])
    model(replay).complete(MESSAGES, TOOLS)
    assert waits == [7.0] and len(replay.requests) == 2


def test_connection_errors_are_retried(waits):
    replay = Replay(httpx.ConnectError("refused"), *fixture("trial_cache")["exchanges"][:1])
    model(replay).complete(MESSAGES, TOOLS)
    assert len(replay.requests) == 2 and len(waits) == 1


def test_prompt_too_long_is_context_overflow_and_not_retried(waits, tmp_path):
    replay = Replay(fixture("errors")["prompt_too_long"])
    with pytest.raises(ContextOverflowError, match="prompt is too long"):
        model(replay).complete(MESSAGES, TOOLS)
    assert len(replay.requests) == 1 and waits == []
    row, _ = run(tmp_path, Replay(fixture("errors")["prompt_too_long"]))
    assert row["outcome"] == "context_overflow"


def test_authentication_error_is_not_retried(waits):
    replay = Replay(fixture("errors")["authentication"])
    with pytest.raises(ModelError, match="authentication_error") as info:
        model(replay).complete(MESSAGES, TOOLS)
    assert not isinstance(info.value, ContextOverflowError) and len(replay.requests) == 1 and waits == []


def test_exhausted_retries_end_the_trial_as_model_error(tmp_path, waits):
    row, _ = run(tmp_path, Replay(fixture("errors")["overloaded"]), retry={"attempts": 3})
    assert (
        row["outcome"] == "model_error" and "gave up after 3 attempts" in row["error"] and "overloaded" in row["error"]
    )


def test_wrapped_backends_still_work(tmp_path, waits):
    wrap = lambda m: Delayed(FaultInjecting(m, seed=1), 0.0)  # noqa: E731
    row, steps = run(tmp_path, Replay(*fixture("trial_cache")["exchanges"]), wrap=wrap)
    assert row["outcome"] == "submitted" and steps[2]["cached_tokens"] == 4461


# ------------------------------------------------------------------ preflight


def test_preflight_names_the_missing_key_variable(monkeypatch):
    monkeypatch.delenv("CTXBENCH_TEST_NO_KEY", raising=False)
    with pytest.raises(PreflightError, match="CTXBENCH_TEST_NO_KEY"):
        AnthropicModel(api_key_env="CTXBENCH_TEST_NO_KEY").check()


def test_preflight_reaches_the_endpoint_and_reports_a_rejected_key():
    seen = []

    def answer(request):
        seen.append(str(request.url))
        return httpx.Response(401, json={"type": "error", "error": {"type": "authentication_error", "message": "no"}})

    with pytest.raises(PreflightError, match="rejected the API key"):
        model(answer).check()
    assert seen == ["http://fake.test/v1/models"]
    with pytest.raises(PreflightError, match="cannot reach"):
        AnthropicModel(base_url="http://127.0.0.1:9", api_key="k").probe(timeout=2)


# ------------------------------------------------------------------ llama-server's replies


def test_llamacpp_json_block_is_a_tool_call():
    replay = Replay(*fixture("llamacpp_messages")["exchanges"])
    llama = model(replay, parse_text_tool_calls=True, cache_breakpoints=False)
    first, second, after_error = (llama.complete(MESSAGES, TOOLS) for _ in range(3))
    for completion in (first, second, after_error):
        [call] = completion.message["tool_calls"]
        assert call["function"]["name"] == "get_invoice_page" and json.loads(call["function"]["arguments"]) == {
            "page": 1
        }
        assert completion.message["_raw_content"].count("get_invoice_page") == 1
    assert (first.usage.prompt_tokens, first.usage.cached_tokens) == (161, 0)
    assert (second.usage.prompt_tokens, second.usage.cached_tokens, second.usage.cache_write_tokens) == (161, 160, 0)
    assert after_error.usage.cached_tokens == 161 and after_error.usage.cached_source == "reported"
    assert "cache_control" not in json.dumps(replay.body(0))


def test_llamacpp_context_size_error_is_context_overflow(waits):
    replay = Replay(fixture("llamacpp_messages")["overflow"])
    with pytest.raises(ContextOverflowError, match="exceeds the available context size"):
        model(replay).complete(MESSAGES, TOOLS)
    assert len(replay.requests) == 1 and waits == []


# ------------------------------------------------------------------ server-side strategies


def test_server_clear_tool_uses_sends_the_parameters_and_records_the_servers_edits(tmp_path):
    replay = Replay(*fixture("server_clear_tool_uses")["exchanges"])
    strategy = ServerClearToolUses(
        trigger=3000, keep=1, clear_at_least=500, exclude_tools=["submit"], clear_tool_inputs=True
    )
    row, steps = run(tmp_path, replay, strategy=strategy, server_context_management=True)
    sent = replay.body(2)
    assert sent["context_management"] == {
        "edits": [
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": 3000},
                "keep": {"type": "tool_uses", "value": 1},
                "clear_at_least": {"type": "input_tokens", "value": 500},
                "exclude_tools": ["submit"],
                "clear_tool_inputs": True,
            }
        ]
    }
    assert "context-management-2025-06-27" in replay.requests[2].headers["anthropic-beta"]
    assert len(sent["messages"]) == 5  # prepare left the history whole: the server edits it
    assert [s["strategy_events"] for s in steps] == [[], [], ["compaction"]]
    assert row["compactions"] == 1
    events = read_transcript(tmp_path, "t")
    [edit] = [e for e in events if e.get("event") == "strategy"]
    assert edit["data"] == {
        "method": "server_clear_tool_uses",
        "tier": "server",
        "edit": "clear_tool_uses_20250919",
        "cleared_tool_uses": 2,
        "cleared_input_tokens": 2914,
    }


def test_server_compaction_block_is_sent_back_and_logged(tmp_path):
    replay = Replay(*fixture("server_compaction")["exchanges"])
    row, steps = run(
        tmp_path,
        replay,
        strategy=ServerCompaction(trigger="4k", instructions="keep invoice ids"),
        server_context_management=True,
    )
    assert replay.body(0)["context_management"]["edits"] == [
        {
            "type": "compact_20260112",
            "trigger": {"type": "input_tokens", "value": 4000},
            "pause_after_compaction": False,
            "instructions": "keep invoice ids",
        }
    ]
    assert "compact-2026-01-12" in replay.requests[0].headers["anthropic-beta"]
    assistant = replay.body(2)["messages"][3]
    assert assistant["role"] == "assistant" and assistant["content"][0]["type"] == "compaction"
    assert assistant["content"][0]["content"].startswith("Audit of C000")
    assert steps[1]["strategy_events"] == ["compaction"] and row["compactions"] == 1
    assert steps[1]["prompt_tokens"] == 180 + 4450 and steps[1]["output_tokens"] == 38 + 160


def test_a_backend_without_server_context_management_refuses_the_strategy():
    for name, strategy in (
        ("server_clear_tool_uses", ServerClearToolUses()),
        ("server_compaction", ServerCompaction()),
    ):
        for backend in (
            AnthropicModel(name="llamacpp_messages", server_context_management=False),
            FaultInjecting(AnthropicModel(name="x", server_context_management=False)),
        ):
            with pytest.raises(ConfigError, match=f"strategy {name} .* \\(supported: model=anthropic\\)"):
                check_server_side(strategy, backend, name)
        check_server_side(strategy, Delayed(AnthropicModel(server_context_management=True), 0), name)
    check_server_side(NoManagement(), AnthropicModel(server_context_management=False), "none")
    check_server_side(MemoryTool(), AnthropicModel(server_context_management=False), "memory_tool")
    with pytest.raises(ConfigError):
        check_server_side(MemoryTool(base=ServerClearToolUses()), AnthropicModel(server_context_management=False), "m")


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_the_cli_refuses_a_server_strategy_on_another_backend(tmp_path):
    import subprocess
    import sys

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "run",
            "strategy=server_clear_tool_uses",
            "model=scripted",
            f"hydra.run.dir={tmp_path / 'run'}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parent.parent,
    )
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "server_clear_tool_uses" in lines[0] and "model=anthropic" in lines[0]
    assert not (tmp_path / "run" / "trials.jsonl").exists()


def test_a_simulated_anthropic_cache_also_simulates_the_writes(tmp_path):
    """The reference agent priced as if on Anthropic: what the simulator does not read is written."""
    from reference_agent.scripted import ScriptedModel

    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=100_000,
        max_steps=20,
        strategy_name="none",
        strategy_params={},
        model_name="scripted",
        pricing=ANTHROPIC_LIKE,
        cache_profile=PROFILES["anthropic"],
    )
    run_trial(
        trial_id="t",
        trial_index=0,
        instance=instance(),
        strategy=NoManagement(),
        model=ScriptedModel(),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    steps = read_jsonl(tmp_path / "steps.jsonl")
    assert all(s["cached_source"] == "simulated" for s in steps)
    for s in steps:
        expected = s["prompt_tokens"] - s["cached_tokens"] if s["prompt_tokens"] >= 1024 else 0
        assert s["cache_write_tokens"] == expected
    assert any(s["cache_write_tokens"] for s in steps)
    assert PROFILES["openai"].simulated_writes(5000, 1000) == 0


def test_count_tokens_asks_the_server(waits):
    def answer(request):
        assert request.url.path == "/v1/messages/count_tokens"
        body = json.loads(request.content)
        assert (
            body["system"][0]["text"] == "s"
            and "max_tokens" not in body
            and body["tools"][0]["name"] == "get_invoice_page"
        )
        return httpx.Response(200, json={"input_tokens": 2569})

    assert model(answer).count_tokens(MESSAGES, TOOLS) == 2569

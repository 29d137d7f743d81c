"""``model=openai``: any OpenAI-compatible Chat Completions endpoint, through the ``openai`` client.

OpenAI, DeepSeek, Kimi, vLLM, a llama.cpp server, Ollama: only ``base_url``, ``model`` and
the name of the environment variable holding the key change (see configs/model/). What it shares with
``model=anthropic`` (settings, the client, the preflight, retries and error mapping, reading a body) is
``harness.models.http_backend.HTTPBackend``; this module holds the Chat Completions wire format.

- Retries: transient errors (429, timeouts, connection errors, 408/409, 5xx) are retried by
  ``harness.models.retry`` (tenacity, exponential backoff with jitter, ``Retry-After``
  honoured); the client itself is created with ``max_retries=0``. Authentication errors
  and other 4xx are not retried (``ModelError``); a context-length error raises
  ``ContextOverflowError`` (the trial's outcome ``context_overflow``).
- Usage is normalized (``normalize_usage``): prompt tokens include cached ones; cached
  tokens come from OpenAI's ``prompt_tokens_details.cached_tokens``, DeepSeek's
  ``prompt_cache_hit_tokens``, Kimi's ``cached_tokens`` or llama.cpp's ``timings.cache_n``;
  when none is reported the harness records its simulated figure instead.
- Tool calls come from ``tool_calls``; for small local models also from tool calls written
  in the text (``<tool_call>`` tags, ```json blocks); a reply that tried and failed gets a
  private ``_parse_error`` that the loop sends back to the model.
- A hostile or broken endpoint (tests/hostile_server.py) cannot crash a run: a body that is not a JSON
  object (HTML, an event stream, truncated, nested too deeply) or holds no choice is a ``ModelError`` that
  says so; a reply whose ``tool_calls`` are not a list of objects carries a ``_parse_error`` the model is
  told; a usage figure that is not a count (a string, a fraction, NaN, ``true``, 1e30) is kept as it came,
  so the harness drops it and records it as ``usage_invalid`` (harness/accounting.py).
- A slow or huge reply cannot hold a run up: ``timeout`` is the wall-clock deadline of each attempt (connect,
  headers, body) and ``max_response_bytes`` caps the decoded body (harness/models/bounded_http.py).
"""

from __future__ import annotations

import json
from typing import Any, Callable

import openai

from harness.models import endpoint
from harness.models.base import ModelError, Usage
from harness.models.http_backend import (
    CUT_OFF,
    MAX_RESPONSE_BYTES,
    ErrorRules,
    HTTPBackend,
    as_object,
    is_count,
    says_overflow,
    sdk_http_module,
    short,
    status_of,
    timeout_cause,
    usage_figure,
)
from harness.models.http_backend import quiet_http_logs as quiet_http_logs  # imported from here by local_build
from harness.models.retry import RetryPolicy
from harness.models.toolparse import parse_text_tool_calls

TRANSIENT_STATUS = {408, 409, 425, 429}
NO_KEY = "sk-no-key-required"


def http_module() -> Any:
    """The HTTP library the installed ``openai`` client is built on (``httpx`` or ``httpx2``)."""
    from openai import _base_client

    return sdk_http_module(_base_client)


def _status(exc: BaseException) -> int | None:
    return status_of(exc, openai.APIStatusError)


def _body_text(exc: BaseException) -> str:
    parts = [str(exc), str(getattr(exc, "body", "") or ""), str(getattr(exc, "code", "") or "")]
    return " ".join(parts).lower()


def is_context_overflow(exc: BaseException) -> bool:
    """Whether an API error says the request exceeds the model's context window."""
    return says_overflow(_status(exc), _body_text(exc))


def is_transient(exc: BaseException) -> bool:
    """Rate limits, timeouts, connection errors and server errors are worth retrying."""
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return True
    status = _status(exc)
    if status is None or is_context_overflow(exc):
        return False
    if status == 429 and "insufficient_quota" in _body_text(exc):
        return False  # an exhausted quota does not come back by waiting
    return status in TRANSIENT_STATUS or status >= 500


def describe(exc: BaseException) -> str:
    """One line for an API error."""
    status = _status(exc)
    message = getattr(exc, "message", None) or str(exc)
    text = f"{type(exc).__name__}{f' ({status})' if status else ''}: {message}{timeout_cause(exc)}"
    return text.replace("\n", " ")[:500]


def normalize_usage(data: dict) -> Usage:
    """A provider's usage (and llama.cpp's ``timings``) as a ``Usage``; see the module docstring.

    A cached figure above the prompt's is not cut here: the harness cuts it and records it as invalid.
    """
    usage = as_object(data.get("usage"))
    timings = as_object(data.get("timings"))
    prompt = usage_figure(usage.get("prompt_tokens"))
    output = usage_figure(usage.get("completion_tokens"))
    cached = usage_figure(as_object(usage.get("prompt_tokens_details")).get("cached_tokens"))
    if cached is None and usage.get("prompt_cache_hit_tokens") is not None:  # DeepSeek
        cached = usage_figure(usage["prompt_cache_hit_tokens"])
        miss = usage_figure(usage.get("prompt_cache_miss_tokens"))
        if prompt is None and is_count(cached) and is_count(miss):
            prompt = cached + miss
    if cached is None and usage.get("cached_tokens") is not None:  # Kimi / Moonshot
        cached = usage_figure(usage["cached_tokens"])
    cache_n, prompt_n = usage_figure(timings.get("cache_n")), usage_figure(timings.get("prompt_n"))
    if is_count(cache_n):  # llama.cpp: prompt_n is what it evaluated, cache_n what it reused
        if cached is None:
            cached = cache_n
        if is_count(prompt_n) and (prompt is None or (is_count(prompt) and prompt < prompt_n + cache_n)):
            prompt = prompt_n + cache_n
    if output is None:
        output = usage_figure(timings.get("predicted_n"))
    reasoning = usage_figure(as_object(usage.get("completion_tokens_details")).get("reasoning_tokens")) or 0
    return Usage(
        prompt_tokens=prompt,
        cached_tokens=cached,
        output_tokens=output,
        reasoning_tokens=reasoning,
        cached_source="reported" if cached is not None else "none",
        tokens_source="reported" if prompt is not None else "tiktoken",
    )


DEFAULT_BASE_URL = "https://api.openai.com/v1"
BASE_URL_ENV = "OPENAI_BASE_URL"
"""Read when ``base_url`` is unset, as the ``openai`` SDK reads it."""


class OpenAIModel(HTTPBackend):
    """A chat model behind an OpenAI-compatible endpoint.

    Parameters:
        name: the label recorded in every row.
        base_url: the endpoint, e.g. ``https://api.openai.com/v1``; ``None`` (the ``openai`` preset) takes
            ``$OPENAI_BASE_URL`` as the SDK does, else ``DEFAULT_BASE_URL``. A set value always wins.
        model: the provider's model id.
        api_key_env: the NAME of the environment variable holding the API key
            (``null`` for servers without keys, such as a local llama.cpp or vLLM).
        context_window: the window a request may not exceed (tokens).
        max_tokens: the reply limit; sent as ``max_tokens_param``.
        max_tokens_param: ``max_tokens`` or ``max_completion_tokens`` (newer OpenAI models).
        temperature: sampling temperature (``null`` to leave the provider's default).
        seed: sent when set (OpenAI, vLLM and llama.cpp honour it).
        timeout: the wall-clock deadline of one attempt in seconds: connect, headers and body (a call past it
            is a timeout, retried by ``retry``; harness/models/bounded_http.py).
        max_response_bytes: the cap on a response's decoded body (a larger one is a ``ModelError``).
        retry: a ``RetryPolicy`` mapping (attempts, initial_wait, max_wait, jitter, max_retry_after).
        parse_text_tool_calls: also read tool calls written in the reply's text.
        extra_body: provider-specific request fields, sent as they are.
        check_endpoint: preflight reaches ``base_url`` before a run starts.
        http_client: an ``httpx`` client for the ``openai`` client (tests pass a fake transport).
        api_key: the key itself (tests); normally read from ``api_key_env``.
    """

    no_key = NO_KEY
    call_id_prefix = "call"
    errors = ErrorRules(is_transient=is_transient, is_context_overflow=is_context_overflow, describe=describe)

    def __init__(
        self,
        name: str = "openai",
        base_url: str | None = None,
        model: str = "gpt-4.1-mini",
        api_key_env: str | None = "OPENAI_API_KEY",
        context_window: int = 128_000,
        max_tokens: int = 4096,
        max_tokens_param: str = "max_tokens",
        temperature: float | None = 0.0,
        seed: int | None = None,
        timeout: float = 120.0,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        retry: dict | RetryPolicy | None = None,
        parse_text_tool_calls: bool = True,
        extra_body: dict | None = None,
        check_endpoint: bool = True,
        http_client: Any = None,
        api_key: str | None = None,
    ) -> None:
        super().__init__(
            name=name,
            base_url=endpoint.base_url(base_url, BASE_URL_ENV, DEFAULT_BASE_URL),
            model=model,
            api_key_env=api_key_env,
            context_window=context_window,
            temperature=temperature,
            timeout=timeout,
            max_response_bytes=max_response_bytes,
            retry=retry,
            parse_text_tool_calls=parse_text_tool_calls,
            extra_body=extra_body,
            check_endpoint=check_endpoint,
            http_client=http_client,
            api_key=api_key,
        )
        self.max_tokens = int(max_tokens) if max_tokens else None
        self.max_tokens_param = max_tokens_param
        self.seed = seed

    # -- the SDK and the endpoint ----------------------------------------------------------
    def sdk_client_class(self) -> Any:
        """``openai.OpenAI``."""
        return openai.OpenAI

    def sdk_error(self) -> type[BaseException]:
        """``openai.OpenAIError``."""
        return openai.OpenAIError

    def sdk_http_module(self) -> Any:
        """The HTTP library the ``openai`` client is built on."""
        return http_module()

    def models_url(self) -> str:
        """``{base_url}/models``."""
        return f"{self.base_url}/models"

    def probe_headers(self) -> dict:
        """The key as a bearer token."""
        return {"Authorization": f"Bearer {self.api_key()}"}

    # -- calls ---------------------------------------------------------------------------
    def request_kwargs(self, messages: list[dict], tools: list[dict]) -> dict:
        """The arguments of ``chat.completions.create`` for one request."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            kwargs["tools"] = tools
        if self.max_tokens:
            if self.max_tokens_param == "max_tokens":
                kwargs["max_tokens"] = self.max_tokens
            else:
                kwargs.setdefault("extra_body", {})[self.max_tokens_param] = self.max_tokens
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.seed is not None:
            kwargs["seed"] = int(self.seed)
        if self.extra_body:
            kwargs.setdefault("extra_body", {}).update(self.extra_body)
        return kwargs

    def create(self) -> Callable[..., Any]:
        """``chat.completions.create`` with the raw response (the body is read here, not by the SDK)."""
        return self.client.chat.completions.with_raw_response.create

    def usage(self, data: dict) -> Usage:
        """``normalize_usage``."""
        return normalize_usage(data)

    def to_message(self, data: dict) -> dict:
        """The assistant message of a response (tool calls from ``tool_calls`` or the text)."""
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ModelError(f"the response has no choices: {short(data)}")
        raw = as_object(choices[0].get("message"))
        content = text_of(raw.get("content"))
        message: dict[str, Any] = {"role": "assistant", "content": content}
        calls = []
        listed = raw.get("tool_calls")
        if listed and (
            not isinstance(listed, list)
            or not all(isinstance(c, dict) and isinstance(c.get("function"), dict) for c in listed)
        ):
            message["_parse_error"] = "the reply's tool_calls are not a list of calls, each with a function"
            listed = []
        for call in listed or []:
            function = call["function"]
            calls.append(
                {
                    "id": call.get("id") or self.call_id(),
                    "type": "function",
                    "function": {
                        "name": function.get("name") or "",
                        "arguments": arguments_text(function.get("arguments")),
                    },
                }
            )
        if not calls and self.parse_text_tool_calls and "_parse_error" not in message:
            parsed = parse_text_tool_calls(content)
            if parsed.calls:
                calls = self.text_tool_calls(parsed.calls)
                message["content"] = parsed.text
                message["_text_tool_calls"] = True
                message["_raw_content"] = content  # what the model wrote (transcript, cache simulator)
            elif parsed.error:
                message["_parse_error"] = parsed.error
        if not calls and choices[0].get("finish_reason") == "length" and "_parse_error" not in message:
            message["_parse_error"] = CUT_OFF
        if calls:
            message["tool_calls"] = calls
        reasoning = raw.get("reasoning_content")
        if reasoning:
            message["_reasoning"] = reasoning
        return message


def text_of(content: Any) -> str:
    """A reply's ``content`` as text: a string as it is, a list of parts as their texts joined, else ``""`` or
    its ``str``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part.get("text") if isinstance(part, dict) else part for part in content]
        return "".join(part if isinstance(part, str) else "" if part is None else str(part) for part in parts)
    return str(content)


def arguments_text(arguments: Any) -> Any:
    """A call's ``arguments`` as JSON text: an object (some servers send one) is written as JSON; a string, or
    anything else (which the loop refuses as arguments), is left as it is; ``None`` is ``""``."""
    if arguments is None:
        return ""
    if isinstance(arguments, dict):
        try:
            return json.dumps(arguments, ensure_ascii=False)
        except (ValueError, RecursionError):
            return arguments  # the loop's parse_arguments names what is wrong
    return arguments

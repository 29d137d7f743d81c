"""``model=anthropic``: Anthropic's Messages API through the official ``anthropic`` SDK.

Also ``model=llamacpp_messages`` (a ``llama-server`` you started: it serves ``/v1/messages``)
and, through ``harness.models.local.LocalMessagesModel``, ``model=local_messages``.
``pip install -e ".[anthropic]"``; the SDK is imported when the backend is built, not before.
What it shares with ``model=openai`` (settings, the client, the preflight, retries and error mapping,
reading a body) is ``harness.models.http_backend.HTTPBackend``; this module holds the Messages wire format.

- Conversion: ``harness.models.messages_format`` (OpenAI format <-> Messages, lossless for
  what the harness holds: system blocks, tool use with ids, parallel tool use, error results,
  text plus tool use in one turn).
- Prompt caching (``cache_breakpoints: true``): ``cache_control`` breakpoints, at most 4 as
  the API allows, placed by ``place_breakpoints``: (1) the last tool schema, (2) the last system
  block, (3) the last block of the last assistant turn (the last stable message: the newest
  part of the history the model has already read, which the next request repeats unless a
  strategy rewrites it), and (4) the last block of the request (so an append-only next
  request reads everything written now). Empty text blocks never carry one.
- Usage: ``prompt_tokens`` = ``input_tokens`` + ``cache_read_input_tokens`` +
  ``cache_creation_input_tokens`` (the API's ``input_tokens`` is the uncached rest);
  cache reads are ``cached_tokens``, cache creation is ``cache_write_tokens`` (priced with the
  ``cache_write`` premium of the pricing profile). A ``compaction`` iteration's tokens (not in
  the top-level usage) are added, since they are billed too.
- Errors: timeouts, connection errors, 408/409/425/429, 5xx and 529 ``overloaded_error`` are
  retried by ``harness.models.retry`` (tenacity, ``Retry-After`` honoured; the SDK's own
  retries are off); ``prompt is too long`` (and llama-server's context-size error) raises
  ``ContextOverflowError`` (outcome ``context_overflow``); other errors are ``ModelError``.
- Server-side context management: a strategy's ``server_options()`` reach this backend as
  request options (``harness.models.base.request_options``): ``context_management`` (edits) and
  ``betas``. Only a model configured with ``server_context_management: true`` (the
  ``anthropic`` preset) accepts them; the run refuses the strategy elsewhere. The edits the
  server reports (``context_management.applied_edits``, ``compaction`` blocks) come back as
  ``Completion.context_edits``; non-text blocks of a reply (``compaction``, ``thinking``) are
  kept on the message as ``server_blocks`` and sent back verbatim.
- Tool calls come from ``tool_use`` blocks; with ``parse_text_tool_calls`` also from tool calls
  written in the text (llama-server's small models write a ```json block).
- A hostile or broken endpoint (tests/hostile_server.py) cannot crash a run: as in
  ``harness.models.openai_backend`` (``harness.models.http_backend.response_object``), a body that is
  not a JSON object is a ``ModelError`` that says why, and a usage figure that is not a count is kept as
  it came, for the harness to drop and record.
- A slow or huge reply cannot hold a run up: ``timeout`` is the wall-clock deadline of each attempt (connect,
  headers, body) and ``max_response_bytes`` caps the decoded body (harness/models/bounded_http.py).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Callable

from harness.conversation import escape_surrogates
from harness.models.base import ModelError, PreflightError, Usage, current_request_options
from harness.models import endpoint
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
)
from harness.models.http_backend import usage_figure as _figure
from harness.models.messages_format import MessagesRequest, reply_message, to_messages
from harness.models.retry import RetryPolicy
from harness.models.toolparse import parse_text_tool_calls

INSTALL_HINT = 'pip install -e ".[anthropic]"'
TRANSIENT_STATUS = {408, 409, 425, 429, 529}
MAX_BREAKPOINTS = 4
CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
NO_KEY = "no-key-required"


def sdk() -> Any:
    """The ``anthropic`` module; ``PreflightError`` with the install line when the extra is missing."""
    try:
        import anthropic
    except ImportError:
        raise PreflightError(f"the anthropic SDK is not installed: {INSTALL_HINT}") from None
    return anthropic


def http_module() -> Any:
    """The HTTP library the installed SDK is built on (``httpx`` or ``httpx2``); tests build mock clients with it."""
    from anthropic import _base_client

    return sdk_http_module(_base_client)


def _status(exc: BaseException) -> int | None:
    return status_of(exc, sdk().APIStatusError)


def _body_text(exc: BaseException) -> str:
    return " ".join([str(exc), json.dumps(getattr(exc, "body", "") or "", default=str)]).lower()


def is_context_overflow(exc: BaseException) -> bool:
    """Whether an API error says the prompt is longer than the model's context window."""
    return says_overflow(_status(exc), _body_text(exc))


def is_transient(exc: BaseException) -> bool:
    """Overloaded (529), rate limits, timeouts, connection errors and server errors are worth retrying."""
    anthropic = sdk()
    if isinstance(exc, (anthropic.APITimeoutError, anthropic.APIConnectionError)):
        return True
    status = _status(exc)
    if status is None or is_context_overflow(exc):
        return False
    return status in TRANSIENT_STATUS or status >= 500 or "overloaded_error" in _body_text(exc)


def describe(exc: BaseException) -> str:
    """One line for an API error: class, status, the API's error type and message."""
    status = _status(exc)
    body = getattr(exc, "body", None)
    error = as_object(body.get("error")) if isinstance(body, dict) else {}
    kind = f" {error['type']}" if error.get("type") else ""
    message = error.get("message") or getattr(exc, "message", None) or str(exc)
    text = f"{type(exc).__name__}{f' ({status}{kind})' if status else ''}: {message}{timeout_cause(exc)}"
    return text.replace("\n", " ")[:500]


def _add(total: Any, part: Any) -> Any:
    """``total + part`` for counts; a figure that is not a count wins, so the harness sees it and drops it."""
    if part is None:
        return total
    if total is None or not is_count(part):
        return part if total is None or is_count(total) else total
    return total + part if is_count(total) else total


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def normalize_usage(data: dict) -> Usage:
    """A Messages response's usage as a ``Usage`` (see the module docstring)."""
    usage = as_object(data.get("usage"))
    uncached, output = _figure(usage.get("input_tokens")), _figure(usage.get("output_tokens"))
    read, write = _figure(usage.get("cache_read_input_tokens")), _figure(usage.get("cache_creation_input_tokens")) or 0
    for item in _list(usage.get("iterations")):
        if isinstance(item, dict) and item.get("type") == "compaction":  # billed, but not in the top-level figures
            uncached = _add(uncached if uncached is not None else 0, _figure(item.get("input_tokens")))
            read = _add(read if read is not None else 0, _figure(item.get("cache_read_input_tokens")))
            write = _add(write, _figure(item.get("cache_creation_input_tokens")))
            output = _add(output if output is not None else 0, _figure(item.get("output_tokens")))
    prompt = None if uncached is None else _add(_add(uncached, read), write)
    return Usage(
        prompt_tokens=prompt,
        cached_tokens=read,
        output_tokens=output,
        cache_write_tokens=write,
        cached_source="reported" if read is not None else "none",
        tokens_source="reported" if prompt is not None else "tiktoken",
    )


def context_edits(data: dict) -> list[dict]:
    """The edits the server applied: ``applied_edits`` plus one ``compaction`` entry per compaction block."""
    management = data.get("context_management")
    applied = _list(management.get("applied_edits")) if isinstance(management, dict) else []
    edits = [dict(edit) for edit in applied if isinstance(edit, dict)]
    usage = as_object(data.get("usage"))
    compaction_usage = [
        i for i in _list(usage.get("iterations")) if isinstance(i, dict) and i.get("type") == "compaction"
    ]
    blocks = [b for b in _list(data.get("content")) if isinstance(b, dict) and b.get("type") == "compaction"]
    for n, block in enumerate(blocks):
        summary = block.get("content")
        edit: dict[str, Any] = {
            "type": "compaction",
            "summary_chars": len(summary) if isinstance(summary, str) else 0,
            "failed": summary is None,
        }
        if n < len(compaction_usage):
            tokens = {key: _figure(compaction_usage[n].get(key)) for key in ("input_tokens", "output_tokens")}
            edit.update({key: value if is_count(value) else None for key, value in tokens.items()})
        edits.append(edit)
    return edits


def _breakable(block: dict) -> bool:
    return not (block.get("type") == "text" and not block.get("text"))


def _mark_last(blocks: list[dict], ttl: str | None) -> bool:
    for block in reversed(blocks):
        if _breakable(block):
            block["cache_control"] = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
            return True
    return False


def place_breakpoints(request: MessagesRequest, ttl: str | None = None) -> int:
    """Put ``cache_control`` on (a copy of) the request's blocks by the documented policy; returns how many."""
    placed = 0
    if request.tools:
        request.tools[-1]["cache_control"] = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
        placed += 1
    placed += _mark_last(request.system, ttl)
    turns = request.messages
    stable = max((i for i, t in enumerate(turns) if t["role"] == "assistant"), default=None)
    if stable is not None and stable != len(turns) - 1:
        placed += _mark_last(turns[stable]["content"], ttl)
    if turns:
        placed += _mark_last(turns[-1]["content"], ttl)
    assert placed <= MAX_BREAKPOINTS
    return placed


DEFAULT_BASE_URL = "https://api.anthropic.com"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
"""Read when ``base_url`` is unset, as the ``anthropic`` SDK reads it."""


class AnthropicModel(HTTPBackend):
    """A chat model behind the Anthropic Messages API (or llama-server's ``/v1/messages``).

    Parameters:
        name: the label recorded in every row.
        base_url: the API root without ``/v1`` (``https://api.anthropic.com``, ``http://127.0.0.1:8080``);
            ``None`` (the ``anthropic`` preset) takes ``$ANTHROPIC_BASE_URL`` as the SDK does, else
            ``DEFAULT_BASE_URL``. A set value always wins.
        model: the provider's model id.
        api_key_env: the NAME of the environment variable holding the key (``null``: no key).
        context_window: the window a request may not exceed (tokens).
        max_tokens: the reply limit (required by the API).
        temperature: sampling temperature (``null`` for the provider's default).
        timeout: the wall-clock deadline of one attempt in seconds: connect, headers and body (a call past it
            is a timeout, retried by ``retry``; harness/models/bounded_http.py).
        max_response_bytes: the cap on a response's decoded body (a larger one is a ``ModelError``).
        retry: a ``RetryPolicy`` mapping (attempts, initial_wait, max_wait, jitter, max_retry_after).
        cache_breakpoints: place ``cache_control`` breakpoints (see the module docstring).
        cache_ttl: the breakpoints' ``ttl`` (``null``: the API's 5 minutes; ``1h``).
        server_context_management: the endpoint applies Anthropic's context-management edits
            (true only for Anthropic's own API; llama-server ignores them).
        parse_text_tool_calls: also read tool calls written in the reply's text.
        extra_body: provider-specific request fields, sent as they are.
        check_endpoint: preflight reaches ``{base_url}/v1/models`` before a run starts.
        http_client: an ``httpx.Client`` for the SDK (tests pass a mock transport).
        api_key: the key itself (tests); normally read from ``api_key_env``.
    """

    no_key = NO_KEY
    call_id_prefix = "toolu"
    errors = ErrorRules(is_transient=is_transient, is_context_overflow=is_context_overflow, describe=describe)

    def __init__(
        self,
        name: str = "anthropic",
        base_url: str | None = None,
        model: str = "claude-sonnet-4-6",
        api_key_env: str | None = "ANTHROPIC_API_KEY",
        context_window: int = 200_000,
        max_tokens: int = 4096,
        temperature: float | None = 0.0,
        timeout: float = 120.0,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        retry: dict | RetryPolicy | None = None,
        cache_breakpoints: bool = True,
        cache_ttl: str | None = None,
        server_context_management: bool = False,
        parse_text_tool_calls: bool = False,
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
        self.max_tokens = int(max_tokens)
        self.cache_breakpoints = bool(cache_breakpoints)
        self.cache_ttl = cache_ttl
        self.server_context_management = bool(server_context_management)

    # -- the SDK and the endpoint ----------------------------------------------------------
    def sdk_client_class(self) -> Any:
        """``anthropic.Anthropic``."""
        return sdk().Anthropic

    def sdk_error(self) -> type[BaseException]:
        """``anthropic.AnthropicError``."""
        return sdk().AnthropicError

    def sdk_http_module(self) -> Any:
        """The HTTP library the ``anthropic`` SDK is built on."""
        return http_module()

    def check(self) -> None:
        """Preflight: the SDK is installed, the key's variable is set, and the endpoint answers."""
        sdk()
        super().check()

    def models_url(self) -> str:
        """``{base_url}/v1/models``."""
        return f"{self.base_url}/v1/models"

    def probe_headers(self) -> dict:
        """The key in both spellings: the API reads x-api-key, newer SDKs send a bearer token."""
        key = self.api_key()
        return {"x-api-key": key, "Authorization": f"Bearer {key}", "anthropic-version": "2023-06-01"}

    # -- calls ---------------------------------------------------------------------------
    def request_kwargs(self, messages: list[dict], tools: list[dict]) -> dict:
        """The arguments of ``beta.messages.create`` for one request (breakpoints and server options included)."""
        request = to_messages(copy.deepcopy(messages), copy.deepcopy(tools))
        if self.cache_breakpoints:
            place_breakpoints(request, self.cache_ttl)
        kwargs: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "messages": request.messages}
        if request.system:
            kwargs["system"] = request.system
        if request.tools:
            kwargs["tools"] = request.tools
        server = self.server_kwargs(current_request_options())
        if server:
            kwargs["extra_headers"] = server["extra_headers"]
        extra = {**server.get("extra_body", {}), **self.extra_body}
        if self.temperature is not None:  # a wire field of the API that this SDK's signature may not list
            extra.setdefault("temperature", self.temperature)
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    def server_kwargs(self, options: dict) -> dict:
        """``context_management`` and ``betas`` from the request options; refused where unsupported."""
        management = options.get("context_management")
        if not management:
            return {}
        if not self.server_context_management:
            raise ModelError(
                f"model {self.name} does not apply server-side context management "
                "(server_context_management: false); use model=anthropic"
            )
        betas = list(dict.fromkeys([CONTEXT_MANAGEMENT_BETA, *(options.get("betas") or [])]))
        # as wire fields, not SDK arguments: any SDK version that has the beta resource sends them
        return {"extra_body": {"context_management": management}, "extra_headers": {"anthropic-beta": ",".join(betas)}}

    def count_tokens(self, messages: list[dict], tools: list[dict]) -> int:
        """The server's own count of a request's input tokens (``POST /v1/messages/count_tokens``,
        which llama-server serves too), with the shared retries; for calibrating the harness's
        tiktoken counts against the provider's tokenizer."""
        request = to_messages(copy.deepcopy(messages), copy.deepcopy(tools))
        kwargs: dict[str, Any] = {"model": self.model, "messages": request.messages}
        if request.system:
            kwargs["system"] = request.system
        if request.tools:
            kwargs["tools"] = request.tools
        count = self.client.messages.count_tokens
        response = self.send(lambda: count(**kwargs), overflow=False)
        return int(response.input_tokens)

    def create(self) -> Callable[..., Any]:
        """``beta.messages.create`` with the raw response (the body is read here, not by the SDK)."""
        return self.client.beta.messages.with_raw_response.create

    def usage(self, data: dict) -> Usage:
        """``normalize_usage``."""
        return normalize_usage(data)

    def context_edits(self, data: dict) -> list[dict]:
        """``context_edits``: the server's ``applied_edits`` and ``compaction`` blocks."""
        return context_edits(data)

    def to_message(self, data: dict) -> dict:
        """The assistant message of a response (tool calls from ``tool_use`` blocks or the text)."""
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise ModelError(f"the response has no content blocks: {short(data)}")
        blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks if isinstance(b, dict)]
        message = reply_message(blocks)
        if message.get("server_blocks"):  # sent back verbatim: a lone surrogate in one would fail the next request
            try:
                message["server_blocks"] = escape_surrogates(message["server_blocks"])
            except RecursionError:
                raise ModelError("the response's blocks are nested too deeply to send back") from None
        for call in message.get("tool_calls") or []:
            call["id"] = call["id"] or self.call_id()
        if not message.get("tool_calls") and self.parse_text_tool_calls:
            parsed = parse_text_tool_calls(message["content"])
            if parsed.calls:
                message["_raw_content"] = message["content"]  # what the model wrote (transcript, cache simulator)
                message["content"] = parsed.text
                message["tool_calls"] = self.text_tool_calls(parsed.calls)
                message["_text_tool_calls"] = True
            elif parsed.error:
                message["_parse_error"] = parsed.error
        if not message.get("tool_calls") and data.get("stop_reason") == "max_tokens" and "_parse_error" not in message:
            message["_parse_error"] = CUT_OFF
        return message

"""What the two HTTP model backends share: ``OpenAIModel`` (harness/models/openai_backend.py) and
``AnthropicModel`` (harness/models/anthropic_backend.py) are each an ``HTTPBackend`` plus their wire format.

Here once: the settings every endpoint takes, the SDK client (created on first use with the SDK's own retries
off, over the client of harness/models/bounded_http.py: ``timeout`` is the wall-clock deadline of each attempt,
``max_response_bytes`` the cap on its decoded body), the preflight and its probe, the call with the shared
retries (``harness.models.retry``) and its error mapping (an SDK error becomes ``ContextOverflowError`` or
``ModelError``), reading a response body (``response_object``), usage figures kept as they came
(``usage_figure``, ``is_count``) and tool calls written in the text. A backend says what differs: its SDK, its
errors (``ErrorRules``), its URLs and headers, its request and its reply.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, TypeVar

from harness.models import endpoint
from harness.models.bounded_http import bounded_client
from harness.models.base import Completion, ContextOverflowError, ModelError, Usage
from harness.models.endpoint import retry_after
from harness.models.retry import RetryPolicy, call_with_retries, policy_from

T = TypeVar("T")

OVERFLOW_MARKERS = (
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "exceed_context_size",
    "exceeds the available context size",
    "prompt is too long",
    "input is too long",
    "too many tokens",
    "reduce the length of the messages",
)
OVERFLOW_STATUS = (400, 413, 422, 500)
CUT_OFF = "the reply was cut off at the max_tokens limit; be shorter"
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
"""The default cap on a response's decoded body (``model.max_response_bytes``)."""


def httpx_module() -> Any:
    """The ``httpx`` package: what SDK versions without ``httpx2`` are built on (the module their client imports)."""
    import httpx

    return httpx


def sdk_http_module(base_client: Any) -> Any:
    """The HTTP library an SDK is built on (``httpx2`` where its ``_base_client`` module has it, else ``httpx``)."""
    return getattr(base_client, "httpx2", None) or httpx_module()


def quiet_http_logs() -> None:
    """Hydra logs at INFO; one line per HTTP request from the client libraries is noise."""
    for name in ("httpx", "httpx2", "httpcore", "openai"):
        logging.getLogger(name).setLevel(logging.WARNING)


def status_of(exc: BaseException, status_error: type) -> int | None:
    """The HTTP status of an SDK's ``APIStatusError`` (``status_error``); ``None`` for any other error."""
    return getattr(exc, "status_code", None) if isinstance(exc, status_error) else None


def timeout_cause(exc: BaseException) -> str:
    """`` (why)`` for an SDK timeout raised from a cut-off call (the deadline's message), else ``''``."""
    cause = exc.__cause__
    text = str(cause) if cause is not None else ""
    return f" ({text})" if "model.timeout" in text else ""


def says_overflow(status: int | None, body_text: str) -> bool:
    """Whether an error's status and (lower-cased) text say the request exceeds the context window."""
    return status in OVERFLOW_STATUS and any(marker in body_text for marker in OVERFLOW_MARKERS)


def usage_figure(value: Any) -> Any:
    """A reported usage figure: an int as it is, a float that holds a whole number as that int, and anything
    else (a string, a fraction, NaN, infinity, ``true``, an object) as it came, so that the harness drops it
    and records why (``harness.accounting.reject_invalid_usage``) instead of reading, say, ``true`` as 1."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def is_count(value: Any) -> bool:
    """Whether a usage figure is a token count that arithmetic may use (an int >= 0, not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def as_object(value: Any) -> dict:
    """``value`` when it is a JSON object (a dict), else an empty one: fields of a reply read without raising."""
    return value if isinstance(value, dict) else {}


def short(value: Any, limit: int = 200) -> str:
    """The start of a value for an error message."""
    return str(value)[:limit]


def response_object(text: str) -> dict:
    """A response body as a JSON object; a ``ModelError`` that says why when it is not one.

    A 200 that carries an ``error`` object instead of a reply (some proxies answer so) names the error.
    """
    try:
        data = json.loads(text)
    except RecursionError:
        raise ModelError(f"the response is nested too deeply to read ({len(text):,} characters)") from None
    except ValueError as exc:  # not JSON (HTML, an event stream, cut off, empty), or an integer of > 4300 digits
        raise ModelError(f"the response is not JSON ({short(exc, 120)}): {text[:200]!r}") from None
    if not isinstance(data, dict):
        raise ModelError(f"the response is not a JSON object: {short(data)}")
    error = data.get("error")
    if error and not data.get("choices") and not data.get("content"):
        message = error.get("message") if isinstance(error, dict) else error
        raise ModelError(f"the response is an error: {short(message, 300)}")
    return data


@dataclass(frozen=True)
class ErrorRules:
    """How a backend reads its SDK's errors: which are worth retrying, which say the context overflowed, and
    the one line that names an error."""

    is_transient: Callable[[BaseException], bool]
    is_context_overflow: Callable[[BaseException], bool]
    describe: Callable[[BaseException], str]


class HTTPBackend:
    """A chat model behind an HTTP endpoint, reached through a provider SDK; see the module docstring.

    A subclass sets ``no_key``, ``call_id_prefix`` and ``errors`` and implements the ``sdk_*`` methods,
    ``models_url``, ``probe_headers``, ``create``, ``request_kwargs``, ``to_message`` and ``usage``.
    """

    is_reference = False
    no_key: ClassVar[str] = ""
    """The key sent to servers without keys (``api_key_env`` unset)."""
    call_id_prefix: ClassVar[str] = "call"
    """The start of the ids given to tool calls that came without one."""
    errors: ClassVar[ErrorRules]

    def __init__(
        self,
        name: str,
        base_url: str,
        model: str,
        api_key_env: str | None,
        context_window: int,
        temperature: float | None,
        timeout: float,
        retry: dict | RetryPolicy | None,
        parse_text_tool_calls: bool,
        extra_body: dict | None,
        check_endpoint: bool,
        http_client: Any,
        api_key: str | None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.name = name
        self.base_url = base_url
        self.model = model
        self.api_key_env = api_key_env or None
        self.context_window = int(context_window)
        self.temperature = temperature
        self.timeout = float(timeout)
        self.max_response_bytes = int(max_response_bytes)
        self.retry = policy_from(retry)
        self.parse_text_tool_calls = parse_text_tool_calls
        self.extra_body = dict(extra_body or {})
        self.check_endpoint = check_endpoint
        self.http_client = http_client
        self._api_key = api_key
        self._client: Any = None
        self._ids = itertools.count(1)
        quiet_http_logs()

    # -- what each backend says ------------------------------------------------------------
    def sdk_client_class(self) -> Any:
        """The SDK's client class (``openai.OpenAI``, ``anthropic.Anthropic``)."""
        raise NotImplementedError

    def sdk_error(self) -> type[BaseException]:
        """The base class of the SDK's errors."""
        raise NotImplementedError

    def sdk_http_module(self) -> Any:
        """The HTTP library the SDK is built on (``httpx`` or ``httpx2``), for the probe."""
        raise NotImplementedError

    def models_url(self) -> str:
        """The URL the preflight probe GETs."""
        raise NotImplementedError

    def probe_headers(self) -> dict:
        """The headers of the preflight probe (the key, as the endpoint reads it)."""
        raise NotImplementedError

    def create(self) -> Callable[..., Any]:
        """The SDK function that sends one request and returns the raw response (the body is read here)."""
        raise NotImplementedError

    def request_kwargs(self, messages: list[dict], tools: list[dict]) -> dict:
        """The arguments of ``create`` for one request."""
        raise NotImplementedError

    def to_message(self, data: dict) -> dict:
        """The assistant message of a response."""
        raise NotImplementedError

    def usage(self, data: dict) -> Usage:
        """A response's usage as a ``Usage``."""
        raise NotImplementedError

    def context_edits(self, data: dict) -> list[dict]:
        """The edits the server applied to the request (none unless the backend reads some)."""
        return []

    # -- setup ---------------------------------------------------------------------------
    def api_key(self) -> str:
        """The API key (``no_key`` for keyless servers)."""
        return endpoint.api_key(self._api_key, self.api_key_env, self.no_key)

    @property
    def client(self) -> Any:
        """The SDK client, created on first use with ``max_retries=0`` (tenacity retries), over a
        ``bounded_client`` (each attempt's deadline and body cap) unless the caller gave its ``http_client``."""
        if self._client is None:
            http_client = self.http_client or bounded_client(
                self.sdk_http_module(), self.timeout, self.max_response_bytes
            )
            self._client = self.sdk_client_class()(
                base_url=self.base_url,
                api_key=self.api_key(),
                max_retries=0,
                timeout=self.timeout,
                http_client=http_client,
            )
        return self._client

    def check(self) -> None:
        """Preflight: the key's environment variable is set and the endpoint answers."""
        endpoint.check_key_variable(self.name, self._api_key, self.api_key_env)
        if self.check_endpoint:
            self.probe()

    def probe(self, timeout: float = 10.0) -> int:
        """GET ``models_url()``; any HTTP answer counts as reachable, a 401 as a rejected key."""
        httpx = self.sdk_http_module()
        url = self.models_url()
        headers = self.probe_headers()
        return endpoint.probe(
            self.name, self.base_url, url, headers, httpx, self.http_client, self.api_key_env, timeout
        )

    # -- calls ---------------------------------------------------------------------------
    def send(self, call: Callable[[], T], overflow: bool = True) -> T:
        """``call()`` with the shared retries; an SDK error that remains becomes a ``ModelError`` (a
        ``ContextOverflowError`` when ``overflow`` and the error says the context overflowed). A ``ModelError``
        raised inside the SDK's call (``bounded_http.ResponseTooLarge``) is never retried, whatever the SDK wrapped
        it in."""

        def attempt() -> T:
            try:
                return call()
            except self.sdk_error() as exc:  # an SDK that wraps every error: the harness's own comes out as it is
                if isinstance(exc.__cause__, ModelError):
                    raise exc.__cause__ from None
                raise

        try:
            return call_with_retries(
                attempt,
                policy=self.retry,
                is_transient=self.errors.is_transient,
                retry_after=retry_after,
                describe=self.errors.describe,
            )
        except ModelError:
            raise
        except self.sdk_error() as exc:
            if overflow and self.errors.is_context_overflow(exc):
                raise ContextOverflowError(self.errors.describe(exc)) from None
            raise ModelError(self.errors.describe(exc)) from None

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        """Send one request (with retries) and normalize the reply, its usage and the server's edits."""
        kwargs = self.request_kwargs(messages, tools)
        create = self.create()
        started = time.perf_counter()
        response = self.send(lambda: create(**kwargs))
        latency = time.perf_counter() - started
        data = response_object(response.http_response.text)
        return Completion(
            message=self.to_message(data),
            usage=self.usage(data),
            latency_s=latency,
            raw=data,
            context_edits=self.context_edits(data),
        )

    # -- replies -------------------------------------------------------------------------
    def call_id(self) -> str:
        """A fresh id for a tool call that came without one (``call_1``, ``toolu_2``, ...)."""
        return f"{self.call_id_prefix}_{next(self._ids)}"

    def text_tool_calls(self, parsed: list[tuple[str, str]]) -> list[dict]:
        """Tool calls written in a reply's text (name, arguments) as calls, each with a fresh id."""
        return [
            {"id": self.call_id(), "type": "function", "function": {"name": name, "arguments": arguments}}
            for name, arguments in parsed
        ]

"""Every HTTP model call within a wall-clock deadline and a size cap (issue 36).

``model.timeout`` is the deadline of one call, connect + headers + body, however slowly the server sends
them; ``model.max_response_bytes`` caps the decoded body (a gzip body is decoded here, a bounded piece at a
time, so a 2 MB body that expands to 2 GB costs at most the cap in memory). Both HTTP backends
(harness/models/http_backend.py) give their SDK the client ``bounded_client`` builds:

- ``BoundedTransport`` (an httpx transport around the default one) starts a ``Deadline`` for each request
  (one request is one attempt: the SDK's own retries are off) and gives the response a ``BoundedBody``;
- ``DeadlineNetwork`` (the network layer of the transport's connection pool) cuts the timeout of every
  connect, TLS handshake, read and write to the time left, so a read that blocks cannot outlive the deadline,
  and a server that sends one byte a second (headers or body) is cut off when the time is up;
- ``BoundedBody`` decodes the body (``identity``, ``gzip``, ``deflate``: the encodings the request accepts),
  counts the decoded bytes and stops at the cap (``ResponseTooLarge``, a ``ModelError``: never retried) or
  at the deadline.

A call past its deadline raises the HTTP library's ``ReadTimeout`` (``ConnectTimeout`` before the connection
is made), which the SDK turns into its ``APITimeoutError``: the retry policy (harness/models/retry.py) retries
it as any timeout, each attempt with a deadline of its own. The body is read by the SDK's raw response inside
its own error handling, so every error keeps the path it had.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import time
import urllib.request
import zlib
from typing import Any, Callable, Iterator

from harness.models.base import ModelError

ACCEPTED_ENCODINGS = "gzip, deflate"
PIECE = 64 * 1024
"""The most decoded bytes one step of decoding makes: memory stays within the cap plus this."""
POOL_LIMITS = {"max_connections": 1000, "max_keepalive_connections": 100}
"""The connection limits the SDKs' default clients use."""


class ResponseTooLarge(ModelError):
    """A response's decoded body is larger than ``model.max_response_bytes`` (the rest was not read)."""


class Deadline:
    """The wall-clock deadline of one call: ``seconds`` from now, on the monotonic clock."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left (0 or less once it has passed)."""
        return self.end - time.monotonic()

    def message(self) -> str:
        """What a call cut off at this deadline says."""
        return f"no complete reply within model.timeout={self.seconds:g}s, the deadline of one call"


_CURRENT: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar("ctxbench_call_deadline", default=None)


@contextlib.contextmanager
def deadline_scope(deadline: Deadline) -> Iterator[Deadline]:
    """Make ``deadline`` the one that bounds every network operation of this thread inside."""
    token = _CURRENT.set(deadline)
    try:
        yield deadline
    finally:
        _CURRENT.reset(token)


def time_left(timeout: float | None, error: Callable[[str], BaseException]) -> float | None:
    """``timeout`` cut to the current deadline's time left; ``error(message)`` raised when none is left."""
    deadline = _CURRENT.get()
    if deadline is None:
        return timeout
    left = deadline.remaining()
    if left <= 0:
        raise error(deadline.message())
    return left if timeout is None else min(timeout, left)


class DeadlineStream:
    """A connection's network stream whose every operation ends by the current deadline."""

    def __init__(self, stream: Any, httpcore: Any) -> None:
        self.stream = stream
        self.httpcore = httpcore

    def _timed(self, operation: Callable[[float | None], Any], timeout: float | None, error: Any) -> Any:
        try:
            return operation(time_left(timeout, error))
        except error:
            deadline = _CURRENT.get()
            if deadline is not None and deadline.remaining() <= 0:
                raise error(deadline.message()) from None
            raise

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """``read``, ending by the deadline (``ReadTimeout``)."""
        return self._timed(lambda left: self.stream.read(max_bytes, left), timeout, self.httpcore.ReadTimeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """``write``, ending by the deadline (``WriteTimeout``)."""
        self._timed(lambda left: self.stream.write(buffer, left), timeout, self.httpcore.WriteTimeout)

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        """The TLS handshake, ending by the deadline; the TLS stream is bounded too."""
        tls = self._timed(
            lambda left: self.stream.start_tls(ssl_context, server_hostname, left),
            timeout,
            self.httpcore.ConnectTimeout,
        )
        return DeadlineStream(tls, self.httpcore)

    def close(self) -> None:
        """Close the connection."""
        self.stream.close()

    def get_extra_info(self, info: str) -> Any:
        """As the stream answers it."""
        return self.stream.get_extra_info(info)


class DeadlineNetwork:
    """A connection pool's network backend whose connections end every operation by the current deadline."""

    def __init__(self, backend: Any, httpcore: Any) -> None:
        self.backend = backend
        self.httpcore = httpcore

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, **options: Any) -> DeadlineStream:
        """A TCP connection made by the deadline (``ConnectTimeout``)."""
        left = time_left(timeout, self.httpcore.ConnectTimeout)
        return DeadlineStream(self.backend.connect_tcp(host, port, left, **options), self.httpcore)

    def connect_unix_socket(self, path: str, timeout: float | None = None, **options: Any) -> DeadlineStream:
        """A Unix-socket connection made by the deadline."""
        left = time_left(timeout, self.httpcore.ConnectTimeout)
        return DeadlineStream(self.backend.connect_unix_socket(path, left, **options), self.httpcore)

    def sleep(self, seconds: float) -> None:
        """As the backend sleeps (between connection retries)."""
        self.backend.sleep(seconds)


class Decoder:
    """A body's content decoding, a bounded piece at a time (``identity``, ``gzip``, ``deflate``)."""

    def __init__(self, encoding: str, decoding_error: type[BaseException]) -> None:
        name = encoding.strip().lower() or "identity"
        if name not in ("identity", "gzip", "x-gzip", "deflate"):
            raise ModelError(
                f"the response's content-encoding {encoding!r} is not one the request accepts ({ACCEPTED_ENCODINGS})"
            )
        self.name = name
        self.decoding_error = decoding_error
        self._zlib: Any = (
            None if name == "identity" else zlib.decompressobj(zlib.MAX_WBITS | (16 if "gzip" in name else 0))
        )
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of ``data`` (each at most ``PIECE`` bytes unless the body is not encoded)."""
        if self._zlib is None:
            yield data
            return
        while data:
            piece = self._step(data)
            data = self._zlib.unconsumed_tail
            if piece:
                yield piece

    def _step(self, data: bytes) -> bytes:
        try:
            piece = self._zlib.decompress(data, PIECE)
        except zlib.error as exc:
            if self.name == "deflate" and not self._started:  # a raw deflate stream without the zlib header
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                self._started = True
                return self._step(data)
            raise self.decoding_error(f"the {self.name} body does not decode: {exc}") from None
        self._started = True
        return piece


class BoundedBody:
    """A response's body, decoded, counted against ``max_bytes`` and read by the call's deadline.

    Combined with the HTTP library's ``SyncByteStream`` by ``library_classes``.
    """

    def __init__(self, raw: Any, decoder: Decoder, deadline: Deadline, max_bytes: int, httpx: Any) -> None:
        self.raw = raw
        self.decoder = decoder
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.httpx = httpx

    def _raw_chunks(self) -> Iterator[bytes]:
        chunks = iter(self.raw)
        while True:
            with deadline_scope(self.deadline):
                chunk = next(chunks, None)
            if chunk is None:
                return
            yield chunk

    def __iter__(self) -> Iterator[bytes]:
        count = 0
        for chunk in self._raw_chunks():
            for piece in self.decoder.feed(chunk):
                count += len(piece)
                if count > self.max_bytes:
                    raise ResponseTooLarge(
                        f"the response's body is larger than model.max_response_bytes={self.max_bytes:,} "
                        "(decoded); the rest was not read"
                    )
                if self.deadline.remaining() <= 0:
                    raise self.httpx.ReadTimeout(self.deadline.message())
                yield piece

    def close(self) -> None:
        """Close the raw stream (the connection goes back to the pool only when the body was read to its end)."""
        close = getattr(self.raw, "close", None)
        if close is not None:
            close()


class BoundedTransport:
    """An httpx transport that gives each request a ``Deadline`` of ``timeout`` seconds and each response a
    ``BoundedBody`` capped at ``max_bytes``; combined with the library's ``BaseTransport`` by ``library_classes``.
    """

    def __init__(self, inner: Any, timeout: float, max_bytes: int, httpx: Any) -> None:
        self.inner = inner
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.httpx = httpx
        pool = inner._pool  # the pool's network backend: httpcore's documented ConnectionPool(network_backend=...)
        httpcore = importlib.import_module(type(pool).__module__.split(".")[0])
        pool._network_backend = DeadlineNetwork(pool._network_backend, httpcore)

    def handle_request(self, request: Any) -> Any:
        """Send ``request`` by its deadline; the response's body is bounded."""
        deadline = Deadline(self.timeout)
        request.headers["accept-encoding"] = ACCEPTED_ENCODINGS
        request.extensions["timeout"] = dict.fromkeys(("connect", "read", "write", "pool"), self.timeout)
        with deadline_scope(deadline):
            response = self.inner.handle_request(request)
        try:
            decoder = Decoder(response.headers.get("content-encoding", "identity"), self.httpx.DecodingError)
        except ModelError:
            response.close()
            raise
        _, body_class = library_classes(self.httpx)
        headers = [(k, v) for k, v in response.headers.raw if k.lower() not in (b"content-encoding", b"content-length")]
        return self.httpx.Response(
            status_code=response.status_code,
            headers=headers,
            stream=body_class(response.stream, decoder, deadline, self.max_bytes, self.httpx),
            extensions=response.extensions,
        )

    def close(self) -> None:
        """Close the inner transport's connections."""
        self.inner.close()


@functools.lru_cache(maxsize=None)
def library_classes(httpx: Any) -> tuple[type, type]:
    """``BoundedTransport`` and ``BoundedBody`` as subclasses of ``httpx``'s (or ``httpx2``'s) transport and
    byte-stream bases, which its client and responses require."""
    transport = type("BoundedTransport", (BoundedTransport, httpx.BaseTransport), {})
    body = type("BoundedBody", (BoundedBody, httpx.SyncByteStream), {})
    return transport, body


def bounded_client(httpx: Any, timeout: float, max_bytes: int) -> Any:
    """An ``httpx.Client`` (of the SDK's HTTP library ``httpx``) whose every request ends by ``timeout`` seconds
    and reads at most ``max_bytes`` of decoded body, also through the proxy the environment names."""
    transport_class, _ = library_classes(httpx)

    def bounded(**options: Any) -> Any:
        inner = httpx.HTTPTransport(limits=httpx.Limits(**POOL_LIMITS), **options)
        return transport_class(inner, timeout, max_bytes, httpx)

    proxies = urllib.request.getproxies()
    mounts = {
        f"{scheme}://": bounded(proxy=proxies[scheme]) for scheme in ("all", "http", "https") if proxies.get(scheme)
    }
    return httpx.Client(transport=bounded(), mounts=mounts or None, timeout=timeout, follow_redirects=True)

"""A hostile model server for tests (issue 22): one threaded HTTP server on 127.0.0.1 that speaks the OpenAI
chat-completions protocol (``POST .../v1/chat/completions``) and the Anthropic Messages protocol
(``POST .../v1/messages``), and answers with whatever a broken, buggy or malicious endpoint might send.

The mode is chosen per request by the path: ``/<session>/<mode>/v1/...``. A session is a name the test picks
(one per trial), so the server can count the requests of one trial: the first ``mode.times`` requests of a
session get the hostile reply, every later one a well-formed ``submit`` call (with ``submit_arguments``), so a
trial that survives the hostile reply ends at once. ``GET .../v1/models`` always answers 200 (the preflight).

    with HostileServer() as server:
        base_url = server.base_url("openai", "nan_args", "s1")      # http://127.0.0.1:PORT/s1/nan_args/v1
        base_url = server.base_url("anthropic", "nan_args", "s2")   # http://127.0.0.1:PORT/s2/nan_args

``MODES`` maps each mode's name to a ``Mode``: ``reply(protocol, request)`` gives the hostile ``Reply``.
"""

from __future__ import annotations

import functools
import gzip
import json
import struct
import sys
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

OPENAI, ANTHROPIC = "openai", "anthropic"
USAGE = {
    OPENAI: {"prompt_tokens": 120, "completion_tokens": 10, "total_tokens": 130},
    ANTHROPIC: {"input_tokens": 120, "output_tokens": 10},
}


@dataclass
class Reply:
    """What the server sends: a status, a body (bytes, or a JSON value), headers, and how it misbehaves.

    ``cut``: send only this many bytes of the body (with the full Content-Length) and close the connection;
    ``drop``: close the connection without answering; ``delay``: seconds to wait before answering;
    ``drip``: seconds between the bytes of the body (the headers go at once), ``drip_headers``: the status
    line and headers go that slowly too (a server that is never silent long enough for a per-read timeout).
    """

    status: int = 200
    body: Any = None
    headers: dict = field(default_factory=dict)
    cut: int | None = None
    drop: bool = False
    delay: float = 0.0
    drip: float = 0.0
    drip_headers: bool = False

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8", "surrogatepass")
        return json.dumps(self.body).encode()  # allow_nan: NaN / Infinity literals go out as such


@dataclass
class Mode:
    """A hostile reply: ``reply(protocol, request) -> Reply`` for the first ``times`` requests of a session."""

    reply: Callable[[str, dict], Reply]
    times: int = 1


# ------------------------------------------------------------ well-formed bodies


def openai_body(message: dict | None = None, usage: Any = "default", finish: str = "stop", **extra) -> dict:
    body = {
        "id": "chatcmpl-hostile",
        "object": "chat.completion",
        "created": 0,
        "model": "hostile",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        **extra,
    }
    if usage is not None:
        body["usage"] = USAGE[OPENAI] if usage == "default" else usage
    return body


def anthropic_body(blocks: Any, usage: Any = "default", stop: str = "end_turn", **extra) -> dict:
    body = {
        "id": "msg_hostile",
        "type": "message",
        "role": "assistant",
        "model": "hostile",
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        **extra,
    }
    if usage is not None:
        body["usage"] = USAGE[ANTHROPIC] if usage == "default" else usage
    return body


def calls_reply(protocol: str, calls: list[tuple[Any, Any, Any]], text: Any = None) -> Reply:
    """A reply calling tools: ``calls`` = [(id, name, arguments)]; for Anthropic ``arguments`` is the ``input``
    (a JSON text argument is decoded for it, unless it does not decode)."""
    if protocol == OPENAI:
        tool_calls = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls]
        return Reply(body=openai_body({"role": "assistant", "content": text, "tool_calls": tool_calls}))
    blocks = [{"type": "text", "text": text}] if text is not None else []
    for call_id, name, arguments in calls:
        blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": arguments})
    return Reply(body=anthropic_body(blocks, stop="tool_use"))


def text_reply(protocol: str, text: Any, finish: str | None = None) -> Reply:
    if protocol == OPENAI:
        return Reply(body=openai_body({"role": "assistant", "content": text}, finish=finish or "stop"))
    return Reply(body=anthropic_body([{"type": "text", "text": text}], stop=finish or "end_turn"))


def raw_call(protocol: str, arguments_text: str) -> Reply:
    """A call of ``query_api`` whose arguments are exactly ``arguments_text`` (a JSON text): an OpenAI
    ``arguments`` string, the Anthropic ``input`` spliced into the body as it is."""
    if protocol == OPENAI:
        return calls_reply(protocol, [("call_1", "query_api", arguments_text)])
    marker = "\u0000INPUT\u0000"
    text = json.dumps(
        anthropic_body([{"type": "tool_use", "id": "toolu_1", "name": "query_api", "input": marker}], stop="tool_use")
    )
    return Reply(body=text.replace(json.dumps(marker), arguments_text))


def usage_reply(protocol: str, openai_usage: Any, anthropic_usage: Any) -> Reply:
    """A plain text reply (the model is nudged to use a tool) with the given usage block."""
    if protocol == OPENAI:
        return Reply(body=openai_body({"role": "assistant", "content": "thinking"}, usage=openai_usage))
    return Reply(body=anthropic_body([{"type": "text", "text": "thinking"}], usage=anthropic_usage))


def submit_reply(protocol: str, arguments: dict) -> Reply:
    if protocol == OPENAI:
        return calls_reply(protocol, [("call_submit", "submit", json.dumps(arguments))])
    return calls_reply(protocol, [("toolu_submit", "submit", arguments)])


def both(openai_reply: Callable[[], Reply], anthropic_reply: Callable[[], Reply]) -> Callable[[str, dict], Reply]:
    return lambda protocol, request: openai_reply() if protocol == OPENAI else anthropic_reply()


def each(make: Callable[[str], Reply]) -> Callable[[str, dict], Reply]:
    return lambda protocol, request: make(protocol)


def error_body(protocol: str, message: str, kind: str) -> dict:
    if protocol == OPENAI:
        return {"error": {"message": message, "type": kind, "code": kind}}
    return {"type": "error", "error": {"type": kind, "message": message}}


def status(code: int, message: str, kind: str, **headers: str) -> Callable[[str, dict], Reply]:
    return lambda protocol, request: Reply(code, error_body(protocol, message, kind), dict(headers))


@functools.lru_cache(maxsize=None)
def gzip_bomb(mib: int) -> bytes:
    """A valid gzip body of ``mib`` MiB of zero bytes, about 1 KiB per MiB (2 GiB: ~2 MB): the same fully-flushed
    deflate block repeated, so building it costs the CRC alone (~0.8 s per GiB), once per process."""
    zeros = bytes(1 << 20)
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip header and trailer
    first = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)  # the same bytes for every later MiB
    end = packer.flush()[:-8]  # the final empty block; the trailer is written below for all the MiB
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    return first + block * (mib - 1) + end + struct.pack("<II", crc, (mib << 20) & 0xFFFFFFFF)


def unknown_call(protocol: str) -> Reply:
    """A well-formed call of a tool the task does not have (the model is told so; the trial goes on)."""
    return calls_reply(protocol, [("call_1", "rm_rf_slash", "{}" if protocol == OPENAI else {})])


def encoded(reply: Reply, encoding: str, encode: Callable[[bytes], bytes]) -> Reply:
    """``reply`` with its body compressed by ``encode`` and sent with ``content-encoding: encoding``."""
    return Reply(reply.status, encode(reply.payload()), {**reply.headers, "content-encoding": encoding})


DEEP = '{"a":' * 100_000 + "1" + "}" * 100_000
TEN_MB = "x" * (10 * 1024 * 1024)

MODES: dict[str, Mode] = {
    # -- tool-call arguments
    "ok": Mode(lambda protocol, request: Reply(), times=0),  # never hostile: submits at once
    "nan_args": Mode(each(lambda p: raw_call(p, '{"dataset": NaN}'))),
    "infinity_args": Mode(each(lambda p: raw_call(p, '{"dataset": -Infinity}'))),
    "huge_float_args": Mode(each(lambda p: raw_call(p, '{"dataset": 1e400}'))),
    "huge_int_args": Mode(each(lambda p: raw_call(p, '{"dataset": ' + "9" * 5000 + "}"))),
    "deep_args": Mode(each(lambda p: raw_call(p, DEEP))),
    "malformed_args": Mode(each(lambda p: calls_reply(p, [("call_1", "query_api", '{"dataset": "orders"')]))),
    "args_not_object": Mode(each(lambda p: raw_call(p, "[1, 2, 3]"))),
    "args_as_object": Mode(
        both(
            lambda: calls_reply(OPENAI, [("call_1", "query_api", {"dataset": "orders"})]),
            lambda: calls_reply(ANTHROPIC, [("toolu_1", "query_api", '{"dataset": "orders"}')]),
        )
    ),
    "args_number": Mode(each(lambda p: calls_reply(p, [("call_1", "query_api", 5)]))),
    "args_null": Mode(each(lambda p: calls_reply(p, [("call_1", "query_api", None)]))),
    "surrogate_args": Mode(each(lambda p: raw_call(p, '{"dataset": "\\ud800"}'))),
    # -- tool names and ids
    "unknown_tool": Mode(each(lambda p: calls_reply(p, [("call_1", "rm_rf_slash", "{}" if p == OPENAI else {})]))),
    "empty_tool_name": Mode(each(lambda p: calls_reply(p, [("call_1", "", "{}" if p == OPENAI else {})]))),
    "tool_name_not_string": Mode(each(lambda p: calls_reply(p, [("call_1", 42, "{}" if p == OPENAI else {})]))),
    "missing_call_id": Mode(each(lambda p: calls_reply(p, [(None, "rm_rf_slash", "{}" if p == OPENAI else {})]))),
    "call_id_not_string": Mode(each(lambda p: calls_reply(p, [(7, "rm_rf_slash", "{}" if p == OPENAI else {})]))),
    "duplicate_call_ids": Mode(
        each(
            lambda p: calls_reply(
                p,
                [
                    ("dup", "rm_rf_slash", "{}" if p == OPENAI else {}),
                    ("dup", "rm_rf_slash", "{}" if p == OPENAI else {}),
                ],
            )
        )
    ),
    "many_tool_calls": Mode(
        each(lambda p: calls_reply(p, [(f"c{i}", "rm_rf_slash", "{}" if p == OPENAI else {}) for i in range(1000)]))
    ),
    "tool_calls_not_list": Mode(
        both(
            lambda: Reply(
                body=openai_body(
                    {"role": "assistant", "content": None, "tool_calls": {"id": "c1", "function": {"name": "submit"}}}
                )
            ),
            lambda: Reply(
                body=anthropic_body(
                    [{"type": "tool_use", "id": "t1", "name": "query_api", "input": {}}, "not a block", None, 7]
                )
            ),
        )
    ),
    "call_without_function": Mode(
        both(
            lambda: Reply(
                body=openai_body(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [{"id": "c1", "type": "function", "function": None}, None],
                    }
                )
            ),
            lambda: Reply(body=anthropic_body([{"type": "tool_use"}])),
        )
    ),
    # -- text
    "null_content": Mode(both(lambda: text_reply(OPENAI, None), lambda: Reply(body=anthropic_body(None)))),
    "content_not_string": Mode(
        both(
            lambda: text_reply(OPENAI, [{"type": "text", "text": "part"}, 7]),
            lambda: Reply(
                body=anthropic_body([{"type": "text", "text": None}, {"type": "text", "text": 7}, {"type": "text"}])
            ),
        )
    ),
    "lone_surrogate": Mode(each(lambda p: Reply(body=json.dumps(text_reply(p, "half \ud800 a pair").body)))),
    "nul_and_controls": Mode(each(lambda p: text_reply(p, "a\u0000b\u001b[31mred\u202eevil"))),
    "text_tool_call_nan": Mode(
        each(lambda p: text_reply(p, '```json\n{"name": "query_api", "arguments": {"dataset": NaN}}\n```'))
    ),
    "text_tool_call_deep": Mode(each(lambda p: text_reply(p, "```json\n" + "[" * 100_000 + "\n```"))),
    "text_tool_call_huge_float": Mode(
        each(lambda p: text_reply(p, '<tool_call>{"name": "query_api", "arguments": {"dataset": 1e400}}</tool_call>'))
    ),
    "cut_at_max_tokens": Mode(each(lambda p: text_reply(p, "", finish="length" if p == OPENAI else "max_tokens"))),
    "huge_content": Mode(each(lambda p: text_reply(p, TEN_MB))),
    "many_braces": Mode(each(lambda p: text_reply(p, "{" * 1_000_000))),
    "open_fence_blanks": Mode(each(lambda p: text_reply(p, "```json" + " \t" * 200_000 + "x"))),
    "whitespace_run": Mode(each(lambda p: text_reply(p, "a" + " " * 1_000_000 + "b"))),
    "surrogate_in_block": Mode(
        both(
            lambda: Reply(
                body=json.dumps(
                    openai_body(
                        {
                            "role": "assistant",
                            "content": [{"type": "text", "text": "\udfff"}],
                            "reasoning_content": "\ud800",
                        }
                    )
                )
            ),
            lambda: Reply(
                body=json.dumps(
                    anthropic_body(
                        [{"type": "thinking", "thinking": "\ud800", "signature": "s"}, {"type": "text", "text": "hm"}]
                    )
                )
            ),
        )
    ),
    "unknown_block_type": Mode(
        both(
            lambda: Reply(
                body=openai_body({"role": "assistant", "content": "hm", "refusal": {"odd": True}, "audio": [1, 2]})
            ),
            lambda: Reply(body=anthropic_body([{"type": "mystery", "data": {"x": 1}}, {"type": "text", "text": "hm"}])),
        )
    ),
    # -- the response's shape
    "empty_choices": Mode(
        both(lambda: Reply(body={**openai_body(), "choices": []}), lambda: Reply(body=anthropic_body([])))
    ),
    "null_choice": Mode(
        both(lambda: Reply(body={**openai_body(), "choices": [None]}), lambda: Reply(body=anthropic_body([None])))
    ),
    "no_message": Mode(
        both(
            lambda: Reply(body={**openai_body(), "choices": [{"index": 0, "finish_reason": "stop"}]}),
            lambda: Reply(body={k: v for k, v in anthropic_body([]).items() if k != "content"}),
        )
    ),
    "error_in_200": Mode(each(lambda p: Reply(200, error_body(p, "internal failure", "server_error")))),
    "json_not_object": Mode(each(lambda p: Reply(body=[1, 2, 3]))),
    "json_null": Mode(each(lambda p: Reply(body=b"null"))),
    "non_json_body": Mode(
        each(lambda p: Reply(body=b"<html><body>502 Bad Gateway</body></html>", headers={"content-type": "text/html"}))
    ),
    "non_json_as_json": Mode(each(lambda p: Reply(body=b"<html>oops</html>"))),
    "wrong_content_type": Mode(
        each(
            lambda p: Reply(
                body=json.dumps(submit_reply(p, {"first_total": 0}).body).encode(),
                headers={"content-type": "text/plain"},
            )
        )
    ),
    "event_stream": Mode(
        each(
            lambda p: Reply(
                body=b'data: {"choices": []}\n\ndata: [DONE]\n\n', headers={"content-type": "text/event-stream"}
            )
        )
    ),
    "truncated_json": Mode(each(lambda p: Reply(body=json.dumps(text_reply(p, "cut").body)[:40].encode()))),
    "empty_body": Mode(each(lambda p: Reply(body=b""))),
    "no_content_204": Mode(each(lambda p: Reply(204, b""))),
    # -- usage
    "missing_usage": Mode(each(lambda p: usage_reply(p, None, None))),
    "usage_not_object": Mode(each(lambda p: usage_reply(p, "lots", [1, 2]))),
    "non_numeric_tokens": Mode(
        each(
            lambda p: usage_reply(
                p,
                {"prompt_tokens": "lots", "completion_tokens": "few"},
                {"input_tokens": "lots", "output_tokens": "few"},
            )
        )
    ),
    "float_tokens": Mode(
        each(
            lambda p: usage_reply(
                p, {"prompt_tokens": 120.5, "completion_tokens": 10}, {"input_tokens": 120.5, "output_tokens": 10}
            )
        )
    ),
    "nan_tokens": Mode(
        each(
            lambda p: Reply(
                body=json.dumps(
                    usage_reply(
                        p,
                        {"prompt_tokens": float("nan"), "completion_tokens": float("inf")},
                        {"input_tokens": float("nan"), "output_tokens": float("inf")},
                    ).body
                )
            )
        )
    ),
    "huge_cached_tokens": Mode(
        each(
            lambda p: usage_reply(
                p,
                {"prompt_tokens": 120, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 1e30}},
                {"input_tokens": 120, "output_tokens": 10, "cache_read_input_tokens": 1e30},
            )
        )
    ),
    "negative_tokens": Mode(
        each(
            lambda p: usage_reply(
                p, {"prompt_tokens": 120, "completion_tokens": -5}, {"input_tokens": 120, "output_tokens": -5}
            )
        )
    ),
    "bool_tokens": Mode(
        each(
            lambda p: usage_reply(
                p, {"prompt_tokens": True, "completion_tokens": 10}, {"input_tokens": True, "output_tokens": 10}
            )
        )
    ),
    "huge_int_tokens": Mode(
        each(
            lambda p: Reply(
                body=json.dumps(
                    usage_reply(
                        p, {"prompt_tokens": 1, "completion_tokens": 1}, {"input_tokens": 1, "output_tokens": 1}
                    ).body
                ).replace('_tokens": 1', '_tokens": ' + "9" * 5000, 1)
            )
        )
    ),
    # -- HTTP status and transport
    "rate_limit_429": Mode(status(429, "slow down", "rate_limit_error", **{"retry-after": "3"})),
    "server_500_retry_after": Mode(status(500, "boom", "api_error", **{"retry-after": "2"})),
    "overloaded_529": Mode(status(529, "overloaded", "overloaded_error")),
    "always_429": Mode(status(429, "slow down", "rate_limit_error", **{"retry-after": "1"}), times=1_000_000),
    "retry_after_nan": Mode(status(429, "slow down", "rate_limit_error", **{"retry-after": "nan"})),
    "retry_after_ms_nan": Mode(status(503, "busy", "api_error", **{"retry-after-ms": "nan"})),
    "retry_after_huge": Mode(status(429, "slow down", "rate_limit_error", **{"retry-after": "1e308"})),
    "retry_after_garbage": Mode(status(429, "slow down", "rate_limit_error", **{"retry-after": "Wed, 99 Foo 10:00"})),
    "unauthorized_401": Mode(status(401, "invalid api key", "authentication_error")),
    "context_overflow_400": Mode(
        status(400, "prompt is too long: maximum context length is 10 tokens", "invalid_request_error")
    ),
    "closed_mid_body": Mode(each(lambda p: Reply(body=json.dumps(text_reply(p, "x" * 500).body).encode(), cut=60))),
    "dropped_connection": Mode(each(lambda p: Reply(drop=True))),
    "always_dropped": Mode(each(lambda p: Reply(drop=True)), times=1_000_000),
    "bad_gzip": Mode(
        each(lambda p: Reply(body=json.dumps(text_reply(p, "x").body).encode(), headers={"content-encoding": "gzip"}))
    ),
    "slow_reply": Mode(each(lambda p: Reply(body=text_reply(p, "late").body, delay=1.5))),
    # -- a call's deadline and the body's size (issue 36): every attempt is hostile
    "drip": Mode(each(lambda p: Reply(body=text_reply(p, "drip").body, drip=1.0)), times=1_000_000),
    "drip_fast": Mode(each(lambda p: Reply(body=text_reply(p, "drip").body, drip=0.2)), times=1_000_000),
    "drip_headers": Mode(
        each(lambda p: Reply(body=text_reply(p, "drip").body, drip=0.2, drip_headers=True)), times=1_000_000
    ),
    "gzip_encoded": Mode(each(lambda p: encoded(unknown_call(p), "gzip", lambda raw: gzip.compress(raw)))),
    "deflate_encoded": Mode(each(lambda p: encoded(unknown_call(p), "deflate", zlib.compress))),
    "gzip_bomb": Mode(
        each(lambda p: Reply(body=gzip_bomb(2048), headers={"content-encoding": "gzip"})), times=1_000_000
    ),
}


class QuietServer(ThreadingHTTPServer):
    """A threaded HTTP server that does not print a client hanging up mid-request (a call cut off at its deadline
    or its size cap) as an error."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class HostileServer:
    """The server, on 127.0.0.1 and a free port, in a daemon thread; ``requests`` keeps what each session sent.

    Parameters:
        submit_arguments: the ``submit`` arguments of every well-formed reply (the trial ends there).
    """

    def __init__(self, submit_arguments: dict | None = None) -> None:
        self.submit_arguments = dict(submit_arguments or {})
        self.requests: dict[str, list[tuple[str, str, bytes, float]]] = {}  # session -> [(protocol, mode, body, time)]
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not started"
        return self._httpd.server_address[1]

    def base_url(self, protocol: str, mode: str, session: str) -> str:
        """The ``base_url`` of a backend for ``mode`` (OpenAI: with ``/v1``; Anthropic: without it)."""
        assert mode in MODES, mode
        root = f"http://127.0.0.1:{self.port}/{session}/{mode}"
        return f"{root}/v1" if protocol == OPENAI else root

    def start(self) -> "HostileServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self.answer(Reply(200, {"object": "list", "data": [{"id": "hostile", "type": "model"}]}))

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                parts = self.path.strip("/").split("/")
                if len(parts) < 4 or parts[1] not in MODES:
                    return self.answer(Reply(404, {"error": {"message": f"no mode in {self.path}"}}))
                session, mode = parts[0], parts[1]
                protocol = ANTHROPIC if self.path.endswith("/messages") else OPENAI
                with server._lock:
                    seen = server.requests.setdefault(session, [])
                    seen.append((protocol, mode, body, time.monotonic()))
                    n = len(seen) - 1
                if n < MODES[mode].times:
                    try:
                        request = json.loads(body)
                    except ValueError:
                        request = {}
                    reply = MODES[mode].reply(protocol, request)
                else:
                    reply = submit_reply(protocol, server.submit_arguments)
                self.answer(reply)

            def answer(self, reply: Reply) -> None:
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    return
                data = reply.payload()
                self.send_response(reply.status)
                headers = {"content-type": "application/json", **{k.lower(): v for k, v in reply.headers.items()}}
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(data)))
                if reply.cut is not None or reply.drip:
                    self.send_header("connection", "close")
                if reply.drip_headers:
                    head, self._headers_buffer = b"".join(self._headers_buffer) + b"\r\n", []
                    self.dribble(head, reply.drip)
                else:
                    self.end_headers()
                try:
                    if reply.drip:
                        self.dribble(data, reply.drip)
                    else:
                        self.wfile.write(data if reply.cut is None else data[: reply.cut])
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client stopped reading (a cut-off call)
                    self.close_connection = True
                if reply.cut is not None or reply.drip:
                    self.close_connection = True

            def dribble(self, data: bytes, seconds: float) -> None:
                """Send ``data`` one byte every ``seconds`` (until the client hangs up)."""
                try:
                    for i in range(len(data)):
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                        time.sleep(seconds)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

        self._httpd = QuietServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="hostile-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "HostileServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def count(self, session: str) -> int:
        """How many requests ``session`` has sent."""
        with self._lock:
            return len(self.requests.get(session, []))

    def gaps(self, session: str) -> list[float]:
        """Seconds between the consecutive requests of ``session`` (a retry's wait, plus the round trip)."""
        with self._lock:
            times = [t for *_, t in self.requests.get(session, [])]
        return [b - a for a, b in zip(times, times[1:], strict=False)]


if __name__ == "__main__":  # python tests/hostile_server.py: serve until Ctrl-C, for trying modes by hand
    with HostileServer({"first_total": 0}) as hostile:
        print(f"hostile server on 127.0.0.1:{hostile.port}; e.g. {hostile.base_url(OPENAI, 'nan_args', 'manual')}")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass

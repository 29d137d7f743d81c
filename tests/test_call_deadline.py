"""Issue 36: every HTTP model call ends by its wall-clock deadline (``model.timeout``: connect, headers and body),
its decoded body is capped (``model.max_response_bytes``), and every ``model.*`` / ``model.retry.*`` value is
checked before the first trial (harness/models/bounded_http.py, harness/models/settings.py).

The servers are tests/hostile_server.py's modes on 127.0.0.1: ``drip_fast`` (the body one byte per 0.2 s),
``drip_headers`` (the status line and headers too), ``drip`` (one byte a second: the audit's server),
``gzip_bomb`` (a 2 MB gzip body of 2 GiB). Both backends are built from their presets as the CLI builds them.
"""

from __future__ import annotations

import time
import tracemalloc
import zlib

import pytest
from omegaconf import OmegaConf

from harness.errors import ConfigError
from harness.models.base import ModelError
from harness.models.bounded_http import PIECE, Decoder
from harness.models.response_cache import request_settings
from harness.models.settings import MODEL_SETTINGS, RETRY_SETTINGS, check_model_settings
from harness.runner import build_model
from tests.hostile_server import ANTHROPIC, OPENAI, HostileServer
from tests.test_cli import ROOT, harness

pytest.importorskip("anthropic")

PRESETS = {OPENAI: "llamacpp", ANTHROPIC: "llamacpp_messages"}
HTTP_PRESETS = ["anthropic", "deepseek", "llamacpp", "llamacpp_messages", "local", "local_messages", "openai", "vllm"]
MESSAGES = [{"role": "user", "content": "hi"}]
SLACK = 0.5  # seconds a call may run past its deadline (the loop's scheduling, closing the connection)


def preset(name: str) -> dict:
    """A model preset's spec (configs/model/NAME.yaml) as a plain dict."""
    spec = OmegaConf.to_container(OmegaConf.load(ROOT / "configs" / "model" / f"{name}.yaml"))
    assert isinstance(spec, dict)
    return spec


def model_for(server: HostileServer, backend: str, mode: str, session: str, **settings: object):
    """A backend from its preset against ``mode``, its client made now (so a timing holds the call alone)."""
    spec = preset(PRESETS[backend])
    retry = {"attempts": 1, "initial_wait": 0, "max_wait": 0, "jitter": 0, "max_retry_after": 0}
    spec.update(base_url=server.base_url(backend, mode, f"{session}-{backend}"), retry=retry)
    spec.update(settings)
    model = build_model(spec)
    assert model.client is not None
    return model


def timed_failure(model) -> tuple[float, str]:
    """Seconds the call took and the ``ModelError`` it ended with."""
    started = time.monotonic()
    with pytest.raises(ModelError) as failure:
        model.complete(MESSAGES, [])
    return time.monotonic() - started, str(failure.value)


@pytest.fixture(scope="module")
def server():
    with HostileServer({"first_total": 0}) as hostile:
        yield hostile


@pytest.mark.parametrize("backend", list(PRESETS))
@pytest.mark.parametrize("mode", ["drip_fast", "drip_headers"])
def test_a_server_that_never_goes_quiet_is_cut_off_at_the_deadline(server, backend, mode):
    model = model_for(server, backend, mode, f"cut-{mode}", timeout=0.6)
    took, error = timed_failure(model)
    assert 0.6 <= took < 0.6 + SLACK, took  # the body (or the headers) keep coming: only the deadline ends it
    assert "APITimeoutError" in error and "no complete reply within model.timeout=0.6s" in error, error


@pytest.mark.parametrize("backend", list(PRESETS))
def test_a_timeout_is_retried_each_attempt_with_its_own_deadline(server, backend):
    retry = {"attempts": 2, "initial_wait": 0, "max_wait": 0, "jitter": 0, "max_retry_after": 0}
    model = model_for(server, backend, "drip_fast", "retried", timeout=0.4, retry=retry)
    took, error = timed_failure(model)
    assert server.count(f"retried-{backend}") == 2
    assert 0.8 <= took < 0.8 + 2 * SLACK, took
    assert error.startswith("gave up after 2 attempts: APITimeoutError"), error


@pytest.mark.parametrize("backend", list(PRESETS))
def test_a_gzip_bomb_is_a_model_error_in_bounded_memory(server, backend):
    warm = model_for(server, backend, "ok", "warm")  # the SDK's lazy imports, before memory is traced
    warm.complete(MESSAGES, [])
    cap = 1 << 20
    model = model_for(server, backend, "gzip_bomb", "bomb", max_response_bytes=cap)
    tracemalloc.start()
    try:
        _, error = timed_failure(model)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (
        error
        == "the response's body is larger than model.max_response_bytes=1,048,576 (decoded); the rest was not read"
    )
    assert peak < 8 * cap, f"{peak:,} bytes at the peak"  # 2 GiB decoded without the cap
    assert server.count(f"bomb-{backend}") == 1, "a body over the cap is not retried"


def test_a_gzip_body_decodes_a_bounded_piece_at_a_time():
    body = zlib.compress(bytes(4 * PIECE))
    pieces = list(Decoder("deflate", ValueError).feed(body))
    assert b"".join(pieces) == bytes(4 * PIECE) and max(map(len, pieces)) <= PIECE
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert b"".join(Decoder("deflate", ValueError).feed(raw.compress(b"x" * 10) + raw.flush())) == b"x" * 10
    with pytest.raises(ValueError, match="does not decode"):
        list(Decoder("gzip", ValueError).feed(b"not gzip"))
    with pytest.raises(ModelError, match="content-encoding 'br' is not one the request accepts"):
        Decoder("br", ValueError)


@pytest.mark.slow
@pytest.mark.parametrize("backend", list(PRESETS))
def test_the_audits_server_at_timeout_5_ends_in_5_to_6_seconds(server, backend):
    model = model_for(server, backend, "drip", "audit", timeout=5)
    took, error = timed_failure(model)
    assert 5 <= took < 6, took
    assert "no complete reply within model.timeout=5s" in error, error


# -- model.* and model.retry.* checked before the first trial


BAD = [
    ("timeout", -1, "model.timeout=-1 must be more than 0 (seconds: the wall-clock deadline of one call)"),
    ("timeout", 0, "model.timeout=0 must be more than 0"),
    ("timeout", "abc", "model.timeout='abc' must be a number (seconds"),
    ("timeout", float("inf"), "model.timeout=inf must be a finite number"),
    ("seed", "abc", "model.seed='abc' must be an integer or null (the sampling seed"),
    ("seed", 1.5, "model.seed=1.5 must be an integer"),
    ("max_response_bytes", 0, "model.max_response_bytes=0 must be at least 1 (bytes: the cap on a response's"),
    ("context_window", True, "model.context_window=True must be an integer"),
    ("temperature", -0.5, "model.temperature=-0.5 must be at least 0"),
    ("check_endpoint", "yes", "model.check_endpoint='yes' must be true or false"),
]
BAD_RETRY = [
    ("attempts", "abc", "model.retry.attempts='abc' must be an integer (attempts of one call"),
    ("attempts", 0, "model.retry.attempts=0 must be at least 1"),
    ("max_wait", -1, "model.retry.max_wait=-1 must be at least 0"),
]


@pytest.mark.parametrize("key,value,message", BAD)
def test_a_bad_model_value_is_one_line_naming_key_value_and_rule(key, value, message):
    with pytest.raises(ConfigError) as refused:
        build_model({**preset("llamacpp"), key: value})
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value), str(refused.value)


@pytest.mark.parametrize("key,value,message", BAD_RETRY)
def test_a_bad_retry_value_is_one_line_naming_key_value_and_rule(key, value, message):
    spec = preset("llamacpp")
    with pytest.raises(ConfigError) as refused:
        build_model({**spec, "retry": {**spec["retry"], key: value}})
    assert str(refused.value).startswith(message), str(refused.value)


def test_a_summarizers_bad_value_is_named_as_its_own():
    with pytest.raises(ConfigError, match=r"^summarizer\.timeout=-1 must be more than 0"):
        build_model({**preset("openai"), "timeout": -1}, "summarizer")


@pytest.mark.parametrize("name", [*HTTP_PRESETS, "relay", "scripted"])
def test_every_preset_passes_its_checks(name):
    spec = preset(name)
    check_model_settings(spec)
    checked = set(spec) & set(MODEL_SETTINGS)
    assert name not in HTTP_PRESETS or {"timeout", "max_response_bytes", "context_window"} <= checked, checked
    assert set(spec.get("retry") or {}) <= set(RETRY_SETTINGS)


@pytest.mark.parametrize("name", HTTP_PRESETS)
def test_every_http_preset_caps_the_body_at_16_mib_outside_the_response_cache_key(name):
    spec = preset(name)
    assert spec["max_response_bytes"] == 16 * 1024 * 1024
    assert request_settings(spec) == request_settings({**spec, "max_response_bytes": 1})  # how, not what, it answers


@pytest.mark.parametrize("dry_run", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_a_bad_value_exits_2_before_the_first_trial(tmp_path, dry_run):
    result = harness(
        "run",
        *(["--dry-run"] if dry_run else []),
        "model=llamacpp",
        "model.retry.attempts=abc",
        "task=failure_memory",
        "suite=smoke",
        "progress=false",
        "hydra.run.dir=run",
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.strip().splitlines() == [
        "ctxbench: error: model.retry.attempts='abc' must be an integer (attempts of one call, the first included)"
    ], result.stderr
    assert not (tmp_path / "run" / "trials.jsonl").exists()

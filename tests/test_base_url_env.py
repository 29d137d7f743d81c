"""``OPENAI_BASE_URL`` and ``ANTHROPIC_BASE_URL`` are honoured as the SDKs honour them; ``model.base_url`` wins.

The ``openai`` and ``anthropic`` presets leave ``base_url`` unset, so the variable (else the provider's
default) chooses the endpoint. A run through the command line against a server on 127.0.0.1 shows the
variable reaching the request, and an explicit ``model.base_url`` overriding it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness.models.anthropic_backend import AnthropicModel
from harness.models.anthropic_backend import DEFAULT_BASE_URL as ANTHROPIC_DEFAULT
from harness.models.openai_backend import DEFAULT_BASE_URL as OPENAI_DEFAULT
from harness.models.openai_backend import OpenAIModel
from tests.hostile_server import ANTHROPIC, OPENAI, HostileServer
from tests.test_cli import ROOT

BACKENDS = {
    OPENAI: (OpenAIModel, "OPENAI_BASE_URL", OPENAI_DEFAULT),
    ANTHROPIC: (AnthropicModel, "ANTHROPIC_BASE_URL", ANTHROPIC_DEFAULT),
}
SUBMIT = {"first_total": 0, "escalated_ticket": "T-1", "second_period": "2025-Q1", "second_total": 0}
RUN = [
    "suite=smoke",
    "task=failure_memory",
    "trials=1",
    "max_steps=3",
    "progress=false",
    "plots=false",
    "hydra.run.dir=run",
]


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_the_variable_chooses_the_endpoint_when_base_url_is_unset(backend, monkeypatch):
    model_class, variable, default = BACKENDS[backend]
    monkeypatch.delenv(variable, raising=False)
    assert model_class(api_key="k").base_url == default
    monkeypatch.setenv(variable, "http://127.0.0.1:9999/proxy/")
    assert model_class(api_key="k").base_url == "http://127.0.0.1:9999/proxy"
    assert model_class(base_url="http://127.0.0.1:1/explicit", api_key="k").base_url == "http://127.0.0.1:1/explicit"


def run_cli(tmp_path, backend: str, env: dict, *extra: str) -> subprocess.CompletedProcess:
    """``python -m harness run model=<backend>`` (the real preset) with ``env`` on top of a keyed environment."""
    keys = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}
    full = {**os.environ, **keys, **env, "PYTHONPATH": str(ROOT)}
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        if name not in env:
            full.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "harness", "run", f"model={backend}", *RUN, *extra],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=full,
    )


@pytest.mark.parametrize(
    "backend",
    [OPENAI, pytest.param(ANTHROPIC, marks=pytest.mark.slow)],  # the Anthropic SDK's run (6 s): slow tier
)
def test_a_run_reaches_the_server_the_variable_names_and_an_explicit_base_url_wins(backend, tmp_path):
    pytest.importorskip("anthropic")
    _, variable, _ = BACKENDS[backend]
    with HostileServer(submit_arguments=SUBMIT) as server:
        via_env = server.base_url(backend, "ok", "from-env")
        (tmp_path / "env").mkdir()
        result = run_cli(tmp_path / "env", backend, {variable: via_env})
        assert result.returncode == 0, result.stderr[-2000:]
        assert server.requests.get("from-env"), f"the run did not reach the server named by {variable}: {result.stdout}"
        before = len(server.requests["from-env"])
        explicit = server.base_url(backend, "ok", "explicit")
        (tmp_path / "explicit").mkdir()
        result = run_cli(tmp_path / "explicit", backend, {variable: via_env}, f"model.base_url={explicit}")
        assert result.returncode == 0, result.stderr[-2000:]
        assert server.requests.get("explicit"), "model.base_url did not take precedence over " + variable
        assert len(server.requests["from-env"]) == before, "the second run went to the variable's server"

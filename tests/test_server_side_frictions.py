"""Server-side strategies on a Messages backend: the refusal names the preset, and a server that applies no
edit gets one warning line (a run forced to send context management to llama-server otherwise says nothing)."""

from __future__ import annotations

import pytest

from tests.hostile_server import ANTHROPIC, HostileServer
from tests.test_cli import harness

SUBMIT = {"first_total": 0, "escalated_ticket": "T-1", "second_period": "2025-Q1", "second_total": 0}
SMALL = ["suite=smoke", "task=failure_memory", "trials=2", "max_steps=3", "progress=false", "plots=false"]


def test_the_refusal_names_the_preset_the_user_chose(tmp_path):
    result = harness(
        "run", "model=llamacpp_messages", "strategy=server_clear_tool_uses", *SMALL, "--dry-run", cwd=tmp_path
    )
    assert result.returncode == 2, result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "model llamacpp_messages does not" in lines[0], result.stderr


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_server_that_applies_no_edit_is_warned_about_once(tmp_path):
    pytest.importorskip("anthropic")
    with HostileServer(submit_arguments=SUBMIT) as server:
        url = server.base_url(ANTHROPIC, "ok", "no-edits")
        result = harness(
            "run",
            "model=llamacpp_messages",
            "strategy=server_clear_tool_uses",
            "model.server_context_management=true",
            f"model.base_url={url}",
            *SMALL,
            "hydra.run.dir=run",
            cwd=tmp_path,
        )
    assert result.returncode == 0, result.stderr[-2000:]
    warnings = [line for line in result.stdout.splitlines() if "reported no server context edit" in line]
    assert len(warnings) == 1 and "in 2 trials" in warnings[0], result.stdout

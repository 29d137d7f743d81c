"""The command line, end to end in subprocesses (offline, on the smoke suite)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.records import read_jsonl

VOLATILE = {"wall_s", "started_at", "latency_s", "run"}
ROOT = Path(__file__).resolve().parent.parent


def harness(*args, cwd, pythonpath=()):
    """Run ``python -m harness`` from this checkout (not whatever is installed), ``pythonpath`` after it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *map(str, pythonpath)])}
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


@pytest.mark.parametrize("args,needle", [
    (["strategy=bogus"], "unknown strategy 'bogus' (valid: "),
    (["model=gpt9"], "unknown model 'gpt9' (valid: "),
    (["task=nope"], "unknown task 'nope' (valid: "),
    (["suite=huge"], "unknown suite 'huge' (valid: "),
    (["budget=lots"], "invalid budget 'lots'"),
    (["-m", "strategy=none,bogus"], "unknown strategy 'bogus'"),
    (["budget=8k,0"], "invalid budget '0'"),
])
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path, args, needle):
    result = harness("run", *args, cwd=tmp_path)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], result.stderr
    assert list(tmp_path.iterdir()) == []


def test_knob_out_of_range_is_one_line_exit_2_nothing_written(tmp_path):
    result = harness("run", "task=invoice_audit", "task.pages=1", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "pages=1 is out of range" in result.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "results").exists()


def test_list_shows_groups(tmp_path):
    result = harness("list", cwd=tmp_path)
    assert result.returncode == 0
    for name in ("headtail", "sliding_window", "none", "invoice_audit", "smoke", "default", "scripted"):
        assert name in result.stdout


def records(run_dir: Path, name: str) -> list[dict]:
    rows = read_jsonl(run_dir / name)
    return sorted(({k: v for k, v in r.items() if k not in VOLATILE} for r in rows),
                  key=lambda r: json.dumps(r, sort_keys=True))


def test_run_writes_records_deterministically_and_resumes(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    common = ["suite=smoke", "strategy=headtail", "budget=2k", "progress=false"]
    first = harness("run", *common, f"hydra.run.dir={a}", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "reference agent" in first.stdout and "not an LLM" in first.stdout
    for name in ("trials.jsonl", "steps.jsonl", "summary.csv", "plots/token_curve.png", ".hydra/config.yaml"):
        assert (a / name).exists(), name
    trials = read_jsonl(a / "trials.jsonl")
    smoke = (ROOT / "configs" / "suite" / "smoke.yaml").read_text()
    expected = 2 * smoke.count("- /task@families.")  # trials=2 per family of the smoke suite (one instance each)
    assert len(trials) == expected and all(len(list((a / "transcripts").glob(f"{t['trial_id']}.jsonl"))) == 1 for t in trials)
    row = trials[0]
    for field in ("strategy", "strategy_params", "budget", "family", "instance_id", "seed", "trial", "model", "outcome",
                  "success", "score", "steps", "input_tokens", "cached_tokens", "cached_source", "output_tokens",
                  "summarizer_input_tokens", "cost", "reads", "rereads", "reread_rate", "peak_context", "compactions",
                  "wall_s"):
        assert field in row, field
    assert row["budget"] == 2000 and row["strategy"] == "headtail" and row["cached_source"] == "simulated"

    assert harness("run", *common, f"hydra.run.dir={b}", cwd=tmp_path).returncode == 0
    assert records(a, "trials.jsonl") == records(b, "trials.jsonl")
    assert records(a, "steps.jsonl") == records(b, "steps.jsonl")

    # resume: a crash lost the last trial row (and left its steps); the rerun redoes only that trial
    lines = (a / "trials.jsonl").read_text().splitlines(keepends=True)
    (a / "trials.jsonl").write_text("".join(lines[:-1]) + lines[-1][:20])
    again = harness("run", *common, f"hydra.run.dir={a}", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"trials to run: 1 (already recorded: {expected - 1})" in again.stdout
    assert records(a, "trials.jsonl") == records(b, "trials.jsonl")
    assert records(a, "steps.jsonl") == records(b, "steps.jsonl")
    rerun = harness("run", *common, f"hydra.run.dir={a}", cwd=tmp_path)
    assert f"trials to run: 0 (already recorded: {expected})" in rerun.stdout

    other = harness("run", "suite=smoke", "strategy=none", "progress=false", f"hydra.run.dir={a}", cwd=tmp_path)
    assert other.returncode == 2 and "different config" in other.stderr

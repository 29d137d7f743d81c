"""The command line, end to end in subprocesses (offline, on the smoke suite)."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.analysis import wilson
from harness.records import read_jsonl, transcript_path

VOLATILE = {"wall_s", "started_at", "latency_s", "run"}
ROOT = Path(__file__).resolve().parent.parent
# families of the smoke suite (one instance each): a smoke run has this many trials per trial number
SMOKE_FAMILIES = len(re.findall(r"^  - /task@families\.", (ROOT / "configs/suite/smoke.yaml").read_text(), re.M))


def harness(*args, cwd, pythonpath=()):
    """Run ``python -m harness`` from this checkout (not whatever is installed), ``pythonpath`` after it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *map(str, pythonpath)])}
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env
    )


@pytest.mark.parametrize(
    "args,needle",
    [
        (["strategy=bogus"], "unknown strategy 'bogus' (valid: "),
        (["model=gpt9"], "unknown model 'gpt9' (valid: "),
        (["task=nope"], "unknown task 'nope' (valid: "),
        (["suite=huge"], "unknown suite 'huge' (valid: "),
        (["budget=lots"], "invalid budget 'lots'"),
        (["-m", "strategy=none,bogus"], "unknown strategy 'bogus'"),
        (["budget=8k,0"], "invalid budget '0'"),
        (["strategy.nonexistent=3"], "strategy none has no parameter 'nonexistent' (its parameters: none)"),
        (
            ["strategy=headtail", "strategy.keep=3"],
            "strategy headtail has no parameter 'keep' (its parameters: min_recent_rounds)",
        ),
        (["hooks.nope=1"], "no config key 'hooks.nope' (keys under 'hooks': plan, completion_check, max_continues)"),
        (["trials=[1,2"], "bad override: "),
        (
            ["strategy=headtail", "strategy.min_recent_rounds=foo"],
            "strategy.min_recent_rounds=foo: headtail's parameter min_recent_rounds takes an integer (default 1)",
        ),
    ],
)
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
    return sorted(
        ({k: v for k, v in r.items() if k not in VOLATILE} for r in rows), key=lambda r: json.dumps(r, sort_keys=True)
    )


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_run_writes_records_deterministically_and_resumes(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    common = ["suite=smoke", "strategy=headtail", "budget=2k", "trials=1", "progress=false"]
    first = harness("run", *common, f"hydra.run.dir={a}", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "reference agent" in first.stdout and "not an LLM" in first.stdout
    for name in ("trials.jsonl", "steps.jsonl", "summary.csv", "plots/token_curve.png", ".hydra/config.yaml"):
        assert (a / name).exists(), name
    trials = read_jsonl(a / "trials.jsonl")
    smoke = (ROOT / "configs" / "suite" / "smoke.yaml").read_text()
    expected = smoke.count("- /task@families.")  # one trial per family of the smoke suite (one instance each)
    assert len(trials) == expected and all(transcript_path(a, t["trial_id"]) is not None for t in trials)
    row = trials[0]
    for field in (
        "strategy",
        "strategy_params",
        "budget",
        "family",
        "instance_id",
        "seed",
        "trial",
        "model",
        "outcome",
        "success",
        "score",
        "steps",
        "input_tokens",
        "cached_tokens",
        "cached_source",
        "output_tokens",
        "summarizer_input_tokens",
        "cost",
        "reads",
        "rereads",
        "reread_rate",
        "peak_context",
        "compactions",
        "wall_s",
    ):
        assert field in row, field
    assert row["budget"] == 2000 and row["strategy"] == "headtail" and row["cached_source"] == "simulated"

    assert harness("run", *common, "plots=false", f"hydra.run.dir={b}", cwd=tmp_path).returncode == 0
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


SMOKE1 = [
    "suite=smoke",
    "strategy=headtail",
    "trials=1",
    "progress=false",
    "plots=false",
]  # plots: test_run_writes_records_deterministically_and_resumes


def run_folders(tmp_path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "results" / "runs").iterdir())


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_folder_is_named_by_the_config_and_any_spelling_resumes(tmp_path):
    one = [*SMOKE1, "task=call_budget", "task.merchants=4", "task.noise=2"]  # one small trial: folders are tested
    first = harness("run", *one, "budget=25k", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (folder,) = run_folders(tmp_path)
    assert re.fullmatch(r"headtail-25k-call_budget-[0-9a-f]{10}", folder)
    for spelling in (["budget=25K"], ["budget=25000"], []):  # [] = the default budget, 25k
        again = harness("run", *one, *spelling, cwd=tmp_path)
        assert "trials to run: 0 (already recorded: 1)" in again.stdout, (spelling, again.stdout)
    assert run_folders(tmp_path) == [folder]
    other = harness("run", *one, "budget=8k", cwd=tmp_path)
    assert other.returncode == 0 and len(run_folders(tmp_path)) == 2

    fresh = harness("run", "--fresh", *one, cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    assert "--fresh: deleted the earlier records of this config (1 trials" in fresh.stdout
    assert "trials to run: 1 (already recorded: 0)" in fresh.stdout
    explicit = harness("run", *one, f"hydra.run.dir={tmp_path / 'mine'}", cwd=tmp_path)
    assert explicit.returncode == 0 and (tmp_path / "mine" / "trials.jsonl").exists()


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_end_of_run_table_log_and_reasons(tmp_path):
    result = harness("run", *SMOKE1, "faults=down", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    head = next(i for i, line in enumerate(out) if line.startswith("config "))
    assert out[head].split() == [
        "config",
        "submitted",
        "step_limit",
        "overflow",
        "model_err",
        "strat_err",
        "success",
        "[95%",
        "CI]",
        "input",
        "tok",
        "cost",
        "$",
    ]
    n = SMOKE_FAMILIES
    assert out[head + 1].split()[:6] == ["headtail@25k", "0", "0", "0", str(n), "0"]
    assert f"0/{n} [0.00, {wilson(0, n)[1]:.2f}]" in out[head + 1]
    assert all(len(line) <= 120 for line in out[head : head + 2])
    reasons = [line for line in out if line.startswith("  model_error x")]
    assert reasons == [f"  model_error x{n}: gave up after 3 attempts: InjectedFault: injected server_error"]

    (run_dir,) = (tmp_path / "results" / "runs").iterdir()
    log = (run_dir / "ctxbench.log").read_text()
    assert "config:" in log and "_target_: strategies.headtail.HeadTail" in log
    assert log.count(": model_error success=False") == n and "error: gave up after 3 attempts" in log
    assert "model_err" in log  # the table too


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_progress_without_a_terminal_is_lines(tmp_path):
    result = harness("run", "suite=smoke", "trials=1", "plots=false", cwd=tmp_path)  # progress=true, stderr is a pipe
    assert result.returncode == 0, result.stderr
    assert "\r" not in result.stderr
    n = SMOKE_FAMILIES
    # the reference agent is priced by default (pricing=auto: a representative model, issue 35): never $0.0000
    assert re.search(
        rf"^progress: {n}/{n} trials; success \d+/{n}, input [\d,]+ tok, \$(?!0\.0000$)\d+\.\d{{4}}$",
        result.stderr,
        re.M,
    )


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_ctrl_c_is_one_line_exit_130_and_resumes(tmp_path):
    args = [
        sys.executable,
        "-m",
        "harness",
        "run",
        *SMOKE1,
        "latency_s=0.6",
    ]  # slow enough that 6 trials are left when the signal comes, even under load
    proc = subprocess.Popen(
        args,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        rows = list((tmp_path / "results" / "runs").glob("*/trials.jsonl"))
        if rows and rows[0].read_text().count("\n") >= 1:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert re.fullmatch(r"interrupted; [1-6] trials recorded; rerun the same command to resume\n", err), err
    again = harness("run", *SMOKE1, cwd=tmp_path)
    assert again.returncode == 0 and "already recorded: 0)" not in again.stdout


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_report_prints_a_table_per_configuration_and_refuses_a_file_as_out(tmp_path):
    fixture = ROOT / "results" / "fixtures" / "smoke-1500"
    result = harness(
        "report", str(fixture / "none"), str(fixture / "headtail"), "--out", str(tmp_path / "out"), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("config ") and all(len(line) <= 120 for line in lines if not line.startswith("wrote"))
    (tmp_path / "afile").write_text("x")
    bad = harness("report", str(fixture / "none"), "--out", str(tmp_path / "afile"), cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "is a file" in bad.stderr


# ---------------------------------------------------------------- --dry-run and max_cost (issue 14 §6)


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_dry_run_writes_nothing_and_estimates(tmp_path):
    result = harness("run", "suite=smoke", "trials=2", "model=openai", "pricing=openai-like", "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"{2 * SMOKE_FAMILIES} trials" in out and "pricing: openai-like" in out
    assert re.search(r"estimate: input [\d,]+ tok \(cached [\d,]+\), output [\d,]+ tok, cost \$0\.\d{4}", out)
    assert "reference agent" in out and "not one" in out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_sweep_dry_run_lists_its_jobs(tmp_path):
    result = harness("run", "-m", "suite=smoke", "strategy=none,headtail", "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    jobs = [line for line in result.stdout.splitlines() if line.startswith("job ")]
    assert [j.split(" -> ")[0] for j in jobs] == ["job 1/2: strategy=none", "job 2/2: strategy=headtail"]
    assert "/none-25k-smoke-" in jobs[0] and "/headtail-25k-smoke-" in jobs[1]
    assert sum("estimate:" in line for line in result.stdout.splitlines()) == 3  # two jobs and the total
    assert "the run is free" in result.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_max_cost_stops_early_and_a_higher_one_resumes(tmp_path):
    args = (
        "run",
        "suite=smoke",
        "trials=2",
        "pricing=openai-like",
        "hydra.run.dir=out",
        "progress=false",
        "plots=false",
    )
    first = harness(*args, "max_cost=0.03", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    stop = [line for line in first.stdout.splitlines() if line.startswith("stopped: max_cost $0.03 reached after")]
    assert len(stop) == 1 and "rerun with a higher max_cost to resume" in stop[0]
    n = len(records(tmp_path / "out", "trials.jsonl"))
    assert 0 < n < 2 * SMOKE_FAMILIES
    same = harness(*args, "max_cost=0.03", cwd=tmp_path)
    assert same.returncode == 0 and "stopped: max_cost" in same.stdout
    assert len(records(tmp_path / "out", "trials.jsonl")) == n
    more = harness(*args, "max_cost=100", cwd=tmp_path)
    assert more.returncode == 0, more.stderr
    assert "stopped" not in more.stdout and f"already recorded: {n}" in more.stdout
    assert len(records(tmp_path / "out", "trials.jsonl")) == 2 * SMOKE_FAMILIES

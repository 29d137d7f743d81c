"""Preflight: a real backend that cannot work stops the run before anything is written."""

import os
import socket

import pytest

from tests.test_cli import harness


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_line_exit_2_nothing_written(result, tmp_path, needle):
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_missing_api_key_variable(tmp_path):
    assert "CTXBENCH_TEST_NO_SUCH_KEY" not in os.environ
    result = harness("run", "model=openai", "model.api_key_env=CTXBENCH_TEST_NO_SUCH_KEY", "suite=smoke", cwd=tmp_path)
    one_line_exit_2_nothing_written(result, tmp_path, "CTXBENCH_TEST_NO_SUCH_KEY")


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@pytest.mark.parametrize("preset", ["llamacpp", "vllm"])
def test_unreachable_base_url(tmp_path, preset):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = harness("run", f"model={preset}", f"model.base_url={url}", "suite=smoke", cwd=tmp_path)
    one_line_exit_2_nothing_written(result, tmp_path, f"cannot reach {url}")


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_unknown_pricing_and_cache_profile(tmp_path):
    result = harness("run", "pricing=cheap", cwd=tmp_path)
    one_line_exit_2_nothing_written(result, tmp_path, "unknown pricing 'cheap' (valid: ")
    result = harness("run", "cache_profile=bogus", "suite=smoke", cwd=tmp_path)
    one_line_exit_2_nothing_written(result, tmp_path, "unknown cache_profile 'bogus'")


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_auto_pricing_takes_no_prices(tmp_path):
    result = harness("run", "+pricing.input=3", "suite=smoke", cwd=tmp_path)
    one_line_exit_2_nothing_written(result, tmp_path, "bad pricing profile: pricing=auto takes no prices")


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_missing_key_stops_a_database_priced_run_in_one_line(tmp_path):
    result = harness(
        "run",
        "model=openai",
        "model.api_key_env=CTXBENCH_TEST_NO_SUCH_KEY",
        "pricing=auto",
        "suite=smoke",
        cwd=tmp_path,
    )
    one_line_exit_2_nothing_written(result, tmp_path, "CTXBENCH_TEST_NO_SUCH_KEY")

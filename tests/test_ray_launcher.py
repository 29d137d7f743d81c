"""Sweeps through hydra-ray-launcher (the ``ray`` extra; docs/ray.md), every Ray server on 127.0.0.1 only.

1. ``hydra/launcher=ray_cluster`` against a Ray head that this test starts on 127.0.0.1: the records
   equal those of the joblib launcher for the same sweep (benchmarks/compare_records.py), the two jobs
   run in two Ray workers side by side (``remote.num_cpus: 1``), and a rerun resumes: it finds every
   trial recorded and runs none. The head is stopped by its own process id (``ray stop`` would stop
   every Ray on the machine).
2. ``hydra/launcher=ray_local`` starts a private Ray for the sweep and stops it: the same records,
   and no process of the sweep listens on anything but loopback while it runs.
3. ``ray_local`` refuses to start without ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (without it Ray
   replaces 127.0.0.1 with the machine's network address).

Skipped when ray or hydra-ray-launcher is not installed (``pip install -e ".[ray]"``).
"""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None or importlib.util.find_spec("hydra_plugins.hydra_ray_launcher") is None,
    reason='ray / hydra-ray-launcher not installed (pip install -e ".[ray]")',
)

ROOT = Path(__file__).resolve().parent.parent
SWEEP = ["-m", "strategy=none,headtail", "budget=8k", "suite=smoke", "trials=1", "progress=false", "plots=false"]
JOBS = 2
LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray keeps 127.0.0.1 instead of the machine's address
HEAD_READY = "This command will now block forever"  # `ray start --block` prints it once every server is up
RESUMED = re.compile(r"trials to run: 0 \(already recorded: [1-9]\d*\)")


def ray_env(token: str) -> dict[str, str]:
    """The environment of every Ray process here: loopback only, token auth with this test's own token
    (nothing written to ~/.ray), no usage stats; the checkout first on the path."""
    return {
        **os.environ,
        LOOPBACK_SWITCH: "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": token,
        "RAY_USAGE_STATS_ENABLED": "0",
        "PYTHONPATH": str(ROOT),
    }


def harness_argv(*args: str) -> list[str]:
    """``python -m harness`` of this venv with ``args``."""
    return [sys.executable, "-m", "harness", *args]


def run_harness(*args: str, cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the harness CLI to its end; stdout and stderr captured."""
    return subprocess.run(harness_argv(*args), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listening_off_loopback(root_pid: int) -> list[str]:
    """``pid name address:port`` of every listening TCP or bound UDP socket of ``root_pid`` and its
    descendants whose address is not loopback."""
    psutil = pytest.importorskip("psutil")
    try:
        root = psutil.Process(root_pid)
        pids = {root.pid, *(child.pid for child in root.children(recursive=True))}
    except psutil.NoSuchProcess:
        return []
    found = []
    for conn in psutil.net_connections(kind="inet"):
        if conn.pid not in pids or not conn.laddr or (conn.type == socket.SOCK_STREAM and conn.status != "LISTEN"):
            continue
        address = ipaddress.ip_address(conn.laddr.ip)
        address = getattr(address, "ipv4_mapped", None) or address  # gRPC's ::ffff:127.0.0.1 is loopback too
        if not address.is_loopback:
            found.append(f"{conn.pid} {psutil.Process(conn.pid).name()} {conn.laddr.ip}:{conn.laddr.port}")
    return found


def wait_for_line(log: Path, needle: str, proc: subprocess.Popen, timeout: float) -> None:
    """Wait until ``needle`` is in ``log``; fail with the log's tail if ``proc`` ends or time runs out."""
    deadline = time.monotonic() + timeout
    while needle not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"ray head not up (exit {proc.poll()}):\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.5)


def stop_process_group(proc: subprocess.Popen, grace_s: float = 60) -> None:
    """SIGTERM to ``proc`` (``ray start --block`` then stops every process it started), then SIGKILL to
    whatever is left of the process group this test created for it."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def port_is_closed(port: int) -> bool:
    """Whether nothing accepts connections on 127.0.0.1:``port``."""
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def compare_records(old: Path, new: Path) -> subprocess.CompletedProcess:
    """benchmarks/compare_records.py on two sweep folders (exit 0: the same records)."""
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "compare_records.py"), str(old), str(new)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def token() -> str:
    """This module's Ray auth token."""
    return secrets.token_hex(32)


@pytest.fixture(scope="module")
def joblib_sweep(tmp_path_factory, token) -> tuple[Path, float]:
    """The sweep through the joblib launcher (2 processes): its folder and wall time."""
    cwd = tmp_path_factory.mktemp("joblib")
    started = time.monotonic()
    result = run_harness(
        "run",
        *SWEEP,
        "hydra/launcher=joblib",
        f"hydra.launcher.n_jobs={JOBS}",
        f"hydra.sweep.dir={cwd / 'sweep'}",
        cwd=cwd,
        env=ray_env(token),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return cwd / "sweep", time.monotonic() - started


@pytest.fixture(scope="module")
def ray_head(token) -> Iterator[str]:
    """A Ray head on 127.0.0.1 (2 CPUs, no dashboard, a temp dir of its own): its address; stopped after."""
    temp_dir = Path(tempfile.mkdtemp(prefix="ctxray-", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    port = free_port()
    log = temp_dir / "head.log"
    ray = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                ray,
                "start",
                "--head",
                "--block",
                "--node-ip-address=127.0.0.1",
                f"--port={port}",
                "--include-dashboard=false",
                f"--num-cpus={JOBS}",
                f"--temp-dir={temp_dir}",
                "--disable-usage-stats",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=ray_env(token),
            start_new_session=True,
        )
    started = time.monotonic()
    try:
        wait_for_line(log, HEAD_READY, proc, timeout=180)
        print(f"\nray head up on 127.0.0.1:{port} in {time.monotonic() - started:.1f}s")
        assert listening_off_loopback(proc.pid) == []
        yield f"127.0.0.1:{port}"
        assert listening_off_loopback(proc.pid) == []  # the workers it started for the sweeps too
    finally:
        stop_process_group(proc)
        shutil.rmtree(temp_dir, ignore_errors=True)
    assert port_is_closed(port)


@pytest.mark.slow
def test_ray_cluster_sweep_matches_joblib_and_resumes(tmp_path, ray_head, joblib_sweep, token):
    joblib_dir, joblib_s = joblib_sweep
    ray_args = [
        "run",
        *SWEEP,
        "hydra/launcher=ray_cluster",
        f"hydra.launcher.ray.init.address={ray_head}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]
    started = time.monotonic()
    first = run_harness(*ray_args, cwd=tmp_path, env=ray_env(token))
    ray_s = time.monotonic() - started
    assert first.returncode == 0, first.stderr[-3000:]
    output = first.stdout + first.stderr
    assert "Ray Launcher is launching 2 jobs" in output and "sweep done" in output
    assert len(set(re.findall(r"\(_run_job pid=(\d+)\)", output))) == JOBS  # one worker per job: side by side
    same = compare_records(joblib_dir, tmp_path / "sweep")
    assert same.returncode == 0 and " 0 differ" in same.stdout, same.stdout[-3000:]
    print(f"\nwall time: joblib {joblib_s:.1f}s, ray_cluster {ray_s:.1f}s; {same.stdout.strip().splitlines()[-1]}")

    again = run_harness(*ray_args, cwd=tmp_path, env=ray_env(token))
    assert again.returncode == 0, again.stderr[-3000:]
    output = again.stdout + again.stderr
    assert len(RESUMED.findall(output)) == JOBS, output[-3000:]
    assert not re.search(r"trials to run: [1-9]", output)
    assert compare_records(joblib_dir, tmp_path / "sweep").returncode == 0  # nothing appended


@pytest.mark.slow
def test_ray_local_sweep_stays_on_loopback(tmp_path, joblib_sweep, token):
    joblib_dir, joblib_s = joblib_sweep
    ray_tmp = Path(tempfile.mkdtemp(prefix="ctxray-", dir="/tmp"))
    argv = harness_argv(
        "run",
        *SWEEP,
        "hydra/launcher=ray_local",
        f"++hydra.launcher.ray.init._temp_dir={ray_tmp}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    )
    off_loopback: set[str] = set()
    log = tmp_path / "sweep.log"  # a file, not a pipe: nothing blocks the sweep while it is polled
    started = time.monotonic()
    try:
        with log.open("w") as out:
            proc = subprocess.Popen(
                argv, cwd=tmp_path, env=ray_env(token), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        while proc.poll() is None and time.monotonic() - started < 600:
            off_loopback.update(listening_off_loopback(proc.pid))  # every Ray server the sweep starts
            time.sleep(0.5)
        if proc.poll() is None:
            stop_process_group(proc, grace_s=10)
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    output = log.read_text(errors="replace")
    ray_s = time.monotonic() - started
    assert proc.returncode == 0, output[-3000:]
    assert "Started a local Ray instance" in output and "sweep done" in output
    assert off_loopback == set()
    same = compare_records(joblib_dir, tmp_path / "sweep")
    assert same.returncode == 0 and " 0 differ" in same.stdout, same.stdout[-3000:]
    print(f"\nwall time: joblib {joblib_s:.1f}s, ray_local {ray_s:.1f}s (Ray's start included)")


@pytest.mark.slow  # with the others: CI installs the ray extra for its slow tier only
def test_ray_local_refuses_without_the_loopback_switch(tmp_path, token):
    env = {k: v for k, v in ray_env(token).items() if k != LOOPBACK_SWITCH}
    result = run_harness(
        "run",
        *SWEEP,
        "hydra/launcher=ray_local",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert result.returncode != 0
    assert f"Environment variable '{LOOPBACK_SWITCH}' not found" in result.stderr
    assert not (tmp_path / "sweep").exists() or not any((tmp_path / "sweep").rglob("trials.jsonl"))

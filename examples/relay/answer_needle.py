"""Answer a ``model=relay`` run from a script: a tiny agent for the ``needle`` family.

    python -m harness run task=needle model=relay model.folder=results/relay-demo suite.instances=1 trials=1 &
    python examples/relay/answer_needle.py results/relay-demo

The script watches the relay folder, answers every request that has no reply yet and stops when
no new request has come for ``--idle`` seconds. ``answer(request)`` is the whole agent: swap it for
a call to your own agent, a different model, or a prompt to a person.

A script reads the request's JSON; the reply must still carry the request's nonce (``"seen"``), the
key pieces at the ends of the text parts (``request_nonce`` reads them), or the relay sets it aside.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from harness.models.relay_files import request_nonce

QUESTION = re.compile(r"access code of the (\w+) vault")


def answer(request: dict) -> dict:
    """Search once, then submit the code of the vault the question asks about."""
    messages = request["messages"]
    results = [m["content"] for m in messages if m.get("role") == "tool"]
    if not results:
        return {
            "content": "Searching the bulletins.",
            "tool_calls": [{"name": "search_documents", "arguments": {"query": "vault access code"}}],
        }
    vault = QUESTION.search(next(m["content"] for m in messages if m.get("role") == "user")).group(1)
    code = re.search(rf"access code of the {vault} vault is (\d{{4}}-\d{{4}})", "\n".join(results))
    return {
        "content": f"The {vault} vault's code is in the results.",
        "tool_calls": [{"name": "submit", "arguments": {"code": code.group(1) if code else "0000-0000"}}],
    }


def pending(folder: Path) -> list[Path]:
    """Request files that have no reply yet."""
    return [
        p
        for p in sorted(folder.glob("*/*.request.json"))
        if not p.with_name(p.name.replace(".request.json", ".reply.json")).exists()
    ]


def reply_to(request_path: Path) -> None:
    """Write the reply to a temporary name, then rename it (the relay never reads half a file)."""
    reply = {"seen": request_nonce(request_path), **answer(json.loads(request_path.read_text(encoding="utf-8")))}
    target = request_path.with_name(request_path.name.replace(".request.json", ".reply.json"))
    temporary = target.with_suffix(".tmp")
    temporary.write_text(json.dumps(reply), encoding="utf-8")
    temporary.replace(target)


def main() -> None:
    """Answer requests until none has come for ``--idle`` seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--idle", type=float, default=20.0, help="stop after this many seconds without a request")
    args = parser.parse_args()
    last = time.monotonic()
    while time.monotonic() - last < args.idle:
        for request_path in pending(args.folder):
            reply_to(request_path)
            print(f"answered {request_path}")
            last = time.monotonic()
        time.sleep(0.2)


if __name__ == "__main__":
    main()

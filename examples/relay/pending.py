"""The requests of ``model=relay`` runs that wait for a reply, and the brief for the model call that answers one.

    python examples/relay/pending.py ROOT [--share LOG] [--brief]

``ROOT`` holds one relay folder per run (``ROOT/RUN/TRIAL/NNNN.request.json``), as when each run of a
recording got ``model.folder=ROOT/RUN``. Each waiting request is one JSON line: the run, the trial
folder, the request number, its parts in order, the reply path, its size in characters and the
SHA-256 of its ``request.json`` (byte-identical requests have the same hash). ``--brief`` adds the exact
brief a fresh model call gets for it (``BRIEF``; calibration/README.md quotes it).

``--share LOG`` first answers every waiting request that is byte-identical (same ``request.json``) to a
request whose reply was accepted: the same reply, its ``seen`` set to this request's nonce, written
through a temporary file and renamed. Each such reply is a line in ``LOG``. The model call that wrote
the reply read the whole of an identical request, so the answer is the one it would give here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from pathlib import Path

from harness.models.relay_files import request_nonce, write_exclusive

BRIEF = """You are the model for one turn of an agent's conversation. Read the request: every part, whole, in order, one read per file (each is at most 20,000 characters, so no read is cut), in the folder {folder}: {parts}. Read nothing else: no other file, no listing, no source code, no search; use no tool except to read those parts and to write your reply. Decide this turn as a careful, capable agent would, following the request and the reply format at the end of its last part. Write the reply JSON to a temporary file in that folder, then rename it to {reply}; its "seen" is the key pieces at the ends of the parts, joined in order. Then answer me in one line: the tool calls your reply makes, or "text only"."""  # noqa: E501
BRIEF_FIRST = """You are the model for one turn of an agent's conversation. The request is in {total} text file(s), to be read in this order:
{parts}

Read every part, all of it, in order: read each part whole, in one read of the entire file (every part is at most 20,000 characters, so no read is cut). Read nothing else: no other file, no directory listing, no source code, no search. Use no tool except to read those parts and to write your reply.

Then decide this turn as a careful, capable agent would, following the request: its tools, its conversation, and the reply format at the end of the last part. Write your reply as JSON to a temporary file in the same folder, then rename it to:
{reply}
The reply's "seen" field is the key pieces printed at the end of each part, joined in order without spaces.

When the reply file is in place, answer me with one line: the tool calls your reply makes, or "text only"."""  # noqa: E501
"""The longer first wording of the same brief, given to the model calls of the recording's first seven requests."""


def requests(root: Path) -> list[Path]:
    """Every written request under ``root`` (``RUN/TRIAL/NNNN.request.json``), in order."""
    return sorted(root.glob("*/*/[0-9][0-9][0-9][0-9].request.json"))


def reply_of(request: Path) -> Path:
    """The reply path of a request."""
    return request.with_name(request.name.replace(".request.json", ".reply.json"))


def parts_of(request: Path) -> list[Path]:
    """The part files of a request, in order."""
    stem = request.name.split(".", 1)[0]
    return sorted(request.parent.glob(f"{stem}.request.part-*.txt"))


def digest(request: Path) -> str:
    """The SHA-256 of a request's JSON."""
    return hashlib.sha256(request.read_bytes()).hexdigest()


def accepted_reply(request: Path) -> dict | None:
    """The reply of a request when it carries the request's nonce (the relay accepts it), else None."""
    reply = reply_of(request)
    if not reply.is_file() or reply.is_symlink():
        return None
    try:
        data = json.loads(reply.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("seen") == request_nonce(request) else None


def waiting(root: Path) -> list[Path]:
    """The requests without a reply file."""
    return [r for r in requests(root) if not os.path.lexists(reply_of(r))]


def share(root: Path, log: Path) -> list[str]:
    """Answer each waiting request that is byte-identical to an answered one; the lines written to ``log``."""
    answered: dict[str, Path] = {}
    for request in requests(root):
        if accepted_reply(request) is not None:
            answered.setdefault(digest(request), request)
    lines = []
    for request in waiting(root):
        source = answered.get(digest(request))
        if source is None:
            continue
        reply = {**(accepted_reply(source) or {}), "seen": request_nonce(request)}
        write_exclusive(reply_of(request), json.dumps(reply, ensure_ascii=False))
        lines.append(
            f"{request.relative_to(root)} <- {source.relative_to(root)} (request.json sha256 {digest(request)})"
        )
    if lines:
        with log.open("a", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in lines))
    return lines


def describe(root: Path, request: Path, with_brief: bool) -> dict:
    """One waiting request as a JSON-ready dict."""
    parts = parts_of(request)
    item = {
        "run": request.parent.parent.name,
        "trial": request.parent.name,
        "number": int(request.name[:4]),
        "parts": [str(p.resolve()) for p in parts],
        "reply": str(reply_of(request).resolve()),
        "chars": sum(len(p.read_text(encoding="utf-8")) for p in parts),
        "sha256": digest(request),
    }
    if with_brief:
        names = ", ".join(p.name for p in parts)
        if len(parts) > 2:
            names = f"the {len(parts)} files {parts[0].name} to {parts[-1].name}"
        item["brief"] = BRIEF.format(folder=request.parent.resolve(), parts=names, reply=reply_of(request).name)
    return item


def main() -> None:
    """Print the waiting requests (after sharing answers, with --share)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--share", type=Path, help="answer byte-identical requests from accepted replies; log here")
    parser.add_argument("--brief", action="store_true", help="add the brief of the model call that answers each")
    args = parser.parse_args()
    if args.share:
        for line in share(args.root, args.share):
            print(f"shared: {line}")
    for request in waiting(args.root):
        print(json.dumps(describe(args.root, request, args.brief), ensure_ascii=False))


if __name__ == "__main__":
    main()

"""The files of relay protocol 2: a request in numbered parts, a key that proves every part was read.

A request is rendered as text (``relay.render_request``) and cut into parts of at most
``PART_CHARS`` characters, ``NNNN.request.part-01-of-07.txt`` ... Each part opens with a line naming
its number and the total and ends with a line holding one **key piece**, a fresh random hex string.
The last part ends with the instruction to put every piece, joined in order, in the reply's
``"seen"`` field: the request's nonce. Only a reader who reached the end of every part knows it.

The file operations never follow a symbolic link the relay did not make:

- ``write_exclusive`` writes a new temporary file opened with ``O_CREAT | O_EXCL | O_NOFOLLOW``
  and renames it over the target (a rename replaces a planted link, it does not write through it);
- ``read_capped`` opens with ``O_NOFOLLOW`` and reads at most a cap;
- ``reply_problem`` says why a reply file may not be read at all (a link, not a file, older than its
  request, too large).
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from pathlib import Path

PROTOCOL = 2
PART_CHARS = 20_000
PIECE_HEX = 6  # hex characters of one key piece (24 random bits each)
MAX_REPLY_BYTES = 1_000_000
PIECE_LINE = re.compile(r"^\[key piece (\d+) of (\d+): ([0-9a-f]+)\]$", re.MULTILINE)
FOOTER_ROOM = 400  # characters kept free in each part for its header and footer lines


def part_name(number: int, part: int, total: int) -> str:
    """``0003.request.part-02-of-07.txt``."""
    width = max(2, len(str(total)))
    return f"{number:04d}.request.part-{part:0{width}d}-of-{total:0{width}d}.txt"


def new_pieces(total: int) -> list[str]:
    """One fresh random key piece per part."""
    return [secrets.token_hex(PIECE_HEX // 2) for _ in range(total)]


def split_text(text: str, limit: int = PART_CHARS - FOOTER_ROOM) -> list[str]:
    """The text in chunks of at most ``limit`` characters, cut after a newline where one is near the end."""
    chunks: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + limit)
        if end < len(text):
            newline = text.rfind("\n", start + limit // 2, end)
            end = newline + 1 if newline >= 0 else end
        chunks.append(text[start:end])
        start = end
    return chunks or [""]


def render_parts(text: str, number: int, reply_name: str, pieces: list[str] | None = None) -> list[tuple[str, str]]:
    """(file name, content) of every part of request ``number``; ``pieces`` default to fresh random ones."""
    chunks = split_text(text)
    total = len(chunks)
    pieces = pieces or new_pieces(total)
    parts = []
    for index, chunk in enumerate(chunks, start=1):
        head = f"[request {number:04d}, part {index} of {total}: read every part, all of it, in order]\n"
        tail = "" if chunk.endswith("\n") else "\n"
        tail += f"[key piece {index} of {total}: {pieces[index - 1]}]\n"
        if index < total:
            tail += f"[end of part {index} of {total}; the request goes on in {part_name(number, index + 1, total)}]\n"
        else:
            tail += (
                f"[end of part {total} of {total}: the whole request. Your reply ({reply_name}) must carry "
                f'"seen": the {total} key piece(s) of the parts, joined in order without spaces]\n'
            )
        parts.append((part_name(number, index, total), head + chunk + tail))
    return parts


def nonce_of(parts: list[str]) -> str:
    """The nonce of a request: the key pieces of its parts' texts, joined in order."""
    return "".join(match.group(3) for text in parts for match in PIECE_LINE.finditer(text))


def write_exclusive(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file this call created (never through a link)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(temporary, flags, 0o644)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)


def read_capped(path: Path, cap: int = MAX_REPLY_BYTES) -> bytes:
    """At most ``cap + 1`` bytes of a file, opened without following a link."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read(cap + 1)


def reply_problem(reply: Path, request_ns: int, cap: int = MAX_REPLY_BYTES) -> str | None:
    """Why the reply file may not be read (None: it may): a link, not a file, older than its request, too large."""
    info = reply.lstat()
    if stat.S_ISLNK(info.st_mode):
        return "the reply is a symbolic link (the relay follows no link it did not make)"
    if not stat.S_ISREG(info.st_mode):
        return "the reply is not a regular file"
    if info.st_mtime_ns < request_ns:
        return "the reply file is older than its request (it was there before the request was written)"
    if info.st_size > cap:
        return f"the reply is {info.st_size:,} bytes, over the cap of {cap:,}"
    return None


def safe_folder(folder: Path) -> Path:
    """Make the trial folder; a folder that is a link is refused (``ValueError``)."""
    if folder.is_symlink():
        raise ValueError(f"relay: {folder} is a symbolic link (the relay follows no link it did not make)")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def request_nonce(request_json: Path) -> str:
    """The nonce of a written request, read from its parts (for scripts that answer a relay)."""
    stem = request_json.name.split(".", 1)[0]
    parts = sorted(request_json.parent.glob(f"{stem}.request.part-*.txt"))
    return nonce_of([read_capped(p, 1 << 20).decode("utf-8", "replace") for p in parts])

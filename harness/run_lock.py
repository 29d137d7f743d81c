"""One process at a time per run folder: an exclusive ``flock`` on ``<run folder>/run.lock``.

``execute`` holds it for the whole run (``hold_run_folder``), from before it reads the folder
(identity, recorded trials) until the last record is written. A second process (or another
thread) on the same folder gets ``RunFolderBusy``, a ``ConfigError``: one line on stderr that
says who holds the folder (pid, host, start time, command), exit code 2, nothing written.

The kernel releases a ``flock`` when its holder exits, however it exits: after ``kill -9``
the file stays (with the dead holder's details) but the lock does not, and the next run
takes it. On a normal exit, the holder removes the file (after checking that the path still
names the file it locked; a lock taken on a file that was removed meanwhile is taken again on
the new one), so that a run that failed on its config leaves nothing behind.

The same thread may take the lock again while it holds it (nested ``hold_run_folder``), so
that a caller can hold the folder across more than ``execute`` (``--fresh``'s clearing, say).
``flock`` is advisory and local: it keeps ctxbench processes apart on one machine; on a network
file system it holds only where the server supports ``flock``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import socket
import sys
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Iterator

from harness.errors import ConfigError

LOCK_FILE = "run.lock"
_HELD: dict[str, tuple[int, int]] = {}  # resolved folder -> (owner thread id, depth)
_REGISTRY = threading.Lock()
_OPEN: list[IO[str]] = []  # the lock files this process holds open


class RunFolderBusy(ConfigError):
    """Another process (or thread) holds the run folder; reported as one line, exit code 2."""


def current_command() -> str:
    """This process's command line, as one line (``python -m harness run ...`` for the CLI)."""
    argv = list(sys.argv)
    if argv and Path(argv[0]).name == "__main__.py" and Path(argv[0]).parent.name == "harness":
        argv = ["python", "-m", "harness", "run", *argv[1:]]  # the CLI hands Hydra its overrides alone
    return shlex.join(argv).replace("\n", "\\n")


def holder_text(path: Path) -> str:
    """Who holds the lock, from what the holder wrote into it."""
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        return f"pid {info['pid']} on {info['host']} since {info['started_at']} (command: {info['command']})"
    except (OSError, ValueError, KeyError, TypeError):  # written a moment ago, or by hand
        return "another process (it has not said which yet)"


def _acquire(folder: Path, command: str) -> IO[str]:
    path = folder / LOCK_FILE
    while True:
        handle = open(path, "a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise RunFolderBusy(
                f"run folder {folder} is in use by {holder_text(path)}; wait for it to end "
                "(or stop it), or choose another folder with hydra.run.dir=..."
            ) from None
        try:
            same = os.fstat(handle.fileno()).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        handle.close()  # the holder before us removed the file as we opened it: lock the new one
    handle.seek(0)
    handle.truncate()
    handle.write(
        json.dumps(
            {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "command": command,
                "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            }
        )
        + "\n"
    )
    handle.flush()
    return handle


@contextlib.contextmanager
def hold_run_folder(folder: Path, command: str | None = None) -> Iterator[Path]:
    """Hold ``folder`` (created if missing) for the block; ``RunFolderBusy`` when someone else holds it.

    A folder this call created is removed on the way out if nothing else was written into it.
    """
    folder = Path(folder)
    key = str(folder.resolve())
    me = threading.get_ident()
    with _REGISTRY:
        owner, depth = _HELD.get(key, (None, 0))
        if owner == me:
            _HELD[key] = (me, depth + 1)
    if owner == me:
        try:
            yield folder
        finally:
            with _REGISTRY:
                _HELD[key] = (me, _HELD[key][1] - 1)
        return
    created = [p for p in (folder, *folder.parents) if not p.exists()]  # bottom up
    folder.mkdir(parents=True, exist_ok=True)
    try:
        handle = _acquire(folder, command if command is not None else current_command())
    except BaseException:
        _remove_if_empty(created)
        raise
    with _REGISTRY:
        _HELD[key] = (me, 1)
        _OPEN.append(handle)
    try:
        yield folder
    finally:
        with _REGISTRY:
            del _HELD[key]
            _OPEN.remove(handle)
        with contextlib.suppress(OSError):
            (folder / LOCK_FILE).unlink()  # still ours: nobody takes a lock on a file we hold
        handle.close()
        _remove_if_empty(created)


def close_inherited_locks() -> None:
    """In a forked worker: close its copies of the parent's lock files, so that the lock lives and dies with
    the parent (a worker left running after ``kill -9`` of its parent would otherwise keep the folder locked)."""
    for handle in list(_OPEN):  # closing a copy does not unlock: the parent's descriptor still holds the lock
        with contextlib.suppress(OSError):
            handle.close()
    _OPEN.clear()


def _remove_if_empty(folders: list[Path]) -> None:
    """Remove the folders this process created (bottom up) as long as they are empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return

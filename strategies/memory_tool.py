"""``memory_tool``: Anthropic's memory tool (``memory_20250818``) on the trial's file store.

The agent gets one tool, ``memory``, with Anthropic's command schema: ``view`` (a directory
listing or a file with line numbers, ``view_range`` optional), ``create`` (write a file),
``str_replace`` (one exact occurrence), ``insert`` (after line ``insert_line``, 0 = the top),
``delete`` (a file or a directory) and ``rename``. Paths live under ``/memories``, which maps
to ``<trial store>/memories``; the client executes the commands, as Anthropic's design has it.
It is offered as a function tool with that schema on every backend (so runs on any model
compare), not as the native ``memory_20250818`` type.

Safety: a path must be ``/memories`` or below it; ``..``, ``.``, empty components, NUL bytes
and backslashes are refused, and so is any symlink on the way (a link planted in the store
cannot lead outside it): a tool error, never an exception. Files hold at most
``max_file_chars`` characters.

Caps: the store is bounded whatever the model sends (``MAX_PATH_CHARS``, ``MAX_PATH_DEPTH``,
``MAX_ENTRIES``, ``MAX_TOTAL_BYTES``). A path over a cap, or a write that would take the store
over one, is a ``ToolError`` with a one-line reason (the model sees it and the run goes on); the
store is left as it was. Trimming is delegated to ``base`` (default none: the history
unchanged), e.g. ``server_clear_tool_uses`` or ``clear_tool_results``, the pairing Anthropic
recommends (memory keeps what clearing removes).
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from strategies._common import unicode_problem
from strategies.base import ToolError, WrappingStrategy

ROOT = "/memories"
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
SCHEMA = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "enum": list(COMMANDS), "description": "The operation."},
        "path": {
            "type": "string",
            "description": "A path under /memories (view, create, str_replace, insert, delete).",
        },
        "view_range": {
            "type": "array",
            "items": {"type": "integer"},
            "description": "view: [first, last] line (1-based; last -1 = to the end).",
        },
        "file_text": {"type": "string", "description": "create: the file's content."},
        "old_str": {"type": "string", "description": "str_replace: the exact text to replace (must occur once)."},
        "new_str": {"type": "string", "description": "str_replace: the replacement."},
        "insert_line": {"type": "integer", "description": "insert: the line after which to insert (0 = top)."},
        "insert_text": {"type": "string", "description": "insert: the text to insert."},
        "old_path": {"type": "string", "description": "rename: the current path."},
        "new_path": {"type": "string", "description": "rename: the new path."},
    },
    "required": ["command"],
}
MAX_PATH_CHARS = 256
"""The longest path a command takes, ``/memories`` included (characters)."""
MAX_PATH_DEPTH = 8
"""The most components below ``/memories`` a path may have (``/memories/a/b.md`` has 2); a directory moved by
``rename`` may not take its contents deeper."""
MAX_ENTRIES = 200
"""The most files and directories the store holds together."""
MAX_TOTAL_BYTES = 1_000_000
"""The most bytes (UTF-8) the store's files hold together."""

DESCRIPTION = (
    "Your memory directory /memories persists across this task while older context may be cleared. "
    "Commands: view, create, str_replace, insert, delete, rename. Record progress and findings there; "
    "view it before relying on your memory of earlier steps."
)


class MemoryStore:
    """The ``/memories`` tree of one trial, under ``root``, with every path checked (see the module docstring)."""

    def __init__(self, root: Path, max_file_chars: int = 20_000) -> None:
        self.root = root
        self.max_file_chars = max_file_chars

    def resolve(self, path: Any) -> Path:
        """The file-system path of a ``/memories`` path; ``ToolError`` for anything outside or through a symlink."""
        if not isinstance(path, str) or not path:
            raise ToolError("a path under /memories is required")
        if len(path) > MAX_PATH_CHARS:
            raise ToolError(f"the path has {len(path):,} characters (max {MAX_PATH_CHARS}); use a shorter one")
        if "\x00" in path or "\\" in path or unicode_problem(path):
            raise ToolError(f"invalid path {path!r}")
        pure = PurePosixPath(path)
        parts = path.rstrip("/").split("/") if path != "/" else ["", ""]
        if not pure.is_absolute() or parts[:2] != ["", "memories"]:
            raise ToolError(f"paths must start with {ROOT}, got {path!r}")
        rest = parts[2:]
        if any(part in ("", ".", "..") for part in rest):
            raise ToolError(f"path {path!r} may not contain '..', '.' or empty components")
        if len(rest) > MAX_PATH_DEPTH:
            raise ToolError(f"the path is {len(rest)} levels below {ROOT} (max {MAX_PATH_DEPTH}); use a flatter one")
        self.root.mkdir(parents=True, exist_ok=True)
        target = self.root
        for part in rest:
            target = target / part
            self._refuse_link(target, path)
        self._refuse_link(self.root, path)
        return target

    @staticmethod
    def _refuse_link(target: Path, shown: str) -> None:
        try:
            mode = os.lstat(target).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return
        if stat.S_ISLNK(mode):
            raise ToolError(f"{shown} goes through a symlink; refused")

    def shown(self, target: Path) -> str:
        """The ``/memories`` path of a file-system path inside the store."""
        rel = target.relative_to(self.root).as_posix()
        return ROOT if rel == "." else f"{ROOT}/{rel}"

    # -- commands --------------------------------------------------------------------------
    def view(self, path: Any, view_range: Any = None) -> str:
        """A directory listing (two levels, sizes) or a file's lines, numbered."""
        target = self.resolve(path)
        if target.is_dir():
            lines = [f"Directory {self.shown(target)}:"]
            for item in sorted(target.rglob("*")):
                depth = len(item.relative_to(target).parts)
                if depth > 2 or item.name.startswith(".") or item.is_symlink():
                    continue
                size = item.stat().st_size if item.is_file() else 0
                lines.append(f"{size:>8}  {self.shown(item)}{'/' if item.is_dir() else ''}")
            return "\n".join(lines) if len(lines) > 1 else f"Directory {self.shown(target)} is empty."
        if not target.is_file():
            raise ToolError(f"{path} does not exist")
        lines = target.read_text(encoding="utf-8").split("\n")
        first, last = 1, len(lines)
        if view_range is not None:
            if not (
                isinstance(view_range, list) and len(view_range) == 2 and all(isinstance(v, int) for v in view_range)
            ):
                raise ToolError("view_range must be [first, last] (integers)")
            first, last = view_range[0], len(lines) if view_range[1] == -1 else view_range[1]
            if not 1 <= first <= last <= len(lines):
                raise ToolError(f"view_range {view_range} is outside the file's {len(lines)} lines")
        return "\n".join(f"{n:6d}\t{lines[n - 1]}" for n in range(first, last + 1))

    def _text(self, value: Any, what: str) -> str:
        if not isinstance(value, str):
            raise ToolError(f"{what} must be a string")
        problem = unicode_problem(value)
        if problem:
            raise ToolError(f"{what} refused: {problem}")
        return value

    def usage(self) -> tuple[int, int]:
        """The store's files and directories (not following links) and the bytes its files hold."""
        entries = size = 0
        for folder, dirs, files in os.walk(self.root):
            entries += len(dirs) + len(files)
            for name in files:
                size += os.lstat(os.path.join(folder, name)).st_size
        return entries, size

    def new_entries(self, target: Path) -> int:
        """How many files and directories writing ``target`` would create (it and its missing parents)."""
        created = 0
        while target != self.root and not os.path.lexists(target):
            created, target = created + 1, target.parent
        return created

    def check_room(self, target: Path, new_bytes: int, moved: Path | None = None) -> None:
        """``ToolError`` unless the store stays within its caps once ``target`` holds ``new_bytes`` (a file) or,
        for ``rename``, what is ``moved`` there (its deepest entry may not go below ``MAX_PATH_DEPTH``)."""
        depth = len(target.relative_to(self.root).parts) + (self.tree_depth(moved) if moved is not None else 0)
        if depth > MAX_PATH_DEPTH:
            raise ToolError(f"that would put an entry {depth} levels below {ROOT} (max {MAX_PATH_DEPTH})")
        entries, size = self.usage()
        created = self.new_entries(target) - (moved is not None)  # a move creates only the missing parents
        if entries + created > MAX_ENTRIES:
            raise ToolError(
                f"the store holds {entries} files and directories (max {MAX_ENTRIES}); delete or merge some first"
            )
        old = os.lstat(target).st_size if target.is_file() else 0
        if size - old + new_bytes > MAX_TOTAL_BYTES:
            raise ToolError(
                f"the store would hold {size - old + new_bytes:,} bytes (max {MAX_TOTAL_BYTES:,}); "
                "delete or shorten some files first"
            )

    def _write(self, target: Path, text: str) -> None:
        if len(text) > self.max_file_chars:
            raise ToolError(
                f"the file would hold {len(text):,} characters (max {self.max_file_chars:,}); keep memory short"
            )
        self.check_room(target, len(text.encode("utf-8")))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def _file(self, path: Any) -> Path:
        target = self.resolve(path)
        if not target.is_file():
            raise ToolError(f"{path} is not a file")
        return target

    def create(self, path: Any, file_text: Any) -> str:
        """Write (or overwrite) a file; parent directories are created."""
        target = self.resolve(path)
        if target == self.root or target.is_dir():
            raise ToolError(f"{path} is a directory")
        for parent in list(target.relative_to(self.root).parents)[:-1]:
            if (self.root / parent).is_file():
                raise ToolError(f"{self.shown(self.root / parent)} is a file, not a directory")
        self._write(target, self._text(file_text, "file_text"))
        return f"File created successfully at {self.shown(target)}"

    def str_replace(self, path: Any, old_str: Any, new_str: Any) -> str:
        """Replace the one occurrence of ``old_str``."""
        target = self._file(path)
        old, new = self._text(old_str, "old_str"), self._text(new_str if new_str is not None else "", "new_str")
        content = target.read_text(encoding="utf-8")
        count = content.count(old) if old else 0
        if count != 1:
            raise ToolError(f"old_str occurs {count} times in {path}; it must occur exactly once")
        self._write(target, content.replace(old, new, 1))
        return f"The file {self.shown(target)} has been edited"

    def insert(self, path: Any, insert_line: Any, insert_text: Any) -> str:
        """Insert text after line ``insert_line`` (0: at the top)."""
        target = self._file(path)
        text = self._text(insert_text, "insert_text")
        lines = target.read_text(encoding="utf-8").split("\n")
        if not isinstance(insert_line, int) or isinstance(insert_line, bool) or not 0 <= insert_line <= len(lines):
            raise ToolError(f"insert_line must be an integer from 0 to {len(lines)}")
        lines[insert_line:insert_line] = text.split("\n")
        self._write(target, "\n".join(lines))
        return f"Text inserted at line {insert_line} of {self.shown(target)}"

    def delete(self, path: Any) -> str:
        """Delete a file or a directory (not ``/memories`` itself)."""
        target = self.resolve(path)
        if target == self.root:
            raise ToolError(f"{ROOT} itself cannot be deleted")
        if target.is_dir():
            shutil.rmtree(target)
        elif target.is_file():
            target.unlink()
        else:
            raise ToolError(f"{path} does not exist")
        return f"Deleted {self.shown(target)}"

    def rename(self, old_path: Any, new_path: Any) -> str:
        """Move a file or a directory; the new path must not exist."""
        source, target = self.resolve(old_path), self.resolve(new_path)
        if source == self.root or target == self.root:
            raise ToolError(f"{ROOT} itself cannot be renamed")
        if not source.exists():
            raise ToolError(f"{old_path} does not exist")
        if target.exists():
            raise ToolError(f"{new_path} already exists")
        if source.is_dir() and target.is_relative_to(source):
            raise ToolError(f"cannot move {old_path} into itself")
        self.check_room(target, 0, moved=source)
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)
        return f"Renamed {self.shown(source)} to {self.shown(target)}"

    @staticmethod
    def tree_depth(source: Path) -> int:
        """How many levels the deepest entry under ``source`` is below it (0 for a file)."""
        depth = 0
        if source.is_dir():
            for folder, dirs, files in os.walk(source):
                if dirs or files:
                    depth = max(depth, len(Path(folder).relative_to(source).parts) + 1)
        return depth

    def run(self, args: dict) -> str:
        """Execute one ``memory`` call."""
        command = args.get("command")
        if command == "view":
            return self.view(args.get("path"), args.get("view_range"))
        if command == "create":
            return self.create(args.get("path"), args.get("file_text"))
        if command == "str_replace":
            return self.str_replace(args.get("path"), args.get("old_str"), args.get("new_str"))
        if command == "insert":
            return self.insert(args.get("path"), args.get("insert_line"), args.get("insert_text"))
        if command == "delete":
            return self.delete(args.get("path"))
        if command == "rename":
            return self.rename(args.get("old_path"), args.get("new_path"))
        raise ToolError(f"unknown command {command!r}; use one of {', '.join(COMMANDS)}")


class MemoryTool(WrappingStrategy):
    """Anthropic's memory tool on the trial's store, over an optional trimming ``base``.

    Parameters:
        base: the strategy that trims the history (an object or a ``_target_`` config; default
            none: the history unchanged). A server-side base (``server_clear_tool_uses``) works too.
        max_file_chars: the largest memory file (default 20,000 characters).
    """

    def __init__(self, base: Any = None, max_file_chars: int = 20_000) -> None:
        self.base = self.build_base(base, "memory_tool")
        self.max_file_chars = int(max_file_chars)
        self.store: MemoryStore | None = None

    def bind(self, ctx: Any) -> None:
        """Keep the context; the memory directory is ``<store>/memories``."""
        super().bind(ctx)
        self.store = MemoryStore(Path(ctx.store) / "memories", self.max_file_chars)

    def own_tools(self) -> list[dict]:
        """The ``memory`` tool with Anthropic's command schema."""
        return [{"type": "function", "function": {"name": "memory", "description": DESCRIPTION, "parameters": SCHEMA}}]

    def own_call(self, name: str, args: dict) -> str | None:
        """Run a ``memory`` command; a bad one is a ``ToolError`` (an error result), never a crash."""
        if name != "memory":
            return None
        assert self.store is not None
        try:
            result = self.store.run(args)
        except OSError as exc:
            raise ToolError(f"memory {args.get('command')}: {type(exc).__name__}: {exc.strerror or exc}") from None
        except UnicodeError as exc:  # a name the file system cannot hold
            raise ToolError(f"memory {args.get('command')}: {type(exc).__name__}: {exc}") from None
        self.ctx.log("memory", command=args.get("command"), path=args.get("path") or args.get("new_path"))
        return result

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The base's projection (the history when there is none)."""
        return self.base_prepare(messages)

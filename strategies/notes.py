"""``notes``: structured note-taking with recitation (source 004's external notes; Manus's todo.md).

The agent gets ``write_note(text)`` and ``read_notes()``. Notes are kept by the strategy
(and mirrored to ``notes.md`` in the trial's store) and re-injected near the tail of every
request, as the last message, so the goal and the findings sit where attention is
strongest. Trimming is delegated to a ``base`` strategy (default: ``clear_tool_results``
when available, else ``headtail``), so "clearing + external notes" is one configuration.
The re-injected block changes only when a note is written; it sits after the cache
prefix, so it costs no cache break of its own.
"""

from __future__ import annotations

from typing import Any

from strategies._common import unicode_problem
from strategies.base import ToolError, WrappingStrategy

NOTES_HEADER = "[notes] Your notes so far (written with write_note):"


def _default_base() -> Any:
    try:
        from strategies.clear_tool_results import ClearToolResults  # type: ignore[import-not-found]

        return ClearToolResults()
    except ImportError:  # pragma: no cover - before the clearing strategy exists
        from strategies.headtail import HeadTail

        return HeadTail()


class Notes(WrappingStrategy):
    """External notes re-injected at the tail, over a base trimming strategy.

    Parameters:
        base: the strategy that trims the history (an object or a ``_target_`` config);
            default ``clear_tool_results``. It gets the budget minus the notes block.
        max_note_chars: a single note longer than this is refused with a tool error (default 4000).
    """

    def __init__(self, base: Any = None, max_note_chars: int = 4000) -> None:
        self.base = self.build_base(base, "notes") if base is not None else _default_base()
        self.max_note_chars = max_note_chars
        self.notes: list[str] = []

    def own_tools(self) -> list[dict]:
        """``write_note(text)`` and ``read_notes()``."""
        return [
            {
                "type": "function",
                "function": {
                    "name": "write_note",
                    "description": "Save a note (findings, progress, todo). Notes stay visible.",
                    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
                },
            },
            {
                "type": "function",
                "function": {
                    "name": "read_notes",
                    "description": "Return all notes written so far.",
                    "parameters": {"type": "object", "properties": {}, "required": []},
                },
            },
        ]

    def own_call(self, name: str, args: dict) -> str | None:
        """Execute the note tools; a bad note is a short ``ToolError`` and is not saved."""
        if name == "write_note":
            text = self._checked_note(args.get("text"))
            self.notes.append(text)
            self._mirror()
            return f"note {len(self.notes)} saved"
        if name == "read_notes":
            return "\n".join(f"{i}. {n}" for i, n in enumerate(self.notes, 1)) or "no notes yet"
        return None

    def _checked_note(self, text: object) -> str:
        """``text`` stripped, or a ``ToolError`` saying why it cannot be a note."""
        if not isinstance(text, str) or not text.strip():
            raise ToolError("write_note needs a non-empty 'text' string")
        if len(text) > self.max_note_chars:
            raise ToolError(f"note too long ({len(text):,} chars, max {self.max_note_chars:,}); split it")
        problem = unicode_problem(text)
        if problem:
            raise ToolError(f"note not saved: {problem}")
        return text.strip()

    def _mirror(self) -> None:
        """Write the notes to ``notes.md`` in the store (a copy for people; the notes live in memory)."""
        try:
            self.ctx.store.mkdir(parents=True, exist_ok=True)
            (self.ctx.store / "notes.md").write_text("\n\n".join(self.notes), encoding="utf-8")
        except OSError as exc:
            self.ctx.log("notes_mirror_failed", error=f"{type(exc).__name__}: {exc}"[:200])

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Base projection (within the budget left by the notes) plus the notes block at the tail."""
        if not self.notes:
            self.reserve(0)
            return self.base_prepare(messages)
        block = {"role": "user", "content": NOTES_HEADER + "\n" + "\n".join(f"- {n}" for n in self.notes)}
        self.reserve(self.ctx.count_message(block))
        return [*self.base_prepare(messages), block]

"""``offload``: recoverable compression through the trial's file store.

Sources: Manus's "file system as context" (source 004, 四、把文件系统当上下文) and source 003's
FileMemory. A tool result bigger than ``threshold`` tokens, once it is older than the
``keep_recent`` most recent results and not a result of the newest round (the agent has not
seen those yet: with parallel calls a round can hold more results than ``keep_recent``), is
written to the trial's store; the context keeps
its id, the call that produced it (and the resource, for a read), and a preview. The agent gets ``read_memory(id)`` to
bring the full text back. The replacement is decided once and frozen, so the prefix
cache breaks once per offloaded result. Error results are never offloaded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from strategies._common import ResultKey, clip, result_key, unseen_results
from strategies.base import BaseStrategy, ToolError

MEMORY_ID = re.compile(r"^mem-\d{4,12}$")
MAX_ID_CHARS = 16  # "mem-" and at most 12 digits
PLACEHOLDER = (
    "[offloaded to memory: id={id} | {tool} {args} | {resource}{tokens:,} tokens | "
    'read_memory(id="{id}") returns it in full]\npreview: {preview}'
)


class Offload(BaseStrategy):
    """Move big, older tool results to files; keep an id and a preview.

    Parameters:
        threshold: offload results of more than this many tokens (default 400).
        keep_recent: the most recent tool results stay verbatim (default 2).
        preview_chars: characters of the result kept as a preview (default 200).
    """

    budget_guarantee = "none"
    """Offloads by ``threshold`` and age, whatever the budget (3x the budget at 8k on invoice_audit)."""

    def __init__(self, threshold: int = 400, keep_recent: int = 2, preview_chars: int = 200) -> None:
        if threshold < 1 or keep_recent < 0 or preview_chars < 0:
            raise ValueError("offload: threshold >= 1, keep_recent >= 0, preview_chars >= 0")
        self.threshold = threshold
        self.keep_recent = keep_recent
        self.preview_chars = preview_chars
        self._frozen: dict[ResultKey, dict] = {}  # (history position, tool_call_id) -> replacement message
        self._count = 0

    def tools(self) -> list[dict]:
        """``read_memory(id)``."""
        return [
            {
                "type": "function",
                "function": {
                    "name": "read_memory",
                    "description": "Return the full text of a tool result that was offloaded to memory.",
                    "parameters": {
                        "type": "object",
                        "properties": {"id": {"type": "string", "description": "e.g. mem-0001"}},
                        "required": ["id"],
                    },
                },
            }
        ]

    def _path(self, memory_id: object) -> Path:
        """The store path of ``memory_id``; refuses anything that escapes the store or is not an id."""
        if not isinstance(memory_id, str) or len(memory_id) > MAX_ID_CHARS or not MEMORY_ID.match(memory_id):
            raise ToolError(f"invalid memory id {clip(memory_id)}: ids look like mem-0001 (no paths)")
        store = Path(self.ctx.store).resolve()
        path = (store / f"{memory_id}.txt").resolve()
        if store not in path.parents:
            raise ToolError(f"memory id {clip(memory_id)} escapes the store")
        return path

    def call(self, name: str, args: dict) -> str:
        """Execute ``read_memory``; any bad ``id`` is a short ``ToolError`` that quotes it cut short."""
        if name != "read_memory":
            raise ToolError(f"unknown tool {clip(name)}")
        raw = args.get("id")
        if isinstance(raw, str) and ("/" in raw or "\\" in raw or raw.startswith(".")):
            raise ToolError(f"memory id {clip(raw)} is a path; ids look like mem-0001")
        path = self._path(raw)
        try:
            return path.read_text(encoding="utf-8", errors="surrogatepass")
        except FileNotFoundError:
            raise ToolError(f"no memory with id {clip(raw)}") from None
        except OSError as exc:
            raise ToolError(f"memory {clip(raw)} cannot be read ({type(exc).__name__})") from None

    def _offload(self, message: dict) -> dict:
        self._count += 1
        memory_id = f"mem-{self._count:04d}"
        path = self._path(memory_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        content = str(message.get("content") or "")
        path.write_text(content, encoding="utf-8", errors="surrogatepass")  # read back exactly by read_memory
        tokens = self.ctx.count_message(message)
        args = json.dumps(message.get("_args") or {}, sort_keys=True)
        preview = content[: self.preview_chars].replace("\n", " ")
        resource = f"resource {message['_resource']} | " if message.get("_resource") else ""
        replaced = {
            **message,
            "content": PLACEHOLDER.format(
                id=memory_id,
                tool=message.get("_tool", "tool"),
                args=args,
                resource=resource,
                tokens=tokens,
                preview=preview,
            ),
        }
        self.ctx.log(
            "compaction", method="offload", id=memory_id, tokens=tokens, saved=tokens - self.ctx.count_message(replaced)
        )
        return replaced

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Replace big, older results by their frozen placeholders (never a result not seen yet)."""
        tool_positions = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
        recent = set(tool_positions[-self.keep_recent :]) if self.keep_recent else set()
        recent |= set(unseen_results(messages))
        out = list(messages)
        for index in tool_positions:
            message = messages[index]
            key = result_key(index, message)
            frozen = self._frozen.get(key)
            if frozen is None:
                if index in recent or message.get("_error") or message.get("_tool") == "read_memory":
                    continue
                if self.ctx.count_message(message) <= self.threshold:
                    continue
                frozen = self._frozen[key] = self._offload(message)
            out[index] = frozen
        return out

"""``context_aware_compression``: source 002 experiment 2-10's 上下文感知压缩.

The seed (§2.7, exp 2-10; §2.7.5) describes it by its effect and its principles: it "compressed
about 150K characters to 2K and still kept the founders' names and job changes", saving about
76% of the tokens against no compression with the fewest iterations (tied); compression must
be **task-relevant** ("同一段内容,在'找创始人名单'和'了解个人背景'下应压出不同结果": the same page
compresses differently for different tasks), **semantically complete** ("Sutskever 于 2024 年 5 月
离开 OpenAI" must not become "Sutskever 离开") and done by a model close to the main model
("压缩即理解", model calls model). Implemented as:

* **what**: every tool result larger than ``min_tokens``, once the agent has read it and it has
  left the ``keep_recent_rounds`` latest rounds (default 2: the newest, unread round and the one
  the agent has just read), is compressed once by one ``ctx.summarize`` call; errors are never
  compressed (failures must stay). With ``keep_recent_rounds: 1`` a result is compressed as soon
  as the agent has replied to it; an agent that needs two results side by side (a file and the
  helper module it calls) then re-reads the first forever (code_review on the reference agent);
* **context-aware**: that call sees the task statement, the call, the result and the agent's
  reply that followed it (what the agent made of it), with instructions to keep only what THIS
  task needs, with names, dates, companies and numbers whole, and to drop the rest;
* **frozen**: the compressed text (``[compressed for the task] ...``) replaces the result for the
  rest of the trial, keyed by its history position and call id (source 002 §2.7.4), so each
  result breaks the prefix cache once, ``keep_recent_rounds`` rounds behind the newest.

How it differs from ``adaptive_window`` (the seed's other strategy of exp 2-10, "80% 才触发,
一次压完"): no threshold and no batch — it acts on every result as soon as the agent has read
it and moved on, so the history never grows with raw pages; and its summarizer call is
conditioned on the task and on the agent's reading of the result, where ``adaptive_window`` compresses each result
alone with generic instructions (keep every name, date, amount and id). It does not look at the
budget (``budget_guarantee = "none"``): the agent's own messages and the small results stay. It declares
no size trigger; the sizes its ``compaction`` events log (the messages alone, without tool schemas) are
measured by ``RequestSizeMixin.messages_tokens`` (strategies/triggers.py).
"""

from __future__ import annotations

from harness.conversation import split_head
from strategies._common import (
    ResultKey,
    apply_frozen,
    is_error,
    result_calls,
    result_identity,
    result_key,
    unseen_results,
)
from strategies.base import BaseStrategy
from strategies.triggers import RequestSizeMixin

MARK = "[compressed for the task] "
INSTRUCTIONS = (
    "Compress the LAST tool result above for the agent doing this task: {task}\n"
    "Keep only what this task needs, and keep it whole: every name, date, company, role, amount, id and "
    "number the task asks about, with what links them (who did what, where and when). The agent's reply "
    "after the result shows what it took from it. Drop everything else (navigation, adverts, boilerplate, "
    "facts the task does not ask about). Do not invent anything."
)


class ContextAwareCompression(RequestSizeMixin, BaseStrategy):
    """Compress each read tool result once into what the task needs, with the task and the agent's reading as context.

    Parameters:
        keep_recent_rounds: the results of this many latest rounds stay verbatim (default 2; at least 1,
            so that the agent always reads a result whole once).
        min_tokens: results of at most this many tokens stay verbatim (default 500: search results and listings,
            what the agent navigates by, stay; pages are compressed).
        instructions: the summarizer instructions; ``{task}`` is replaced by the task statement
            (its first ``task_chars`` characters).
        task_chars: how much of the task statement goes into the instructions (default 2,000).
    """

    budget_guarantee = "none"
    """It compresses by age and size, whatever the budget: the agent's messages and small results stay."""

    def __init__(
        self,
        keep_recent_rounds: int = 2,
        min_tokens: int = 500,
        instructions: str = INSTRUCTIONS,
        task_chars: int = 2000,
    ) -> None:
        if int(keep_recent_rounds) < 1 or int(min_tokens) < 0 or int(task_chars) < 0:
            raise ValueError(
                "context_aware_compression: keep_recent_rounds must be >= 1, min_tokens and task_chars >= 0"
            )
        self.keep_recent_rounds = int(keep_recent_rounds)
        self.min_tokens = int(min_tokens)
        self.instructions = str(instructions)
        self.task_chars = int(task_chars)
        self.compressed: dict[ResultKey, str] = {}
        self._copies: dict[ResultKey, tuple[dict, dict]] = {}

    def _apply(self, messages: list[dict]) -> list[dict]:
        """The history with every frozen compressed text in place (copies memoized, so requests stay identical)."""
        return apply_frozen(messages, self.compressed, self._copies)

    def _recent_start(self, messages: list[dict]) -> int:
        """Where the ``keep_recent_rounds`` latest rounds with tool calls begin (results from there stay)."""
        starts = [i for i, m in enumerate(messages) if m.get("role") == "assistant" and m.get("tool_calls")]
        return starts[-self.keep_recent_rounds] if len(starts) >= self.keep_recent_rounds else 0

    def _due(self, messages: list[dict]) -> list[int]:
        """Positions of the results to compress now: read, out of the recent rounds, big, not errors, not compressed."""
        unseen, recent = set(unseen_results(messages)), self._recent_start(messages)
        return [
            p
            for p, m in enumerate(messages)
            if m.get("role") == "tool"
            and p < recent
            and p not in unseen
            and result_key(p, m) not in self.compressed
            and not is_error(m)
            and not str(m.get("content") or "").startswith(MARK.strip())
            and self.ctx.count_message(m) > self.min_tokens
        ]

    def _context(self, messages: list[dict], position: int, call: dict | None) -> list[dict]:
        """What the summarizer sees for the result at ``position``: task, its call, itself, the agent's next reply."""
        head, _ = split_head(messages)
        task = [head[-1]] if len(head) > 1 else []
        stub = [{"role": "assistant", "content": "", "tool_calls": [call]}] if call else []
        reply = next((m for m in messages[position + 1 :] if m.get("role") == "assistant"), None)
        return [
            *task,
            *stub,
            messages[position],
            *([{"role": "assistant", "content": reply.get("content") or ""}] if reply is not None else []),
        ]

    def task_text(self, messages: list[dict]) -> str:
        """The task statement cut to ``task_chars`` characters."""
        head, _ = split_head(messages)
        return str(head[-1].get("content") or "")[: self.task_chars] if len(head) > 1 else ""

    def prepare(self, messages: list[dict]) -> list[dict]:
        """Compress the results the agent has just read; every earlier compression stays frozen."""
        due = self._due(messages)
        if not due:
            return self._apply(messages)
        before = self.messages_tokens(self._apply(messages))
        calls = result_calls(messages)
        instructions = self.instructions.replace("{task}", self.task_text(messages))
        for position in due:
            text = self.ctx.summarize(self._context(messages, position, calls.get(position)), instructions)
            self.compressed[result_key(position, messages[position])] = MARK + text.strip()
        out = self._apply(messages)
        after = self.messages_tokens(out)
        self.ctx.log(
            "compaction",
            method="context_aware_compression",
            compressed=len(due),
            summarizer_calls=len(due),
            tokens_before=before,
            tokens_after=after,
            total_compressed=len(self.compressed),
            result_chars=sum(len(str(messages[p].get("content") or "")) for p in due),
            compressed_chars=sum(len(out[p]["content"]) for p in due),
            tools=sorted({result_identity(messages[p], calls.get(p))[0] for p in due}),
        )
        return out

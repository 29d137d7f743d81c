"""``select_tools``: dynamic tool exposure (source 003 §五 ``SelectTools``), measured on both sides.

Source 003 治理工具定义: "运行期只把与当前问题相关的工具提供给模型" — offer only the tools
relevant to the current phase; its ``SelectTools(query, all, maxN)`` ranks every tool by how
many words of its description occur in the query and keeps the ``maxN`` best (a stable sort,
so ties keep the catalogue's order). Source 004 warns about the other side: the tool schemas
come first in the cached prefix, so every change of the offered set breaks the prefix cache
from the first changed tool on, and a call to a tool that is no longer offered confuses the
model. This strategy does the first and the harness measures the second:

* the phase's query is the agent's latest message (what it says it is doing), or the task
  statement before its first reply;
* offered: the ``always`` tools (``submit``) and the final tool of the loop (``FINAL_TOOLS``: a
  sub-agent's ``report``), the task tools the agent called in its
  ``keep_recent_rounds`` latest rounds (the phase it is in, also a tool it just tried while
  hidden), and the ``max_tools`` best-ranked others;
* ranked to choose, sent in the catalogue's order, so one set is always the same bytes (a set
  the cache saw before hits again);
* the history is sent unchanged (``prepare`` only reads it).

The trial row records what it saved and what it cost (docs/analysis.md):
``tool_schema_tokens_saved`` (schema tokens not sent), ``unoffered_calls`` (calls to a hidden
tool: answered with an error by the harness, not executed, so a wrong choice costs a step),
and the cache figures (``sim_cached_tokens``, ``cache_lost_tokens``, ``cache_breaks``, each
break named ``tool_exposure`` in the step rows). ``experiment=cache_pitfalls`` sets them beside
``none`` (docs/experiments.md).

Deviations from the seed's Go code, decided here: words shorter than ``min_word`` letters are
not matched (the seed's substring test makes "of" and "the" match everything); the tool's name
(split at ``_``) counts as description words; and the recently used tools are kept whatever
their rank (the seed ranks once per user question; an agent's phase is its recent work).
"""

from __future__ import annotations

import re

from harness.conversation import iter_calls, split_head, split_rounds
from strategies.base import FINAL_TOOLS, BaseStrategy, tool_name

WORD = re.compile(r"[a-z0-9]+")


def description_words(tool: dict, min_word: int) -> set[str]:
    """The words a tool is matched on: its name's parts and its description's words (``min_word`` letters or more)."""
    function = tool.get("function", {})
    text = f"{function.get('name', '')} {function.get('description', '')}".replace("_", " ").lower()
    return {w for w in WORD.findall(text) if len(w) >= min_word}


def relevance(tool: dict, query_words: set[str], min_word: int) -> int:
    """Source 003's score: how many of the tool's words occur in the query."""
    return len(description_words(tool, min_word) & query_words)


def rank_tools(query: str, tools: list[dict], min_word: int) -> list[dict]:
    """``tools`` ranked by ``relevance`` to ``query``, best first; ties keep their order (a stable sort, as
    the seed)."""
    words = set(WORD.findall(query.lower()))
    return sorted(tools, key=lambda t: -relevance(t, words, min_word))


class SelectTools(BaseStrategy):
    """Offer only the tools of the current phase: the recently used ones plus the best-ranked others.

    Parameters:
        max_tools: task tools offered besides the recently used ones (source 003's ``maxN``; default 1).
        keep_recent_rounds: the tools called in this many latest rounds stay offered (default 1; 0 = rank only).
        always: tools always offered (default ``["submit"]``; the harness refuses to run without ``submit``).
        min_word: the shortest description word matched against the query (default 4 letters).
    """

    budget_guarantee = "none"
    """It removes tool schemas only (a few hundred tokens); it does not aim at the budget."""

    def __init__(
        self,
        max_tools: int = 1,
        keep_recent_rounds: int = 1,
        always: list[str] | tuple[str, ...] = ("submit",),
        min_word: int = 4,
    ) -> None:
        if int(max_tools) < 0 or int(keep_recent_rounds) < 0 or int(min_word) < 1:
            raise ValueError("select_tools: max_tools and keep_recent_rounds must be >= 0, min_word >= 1")
        self.max_tools = int(max_tools)
        self.keep_recent_rounds = int(keep_recent_rounds)
        self.always = [str(name) for name in always]
        self.min_word = int(min_word)
        self.query = ""
        self.recent: set[str] = set()
        self.offered: list[str] | None = None

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The history unchanged; reads this step's phase (query and recent tools) for ``expose_tools``."""
        head, body = split_head(messages)
        replies = [m for m in body if m.get("role") == "assistant"]
        self.query = str(replies[-1].get("content") or "") if replies else str(head[-1].get("content") or "")
        rounds = split_rounds(body)
        recent = (
            [r for r in rounds if r[0].get("role") == "assistant"][-self.keep_recent_rounds :]
            if self.keep_recent_rounds
            else []
        )
        self.recent = {name for r in recent for _, name, _ in iter_calls(r[0])}
        return list(messages)

    def select(self, tools: list[dict]) -> list[str]:
        """The names offered this step (see the module docstring)."""
        keep = {tool_name(t) for t in tools if self.kept(tool_name(t))}
        others = [t for t in tools if tool_name(t) not in keep]
        keep.update(tool_name(t) for t in rank_tools(self.query, others, self.min_word)[: self.max_tools])
        return [tool_name(t) for t in tools if tool_name(t) in keep]

    def kept(self, name: str) -> bool:
        """Whether ``name`` is offered whatever its rank: an ``always`` tool, a final tool, or a recently used one."""
        return name in self.always or name in FINAL_TOOLS or name in self.recent

    def expose_tools(self, tools: list[dict]) -> list[dict]:
        """This step's tools, in the catalogue's order; a change of the set is logged as ``tool_exposure``."""
        names = self.select(tools)
        if names != self.offered:
            if self.offered is not None:
                self.ctx.log(
                    "tool_exposure",
                    offered=names,
                    added=[n for n in names if n not in self.offered],
                    removed=[n for n in self.offered if n not in names],
                )
            self.offered = names
        return [t for t in tools if tool_name(t) in names]

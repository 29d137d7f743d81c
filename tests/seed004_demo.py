"""Source 004's context_demo, copied from the seed text (source 004, docs/sources.md), for the layered test.

``est_tokens``, ``split_rounds``, ``LayeredContext``, ``SYSTEM`` and ``fake_history`` are
the seed's code, byte for byte apart from the names prefixed ``seed_`` and comments. The
seed reports: 62 messages ~30,759 tokens; clearing only (budget 24,000) -> 62 messages
~6,017; with a summarizer (budget 4,000) -> 14 messages ~4,468.
"""

from __future__ import annotations

import json
from typing import Callable


def est_tokens(msg: dict) -> int:
    """粗估 token:中文约 1 字 1 token,英文约 4 字符 1 token。够做预算判断。"""
    text = json.dumps(msg, ensure_ascii=False)
    cjk = sum(1 for ch in text if "一" <= ch <= "鿿")
    return cjk + (len(text) - cjk) // 4 + 4


def seed_split_rounds(messages: list[dict]) -> tuple[list[dict], list[list[dict]]]:
    prefix = [m for m in messages if m["role"] == "system"]
    rounds: list[list[dict]] = []
    for m in messages:
        if m["role"] == "system":
            continue
        if m["role"] == "tool" and rounds:
            rounds[-1].append(m)
        else:
            rounds.append([m])
    return prefix, rounds


class SeedLayeredContext:
    """The seed's LayeredContext, unchanged."""

    def __init__(
        self,
        budget: int = 24_000,
        keep_tool_results: int = 3,
        keep_recent_rounds: int = 6,
        summarize: Callable[[list[dict]], str] | None = None,
    ):
        self.budget = budget
        self.keep_tool_results = keep_tool_results
        self.keep_recent_rounds = keep_recent_rounds
        self.summarize = summarize
        self.summary = ""
        self.stats = {"cleared": 0, "dropped_rounds": 0, "summaries": 0}

    def _size(self, prefix, rounds) -> int:
        return sum(est_tokens(m) for m in prefix) + sum(est_tokens(m) for r in rounds for m in r)

    def _clear_old_tool_results(self, rounds):
        tool_msgs = [m for r in rounds for m in r if m["role"] == "tool"]
        for m in tool_msgs[: max(0, len(tool_msgs) - self.keep_tool_results)]:
            if not m["content"].startswith("[已清理]"):
                m["content"] = f"[已清理] 原结果 {len(m['content'])} 字,需要时重新调用工具获取"
                self.stats["cleared"] += 1

    def prepare(self, messages: list[dict]) -> list[dict]:
        msgs = [dict(m) for m in messages]
        prefix, rounds = seed_split_rounds(msgs)
        if self._size(prefix, rounds) > self.budget:
            self._clear_old_tool_results(rounds)
        if self._size(prefix, rounds) > self.budget and len(rounds) > self.keep_recent_rounds:
            old, rounds = rounds[: -self.keep_recent_rounds], rounds[-self.keep_recent_rounds :]
            if self.summarize:
                flat = [m for r in old for m in r]
                if self.summary:
                    flat = [{"role": "user", "content": f"之前的摘要:{self.summary}"}] + flat
                self.summary = self.summarize(flat)
                self.stats["summaries"] += 1
            else:
                self.stats["dropped_rounds"] += len(old)
                self.summary = self.summary or f"(更早的 {len(old)} 轮对话已省略)"
        if self.summary:
            rounds = [[{"role": "user", "content": f"[之前进展摘要] {self.summary}"}]] + rounds
        return prefix + [m for r in rounds for m in r]


SYSTEM = {"role": "system", "content": "你是 CloudLedger 客服 Agent。" + "规则说明。" * 300}


def fake_history(turns: int) -> list[dict]:
    msgs = [SYSTEM, {"role": "user", "content": "帮我核对客户 C007 过去一年的所有发票和退款记录。"}]
    for i in range(turns):
        msgs.append({"role": "assistant", "content": "", "tool_calls": [{"id": f"c{i}", "name": "get_invoice_page"}]})
        msgs.append(
            {
                "role": "tool",
                "tool_call_id": f"c{i}",
                "content": f"第 {i} 页发票明细:" + "INV-xxxx 金额 468 已付;" * 120,
            }
        )
    return msgs


def total(msgs):
    return sum(est_tokens(m) for m in msgs)


def fake_summarize(msgs):
    return f"已核对 {sum(1 for m in msgs if m['role'] == 'tool')} 页发票,暂未发现重复扣款。"


class EstContext:
    """A StrategyContext that counts with the seed's ``est_tokens`` and no request overhead."""

    def __init__(self, budget: int, summarize: Callable[[list[dict]], str] | None = None) -> None:
        self.budget = budget
        self.events: list[tuple[str, dict]] = []
        self.summarize_calls: list[list[dict]] = []
        self._summarize = summarize or fake_summarize

    def count_tokens(self, messages):
        return total(messages)

    def count_message(self, message):
        return est_tokens(message)

    def request_overhead(self):
        return 0

    def summarize(self, messages, instructions=""):
        self.summarize_calls.append(messages)
        return self._summarize(messages)

    def log(self, event, **data):
        self.events.append((event, data))

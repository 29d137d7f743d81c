"""Source 002 §2.6.4's replace-vs-append cost model of a status message, beside the prefix-cache simulator.

Computed, no run: the status_bar preset's companion table (docs/experiments.md §4).
"""

from __future__ import annotations

from pathlib import Path

from .claims import figure
from .common import fmt_int, table

STATUS_ALPHA = float(figure("status_bar", "cost_model.alpha"))  # a cached token costs a tenth of a plain one
STATUS_GRID = [(50, 200, 10), (50, 200, 40), (200, 200, 10), (200, 200, 40), (200, 50, 40), (400, 1000, 10)]
HEADER = [
    "S (status tok)",
    "R (tok after it)",
    "N (rounds)",
    "formula C_replace",
    "formula C_append",
    "formula picks",
    "formula: C_append − C_replace",
    "simulator: append − replace",
    "simulator picks",
    "same pick",
    "append − replace, reply not cached",
]


def sized_text(tokens: int, tag: str, counter) -> str:
    """A text of exactly ``tokens`` tokens (one word per token after a short tag), distinct per ``tag``."""
    words = [tag] + ["x"] * max(0, tokens - counter.text(tag))
    text = " ".join(words)
    while counter.text(text) > tokens and len(words) > 1:
        words.pop()
        text = " ".join(words)
    return text


def status_requests(mode: str, status: int, reply: int, rounds: int, counter) -> list[tuple[list[dict], dict]]:
    """The requests (and replies) of ``rounds`` rounds with a status message of ``status`` tokens per round.

    Each round is one model call: the request ends with this round's status (``replace``: only
    the latest status, always last; ``append``: every status stays where it was injected), the
    reply has ``reply`` tokens. ``mode="none"``: no status at all (the common part's baseline).
    """
    head = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "Do the task."}]
    replies = [{"role": "assistant", "content": sized_text(reply, f"reply{n}", counter)} for n in range(rounds)]
    statuses = [{"role": "user", "content": sized_text(status, f"status{n}", counter)} for n in range(rounds)]
    out = []
    for n in range(rounds):
        if mode == "append":
            body = [m for k in range(n) for m in (statuses[k], replies[k])] + [statuses[n]]
        elif mode == "replace":
            body = replies[:n] + [statuses[n]]
        else:
            body = replies[:n] or [{"role": "user", "content": "go"}]
        out.append((head + body, replies[n]))
    return out


def simulated_cost(
    requests: list[tuple[list[dict], dict]], counter, alpha: float = STATUS_ALPHA, with_reply: bool = True
) -> float:
    """Σ over the requests of uncached + α x cached tokens, the cache being the prefix-cache simulator's.

    The profile is exact (token-level, no minimum). ``with_reply``: it holds the previous request with
    its reply, as a KV cache does (source 002 §2.3.2), so what followed the last status is cached, as the
    source assumes; without, it holds every earlier request but no reply (a provider's prompt cache).
    """
    from harness.cache_sim import CacheProfile, PrefixCacheSimulator

    profile = (
        CacheProfile("exact-kv", min_tokens=1, block=1, scope="last", include_reply=True)
        if with_reply
        else CacheProfile("exact-prompt", min_tokens=1, block=1)
    )
    sim = PrefixCacheSimulator(profile, counter)
    total = 0.0
    for messages, reply in requests:
        cached = sim.observe(messages).cached
        sim.observe_reply(reply)
        total += counter.messages(messages) - cached + alpha * cached
    return total


def _row(status: int, reply: int, rounds: int, counter) -> tuple[list, bool]:
    """One grid point: the formula's costs and pick beside the simulator's.

    Also returns whether ``replace`` is the cheaper without the reply in cache.
    """
    runs = {mode: status_requests(mode, status, reply, rounds, counter) for mode in ("replace", "append")}
    sim = {mode: simulated_cost(reqs, counter) for mode, reqs in runs.items()}
    formula_replace = (rounds - 1) * (1 - STATUS_ALPHA) * reply
    formula_append = STATUS_ALPHA * status * rounds * (rounds - 1) / 2
    formula_pick = "append" if STATUS_ALPHA * status * rounds / 2 < (1 - STATUS_ALPHA) * reply else "replace"
    sim_pick = "append" if sim["append"] < sim["replace"] else "replace"
    prompt = {mode: simulated_cost(reqs, counter, with_reply=False) for mode, reqs in runs.items()}
    row = [
        status,
        reply,
        rounds,
        fmt_int(formula_replace),
        fmt_int(formula_append),
        formula_pick,
        fmt_int(formula_append - formula_replace),
        fmt_int(sim["append"] - sim["replace"]),
        sim_pick,
        "yes" if sim_pick == formula_pick else "no",
        fmt_int(prompt["append"] - prompt["replace"]),
    ]
    return row, prompt["append"] > prompt["replace"]


def status_cost_model(results: Path | None = None) -> str:
    """Source 002 §2.6.4: C_replace ≈ (N−1)(1−α)R and C_append ≈ αSN(N−1)/2, beside the prefix-cache simulator's."""
    from harness.tokens import MESSAGE_OVERHEAD, TokenCounter

    counter = TokenCounter()
    found = [_row(status, reply, rounds, counter) for status, reply, rounds in STATUS_GRID]
    rows, replace_wins = [r for r, _ in found], sum(w for _, w in found)
    return table(HEADER, rows) + (
        f"\n\nComputed, no run: α = {STATUS_ALPHA} (a cached token costs a tenth). Each round is one model call "
        "whose request ends with the status; the prefix-cache simulator (harness/cache_sim.py, exact token "
        "matching, the previous request and its reply cached as in a KV cache) prices every request at "
        "uncached + α x cached tokens. The difference of the two modes cancels the part they share (each "
        "round's new status and reply); the source's formula drops the messages' framing tokens "
        f"({MESSAGE_OVERHEAD} per message) and the stale statuses' own first send, so the columns differ by those. "
        "Last column: the same requests under a provider's prompt cache, which holds earlier requests but not the "
        f"reply: what followed the last status was never cached, so replacing it costs nothing (the source's R is 0 "
        f"there) and `replace` is the cheaper in {replace_wins} of {len(rows)} rows."
    )

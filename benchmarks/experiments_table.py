"""Turn the experiment presets' sweep folders into markdown tables next to the seeds' published figures.

    python -m harness run -m experiment=review44            # writes results/experiments/review44/
    python benchmarks/experiments_table.py review44          # prints the table
    python benchmarks/experiments_table.py --update docs/experiments.md   # rewrites every generated block
    python benchmarks/experiments_table.py --run --update docs/experiments.md   # runs every preset first (~2 min)
    python benchmarks/experiments_table.py --update README.md --update strategies/README.md
    python benchmarks/experiments_table.py --run --check docs/experiments.md    # exit 1 if the committed tables are stale

A generated block in a markdown file sits between ``<!-- table:NAME -->`` and
``<!-- /table:NAME -->``; ``--update`` replaces what is between them and nothing else. NAME is a
preset (``review44``, ``invoice_layers``, ``compression_six``, ``status_bar``,
``cache_pitfalls``, ``strategy_zoo``, ``attention_model``, ``lost_in_middle``, ``context_growth``,
``three_versions``, ``review44_budget``), a preset's verdict (``NAME_verdict``: seed figure | ours |
reproduced / partly / not | reason, computed from the same rows) or another table derived from a
preset's sweep (``DERIVED``), a computed demo (``seed004_demo``, ``semantic_filter``, ``status_cost_model``: seed 002 §2.6.4's replace-vs-append formula beside the prefix-cache simulator; no run needed)
or ``quickstart`` (the console output of the README's main job).
Numbers come from the trial rows (``harness.analysis.load_trials``); nothing is typed by hand.
``--run`` runs each preset's sweep in this process (the same configs and folder names as
``python -m harness run -m experiment=NAME``) into ``--results``; ``--check`` compares the
generated blocks with a committed file, apart from wall-time columns, and exits 1 when they differ
(tests/test_docs_*.py do the same, one file per doc).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _common import compose  # noqa: E402  (composes a run config without a Hydra job)
from harness.analysis import load_trials, run_dirs  # noqa: E402

RESULTS = ROOT / "results" / "experiments"
NOTE = (
    "Reference agent (scripted, not an LLM), profile perfect (the noise-free instrument); means per trial over "
    "every instance x trial of the cell."
)
NOTE_REALISTIC = (
    "Reference agent (scripted, not an LLM), profile realistic (batching, seeded variation, attention "
    "model; docs/reference_agent.md); means per trial over every instance x trial of the cell."
)


def _trials(name: str, results: Path, curves: bool = False):
    folder = results / name
    if not folder.exists():
        raise SystemExit(f"{folder}: no results; run: python -m harness run -m experiment={name}")
    trials = load_trials(run_dirs([folder]), curves=curves)
    trials["cell"] = trials["run_dir"].map(lambda p: Path(p).name.split("-", 1)[-1])
    return trials


def _cells(trials, order):
    present = list(dict.fromkeys(trials["cell"]))
    return [c for c in order if c in present] + [c for c in present if c not in order]


def _int(x) -> str:
    return f"{x:,.0f}"


def _pct(x) -> str:
    return f"{100 * x:.0f}%"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _col(frame, name, default=0):
    return frame[name].fillna(default) if name in frame else default


# ------------------------------------------------------------------------------------------- review44

REVIEW44_SEED = {  # seed 000 §7.3: input tokens, re-read rate, file coverage, quality (LLM judge, /10)
    "none": ("不压实", "915,591", "27%", "16/44", "6.0"),
    "headtail_8k": ("头尾压实，预算 8K", "276,390", "55%", "14/44", "4.0"),
    "headtail_8k_nohook": ("头尾压实 8K，无完成检查钩子", "144,136", "15%", "17/44", "5.5"),
    "headtail_15k": ("头尾压实，预算 15K", "402,102", "46%", "14/44", "5.1"),
    "isolate": ("隔离（子智能体分摊）", "118,824", "0%", "48 (summed)", "4.5"),
}


def review44(results: Path) -> str:
    t = _trials("review44", results)
    rows = []
    for cell in _cells(t, list(REVIEW44_SEED)):
        g = t[t["cell"] == cell]
        label, s_tok, s_rr, s_cov, s_q = REVIEW44_SEED.get(cell, (cell, "", "", "", ""))
        main, sub = (
            g["input_tokens"].mean(),
            _col(g, "subagent_input_tokens").mean() if "subagent_input_tokens" in g else 0,
        )
        total = g["total_input_tokens"].mean()
        tokens = _int(total) + (f" ({_int(main)} main + {_int(sub)} sub)" if sub else "")
        files_total = int(g["files_total"].iloc[0])
        cov = f"{g['files_read'].mean():.1f}/{files_total}"
        if "files_read_summed" in g and g["files_read_summed"].notna().any():
            cov += f" ({g['files_read_summed'].mean():.1f} summed)"
        rereads = (g["rereads"] + _col(g, "subagent_rereads")).sum()
        reads = (g["reads"] + _col(g, "subagent_reads")).sum()
        outcomes = ", ".join(f"{k} {v}" for k, v in g["outcome"].value_counts().items())
        rows.append(
            [
                f"`{cell}` {label}",
                s_tok,
                tokens,
                s_rr,
                _pct(rereads / reads if reads else 0),
                s_cov,
                cov,
                s_q,
                f"{g['score'].mean():.2f} ({int(g['success'].sum())}/{len(g)})",
                f"{g['steps'].mean():.0f}",
                _int(g["hook_continues"].mean()) if "hook_continues" in g else "0",
                outcomes,
            ]
        )
    return (
        _table(
            [
                "config",
                "seed input tok",
                "ours input tok",
                "seed re-read",
                "ours re-read",
                "seed coverage",
                "ours coverage (files read / total)",
                "seed quality /10",
                "ours score (success)",
                "steps",
                "hook refusals",
                "outcomes",
            ],
            rows,
        )
        + f"\n\n{NOTE} Re-read rate: (re-reads, sub-agents' included) / reads."
    )


# ------------------------------------------------------------------------------------- invoice_layers

INVOICE_ORDER = {
    "none": "不管理",
    "clear": "只清理工具结果",
    "clear_summary": "清理 + 摘要 (layered, summarize: true)",
    "clear_notes": "清理 + 外部笔记 (notes, base clear_tool_results)",
}


def invoice_layers(results: Path) -> str:
    t = _trials("invoice_layers", results)
    rows = []
    pricing = ", ".join(sorted(set(map(str, t.get("pricing", ["none"])))))
    for cell in _cells(t, list(INVOICE_ORDER)):
        g = t[t["cell"] == cell]
        total_in = g["total_input_tokens"]
        cached = g["total_cached_tokens"]
        hit = cached.sum() / total_in.sum() if total_in.sum() else 0
        rows.append(
            [
                f"`{cell}` {INVOICE_ORDER.get(cell, '')}",
                f"{g['success'].mean():.0%} ({int(g['success'].sum())}/{len(g)})",
                f"{g['score'].mean():.2f}",
                _int(total_in.mean()),
                _int(_col(g, "summarizer_input_tokens").mean()),
                _pct(hit),
                f"{g['cost'].mean():.4f}",
                f"{g['wall_s'].mean():.3f}",
                _int(g["peak_context"].mean()),
                f"{g['compactions'].mean():.0f}",
            ]
        )
    return _table(
        [
            "strategy",
            "success rate",
            "mean score",
            "mean input tok (all calls)",
            "of which summarizer",
            "cache-hit ratio",
            f"mean cost (USD, pricing: {pricing})",
            "mean wall time (s)",
            "peak context",
            "compactions",
        ],
        rows,
    ) + (
        f'\n\n{NOTE} Seed 004 leaves this table blank ("我没有在真模型上跑过这个实验,表格留给你填"); wall time is '
        "the harness's own time on the reference agent (no model latency)."
    )


def seed004_demo(results: Path | None = None) -> str:
    """Seed 004's LayeredContext demo: the seed's own code and ours on the same history and counting."""
    sys.path.insert(0, str(ROOT))
    from strategies.layered import Layered
    from tests.seed004_demo import EstContext, SeedLayeredContext, fake_history, fake_summarize, total

    hist = fake_history(30)
    seed_clear = SeedLayeredContext(budget=24_000).prepare(fake_history(30))
    seed_sum = SeedLayeredContext(budget=4_000, summarize=fake_summarize).prepare(fake_history(30))
    ours = []
    for budget, summarize in ((24_000, False), (4_000, True)):
        strategy = Layered(summarize=summarize)
        strategy.bind(EstContext(budget))
        out = strategy.prepare(fake_history(30))
        ours.append((len(out), total(out)))
    rows = [
        ["history", "62 messages, ~30,759 (seed text)", f"{len(hist)} messages, {total(hist):,}", "(same history)"],
        [
            "clearing only, budget 24,000",
            "62 messages, ~6,017 (seed text)",
            f"{len(seed_clear)} messages, {total(seed_clear):,}",
            f"{ours[0][0]} messages, {ours[0][1]:,}",
        ],
        [
            "with a summarizer, budget 4,000",
            "14 messages, ~4,468 (seed text)",
            f"{len(seed_sum)} messages, {total(seed_sum):,}",
            f"{ours[1][0]} messages, {ours[1][1]:,}",
        ],
    ]
    return (
        _table(["", "seed 004 (published)", "seed 004's code, rerun here", "ours (`strategies.layered.Layered`)"], rows)
        + "\n\nCounted with the seed's own `est_tokens` (tests/seed004_demo.py); the differences are "
        "explained token by token in strategies/README.md."
    )


# ------------------------------------------------------------------------------------ compression_six

SIX = ["none", "sliding_window", "headtail", "summarize", "adaptive_window", "offload", "context_aware_compression"]


def compression_six(results: Path) -> str:
    t = _trials("compression_six", results)
    t["total_in"] = t["total_input_tokens"]
    base = t[t["cell"] == "none"]
    rows = []
    for cell in _cells(t, SIX):
        g = t[t["cell"] == cell]
        vs = g["total_in"].mean() / base["total_in"].mean() if len(base) else float("nan")
        per_step = g["total_in"].sum() / g["steps"].sum()
        base_step = base["total_in"].sum() / base["steps"].sum() if len(base) else float("nan")
        ratio = (g["peak_context"] / g["final_history_tokens"]).mean()
        outcomes = ", ".join(f"{k} {v}" for k, v in g["outcome"].value_counts().items())
        same = 1 - _same_steps_saving(g, base)[0] if len(base) else float("nan")
        rows.append(
            [
                f"`{cell}`",
                _int(g["total_in"].mean()),
                f"{vs:.2f}",
                f"{per_step / base_step:.2f}",
                f"{same:.2f}",
                _int(g["peak_context"].mean()),
                _int(g["final_history_tokens"].mean()),
                f"{ratio:.2f}",
                f"{g['steps'].mean():.0f}",
                f"{int(g['success'].sum())}/{len(g)} ({g['score'].mean():.2f})",
                outcomes,
            ]
        )
    return _table(
        [
            "strategy",
            "mean input tok (all calls)",
            "vs none (total)",
            "vs none (per step)",
            f"vs none (steps 1-{int(base['steps'].min()) if len(base) else 0})",
            "peak context",
            "full history at the end",
            "context ratio (peak / full history)",
            "steps",
            "success (score)",
            "outcomes",
        ],
        rows,
    ) + (
        f"\n\n{NOTE} `none` stops at the context overflow, so its total covers fewer steps than the others; "
        '"per step" compares input tokens per model call instead, and "steps 1-N" the input tokens of every call '
        "made in the steps `none` ran (the fairest of the three). Seed 002 exp 2-10 (Kimi, 128K): no compression "
        "overflows at iteration 5 (~165,000 tokens); context-aware compression saves about 76% of the tokens with "
        "the fewest iterations (tied)."
    )


def _history_chars(run_dir: str | Path, trial_id: str) -> dict[str, int]:
    """Characters of one trial's full history by origin, and what ``context_aware_compression`` made of its pages.

    ``agent``: the agent's replies; ``tool``: the tool results as the tools returned them;
    ``result_chars``/``compressed_chars``: the results compressed and their compressed texts (its
    ``compaction`` events; 0 for other strategies).
    """
    from harness.records import read_transcript

    events = read_transcript(run_dir, trial_id)
    bodies = {e["ref"]: e["message"] for e in events if e.get("event") == "message"}
    size = lambda ref: len(str(bodies.get(ref, {}).get("content") or ""))  # noqa: E731
    out = {
        "agent": sum(size(e["ref"]) for e in events if e.get("event") == "reply"),
        "tool": sum(size(e["ref"]) for e in events if e.get("event") == "tool"),
        "result_chars": 0,
        "compressed_chars": 0,
    }
    for e in events:
        data = e.get("data") or {}
        if e.get("event") == "strategy" and data.get("method") == "context_aware_compression":
            out["result_chars"] += data.get("result_chars", 0)
            out["compressed_chars"] += data.get("compressed_chars", 0)
    return out


def _cell_chars(g) -> dict[str, int]:
    """``_history_chars`` summed over the trials of one cell (their transcripts)."""
    total: dict[str, int] = {}
    for run_dir, trial_id in zip(g["run_dir"], g["trial_id"]):
        for key, value in _history_chars(run_dir, trial_id).items():
            total[key] = total.get(key, 0) + value
    return total


def _same_steps_saving(g, base) -> tuple[float, int]:
    """1 - input tokens (every kind of call) of ``g`` over the first N steps / ``base``'s, N = ``base``'s fewest steps."""
    from harness.analysis import load_steps

    common = int(base["steps"].min())

    def tokens(cell) -> float:
        steps = load_steps(sorted(set(cell["run_dir"])))
        steps = steps[steps["trial_id"].isin(set(cell["trial_id"])) & (steps["step"] <= common)]
        return float(steps["prompt_tokens"].sum())

    return 1 - tokens(g) / tokens(base), common


def compression_six_verdict(results: Path) -> str:
    """Seed 002 exp 2-10's figures | ours | verdict | why, computed from the compression_six sweep."""
    t = _trials("compression_six", results)
    cell = lambda name: t[t["cell"] == name]  # noqa: E731
    none, cac, adaptive = cell("none"), cell("context_aware_compression"), cell("adaptive_window")
    finished = t[(t["cell"] != "none") & (t["outcome"] == "submitted")]
    per_step = lambda g: g["total_input_tokens"].sum() / g["steps"].sum()  # noqa: E731
    chars = _cell_chars(cac)
    rows = []
    overflowed = int((none["outcome"] == "context_overflow").sum())
    full = finished["final_history_tokens"].mean()
    rows.append(
        [
            "no compression overflows at iteration 5 of 7 (~165,000 tokens > 128K); 7 results, ~367,000 characters",
            f"`none` overflows in {overflowed}/{len(none)} trials at step {none['steps'].mean():.0f} of "
            f"~{finished['steps'].mean():.0f} ({_int(none['peak_context'].mean())} tokens); "
            f"{_int(chars.get('tool', 0) / max(len(cac), 1))} characters of tool output per trial",
            "reproduced" if overflowed == len(none) else "not",
            f"the full history ends at {_int(full)} tokens, {full / t['budget'].iloc[0]:.1f}x the budget (the seed's "
            "characters are Chinese, ~2 per token; ours are English, ~4 per token, so the token ratio is matched)",
        ]
    )
    saving, common = _same_steps_saving(cac, none)
    share = chars.get("agent", 0) / max(chars.get("agent", 0) + chars.get("tool", 0), 1)
    rows.append(
        [
            "context-aware compression saves ~76% of the tokens against no compression",
            f"{100 * saving:.0f}% fewer input tokens than `none` over the {common} steps `none` ran (summarizer "
            f"calls included); per call over its whole run {100 * (1 - per_step(cac) / per_step(none)):.0f}%; total "
            f"{cac['total_input_tokens'].mean() / none['total_input_tokens'].mean():.2f}x (`none` stops early)",
            "reproduced" if saving >= 0.66 else "partly" if saving > 0.1 else "not",
            f"the agent's own replies (recited notes and progress) are {100 * share:.0f}% of the history's characters "
            "and no compressor touches them; the seed's 7 pages of ~52,000 characters dwarf its agent's words",
        ]
    )
    ratio = chars.get("compressed_chars", 0) / max(chars.get("result_chars", 0), 1)
    rows.append(
        [
            "~150K characters of pages compressed to ~2K (1.3%), founders' names and moves kept",
            f"pages compressed to {100 * ratio:.0f}% of their characters; success {int(cac['success'].sum())}/{len(cac)} "
            f"(score {cac['score'].mean():.2f})",
            "reproduced" if ratio <= 0.05 and cac["success"].all() else "partly" if cac["success"].all() else "not",
            "the reference summarizer writes its four-part state (every move noted so far, the progress line) for each "
            "page, not a one-page extract; the moves survive because the agent noted them",
        ]
    )
    fewest = finished.groupby("cell")["steps"].mean()
    rows.append(
        [
            "context-aware compression needs the fewest iterations (tied)",
            f"{cac['steps'].mean():.0f} steps; fewest of the others: {fewest.drop('context_aware_compression', errors='ignore').min():.0f}",
            "reproduced" if cac["steps"].mean() <= fewest.min() + 1 else "not",
            "its agent re-reads nothing: every page it needs again is summarized in its own notes"
            if cac["rereads"].sum() == 0
            else f"{int(cac['rereads'].sum())} re-reads",
        ]
    )
    rows.append(
        [
            "adaptive window: triggers at 80% of 128K (102,400) and compresses every uncompressed result at once",
            f"peak {_int(adaptive['peak_context'].mean())} tokens, {adaptive['compactions'].mean():.0f} batches per trial",
            "reproduced" if adaptive["peak_context"].max() <= 0.8 * t["budget"].iloc[0] * 1.01 else "partly",
            "the request never passes the trigger by more than the newest round",
        ]
    )
    return verdict_table(rows) + (
        f"\n\n{NOTE} Computed from the compression_six sweep and its transcripts (characters of the full history). "
        "`reproduced` for the 76% claim needs a saving of two thirds or more over the steps `none` ran, `partly` "
        "above 10%."
    )


# ---------------------------------------------------------------------------------------- status_bar

STATUS_ORDER = {
    "none": "whole history (nothing lost)",
    "headtail": "对照组 A: no status bar (headtail 8K)",
    "status_replace": "对照组 B: status bar, replace (headtail 8K)",
    "status_append": "对照组 B: status bar, append (headtail 8K)",
}


def status_bar(results: Path) -> str:
    t = _trials("status_bar", results)
    rows = []
    for cell in _cells(t, list(STATUS_ORDER)):
        g = t[t["cell"] == cell]
        rows.append(
            [
                f"`{cell}` {STATUS_ORDER.get(cell, '')}",
                f"{int(g['success'].sum())}/{len(g)}",
                f"{g['score'].mean():.2f}",
                f"{g['call_violations'].mean():.1f}",
                f"{int((g['call_violations'] > 0).sum())}/{len(g)}",
                f"{g['max_calls_per_merchant'].max():.0f}",
                _int(g["input_tokens"].mean()),
                _int(g["peak_context"].mean()),
                f"{g['steps'].mean():.0f}",
            ]
        )
    return _table(
        [
            "arm",
            "success",
            "mean score",
            "mean violations (4th+ calls)",
            "trials with a violation",
            "max calls to one merchant",
            "mean input tok",
            "peak context",
            "steps",
        ],
        rows,
    ) + (
        f"\n\n{NOTE} Seed 002 exp 2-8 (Qwen3-0.6B, qualitative): without the status bar the model often breaks "
        "the 3-call limit; with it, it keeps to it."
    )


# ------------------------------------------------ status_bar: seed 002 §2.6.4's replace-vs-append cost model

STATUS_ALPHA = 0.1  # the seed's α: a cached token costs a tenth of a plain one
STATUS_GRID = [(50, 200, 10), (50, 200, 40), (200, 200, 10), (200, 200, 40), (200, 50, 40), (400, 1000, 10)]


def _sized_text(tokens: int, tag: str, counter) -> str:
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
    replies = [{"role": "assistant", "content": _sized_text(reply, f"reply{n}", counter)} for n in range(rounds)]
    statuses = [{"role": "user", "content": _sized_text(status, f"status{n}", counter)} for n in range(rounds)]
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
    its reply, as a KV cache does (seed 002 §2.3.2), so what followed the last status is cached, as the
    seed assumes; without, it holds every earlier request but no reply (a provider's prompt cache).
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


def status_cost_model(results: Path | None = None) -> str:
    """Seed 002 §2.6.4: C_replace ≈ (N−1)(1−α)R and C_append ≈ αSN(N−1)/2, beside the prefix-cache simulator's."""
    from harness.tokens import MESSAGE_OVERHEAD, TokenCounter

    counter = TokenCounter()
    rows, replace_wins = [], 0
    for status, reply, rounds in STATUS_GRID:
        runs = {mode: status_requests(mode, status, reply, rounds, counter) for mode in ("replace", "append")}
        sim = {mode: simulated_cost(reqs, counter) for mode, reqs in runs.items()}
        seed_replace = (rounds - 1) * (1 - STATUS_ALPHA) * reply
        seed_append = STATUS_ALPHA * status * rounds * (rounds - 1) / 2
        seed_pick = "append" if STATUS_ALPHA * status * rounds / 2 < (1 - STATUS_ALPHA) * reply else "replace"
        sim_pick = "append" if sim["append"] < sim["replace"] else "replace"
        prompt = {mode: simulated_cost(reqs, counter, with_reply=False) for mode, reqs in runs.items()}
        replace_wins += prompt["append"] > prompt["replace"]
        rows.append(
            [
                status,
                reply,
                rounds,
                _int(seed_replace),
                _int(seed_append),
                seed_pick,
                _int(seed_append - seed_replace),
                _int(sim["append"] - sim["replace"]),
                sim_pick,
                "yes" if sim_pick == seed_pick else "no",
                _int(prompt["append"] - prompt["replace"]),
            ]
        )
    return _table(
        [
            "S (status tok)",
            "R (tok after it)",
            "N (rounds)",
            "seed C_replace",
            "seed C_append",
            "seed picks",
            "seed: C_append − C_replace",
            "simulator: append − replace",
            "simulator picks",
            "same pick",
            "append − replace, reply not cached",
        ],
        rows,
    ) + (
        f"\n\nComputed, no run: α = {STATUS_ALPHA} (a cached token costs a tenth). Each round is one model call "
        "whose request ends with the status; the prefix-cache simulator (harness/cache_sim.py, exact token "
        "matching, the previous request and its reply cached as in a KV cache) prices every request at "
        "uncached + α x cached tokens. The difference of the two modes cancels the part they share (each "
        "round's new status and reply); the seed's formula drops the messages' framing tokens "
        f"({MESSAGE_OVERHEAD} per message) and the stale statuses' own first send, so the columns differ by those. "
        "Last column: the same requests under a provider's prompt cache, which holds earlier requests but not the "
        f"reply: what followed the last status was never cached, so replacing it costs nothing (the seed's R is 0 "
        f"there) and `replace` is the cheaper in {replace_wins} of {len(rows)} rows."
    )


# ------------------------------------------------------------------------------------ cache_pitfalls

PITFALLS = {
    "none": "append-only baseline",
    "pitfall_timestamp": "timestamp at the head of the system prompt",
    "pitfall_tool_order": "tools re-sorted by use frequency",
    "pitfall_window": "window of the last 10 rounds",
    "pitfall_flatten": 'flattened "USER: … ASSISTANT: …" text',
    "pitfall_user_config": "live account state at the head of the task message",
    "pitfall_json_keys": "JSON keys re-serialized in a random order",
    "pitfall_tool_churn": "a helper tool loaded, another unloaded, every turn",
    "select_tools": "dynamic tool exposure (seed 003 SelectTools; not a pitfall)",
}


def _hit_ratio(g) -> float:
    """Cached (simulated when recorded) over input tokens of the agent's calls, pooled over the trials of ``g``."""
    cached = g["sim_cached_tokens"] if "sim_cached_tokens" in g else g["cached_tokens"]
    return cached.sum() / g["input_tokens"].sum() if g["input_tokens"].sum() else 0.0


def cache_pitfalls(results: Path) -> str:
    t = _trials("cache_pitfalls", results)
    sim = "sim_cached_tokens" in t
    rows = []
    pricing = ", ".join(sorted(set(map(str, t.get("pricing", ["none"])))))
    base = _hit_ratio(t[t["cell"] == "none"]) if (t["cell"] == "none").any() else float("nan")
    for cell in _cells(t, list(PITFALLS)):
        g = t[t["cell"] == cell]
        cached = g["sim_cached_tokens"] if sim else g["cached_tokens"]
        hit = _hit_ratio(g)
        sources = ", ".join(sorted(set(map(str, g["cached_source"]))))
        rows.append(
            [
                f"`{cell}` {PITFALLS.get(cell, '')}",
                _pct(hit),
                f"{100 * (base - hit):+.0f}",
                _int(g["input_tokens"].mean()),
                _int(cached.mean()),
                f"{g['cost'].mean():.4f}",
                f"{int(g['success'].sum())}/{len(g)}",
                f"{g['steps'].mean():.0f}",
                f"{g['reread_rate'].mean():.2f}",
                sources,
            ]
        )
    return _table(
        [
            "strategy",
            "cache-hit ratio",
            "hit loss vs `none` (points)",
            "mean input tok",
            "mean cached tok",
            f"mean cost (USD, {pricing})",
            "success",
            "steps",
            "re-read rate",
            "cached_source",
        ],
        rows,
    ) + (
        f"\n\n{NOTE} Cached tokens: "
        + (
            "the harness's prefix-cache simulator (`sim_cached_tokens`)."
            if sim
            else "PENDING: this checkout has no prefix-cache simulator yet, so cached tokens "
            "are 0 for every row (the scripted backend reports none)."
        )
    )


# ------------------------------------------------------- cache_pitfalls: select_tools and the verdicts


def _pair(t, family: str, cell: str):
    return t[(t["family"] == family) & (t["cell"] == cell)]


def select_tools_sides(results: Path) -> str:
    """``select_tools`` beside ``none`` per family: schema tokens saved against cache hits lost (seed 003 vs seed 004)."""
    t = _trials("cache_pitfalls", results)
    rows = []
    for family in sorted(set(t["family"])):
        none, sel = _pair(t, family, "none"), _pair(t, family, "select_tools")
        if none.empty or sel.empty:
            continue
        per_call = lambda g: g["tool_schema_tokens"].sum() / g["steps"].sum()  # noqa: E731
        saved_per_call = sel["tool_schema_tokens_saved"].sum() / sel["steps"].sum()
        lost_per_break = sel["cache_lost_tokens"].sum() / sel["cache_breaks"].sum() if sel["cache_breaks"].sum() else 0
        repay = (
            (1 - STATUS_ALPHA) * lost_per_break / (STATUS_ALPHA * saved_per_call) if saved_per_call else float("nan")
        )
        rows.append(
            [
                family,
                f"{per_call(none):.0f} → {per_call(sel):.0f}",
                _int(sel["tool_schema_tokens_saved"].mean()),
                _int(sel["cache_lost_tokens"].mean()),
                f"{sel['cache_breaks'].mean():.0f}",
                "-" if repay != repay else _int(repay),
                f"{sel['unoffered_calls'].mean():.0f}",
                f"{none['steps'].mean():.0f} → {sel['steps'].mean():.0f}",
                f"{_int(none['input_tokens'].mean())} → {_int(sel['input_tokens'].mean())}",
                f"{none['cost'].mean():.4f} → {sel['cost'].mean():.4f}",
            ]
        )
    return _table(
        [
            "family",
            "tool-schema tok per call (`none` → `select_tools`)",
            "schema tok saved per trial",
            "cached tok lost at breaks",
            "cache breaks",
            "calls a set must last to repay a break",
            "calls to a hidden tool",
            "steps",
            "input tok",
            "cost (USD)",
        ],
        rows,
    ) + (
        f'\n\n{NOTE} Both sides of dynamic tool exposure: seed 003 ("工具定义放 50 个不如动态暴露 10 个") counts the '
        'schema tokens saved; seed 004 ("工具定义通常放在上下文最前面,一改就让整个缓存失效") the cache hits lost at each '
        "change of the offered set and the calls to a tool no longer offered (answered with an error, not executed). "
        f"A schema left out would have been cached in `none`, so each call saves only α = {STATUS_ALPHA} of its price, "
        f"while a break re-prices the lost tokens at 1 − α: a set must last (1 − α) x (tokens lost per break) / "
        "(α x schema tokens saved per call) calls to repay one break."
    )


PITFALL_SEED = {  # what the seeds say each anti-pattern does (quoted), and the measure that tests it
    "pitfall_timestamp": "seed 002 exp 2-3: the first differing token is at the head, so nothing after it is reused",
    "pitfall_user_config": 'seed 002 exp 2-3 动态用户配置: calls left and balance "塞进上下文前部" break the cache',
    "pitfall_tool_order": 'seed 002 exp 2-3: "换顺序就从第一个变动的工具起全部失效"',
    "pitfall_window": 'seed 002 exp 2-3: "前缀每轮都变,关键结果还会滑出去"',
    "pitfall_flatten": 'seed 002 exp 2-3: "破坏性最大:重复执行、忽略工具结果"',
    "pitfall_json_keys": 'seed 004 二: unstable JSON key order "缓存也会悄悄失效"',
    "pitfall_tool_churn": 'seed 004 三: adding and removing tools "一改就让整个缓存失效"',
    "select_tools": "seed 003: expose few tools (saves tokens); seed 004: changing them breaks the cache",
}


def _loss_verdict(loss: float, full: float = 50.0) -> str:
    """``reproduced`` when the hit ratio falls by ``full`` points or more, ``partly`` from 1 point, else ``not``."""
    return "reproduced" if loss >= full else "partly" if loss >= 1 else "not"


def _families_hit(t, cell: str) -> list[str]:
    """The families where ``cell`` loses at least one point of cache hits against ``none``."""
    return [
        f for f in sorted(set(t["family"])) if _hit_ratio(_pair(t, f, "none")) - _hit_ratio(_pair(t, f, cell)) >= 0.01
    ]


def _schema_range(t) -> str:
    """The smallest and largest tool-schema tokens per call of ``none`` over the families (``150-460``)."""
    none = t[t["cell"] == "none"]
    per_call = [g["tool_schema_tokens"].sum() / g["steps"].sum() for _, g in none.groupby("family")]
    return f"{min(per_call):.0f}-{max(per_call):.0f}"


def pitfall_verdict(t, cell: str, loss: float) -> tuple[str, str]:
    """The verdict on one row of ``cache_pitfalls`` and why, from the measured figures."""
    g, none = t[t["cell"] == cell], t[t["cell"] == "none"]
    same_steps = g["steps"].sum() == none["steps"].sum() and g["success"].sum() == none["success"].sum()
    behaviour = (
        "same steps and answers as `none`"
        if same_steps
        else f"{g['steps'].mean():.0f} steps and {int(g['success'].sum())}/{len(g)} successes against `none`'s {none['steps'].mean():.0f} and {int(none['success'].sum())}/{len(none)}"
    )
    if cell == "pitfall_flatten":
        verdict = "reproduced" if g["success"].sum() < none["success"].sum() else "not"
        return verdict, f"the damage is to the agent, not the cache (hits {100 * loss:+.0f} points): {behaviour}"
    if cell == "select_tools":
        saved, lost = g["tool_schema_tokens_saved"].mean(), g["cache_lost_tokens"].mean()
        cheaper = g["cost"].mean() < none["cost"].mean()
        return (
            "reproduced" if cheaper else "partly",
            f"per trial it saves {saved:,.0f} schema tokens, loses {lost:,.0f} cached tokens at "
            f"{g['cache_breaks'].mean():.1f} breaks and makes {g['unoffered_calls'].mean():.1f} calls to hidden tools "
            f"({g['steps'].mean() - none['steps'].mean():+.1f} steps); cost {g['cost'].mean() / none['cost'].mean():.2f}x "
            "`none`'s"
            + (
                ""
                if cheaper
                else f"; these tasks' schemas are {_schema_range(t)} tokens a call, too "
                "few for the seed's saving to outweigh the breaks"
            ),
        )
    families = _families_hit(t, cell)
    where = (
        "every family"
        if len(families) == len(set(t["family"]))
        else ("only " + ", ".join(families) if families else "no family")
    )
    reason = f"hits {100 * loss:.0f} points below `none` ({where}); {behaviour}"
    if cell in ("pitfall_tool_order", "pitfall_tool_churn") and _loss_verdict(100 * loss) == "partly":
        reason += "; a break costs only the requests since that tool list was last sent (the cache keeps every earlier prefix)"
    if cell == "pitfall_json_keys" and len(families) < len(set(t["family"])):
        reason += "; only objects with two keys or more can change order (one-argument calls, text results are immune)"
    return _loss_verdict(100 * loss), reason


def cache_pitfalls_verdict(results: Path) -> str:
    """Seed figure | ours | verdict | reason, for every row of ``cache_pitfalls`` but the baseline."""
    t = _trials("cache_pitfalls", results)
    base = _hit_ratio(t[t["cell"] == "none"])
    rows = []
    for cell in [c for c in _cells(t, list(PITFALLS)) if c != "none"]:
        hit = _hit_ratio(t[t["cell"] == cell])
        verdict, reason = pitfall_verdict(t, cell, base - hit)
        rows.append(
            (
                f"`{cell}`: {PITFALL_SEED.get(cell, 'breaks the prefix cache')}",
                f"hits {_pct(hit)} (`none` {_pct(base)})",
                verdict,
                reason,
            )
        )
    return verdict_table(rows) + (
        f"\n\n{NOTE} Verdicts are computed: `reproduced` when the cache-hit ratio falls by 50 points or more (the "
        "seeds say the cache is lost), `partly` from 1 point, `not` below; `pitfall_flatten` is judged on success, "
        "`select_tools` on both sides."
    )


# -------------------------------------------------------------------------------------- strategy_zoo

ZOO = [
    "none",
    "sliding_window",
    "headtail",
    "clear_tool_results",
    "summarize",
    "layered",
    "offload",
    "adaptive_window",
    "status_bar",
    "notes",
    "isolate",
]


def zoo_cell(g) -> list[str]:
    """Success, mean tokens of all calls, re-read rate and budget adherence of one strategy x budget cell."""
    over = int((g["over_budget_steps"] > 0).sum()) if "over_budget_steps" in g else 0
    ratio = g["max_budget_ratio"].max() if "max_budget_ratio" in g else float("nan")
    held = "yes" if over == 0 else f"no ({over}/{len(g)}, max {ratio:.2f}x)"
    from harness.analysis import pass_hat_k

    per_task = [(len(t), int(t["success"].sum())) for _, t in g.groupby("instance_id")]
    k = min(n for n, _ in per_task)
    return [
        f"{int(g['success'].sum())}/{len(g)}",
        f"{pass_hat_k(per_task, k):.2f}" if k > 1 else "–",
        _int(g["total_input_tokens"].mean()),
        _pct(g["pooled_rr"].iloc[0]),
        held,
        f"{int(g['thrashing'].fillna(False).astype(bool).sum())}",
    ]


def strategy_zoo(results: Path) -> str:
    t = _trials("strategy_zoo", results, curves=True)  # older records get today's curve and budget rules
    t["budget_label"] = t["budget"].map(lambda b: f"{int(b) // 1000}k")
    rows = []
    for strategy in [s for s in ZOO if s in set(t["strategy"])]:
        for budget in ("8k", "25k"):
            g = t[(t["strategy"] == strategy) & (t["budget_label"] == budget)].copy()
            if g.empty:
                continue
            g["pooled_rr"] = g["rereads"].sum() / g["reads"].sum() if g["reads"].sum() else 0.0
            rows.append([f"`{strategy}`", budget, *zoo_cell(g)])
    return _table(
        [
            "strategy",
            "budget",
            "success",
            "pass^k (k = trials)",
            "mean input tok (all calls)",
            "re-read rate",
            "held the budget (trials over, max ratio)",
            "thrashing trials",
        ],
        rows,
    ) + (
        f"\n\n{NOTE_REALISTIC} {_suite_size(t)}. Input tokens count every model call of a "
        "trial: agent, summarizer, sub-agents and stop hook. A trial did not hold the budget when any of its "
        "requests was larger than the budget (`over_budget_steps` > 0)."
    )


def _suite_size(t) -> str:
    """``Default suite (F families x I instances, T trials)``, counted from the trial rows."""
    families = t["family"].nunique()
    instances = t.groupby("family")["instance_id"].nunique().max()
    trials = t.groupby(["strategy", "budget", "instance_id"]).size().max()
    return f"Default suite ({families} families x {instances} instances, {trials} trials)"


def discrimination(results: Path) -> str:
    """Family x strategy x budget success of the strategy_zoo sweep, and which strategies fail where ``none`` succeeds."""
    t = _trials("strategy_zoo", results)
    t["budget_label"] = t["budget"].map(lambda b: f"{int(b) // 1000}k")
    strategies = [s for s in ZOO if s in set(t["strategy"])]
    rows = []
    for family in sorted(set(t["family"])):
        for budget in ("8k", "25k"):
            g = t[(t["family"] == family) & (t["budget_label"] == budget)]
            rate = {s: g[g["strategy"] == s]["success"].mean() for s in strategies}
            worse = [s for s in strategies[1:] if rate[s] < rate["none"]]
            rows.append(
                [
                    family,
                    budget,
                    *[
                        f"{int(g[g['strategy'] == s]['success'].sum())}/{len(g[g['strategy'] == s])}"
                        for s in strategies
                    ],
                    str(len(worse)),
                ]
            )
    return _table(["family", "budget", *[f"`{s}`" for s in strategies], "strategies below `none`"], rows) + (
        f"\n\n{NOTE_REALISTIC} A family discriminates when strategies fail where `none` succeeds; the last column "
        "counts the strategies whose success rate is below `none`'s in that family and budget."
    )


def zoo_summary(results: Path) -> dict[tuple[str, str], tuple[int, int, float]]:
    """(strategy, budget) -> (successes, trials, mean input tokens of all calls) of a strategy_zoo sweep."""
    t = _trials("strategy_zoo", results)
    t["budget_label"] = t["budget"].map(lambda b: f"{int(b) // 1000}k")
    return {
        (s, b): (
            int(g["success"].sum()),
            len(g),
            float(g["total_input_tokens"].mean()),
            int((g["over_budget_steps"] > 0).sum()),
        )
        for (s, b), g in t.groupby(["strategy", "budget_label"])
    }


def zoo_ranks(summary: dict, budget: str) -> dict[str, int]:
    """Rank of each strategy at ``budget``: most successes first, then fewest input tokens."""
    cells = sorted(
        (k[0] for k in summary if k[1] == budget), key=lambda s: (-summary[s, budget][0], summary[s, budget][2])
    )
    return {s: i + 1 for i, s in enumerate(cells)}


def zoo_before_after(before: Path, after: Path) -> str:
    """The strategy_zoo table of two sweeps side by side: success, input tokens (all calls) and rank."""
    old, new = zoo_summary(before), zoo_summary(after)
    rows = []
    for budget in ("8k", "25k"):
        old_rank, new_rank = zoo_ranks(old, budget), zoo_ranks(new, budget)
        for strategy in sorted(new_rank, key=new_rank.get):
            o, n = old.get((strategy, budget)), new[strategy, budget]
            moved = "" if old_rank.get(strategy) == new_rank[strategy] else " *"
            rows.append(
                [
                    f"`{strategy}`",
                    budget,
                    f"{o[0]}/{o[1]}" if o else "-",
                    f"{n[0]}/{n[1]}",
                    _int(o[2]) if o else "-",
                    _int(n[2]),
                    "yes" if n[3] == 0 else f"no ({n[3]}/{n[1]})",
                    f"{old_rank.get(strategy, '-')} → {new_rank[strategy]}{moved}",
                ]
            )
    return _table(
        [
            "strategy",
            "budget",
            "success before",
            "success after",
            "input tok before (all calls)",
            "input tok after (all calls)",
            "held the budget",
            "rank (success, then tokens)",
        ],
        rows,
    ) + (f"\n\n{NOTE} * = the rank changed.")


# ----------------------------------------------------------------------------------- attention_model

ATTENTION_ORDER = ["none", "headtail", "clear_tool_results", "offload", "notes"]


def attention_model(results: Path) -> str:
    """Success per family and strategy under the realistic profile's attention model, beside none's peak context."""
    t = _trials("attention_model", results)
    families = sorted(set(t["family"]))
    strategies = [s for s in ATTENTION_ORDER if s in set(t["strategy"])]
    rows = []
    for family in families:
        f = t[t["family"] == family]
        none = f[f["strategy"] == "none"]
        cells = [f"{int(f[f['strategy'] == s]['success'].sum())}/{len(f[f['strategy'] == s])}" for s in strategies]
        overflow = int((none["outcome"] == "context_overflow").sum()) if len(none) else 0
        beaten = [s for s in strategies[1:] if f[f["strategy"] == s]["success"].mean() > none["success"].mean()]
        rows.append(
            [
                family,
                *cells,
                _int(none["peak_context"].max()) if len(none) else "-",
                str(overflow),
                ", ".join(f"`{s}`" for s in beaten) or "-",
            ]
        )
    return _table(
        [
            "family",
            *[f"`{s}`" for s in strategies],
            "none: largest request",
            "none: context overflows",
            "beat `none` on success",
        ],
        rows,
    ) + (
        f"\n\n{NOTE_REALISTIC} 25K budget, {t.groupby(['strategy', 'instance_id']).size().max()} trials per "
        "instance. This is a MODEL, not a measurement: each visible fact (a line) is missed with a probability that "
        "grows with the context's length and is largest in its middle (configs/model/scripted.yaml gives the "
        "parameters and their sources). Seed 003 (Lost in the Middle) and seed 000 (Chroma's context rot) report "
        "the effect on real models; these figures show what the model implies, not what a model does."
    )


# ------------------------------------------------------------------------------------------ verdicts


def verdict_table(rows: list[tuple[str, str, str, str]]) -> str:
    """A preset's verdict: seed figure | ours | reproduced / partly / not | why (every cell computed by code)."""
    return _table(["seed figure", "ours", "verdict", "reason"], [list(r) for r in rows])


def _rate(g) -> float:
    return float(g["success"].mean()) if len(g) else float("nan")


def _frac(g) -> str:
    return f"{int(g['success'].sum())}/{len(g)}"


# ----------------------------------------------------------------------------------- lost_in_middle

LIM_SEED = {1: "~75%", 3: "~70%", 5: "~63%", 10: "~50%", 15: "~58%", 20: "~70%"}  # seed 003, 20 documents


def _lim_trials(results: Path):
    t = _trials("lost_in_middle", results)
    t["profile"] = t["agent_profile"].astype(str)
    t["doc_tokens"] = t["instance_id"].str.extract(r"x(\d+)-p", expand=False).astype(int)
    return t


def _lim_expected(g) -> float:
    """The realistic attention model's chance of seeing the fact, averaged over the cell's instances."""
    from reference_agent.profiles import REALISTIC
    from tasks.needle import Needle

    chances = []
    for _, row in g.drop_duplicates("instance_id").iterrows():
        instance = Needle(int(row["documents"]), int(row["doc_tokens"]), int(row["fact_document"])).generate(
            int(row["seed"])
        )
        before, total = instance.fact_place()
        chances.append(1 - REALISTIC.attention.miss(before / total, total // 4))
    return sum(chances) / len(chances)


def lost_in_middle(results: Path) -> str:
    """Success by the fact's document (columns) and the context's length (rows), under both profiles."""
    t = _lim_trials(results)
    positions = sorted(set(t["fact_document"].astype(int)))
    rows = [["seed 003 (Liu et al. 2023, approximate)", "20 documents", *[LIM_SEED.get(p, "") for p in positions]]]
    for profile in ("perfect", "realistic"):
        for size in sorted(set(t["doc_tokens"])):
            g = t[(t["profile"] == profile) & (t["doc_tokens"] == size)]
            if g.empty:
                continue
            cells = []
            for p in positions:
                c = g[g["fact_document"] == p]
                model = f" (model {_lim_expected(c):.2f})" if profile == "realistic" else ""
                cells.append(f"{_frac(c)}{model}")
            rows.append([f"`{profile}`", _int(g["peak_context"].mean()), *cells])
    return _table(["", "context (tokens)", *[f"document {p}" for p in positions]], rows) + (
        "\n\nReference agent (scripted, not an LLM): one search returns 20 documents, the answer is one line of "
        "document N; the agent answers from what it sees (task family `needle`). Cells: successes / trials; "
        "\"model\" = 1 - miss(place, length) of the realistic profile's attention model at the fact's place in "
        "the final request (reference_agent/profiles.py), the rate the trials estimate. `perfect` reads every "
        "visible line, so it is flat by construction; `realistic` is a MODEL of the effect, not a measurement."
    )


def lost_in_middle_verdict(results: Path) -> str:
    """U-shape and growth with length: the seed's claims against the realistic profile's longest contexts."""
    t = _lim_trials(results)
    real, perfect = t[t["profile"] == "realistic"], t[t["profile"] == "perfect"]
    longest, shortest = real["doc_tokens"].max(), real["doc_tokens"].min()
    positions = sorted(set(real["fact_document"].astype(int)))
    first, last, middle = positions[0], positions[-1], positions[len(positions) // 2]
    at = {p: _rate(real[(real["doc_tokens"] == longest) & (real["fact_document"] == p)]) for p in positions}
    worst = min(at, key=at.get)
    u_shape = at[middle] < min(at[first], at[last])
    depth = min(at[first], at[last]) - at[middle]
    rows = [
        (
            "U-curve: first ~75%, middle (document 10) ~50%, last ~70%",
            f"realistic, ~{_int(real[real['doc_tokens'] == longest]['peak_context'].mean())} tokens: first {at[first]:.0%}, "
            f"document {middle} {at[middle]:.0%}, last {at[last]:.0%} (lowest: document {worst})",
            "partly" if u_shape and depth < 0.2 else ("reproduced" if u_shape else "not"),
            "the middle is the lowest and the ends the highest, as the attention model draws it; the dip is "
            f"{100 * depth:.0f} points against the seed's ~20-25 because the model's parameters (configs/model/scripted.yaml) "
            "are set for the whole benchmark, not fitted to this curve"
            if u_shape
            else "the middle is not below both ends in these trials",
        )
    ]
    mid_short = _rate(real[(real["doc_tokens"] == shortest) & (real["fact_document"] == middle)])
    rows.append(
        (
            'the middle fails more as the context grows ("接近上限的 100K 上下文")',
            f"document {middle}: {mid_short:.0%} at ~{_int(real[real['doc_tokens'] == shortest]['peak_context'].mean())} "
            f"tokens, {at[middle]:.0%} at ~{_int(real[real['doc_tokens'] == longest]['peak_context'].mean())}",
            "reproduced" if at[middle] < mid_short else "not",
            "the miss chance grows with (length / 128K) ** 3 in the model"
            if at[middle] < mid_short
            else "no loss with length in these trials",
        )
    )
    flat = bool(perfect["success"].all()) if len(perfect) else False
    rows.append(
        (
            "any position effect",
            f"perfect: {_frac(perfect)} at every position and length",
            "not (by construction)" if flat else "not",
            "the perfect profile uses every visible line: it is the instrument of what a strategy keeps, "
            "not a model of attention",
        )
    )
    return verdict_table(rows)


# ----------------------------------------------------------------------------------- context_growth

GROWTH_ORDER = {
    "none": "whole history",
    "sliding_window": "last messages that fit 25K; notes restate the window",
    "sliding_window_terse": 'last messages that fit 25K; notes say "last week"',
    "headtail_terse": 'head (system + task) and tail at 25K; notes say "last week"',
}


def _trial_requests(run_dir: str, trial_id: str) -> list[tuple[int, list[str]]]:
    """(tokens, message refs) of every agent request of one trial, from its transcript."""
    from harness.records import read_transcript

    return [(int(e["tokens"]), list(e["refs"])) for e in read_transcript(run_dir, trial_id, only=("request",))]


def _growth_row(g) -> dict:
    """Request sizes at rounds 10 and 30, and whether the last request still held the task statement (ref m1)."""
    at10, at30, task_kept, overflow, lost_at = [], [], 0, [], []
    for _, row in g.iterrows():
        requests = _trial_requests(row["run_dir"], f"{row['instance_id']}-t{int(row['trial'])}")
        at10 += [requests[9][0]] if len(requests) >= 10 else []
        at30 += [requests[29][0]] if len(requests) >= 30 else []
        task_kept += int(bool(requests) and "m1" in requests[-1][1])
        lost_at += [next((i + 1 for i, (_, refs) in enumerate(requests) if "m1" not in refs), None)]
        if row["outcome"] == "context_overflow":
            overflow.append(f"{requests[-1][0]:,} at round {len(requests)}")
    given = sum(sum((d or {}).get("given", {}).values()) for d in g["grade_detail"])
    expected = sum(sum((d or {}).get("expected", {}).values()) for d in g["grade_detail"] if d)
    return {
        "at10": _int(sum(at10) / len(at10)) if at10 else "-",
        "at30": _int(sum(at30) / len(at30)) if at30 else ("overflow: " + "; ".join(overflow) if overflow else "-"),
        "task_kept": f"{task_kept}/{len(g)}"
        + (f" (gone from round {min(x for x in lost_at if x)})" if any(lost_at) else ""),
        "given": f"{given:,} / {expected:,}" if expected else "-",
    }


def context_growth(results: Path) -> str:
    """Seed 003's growth (request size at rounds 10 and 30) and constraint forgetting, per arm."""
    t = _trials("context_growth", results)
    rows = []
    for cell in _cells(t, list(GROWTH_ORDER)):
        g = t[t["cell"] == cell]
        r = _growth_row(g)
        outcomes = ", ".join(f"{k} {v}" for k, v in g["outcome"].value_counts().items())
        rows.append(
            [
                f"`{cell}` {GROWTH_ORDER.get(cell, '')}",
                r["at10"],
                r["at30"],
                _int(g["peak_context"].mean()),
                r["task_kept"],
                f"{_frac(g)} ({g['score'].mean():.2f})",
                r["given"],
                outcomes,
            ]
        )
    return _table(
        [
            "arm",
            "request at round 10",
            "request at round 30",
            "peak context",
            "task statement in the last request",
            "success (score)",
            "negative mentions counted / true (all brands, all trials)",
            "outcomes",
        ],
        rows,
    ) + (
        f"\n\n{NOTE} `brand_report`, 32 feed pages of ~5K tokens, one page a round; window of the scripted model: "
        "131,072 tokens. Seed 003: about 50K at round 10 and 150K at round 30 for the simplest agent, then "
        '"context length exceeded"; after 10+ rounds the opening constraints are "forgotten".'
    )


def context_growth_verdict(results: Path) -> str:
    """Growth, overflow and forgetting against seed 003's figures."""
    t = _trials("context_growth", results)
    cells = {c: t[t["cell"] == c] for c in set(t["cell"])}
    rows = []
    if "none" in cells:
        r, g = _growth_row(cells["none"]), cells["none"]
        overflowed = bool((g["outcome"] == "context_overflow").all())
        rows.append(
            (
                "~50K at round 10",
                f"{r['at10']} at round 10",
                "reproduced" if r["at10"] != "-" and 40_000 <= int(r["at10"].replace(",", "")) <= 60_000 else "partly",
                "the feed pages are sized for ~5K tokens a round, so the growth rate is the seed's by design; "
                "what is measured is that nothing else adds to it",
            )
        )
        rows.append(
            (
                '~150K at round 30, then "context length exceeded"',
                f"round 30: {r['at30']}",
                "reproduced" if overflowed else "not",
                "the unmanaged request passes the 131,072-token window before round 30 and the trial ends in "
                "`context_overflow`"
                if overflowed
                else "the unmanaged history fit the window",
            )
        )
    forgot = cells.get("sliding_window_terse")
    kept = cells.get("headtail_terse")
    if forgot is not None and kept is not None:
        rows.append(
            (
                'after 10+ rounds the opening constraint is "forgotten"',
                f"sliding window, terse notes: {_frac(forgot)} (score {forgot['score'].mean():.2f}); "
                f"headtail (keeps the task), terse notes: {_frac(kept)} (score {kept['score'].mean():.2f})",
                "reproduced" if _rate(forgot) < _rate(kept) else "not",
                "the window drops the task statement and the agent then counts every date; keeping the head "
                '(the seed\'s "controlled system zone") keeps the constraint. The mechanism is a strategy '
                "removing the statement: the reference agent never forgets what it can see",
            )
        )
    restated = cells.get("sliding_window")
    if restated is not None and forgot is not None:
        rows.append(
            (
                "remedy: restate key constraints, keep task state in notes",
                f"sliding window, notes restate the window: {_frac(restated)} (score {restated['score'].mean():.2f}) "
                f"against {forgot['score'].mean():.2f} with terse notes",
                "partly"
                if restated["score"].mean() > forgot["score"].mean() and _rate(restated) < 1
                else ("reproduced" if _rate(restated) == 1 else "not"),
                "restating the window keeps the date rule, but the brands' nicknames were also stated once, in "
                "the task, and are lost: every constraint has to be restated, not one",
            )
        )
    return verdict_table(rows)


# ----------------------------------------------------------------------------------- three_versions

THREE_SEED = {
    "baseline": ("不做管理的基线", 21_633),
    "compaction": ("压实版 (clear_tool_results, 8K)", 7_276),
    "isolation": ("隔离版 (isolate, 8K)", 5_892),
}


def _three_means(t) -> dict[str, dict[str, float]]:
    return {
        cell: {
            "peak": float(g["peak_context"].mean()),
            "total": float(g["total_input_tokens"].mean()),
            "sub_peak": float(_col(g, "subagent_peak_context").mean()) if "subagent_peak_context" in g else 0.0,
        }
        for cell, g in t.groupby("cell")
    }


def three_versions(results: Path) -> str:
    """Seed 000's three versions: the main context's peak (the seed's figure) and every call's input tokens."""
    t = _trials("three_versions", results)
    means = _three_means(t)
    base = means.get("baseline", {"peak": float("nan"), "total": float("nan")})
    rows = []
    for cell in _cells(t, list(THREE_SEED)):
        g, m = t[t["cell"] == cell], means[cell]
        label, seed = THREE_SEED.get(cell, ("", 0))
        rows.append(
            [
                f"`{cell}` {label}",
                _int(seed) if seed else "",
                f"{seed / THREE_SEED['baseline'][1]:.2f}" if seed else "",
                _int(m["peak"]),
                f"{m['peak'] / base['peak']:.2f}",
                _int(m["sub_peak"]) if m["sub_peak"] else "-",
                _int(m["total"]),
                f"{m['total'] / base['total']:.2f}",
                f"{_frac(g)} ({g['score'].mean():.2f})",
                f"{g['steps'].mean():.0f}",
            ]
        )
    return _table(
        [
            "version",
            "seed tokens",
            "seed vs baseline",
            "ours: main context at its largest",
            "vs baseline",
            "largest sub-agent context",
            "ours: input tok, all calls",
            "vs baseline",
            "success (score)",
            "steps",
        ],
        rows,
    ) + (
        f"\n\n{NOTE} `code_review`, 16 files, 4 bugs, seeds 0-2. The seed gives one figure per version and names "
        "no task; we read it as the context the main agent carries (its largest request), and show every call's "
        "input tokens beside it."
    )


def three_versions_verdict(results: Path) -> str:
    """Order and ratios of the three versions against the seed's."""
    means = _three_means(_trials("three_versions", results))
    if not {"baseline", "compaction", "isolation"} <= set(means):
        return verdict_table([("baseline / compaction / isolation", "a version is missing", "not", "run the preset")])
    b, c, i = (means[k] for k in ("baseline", "compaction", "isolation"))
    order = b["peak"] > c["peak"] > i["peak"]
    near = abs(c["peak"] / b["peak"] - 7_276 / 21_633) <= 0.1
    rows = [
        (
            "baseline 21,633 tokens",
            f"{_int(b['peak'])} (main context at its largest)",
            "reproduced" if abs(b["peak"] / 21_633 - 1) <= 0.1 else "partly",
            "the task is sized to it; what it shows is the size of an unmanaged 16-file review, not a finding",
        ),
        (
            "compaction 7,276 (0.34 of baseline)",
            f"{_int(c['peak'])} ({c['peak'] / b['peak']:.2f})",
            "reproduced" if near else "partly",
            "clearing processed results holds the context at the 8K budget"
            if near
            else "the context is held at the budget; the ratio follows the budget chosen",
        ),
        (
            'isolation 5,892 (0.27), the least: "bloat never happens"',
            f"{_int(i['peak'])} ({i['peak'] / b['peak']:.2f}); sub-agents up to {_int(i['sub_peak'])}",
            ("reproduced" if abs(i["peak"] / b["peak"] - 5_892 / 21_633) <= 0.1 else "partly") if order else "not",
            "the main context holds the sub-agents' reports only, so it is the smallest; ours is smaller than the "
            "seed's because the reference main agent writes nothing but delegations"
            if order
            else "isolation is not the smallest main context here",
        ),
        (
            '"隔离省得最多" (isolation saves the most), counted over every call',
            f"input tokens of all calls: {_int(b['total'])} / {_int(c['total'])} / {_int(i['total'])}",
            "partly" if b["total"] > c["total"] > i["total"] else "not",
            "counting the sub-agents' calls too, the order holds but the savings shrink: isolation moves reading "
            "into other contexts, it does not remove it"
            if b["total"] > c["total"] > i["total"]
            else "counting every call, the order changes",
        ),
    ]
    return verdict_table(rows)


# ---------------------------------------------------------------------------------- semantic_filter


def semantic_filter(results: Path | None = None) -> str:
    """Seed 000's semantic filtering demo on people_tracker pages (computed, no run; benchmarks/semantic_filter.py)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import semantic_filter as demo

    rows = [["seed 000 (published)", "136,448 / 37,312", "?", "304 (top 3)", "99.2%", '"the most relevant parts"', "-"]]
    for seed in (0, 1, 2):
        d = demo.run_demo(seed=seed)
        rows.append(
            [
                f"ours, seed {seed}",
                f"{d.raw_chars:,} / {d.raw_tokens:,}",
                str(d.chunks),
                f"{d.kept_tokens:,} (top 3)",
                f"{d.saved:.1%}",
                f"{d.facts_kept}/{d.facts}",
                f"{d.facts_headtail}/{d.facts}",
            ]
        )
    return _table(
        [
            "",
            "raw results (characters / tokens)",
            "chunks",
            "tokens kept",
            "saved",
            "the person's moves stated whole in what is kept",
            "same tokens cut head + tail",
        ],
        rows,
    ) + (
        "\n\nComputed, no agent: a `people_tracker` instance's pages (18 people), the asked person's pages first, up "
        "to ~37K tokens; chunks of about 100 tokens; the query asks for the first person's moves; a move counts when "
        'one line of the kept text gives person, company joined, month and year. The "embedding" is TF-IDF cosine '
        "(offline, no model), a lexical stand-in for the seed's embeddings."
    )


def semantic_filter_verdict(results: Path | None = None) -> str:
    """The demo's saving and what it kept, against the seed's."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import semantic_filter as demo

    runs = [demo.run_demo(seed=seed) for seed in (0, 1, 2)]
    saved = min(d.saved for d in runs)
    kept = sum(d.facts_kept for d in runs), sum(d.facts for d in runs)
    blind = sum(d.facts_headtail for d in runs)
    return verdict_table(
        [
            (
                "37,312 -> 304 tokens, 99.2% saved",
                f"{min(d.raw_tokens for d in runs):,}-{max(d.raw_tokens for d in runs):,} -> "
                f"{min(d.kept_tokens for d in runs)}-{max(d.kept_tokens for d in runs)} tokens, at least {saved:.1%} saved",
                "reproduced" if saved >= 0.99 else "partly",
                "three chunks of ~100 tokens out of ~37K is the same arithmetic; the batch and chunk size are chosen like the seed's",
            ),
            (
                "what is kept is the relevant part, not a head/tail cut",
                f"moves kept whole: {kept[0]}/{kept[1]} by similarity, "
                f"{blind}/{kept[1]} by a head + tail cut of the same size",
                ("reproduced" if kept[0] == kept[1] else "partly") if kept[0] > blind else "not",
                "similarity finds the person's move sentences; the blind cut keeps page chrome. A move whose sentence is split "
                "over two chunks, or ranked below a profile's paragraph, is lost: three chunks are a small top-K"
                if kept[0] < kept[1]
                else "similarity finds every move sentence; the blind cut keeps page chrome",
            ),
        ]
    )


# ---------------------------------------------------------------------------------- review44_budget


def working_set(seed: int, files: int = 44, bugs: int = 6) -> int:
    """Seed 000's per-step working set of a review44 instance, in tokens: the prompt (system, task, tool schemas)
    plus the two largest files as read_file returns them (a module and the helper module it is checked against)."""
    import json

    from harness.tokens import encoding
    from tasks.code_review import CodeReview

    instance = CodeReview(files=files, bugs=bugs).generate(seed)
    count = lambda text: len(encoding().encode(text))  # noqa: E731
    head = count(instance.system_prompt) + count(instance.user_prompt) + count(json.dumps(instance.tools))
    reads = sorted(count(instance.call("read_file", {"path": p}).content) for p in instance.files)
    return head + sum(reads[-2:])


REVIEW44_SEED_REREAD = {8_000: "55%", 15_000: "46%"}


def _budget_rows(t) -> list[dict]:
    w = sum(working_set(int(s)) for s in sorted(set(t["seed"]))) / len(set(t["seed"]))
    rows = []
    for budget, g in sorted(t.groupby("budget"), key=lambda x: int(x[0])):
        reads, rereads = g["reads"].sum(), g["rereads"].sum()
        rows.append(
            {"budget": int(budget), "x": int(budget) / w, "w": w, "g": g, "rr": rereads / reads if reads else 0.0}
        )
    return rows


def review44_budget(results: Path) -> str:
    """Success and re-read rate of review44's hooked headtail across budgets, in multiples of the working set."""
    t = _trials("review44_budget", results)
    rows = []
    for r in _budget_rows(t):
        g = r["g"]
        outcomes = ", ".join(f"{k} {v}" for k, v in g["outcome"].value_counts().items())
        rows.append(
            [
                f"{r['budget'] // 1000}K",
                f"{r['x']:.1f}x",
                REVIEW44_SEED_REREAD.get(r["budget"], ""),
                _pct(r["rr"]),
                f"{_frac(g)} ({g['score'].mean():.2f})",
                f"{g['steps'].mean():.0f}",
                _int(g["total_input_tokens"].mean()),
                _int(_col(g, "hook_continues").mean()),
                outcomes,
            ]
        )
    w = _budget_rows(t)[0]["w"] if len(t) else 0
    return _table(
        [
            "budget",
            "x working set",
            "seed re-read",
            "ours re-read",
            "success (score)",
            "steps",
            "mean input tok (all calls)",
            "hook refusals",
            "outcomes",
        ],
        rows,
    ) + (
        f"\n\n{NOTE} `code_review` 44 files, 6 bugs, seeds 0-2; `headtail` with the completion-check hook. Working "
        f"set (seed 000: 单步工作集) = the prompt with tool schemas plus the two largest files as read (a module and "
        f"the helper module it is checked against): {_int(w)} tokens on average over the seeds."
    )


def review44_budget_verdict(results: Path) -> str:
    """The seed's rule of thumb (2-3x the working set; start multi-file tasks at 25K-50K; widen above 15% re-reads)."""
    rows = _budget_rows(_trials("review44_budget", results))
    ok = [r for r in rows if r["g"]["success"].all()]
    in_rule = [r for r in rows if 2 <= r["x"] <= 3]
    smallest = ok[0] if ok else None
    out = [
        (
            "budget = 2-3x the per-step working set",
            (f"2-3x is {_int(2 * rows[0]['w'])}-{_int(3 * rows[0]['w'])} tokens; " if rows else "")
            + (
                f"the smallest budget with full success is {smallest['budget'] // 1000}K ({smallest['x']:.1f}x)"
                if smallest
                else "no swept budget reaches full success"
            ),
            "reproduced" if smallest and smallest["x"] <= 3 else ("not" if smallest else "not"),
            "with the completion-check hook the reference reviewer re-lists and re-reads whenever a refusal meets a "
            "context that no longer shows its work; it needs room for most of the review, not for one step"
            if not smallest or smallest["x"] > 3
            else "the rule's budget holds the step's files and the notes",
        ),
        (
            "multi-file tasks: start at 25K-50K",
            ", ".join(f"{r['budget'] // 1000}K {_frac(r['g'])}" for r in rows if 25_000 <= r["budget"] <= 50_000),
            "reproduced" if smallest and 25_000 <= smallest["budget"] <= 50_000 else "partly",
            "the smallest budget that works lies in the seed's starting range"
            if smallest and 25_000 <= smallest["budget"] <= 50_000
            else "part of the range fails",
        ),
    ]
    falling = all(x["rr"] >= y["rr"] for x, y in zip(rows, rows[1:]))
    below = [r for r in rows if r["rr"] <= 0.15]
    whole = below and not below[0]["g"]["compactions"].any()
    out.append(
        (
            "re-read rate above 15%: widen the budget first",
            "; ".join(f"{r['budget'] // 1000}K {_pct(r['rr'])}" for r in rows),
            ("partly" if whole else "reproduced") if falling and below else "not",
            (
                "re-reads fall as the budget widens, but stay above 15% until the budget holds the whole review "
                f"({below[0]['budget'] // 1000}K: no compaction at all); success comes earlier, with re-reads still high"
                if whole
                else "re-reads fall below 15% as the budget widens"
            )
            if falling and below
            else "widening does not bring the re-read rate under 15% here",
        )
    )
    if in_rule and not any(r["g"]["success"].all() for r in in_rule):
        out[0] = (
            out[0][0],
            out[0][1] + f"; at {', '.join(str(r['budget'] // 1000) + 'K' for r in in_rule)} (inside 2-3x) "
            "no trial succeeds",
            out[0][2],
            out[0][3],
        )
    return verdict_table(out)


# ------------------------------------------------------------------- verdicts of the earlier presets


def _by_cell(t) -> dict:
    return {cell: g for cell, g in t.groupby("cell")}


def _rr(g) -> float:
    reads = (g["reads"] + _col(g, "subagent_reads")).sum()
    return float((g["rereads"] + _col(g, "subagent_rereads")).sum() / reads) if reads else 0.0


def _tok(g) -> float:
    return float(g["total_input_tokens"].mean())


def review44_verdict(results: Path) -> str:
    """Seed 000 §7.3's five rows, claim by claim."""
    c = _by_cell(_trials("review44", results))
    need = {"none", "headtail_8k", "headtail_8k_nohook", "headtail_15k", "isolate"}
    if not need <= set(c):
        return verdict_table(
            [("five configurations", f"cells present: {', '.join(sorted(c))}", "not", "run the preset")]
        )
    none, h8, nohook, h15, iso = (
        c[k] for k in ("none", "headtail_8k", "headtail_8k_nohook", "headtail_15k", "isolate")
    )
    thrash = _rr(h8) > _rr(none) and _rate(h8) < _rate(none)
    rows = [
        (
            "headtail 8K: tokens 915,591 -> 276,390 (0.30), re-reads 27% -> 55%, quality 6.0 -> 4.0",
            f"tokens {_int(_tok(none))} -> {_int(_tok(h8))} ({_tok(h8) / _tok(none):.2f}), re-reads {_pct(_rr(none))} -> "
            f"{_pct(_rr(h8))}, success {_frac(none)} -> {_frac(h8)}",
            ("reproduced" if abs(_tok(h8) / _tok(none) - 0.30) <= 0.15 else "partly") if thrash else "not",
            (
                "compaction at 8K makes the reviewer re-read and lose quality (thrashing); "
                + (
                    "it spends fewer tokens than none, but saves less than the seed's, because it runs to the step limit "
                    "instead of submitting a weaker review"
                    if _tok(h8) < _tok(none)
                    else "but it spends more tokens than none, because it runs to the step limit instead of submitting"
                )
            )
            if thrash
            else "no thrashing: the reviewer's ledger (tasks/README.md) survives the cut and it searches before it reads, as "
            "the calibration LLM did; compaction only saves tokens",
        ),
        (
            "no completion-check hook at 8K: re-reads 55% -> 15%, quality 4.0 -> 5.5",
            f"re-reads {_pct(_rr(h8))} -> {_pct(_rr(nohook))}, success {_frac(h8)} -> {_frac(nohook)}, tokens "
            f"{_int(_tok(h8))} -> {_int(_tok(nohook))}",
            "reproduced" if _rr(nohook) < _rr(h8) and _rate(nohook) >= _rate(h8) else "not",
            "the hook refuses a submit whose evidence compaction removed, and the reviewer re-reads to answer it"
            if _rr(nohook) < _rr(h8)
            else "the hook never refuses: the reviewer's ledger and closing note show a review of every file in scope",
        ),
        (
            "headtail 15K beats 8K: re-reads 46%, quality 5.1",
            f"re-reads {_pct(_rr(h15))}, success {_frac(h15)}, tokens {_int(_tok(h15))} ({_tok(h15) / _tok(none):.2f} of none)",
            "reproduced" if _rate(h15) > _rate(h8) else "not",
            "15K is better than 8K here"
            if _rate(h15) > _rate(h8)
            else "under the hook the reference reviewer's re-read loop is the same at 8K and 15K (review44_budget sweeps on)",
        ),
        (
            "isolation: fewest tokens (118,824), 0% re-reads, 48 files summed",
            f"tokens {_int(_tok(iso))} (least of the five: {'yes' if _tok(iso) == min(_tok(g) for g in c.values()) else 'no'}), "
            f"re-reads {_pct(_rr(iso))}, {iso['files_read_summed'].mean():.1f} files summed",
            "reproduced"
            if _tok(iso) == min(_tok(g) for g in c.values()) and _rr(iso) == 0
            else ("partly" if _tok(iso) == min(_tok(g) for g in c.values()) else "not"),
            (
                "sub-agents read their chunks in fresh contexts; sub-agents re-read shared helper modules"
                + (" (our re-reads above 0)" if _rr(iso) > 0 else "")
            )
            if _tok(iso) == min(_tok(g) for g in c.values())
            else "each sub-agent reads its whole chunk of files, while the search-first reviewer reads only the files its "
            "searches name, so isolation is not the cheapest here",
        ),
        (
            "no compaction reads 16/44 files, quality 6.0",
            f"{none['files_read'].mean():.0f}/44 files, success {_frac(none)}",
            "not" if none["files_read"].mean() > 20 else "reproduced",
            f"the reviewer reads the files its searches name ({none['files_read'].mean():.0f} of 44) and never loses "
            "what it can see",
        ),
    ]
    return verdict_table(rows)


def invoice_layers_verdict(results: Path) -> str:
    """Seed 004: its demo's numbers, and the experiment it left blank."""
    c = _by_cell(_trials("invoice_layers", results))
    rows = []
    cells = [
        line.split(" | ")
        for line in seed004_demo().splitlines()
        if line.startswith("| clearing") or line.startswith("| with a summarizer")
    ]
    numbers = [[re.findall(r"\d+", cell.replace(",", "")) for cell in row[1:4]] for row in cells]
    rerun_same = all(published == rerun for published, rerun, _ in numbers)
    ours_same = all(published == ours for published, _, ours in numbers)
    rows.append(
        (
            "LayeredContext demo: 62 messages ~6,017 tokens (clearing), 14 messages ~4,468 (summary)",
            "seed's code rerun: "
            + "; ".join(f"{r[1][0]} messages {int(r[1][1]):,}" for r in numbers)
            + "; ours: "
            + "; ".join(f"{r[2][0]} messages {int(r[2][1]):,}" for r in numbers),
            "reproduced" if ours_same else ("partly" if rerun_same else "not"),
            (
                "the seed's own code reruns to its figures; "
                if rerun_same
                else "the seed's code does not rerun to its figures; "
            )
            + (
                "ours matches"
                if ours_same
                else "ours differs by a few tokens and a message, explained token by token in strategies/README.md"
            ),
        )
    )
    if c:
        cheapest_tok = min(c, key=lambda k: _tok(c[k]))
        cheapest_usd = min(c, key=lambda k: float(c[k]["cost"].mean()))
        n = sum(len(g) for g in c.values()) // len(c)
        rows.append(
            (
                'the four-strategy table, left blank ("表格留给你填"); at least 5 tasks x 3 trials',
                f"{len(c)} strategies x {n} trials each; fewest tokens: `{cheapest_tok}` ({_int(_tok(c[cheapest_tok]))}); "
                f"cheapest in USD: `{cheapest_usd}` ({float(c[cheapest_usd]['cost'].mean()):.4f})",
                "reproduced" if n >= 15 else "partly",
                "filled on the reference agent"
                + (
                    "; tokens and dollars rank differently, because the prefix "
                    "cache discounts the unmanaged history's stable prefix"
                    if cheapest_tok != cheapest_usd
                    else ""
                ),
            )
        )
    return verdict_table(rows)


def compression_six_acts(results: Path) -> str:
    """When and how often each compressor of compression_six acts: compactions per trial and the first step with one."""
    from harness.records import read_jsonl

    t = _trials("compression_six", results)
    rows = []
    for cell in _cells(t, SIX):
        g = t[t["cell"] == cell]
        firsts = []
        for run in sorted(set(g["run_dir"])):
            steps = [s for s in read_jsonl(Path(run) / "steps.jsonl") if s.get("kind") == "agent"]
            by_trial: dict[str, int] = {}
            for s in steps:
                if s.get("strategy_events"):
                    by_trial.setdefault(s["trial_id"], int(s["step"]))
            firsts += list(by_trial.values())
        rows.append(
            [
                f"`{cell}`",
                f"{g['compactions'].mean():.0f}",
                f"{min(firsts)}" if firsts else "never",
                f"{g['steps'].mean():.0f}",
            ]
        )
    return _table(["strategy", "compactions per trial", "first step that changed the request", "steps"], rows) + (
        "\n\nFrom the run folders (`compactions` of trials.jsonl; the first agent step with a strategy event in "
        "steps.jsonl, earliest over the trials)."
    )


def status_bar_verdict(results: Path) -> str:
    """Seed 002 exp 2-8: the 3-call limit with and without the status bar."""
    c = _by_cell(_trials("status_bar", results))
    rows = []
    if "headtail" in c:
        a = c["headtail"]
        rows.append(
            (
                "without the status bar the model often breaks the 3-call limit",
                f"headtail 8K: {a['call_violations'].mean():.1f} violations a trial, {int((a['call_violations'] > 0).sum())}/{len(a)} "
                "trials with one",
                "reproduced" if (a["call_violations"] > 0).any() else "not",
                "the trimmed agent cannot count a merchant's earlier calls"
                if (a["call_violations"] > 0).any()
                else "the agent's ledger restates every merchant's calls so far (as the calibration LLM's did), so a "
                "cut cannot make it place a 4th call; the seed's observation was on Qwen3-0.6B",
            )
        )
    bars = [k for k in ("status_replace", "status_append") if k in c]
    if bars:
        v = {k: int((c[k]["call_violations"] > 0).sum()) for k in bars}
        rows.append(
            (
                "with the status bar it keeps to the limit",
                ", ".join(f"{k}: {v[k]}/{len(c[k])} trials with a violation, success {_frac(c[k])}" for k in bars),
                "reproduced" if not any(v.values()) else "partly",
                "the bar restates the count per merchant every step",
            )
        )
    return verdict_table(rows)


def attention_model_verdict(results: Path) -> str:
    """Seeds 003/000: a long context costs success even when it fits; here only as far as the model says so."""
    t = _trials("attention_model", results)
    families = sorted(set(t["family"]))
    beaten = [
        f
        for f in families
        if any(
            t[(t["family"] == f) & (t["strategy"] == s)]["success"].mean()
            > t[(t["family"] == f) & (t["strategy"] == "none")]["success"].mean()
            for s in set(t["strategy"]) - {"none"}
        )
    ]
    overflow = int(((t["strategy"] == "none") & (t["outcome"] == "context_overflow")).sum())
    return verdict_table(
        [
            (
                "every model gets worse as its input grows (context rot); facts in the middle are used less",
                f"a compacting strategy beats `none` on success in {len(beaten)}/{len(families)} families, "
                f"with no context overflow ({overflow})",
                "partly" if beaten else "not",
                "a MODEL (the realistic profile's attention model), not a measurement: it shows what the "
                "modelled effect does to strategy rankings; lost_in_middle shows the curve itself",
            )
        ]
    )


# --------------------------------------------------------------------------------------- calibration


def calibration(results: Path) -> str:
    """The realistic reference agent on every recorded LLM run (benchmarks/calibration.py; no run folder)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import calibration as cal

    found = cal.calibrate("realistic", 3)
    if not found:
        return "(no calibration runs found)"
    return cal.report(found, "realistic", 3)


# ----------------------------------------------------------------------------------- memory pressure


def _memory_pressure(suite: str, instances: int, profiles: tuple[str, ...]) -> str:
    """benchmarks/memory_pressure.py's table for ``suite`` under ``profiles`` (no run folder)."""
    import tempfile

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import memory_pressure as mp

    with tempfile.TemporaryDirectory() as tmp:
        rows = {p: mp.run(suite, p, instances, Path(tmp) / p) for p in profiles}
    return (
        mp.table(rows) + f"\n\nReference agent (scripted, not an LLM), strategy `none` at budget 1M, suite `{suite}` "
        f"({instances} instance(s) per family, 1 trial): `perfect` makes one call per step, `realistic` batches up "
        "to 8 calls it knows the arguments of, `greedy` every such call, up to the task's `max_calls_per_turn`; "
        "the early-submit draw is off (the table measures what the task demands)."
    )


def memory_pressure(results: Path) -> str:
    """History per family at default size, three profiles (issue 13 §1: past 40K over many rounds)."""
    return _memory_pressure("default", 2, ("perfect", "realistic", "greedy"))


def memory_pressure_long(results: Path) -> str:
    """History per family at long size, the two batching agents (issue 13 §1: past 120K over many rounds;
    ``perfect``, one call per step, is the slowest to run and batches nothing: ``memory_pressure.py --suite long``)."""
    return _memory_pressure("long", 1, ("realistic", "greedy"))


# ---------------------------------------------------------------------------------------- quickstart

QUICKSTART = ("strategy=headtail", "budget=25k")
RUNS = "results/runs"  # the CLI writes a run to RUNS/<folder_name of its config>


def run_quickstart(results: Path) -> list[str]:
    """Run the README's main job (``run strategy=headtail budget=25k``) into ``results/quickstart``; its lines."""
    from harness.config import config_dict
    from harness.identity import folder_name
    from harness.runner import execute

    cfg = compose(*QUICKSTART, "progress=false", "plots=false")  # plots are not part of the identity or the output
    lines: list[str] = []
    execute(cfg, results / "quickstart", echo=lines.append)
    text = "\n".join(lines).replace(str(results / "quickstart"), f"{RUNS}/{folder_name(config_dict(cfg))}")
    (results / "quickstart.txt").write_text(text)
    return text.splitlines()


def quickstart(results: Path) -> str:
    """The console output of the main job, as the README shows it."""
    path = results / "quickstart.txt"
    if not path.exists():
        raise SystemExit(f"{path}: no results; run: python benchmarks/experiments_table.py --run")
    return "```console\n$ .venv/bin/python -m harness run " + " ".join(QUICKSTART) + "\n" + path.read_text() + "\n```"


TABLES = {
    "discrimination": discrimination,
    "quickstart": quickstart,
    "attention_model": attention_model,
    "calibration": calibration,
    "review44": review44,
    "strategy_zoo": strategy_zoo,
    "invoice_layers": invoice_layers,
    "seed004_demo": seed004_demo,
    "compression_six": compression_six,
    "status_bar": status_bar,
    "cache_pitfalls": cache_pitfalls,
    "memory_pressure": memory_pressure,
    "memory_pressure_long": memory_pressure_long,
}
TABLES.update(
    {  # issue 16: the seeds' remaining studies and every preset's verdict (one entry per line)
        "lost_in_middle": lost_in_middle,
        "lost_in_middle_verdict": lost_in_middle_verdict,
        "context_growth": context_growth,
        "context_growth_verdict": context_growth_verdict,
        "three_versions": three_versions,
        "three_versions_verdict": three_versions_verdict,
        "semantic_filter": semantic_filter,
        "semantic_filter_verdict": semantic_filter_verdict,
        "review44_budget": review44_budget,
        "review44_budget_verdict": review44_budget_verdict,
        "review44_verdict": review44_verdict,
        "invoice_layers_verdict": invoice_layers_verdict,
        "compression_six_verdict": compression_six_verdict,
        "status_bar_verdict": status_bar_verdict,
        "cache_pitfalls_verdict": cache_pitfalls_verdict,
        "attention_model_verdict": attention_model_verdict,
        "compression_six_acts": compression_six_acts,
    }
)


TABLES.update(
    {
        "select_tools": select_tools_sides,
        "cache_pitfalls_verdict": cache_pitfalls_verdict,
        "compression_six_verdict": compression_six_verdict,
        "status_cost_model": status_cost_model,
    }
)

BLOCK = re.compile(r"<!-- table:(\w+) -->.*?<!-- /table:\1 -->", flags=re.S)


def render(text: str, results: Path, only: set[str] | None = None) -> tuple[str, list[str]]:
    """``text`` with every ``<!-- table:NAME -->`` block (or those named in ``only``) regenerated, and the names."""
    done: list[str] = []

    def repl(match):
        name = match.group(1)
        if only is not None and name not in only:
            return match.group(0)
        done.append(name)
        return f"<!-- table:{name} -->\n{TABLES[name](results)}\n<!-- /table:{name} -->"

    return BLOCK.sub(repl, text), done


def update(path: Path, results: Path) -> list[str]:
    """Replace every ``<!-- table:NAME -->`` block of ``path``; return the names replaced."""
    text, done = render(path.read_text(), results)
    path.write_text(text)
    return done


def mask_wall_times(text: str) -> str:
    """``text`` with the cells of every table column whose header mentions wall time blanked."""
    out, masked = [], set()
    for line in text.splitlines():
        cells = line.split(" | ") if line.startswith("|") else None
        if cells is None:
            masked = set()
        elif not masked and any("wall" in c for c in cells):
            masked = {i for i, c in enumerate(cells) if "wall" in c}
        elif masked and not line.startswith("|---"):
            line = " | ".join("…" if i in masked else c for i, c in enumerate(cells))
        out.append(line)
    return "\n".join(out)


def stale_blocks(path: Path, results: Path, only: set[str] | None = None) -> list[str]:
    """Names of the generated blocks of ``path`` (or those in ``only``) that differ from a fresh rendering
    (wall times aside)."""
    committed = path.read_text()
    fresh, _ = render(committed, results, only)
    old = {m.group(1): mask_wall_times(m.group(0)) for m in BLOCK.finditer(committed)}
    new = {m.group(1): mask_wall_times(m.group(0)) for m in BLOCK.finditer(fresh)}
    return [name for name in old if old[name] != new.get(name)]


PRESETS = (
    "review44",
    "invoice_layers",
    "compression_six",
    "status_bar",
    "cache_pitfalls",
    "strategy_zoo",
    "attention_model",
)
PRESETS += (  # issue 16 (one per line)
    "lost_in_middle",
    "context_growth",
    "three_versions",
    "review44_budget",
)


def sweep_points(name: str) -> list[list[str]]:
    """The override lists of every job of preset ``name`` (cartesian over its sweeper params)."""
    from omegaconf import OmegaConf

    from harness.config import sweep_values

    cfg = compose(f"experiment={name}", hydra_config=True)
    params = OmegaConf.to_container(cfg.hydra.sweeper.params) or {}
    points: list[list[str]] = [[]]
    for key, value in params.items():
        points = [p + [f"{key}={v}"] for p in points for v in sweep_values(str(value))]
    return points


DERIVED = {"discrimination": "strategy_zoo"}  # tables computed from another preset's sweep
DERIVED.update(
    {  # a verdict table reads its preset's sweep (one per line)
        "lost_in_middle_verdict": "lost_in_middle",
        "context_growth_verdict": "context_growth",
        "three_versions_verdict": "three_versions",
        "review44_budget_verdict": "review44_budget",
        "review44_verdict": "review44",
        "invoice_layers_verdict": "invoice_layers",
        "compression_six_verdict": "compression_six",
        "status_bar_verdict": "status_bar",
        "cache_pitfalls_verdict": "cache_pitfalls",
        "attention_model_verdict": "attention_model",
        "compression_six_acts": "compression_six",
        "semantic_filter_verdict": "semantic_filter",
        "select_tools": "cache_pitfalls",
    }
)


def block_names(path: Path) -> list[str]:
    """The names of the generated blocks of ``path``, in order."""
    return [m.group(1) for m in BLOCK.finditer(path.read_text())]


def source_of(name: str) -> str:
    """What a block is computed from: its preset (or the main job); itself for a computed block."""
    return DERIVED.get(name, name)


def run_for(path: Path, results: Path, only: set[str] | None = None) -> None:
    """Run what the generated blocks of ``path`` (or those in ``only``) need (their presets, the main job)."""
    names = [n for n in block_names(path) if only is None or n in only]
    for name in dict.fromkeys(source_of(n) for n in names):
        if name in PRESETS:
            run_preset(name, results)
        elif name == "quickstart":
            run_quickstart(results)


def run_all(results: Path) -> None:
    """Run every preset and the README's main job into ``results``."""
    for name in PRESETS:
        run_preset(name, results)
    run_quickstart(results)


def run_preset(name: str, results: Path) -> None:
    """Run every job of preset ``name`` into ``results/NAME/<job>`` (the folder names of ``run -m``)."""
    from omegaconf import open_dict

    from harness.runner import execute

    for point in sweep_points(name):
        cfg = compose(f"experiment={name}", *point, "progress=false", "plots=false")
        job = ",".join(sorted(point)).replace("/", "_").replace("=", "-").replace(",", "_")
        with open_dict(cfg):
            cfg.pop("hydra", None)
        execute(cfg, results / name / job, echo=lambda _: None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"tables to print ({', '.join(TABLES)}); default all")
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder holding the presets' sweep folders")
    parser.add_argument(
        "--update", type=Path, action="append", help="rewrite the generated blocks of this markdown file"
    )
    parser.add_argument("--check", type=Path, action="append", help="exit 1 if this file's generated blocks are stale")
    parser.add_argument("--run", action="store_true", help="run every preset into --results first")
    parser.add_argument(
        "--before",
        type=Path,
        help="with strategy_zoo: a folder of an older strategy_zoo sweep to "
        "compare with (success, tokens, rank before and after)",
    )
    args = parser.parse_args(argv)
    if args.run:
        run_all(args.results)
    if args.check:
        stale = [f"{path}: {name}" for path in args.check for name in stale_blocks(path, args.results)]
        print("stale: " + "; ".join(stale) if stale else "every generated table is current")
        return 1 if stale else 0
    if args.update:
        for path in args.update:
            print(f"{path}: updated", ", ".join(update(path, args.results)))
        return 0
    if args.before:
        print(zoo_before_after(args.before, args.results))
        return 0
    for name in args.names or list(TABLES):
        if name not in TABLES:
            parser.error(f"unknown table {name!r} (valid: {', '.join(TABLES)})")
        print(f"## {name}\n\n{TABLES[name](args.results)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

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
``cache_pitfalls``, ``strategy_zoo``), a table derived from a preset's sweep (``compression_six_verdict``,
``select_tools`` and ``cache_pitfalls_verdict`` from ``cache_pitfalls``), a computed table that needs no
run (``seed004_demo``: the LayeredContext demo; ``status_cost_model``: seed 002 §2.6.4's replace-vs-append
formula beside the prefix-cache simulator) or ``quickstart`` (the console output of the README's main job).
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
NOTE = ("Reference agent (scripted, not an LLM), profile perfect (the noise-free instrument); means per trial over "
        "every instance x trial of the cell.")
NOTE_REALISTIC = ("Reference agent (scripted, not an LLM), profile realistic (batching, seeded variation, attention "
                  "model; docs/reference_agent.md); means per trial over every instance x trial of the cell.")


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
        main, sub = g["input_tokens"].mean(), _col(g, "subagent_input_tokens").mean() if "subagent_input_tokens" in g else 0
        total = g["total_input_tokens"].mean()
        tokens = _int(total) + (f" ({_int(main)} main + {_int(sub)} sub)" if sub else "")
        files_total = int(g["files_total"].iloc[0])
        cov = f"{g['files_read'].mean():.1f}/{files_total}"
        if "files_read_summed" in g and g["files_read_summed"].notna().any():
            cov += f" ({g['files_read_summed'].mean():.1f} summed)"
        rereads = (g["rereads"] + _col(g, "subagent_rereads")).sum()
        reads = (g["reads"] + _col(g, "subagent_reads")).sum()
        outcomes = ", ".join(f"{k} {v}" for k, v in g["outcome"].value_counts().items())
        rows.append([f"`{cell}` {label}", s_tok, tokens, s_rr, _pct(rereads / reads if reads else 0), s_cov, cov,
                     s_q, f"{g['score'].mean():.2f} ({int(g['success'].sum())}/{len(g)})", f"{g['steps'].mean():.0f}",
                     _int(g["hook_continues"].mean()) if "hook_continues" in g else "0", outcomes])
    return _table(["config", "seed input tok", "ours input tok", "seed re-read", "ours re-read", "seed coverage",
                   "ours coverage (files read / total)", "seed quality /10", "ours score (success)", "steps",
                   "hook refusals", "outcomes"], rows) + f"\n\n{NOTE} Re-read rate: (re-reads, sub-agents' included) / reads."


# ------------------------------------------------------------------------------------- invoice_layers

INVOICE_ORDER = {"none": "不管理", "clear": "只清理工具结果", "clear_summary": "清理 + 摘要 (layered, summarize: true)",
                 "clear_notes": "清理 + 外部笔记 (notes, base clear_tool_results)"}


def invoice_layers(results: Path) -> str:
    t = _trials("invoice_layers", results)
    rows = []
    pricing = ", ".join(sorted(set(map(str, t.get("pricing", ["none"])))))
    for cell in _cells(t, list(INVOICE_ORDER)):
        g = t[t["cell"] == cell]
        total_in = g["total_input_tokens"]
        cached = g["total_cached_tokens"]
        hit = cached.sum() / total_in.sum() if total_in.sum() else 0
        rows.append([f"`{cell}` {INVOICE_ORDER.get(cell, '')}", f"{g['success'].mean():.0%} ({int(g['success'].sum())}/{len(g)})",
                     f"{g['score'].mean():.2f}", _int(total_in.mean()), _int(_col(g, "summarizer_input_tokens").mean()),
                     _pct(hit), f"{g['cost'].mean():.4f}", f"{g['wall_s'].mean():.3f}", _int(g["peak_context"].mean()),
                     f"{g['compactions'].mean():.0f}"])
    return _table(["strategy", "success rate", "mean score", "mean input tok (all calls)", "of which summarizer",
                   "cache-hit ratio", f"mean cost (USD, pricing: {pricing})", "mean wall time (s)", "peak context",
                   "compactions"], rows) + (
        f"\n\n{NOTE} Seed 004 leaves this table blank (\"我没有在真模型上跑过这个实验,表格留给你填\"); wall time is "
        "the harness's own time on the reference agent (no model latency).")


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
    rows = [["history", "62 messages, ~30,759 (seed text)", f"{len(hist)} messages, {total(hist):,}", "(same history)"],
            ["clearing only, budget 24,000", "62 messages, ~6,017 (seed text)",
             f"{len(seed_clear)} messages, {total(seed_clear):,}", f"{ours[0][0]} messages, {ours[0][1]:,}"],
            ["with a summarizer, budget 4,000", "14 messages, ~4,468 (seed text)",
             f"{len(seed_sum)} messages, {total(seed_sum):,}", f"{ours[1][0]} messages, {ours[1][1]:,}"]]
    return _table(["", "seed 004 (published)", "seed 004's code, rerun here", "ours (`strategies.layered.Layered`)"],
                  rows) + "\n\nCounted with the seed's own `est_tokens` (tests/seed004_demo.py); the differences are " \
                          "explained token by token in strategies/README.md."


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
        rows.append([f"`{cell}`", _int(g["total_in"].mean()), f"{vs:.2f}", f"{per_step / base_step:.2f}", f"{same:.2f}",
                     _int(g["peak_context"].mean()), _int(g["final_history_tokens"].mean()), f"{ratio:.2f}",
                     f"{g['steps'].mean():.0f}", f"{int(g['success'].sum())}/{len(g)} ({g['score'].mean():.2f})",
                     outcomes])
    return _table(["strategy", "mean input tok (all calls)", "vs none (total)", "vs none (per step)",
                   f"vs none (steps 1-{int(base['steps'].min()) if len(base) else 0})",
                   "peak context", "full history at the end", "context ratio (peak / full history)", "steps",
                   "success (score)", "outcomes"], rows) + (
        f"\n\n{NOTE} `none` stops at the context overflow, so its total covers fewer steps than the others; "
        "\"per step\" compares input tokens per model call instead, and \"steps 1-N\" the input tokens of every call "
        "made in the steps `none` ran (the fairest of the three). Seed 002 exp 2-10 (Kimi, 128K): no compression "
        "overflows at iteration 5 (~165,000 tokens); context-aware compression saves about 76% of the tokens with "
        "the fewest iterations (tied).")


def _history_chars(transcript: Path) -> dict[str, int]:
    """Characters of one trial's full history by origin, and what ``context_aware_compression`` made of its pages.

    ``agent``: the agent's replies; ``tool``: the tool results as the tools returned them;
    ``result_chars``/``compressed_chars``: the results compressed and their compressed texts (its
    ``compaction`` events; 0 for other strategies).
    """
    import json

    events = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    bodies = {e["ref"]: e["message"] for e in events if e.get("event") == "message"}
    size = lambda ref: len(str(bodies.get(ref, {}).get("content") or ""))  # noqa: E731
    out = {"agent": sum(size(e["ref"]) for e in events if e.get("event") == "reply"),
           "tool": sum(size(e["ref"]) for e in events if e.get("event") == "tool"),
           "result_chars": 0, "compressed_chars": 0}
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
        for key, value in _history_chars(Path(run_dir) / "transcripts" / f"{trial_id}.jsonl").items():
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
    rows.append(["no compression overflows at iteration 5 of 7 (~165,000 tokens > 128K); 7 results, ~367,000 characters",
                 f"`none` overflows in {overflowed}/{len(none)} trials at step {none['steps'].mean():.0f} of "
                 f"~{finished['steps'].mean():.0f} ({_int(none['peak_context'].mean())} tokens); "
                 f"{_int(chars.get('tool', 0) / max(len(cac), 1))} characters of tool output per trial",
                 "reproduced" if overflowed == len(none) else "not",
                 f"the full history ends at {_int(full)} tokens, {full / t['budget'].iloc[0]:.1f}x the budget (the seed's "
                 "characters are Chinese, ~2 per token; ours are English, ~4 per token, so the token ratio is matched)"])
    saving, common = _same_steps_saving(cac, none)
    share = chars.get("agent", 0) / max(chars.get("agent", 0) + chars.get("tool", 0), 1)
    rows.append(["context-aware compression saves ~76% of the tokens against no compression",
                 f"{100 * saving:.0f}% fewer input tokens than `none` over the {common} steps `none` ran (summarizer "
                 f"calls included); per call over its whole run {100 * (1 - per_step(cac) / per_step(none)):.0f}%; total "
                 f"{cac['total_input_tokens'].mean() / none['total_input_tokens'].mean():.2f}x (`none` stops early)",
                 "reproduced" if saving >= 0.66 else "partly" if saving > 0.1 else "not",
                 f"the agent's own replies (recited notes and progress) are {100 * share:.0f}% of the history's characters "
                 "and no compressor touches them; the seed's 7 pages of ~52,000 characters dwarf its agent's words"])
    ratio = chars.get("compressed_chars", 0) / max(chars.get("result_chars", 0), 1)
    rows.append(["~150K characters of pages compressed to ~2K (1.3%), founders' names and moves kept",
                 f"pages compressed to {100 * ratio:.0f}% of their characters; success {int(cac['success'].sum())}/{len(cac)} "
                 f"(score {cac['score'].mean():.2f})",
                 "reproduced" if ratio <= 0.05 and cac["success"].all() else "partly" if cac["success"].all() else "not",
                 "the reference summarizer writes its four-part state (every move noted so far, the progress line) for each "
                 "page, not a one-page extract; the moves survive because the agent noted them"])
    fewest = finished.groupby("cell")["steps"].mean()
    rows.append(["context-aware compression needs the fewest iterations (tied)",
                 f"{cac['steps'].mean():.0f} steps; fewest of the others: {fewest.drop('context_aware_compression', errors='ignore').min():.0f}",
                 "reproduced" if cac["steps"].mean() <= fewest.min() + 1 else "not",
                 "its agent re-reads nothing: every page it needs again is summarized in its own notes"
                 if cac["rereads"].sum() == 0 else f"{int(cac['rereads'].sum())} re-reads"])
    rows.append(["adaptive window: triggers at 80% of 128K (102,400) and compresses every uncompressed result at once",
                 f"peak {_int(adaptive['peak_context'].mean())} tokens, {adaptive['compactions'].mean():.0f} batches per trial",
                 "reproduced" if adaptive["peak_context"].max() <= 0.8 * t["budget"].iloc[0] * 1.01 else "partly",
                 "the request never passes the trigger by more than the newest round"])
    return _table(["seed 002 exp 2-10", "ours", "verdict", "why"], rows) + (
        f"\n\n{NOTE} Computed from the compression_six sweep and its transcripts (characters of the full history). "
        "`reproduced` for the 76% claim needs a saving of two thirds or more over the steps `none` ran, `partly` "
        "above 10%.")


# ---------------------------------------------------------------------------------------- status_bar

STATUS_ORDER = {"none": "whole history (nothing lost)", "headtail": "对照组 A: no status bar (headtail 8K)",
                "status_replace": "对照组 B: status bar, replace (headtail 8K)",
                "status_append": "对照组 B: status bar, append (headtail 8K)"}


def status_bar(results: Path) -> str:
    t = _trials("status_bar", results)
    rows = []
    for cell in _cells(t, list(STATUS_ORDER)):
        g = t[t["cell"] == cell]
        rows.append([f"`{cell}` {STATUS_ORDER.get(cell, '')}", f"{int(g['success'].sum())}/{len(g)}",
                     f"{g['score'].mean():.2f}", f"{g['call_violations'].mean():.1f}",
                     f"{int((g['call_violations'] > 0).sum())}/{len(g)}", f"{g['max_calls_per_merchant'].max():.0f}",
                     _int(g["input_tokens"].mean()), _int(g["peak_context"].mean()), f"{g['steps'].mean():.0f}"])
    return _table(["arm", "success", "mean score", "mean violations (4th+ calls)", "trials with a violation",
                   "max calls to one merchant", "mean input tok", "peak context", "steps"], rows) + (
        f"\n\n{NOTE} Seed 002 exp 2-8 (Qwen3-0.6B, qualitative): without the status bar the model often breaks "
        "the 3-call limit; with it, it keeps to it.")


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


def simulated_cost(requests: list[tuple[list[dict], dict]], counter, alpha: float = STATUS_ALPHA,
                   with_reply: bool = True) -> float:
    """Σ over the requests of uncached + α x cached tokens, the cache being the prefix-cache simulator's.

    The profile is exact (token-level, no minimum). ``with_reply``: it holds the previous request with
    its reply, as a KV cache does (seed 002 §2.3.2), so what followed the last status is cached, as the
    seed assumes; without, it holds every earlier request but no reply (a provider's prompt cache).
    """
    from harness.cache_sim import CacheProfile, PrefixCacheSimulator

    profile = CacheProfile("exact-kv", min_tokens=1, block=1, scope="last", include_reply=True) if with_reply \
        else CacheProfile("exact-prompt", min_tokens=1, block=1)
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
        rows.append([status, reply, rounds, _int(seed_replace), _int(seed_append), seed_pick,
                     _int(seed_append - seed_replace), _int(sim["append"] - sim["replace"]), sim_pick,
                     "yes" if sim_pick == seed_pick else "no", _int(prompt["append"] - prompt["replace"])])
    return _table(["S (status tok)", "R (tok after it)", "N (rounds)", "seed C_replace", "seed C_append",
                   "seed picks", "seed: C_append − C_replace", "simulator: append − replace", "simulator picks",
                   "same pick", "append − replace, reply not cached"], rows) + (
        f"\n\nComputed, no run: α = {STATUS_ALPHA} (a cached token costs a tenth). Each round is one model call "
        "whose request ends with the status; the prefix-cache simulator (harness/cache_sim.py, exact token "
        "matching, the previous request and its reply cached as in a KV cache) prices every request at "
        "uncached + α x cached tokens. The difference of the two modes cancels the part they share (each "
        "round's new status and reply); the seed's formula drops the messages' framing tokens "
        f"({MESSAGE_OVERHEAD} per message) and the stale statuses' own first send, so the columns differ by those. "
        "Last column: the same requests under a provider's prompt cache, which holds earlier requests but not the "
        f"reply: what followed the last status was never cached, so replacing it costs nothing (the seed's R is 0 "
        f"there) and `replace` is the cheaper in {replace_wins} of {len(rows)} rows.")


# ------------------------------------------------------------------------------------ cache_pitfalls

PITFALLS = {"none": "append-only baseline", "pitfall_timestamp": "timestamp at the head of the system prompt",
            "pitfall_tool_order": "tools re-sorted by use frequency", "pitfall_window": "window of the last 10 rounds",
            "pitfall_flatten": "flattened \"USER: … ASSISTANT: …\" text",
            "pitfall_user_config": "live account state at the head of the task message",
            "pitfall_json_keys": "JSON keys re-serialized in a random order",
            "pitfall_tool_churn": "a helper tool loaded, another unloaded, every turn",
            "select_tools": "dynamic tool exposure (seed 003 SelectTools; not a pitfall)"}


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
        rows.append([f"`{cell}` {PITFALLS.get(cell, '')}", _pct(hit), f"{100 * (base - hit):+.0f}",
                     _int(g["input_tokens"].mean()), _int(cached.mean()), f"{g['cost'].mean():.4f}",
                     f"{int(g['success'].sum())}/{len(g)}", f"{g['steps'].mean():.0f}", f"{g['reread_rate'].mean():.2f}",
                     sources])
    return _table(["strategy", "cache-hit ratio", "hit loss vs `none` (points)", "mean input tok", "mean cached tok",
                   f"mean cost (USD, {pricing})", "success", "steps", "re-read rate", "cached_source"], rows) + (
        f"\n\n{NOTE} Cached tokens: " + ("the harness's prefix-cache simulator (`sim_cached_tokens`)." if sim else
                                         "PENDING: this checkout has no prefix-cache simulator yet, so cached tokens "
                                         "are 0 for every row (the scripted backend reports none)."))


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
        repay = (1 - STATUS_ALPHA) * lost_per_break / (STATUS_ALPHA * saved_per_call) if saved_per_call else float("nan")
        rows.append([family, f"{per_call(none):.0f} → {per_call(sel):.0f}", _int(sel["tool_schema_tokens_saved"].mean()),
                     _int(sel["cache_lost_tokens"].mean()), f"{sel['cache_breaks'].mean():.0f}",
                     "-" if repay != repay else _int(repay),
                     f"{sel['unoffered_calls'].mean():.0f}",
                     f"{none['steps'].mean():.0f} → {sel['steps'].mean():.0f}",
                     f"{_int(none['input_tokens'].mean())} → {_int(sel['input_tokens'].mean())}",
                     f"{none['cost'].mean():.4f} → {sel['cost'].mean():.4f}"])
    return _table(["family", "tool-schema tok per call (`none` → `select_tools`)", "schema tok saved per trial",
                   "cached tok lost at breaks", "cache breaks", "calls a set must last to repay a break",
                   "calls to a hidden tool", "steps", "input tok",
                   "cost (USD)"], rows) + (
        f"\n\n{NOTE} Both sides of dynamic tool exposure: seed 003 (\"工具定义放 50 个不如动态暴露 10 个\") counts the "
        "schema tokens saved; seed 004 (\"工具定义通常放在上下文最前面,一改就让整个缓存失效\") the cache hits lost at each "
        "change of the offered set and the calls to a tool no longer offered (answered with an error, not executed). "
        f"A schema left out would have been cached in `none`, so each call saves only α = {STATUS_ALPHA} of its price, "
        f"while a break re-prices the lost tokens at 1 − α: a set must last (1 − α) x (tokens lost per break) / "
        "(α x schema tokens saved per call) calls to repay one break.")


PITFALL_SEED = {  # what the seeds say each anti-pattern does (quoted), and the measure that tests it
    "pitfall_timestamp": "seed 002 exp 2-3: the first differing token is at the head, so nothing after it is reused",
    "pitfall_user_config": "seed 002 exp 2-3 动态用户配置: calls left and balance \"塞进上下文前部\" break the cache",
    "pitfall_tool_order": "seed 002 exp 2-3: \"换顺序就从第一个变动的工具起全部失效\"",
    "pitfall_window": "seed 002 exp 2-3: \"前缀每轮都变,关键结果还会滑出去\"",
    "pitfall_flatten": "seed 002 exp 2-3: \"破坏性最大:重复执行、忽略工具结果\"",
    "pitfall_json_keys": "seed 004 二: unstable JSON key order \"缓存也会悄悄失效\"",
    "pitfall_tool_churn": "seed 004 三: adding and removing tools \"一改就让整个缓存失效\"",
    "select_tools": "seed 003: expose few tools (saves tokens); seed 004: changing them breaks the cache",
}


def _loss_verdict(loss: float, full: float = 50.0) -> str:
    """``reproduced`` when the hit ratio falls by ``full`` points or more, ``partly`` from 1 point, else ``not``."""
    return "reproduced" if loss >= full else "partly" if loss >= 1 else "not"


def _families_hit(t, cell: str) -> list[str]:
    """The families where ``cell`` loses at least one point of cache hits against ``none``."""
    return [f for f in sorted(set(t["family"]))
            if _hit_ratio(_pair(t, f, "none")) - _hit_ratio(_pair(t, f, cell)) >= 0.01]


def _schema_range(t) -> str:
    """The smallest and largest tool-schema tokens per call of ``none`` over the families (``150-460``)."""
    none = t[t["cell"] == "none"]
    per_call = [g["tool_schema_tokens"].sum() / g["steps"].sum() for _, g in none.groupby("family")]
    return f"{min(per_call):.0f}-{max(per_call):.0f}"


def pitfall_verdict(t, cell: str, loss: float) -> tuple[str, str]:
    """The verdict on one row of ``cache_pitfalls`` and why, from the measured figures."""
    g, none = t[t["cell"] == cell], t[t["cell"] == "none"]
    same_steps = g["steps"].sum() == none["steps"].sum() and g["success"].sum() == none["success"].sum()
    behaviour = "same steps and answers as `none`" if same_steps else \
        f"{g['steps'].mean():.0f} steps and {int(g['success'].sum())}/{len(g)} successes against `none`'s {none['steps'].mean():.0f} and {int(none['success'].sum())}/{len(none)}"
    if cell == "pitfall_flatten":
        verdict = "reproduced" if g["success"].sum() < none["success"].sum() else "not"
        return verdict, f"the damage is to the agent, not the cache (hits {100 * loss:+.0f} points): {behaviour}"
    if cell == "select_tools":
        saved, lost = g["tool_schema_tokens_saved"].mean(), g["cache_lost_tokens"].mean()
        cheaper = g["cost"].mean() < none["cost"].mean()
        return ("reproduced" if cheaper else "partly",
                f"per trial it saves {saved:,.0f} schema tokens, loses {lost:,.0f} cached tokens at "
                f"{g['cache_breaks'].mean():.1f} breaks and makes {g['unoffered_calls'].mean():.1f} calls to hidden tools "
                f"({g['steps'].mean() - none['steps'].mean():+.1f} steps); cost {g['cost'].mean() / none['cost'].mean():.2f}x "
                "`none`'s" + ("" if cheaper else f"; these tasks' schemas are {_schema_range(t)} tokens a call, too "
                                                "few for the seed's saving to outweigh the breaks"))
    families = _families_hit(t, cell)
    where = "every family" if len(families) == len(set(t["family"])) else \
        ("only " + ", ".join(families) if families else "no family")
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
        rows.append([f"`{cell}`", PITFALL_SEED.get(cell, ""), f"hits {_pct(hit)} (`none` {_pct(base)})", verdict, reason])
    return _table(["strategy", "seed", "ours", "verdict", "why"], rows) + (
        f"\n\n{NOTE} Verdicts are computed: `reproduced` when the cache-hit ratio falls by 50 points or more (the "
        "seeds say the cache is lost), `partly` from 1 point, `not` below; `pitfall_flatten` is judged on success, "
        "`select_tools` on both sides.")


# -------------------------------------------------------------------------------------- strategy_zoo

ZOO = ["none", "sliding_window", "headtail", "clear_tool_results", "summarize", "layered", "offload",
       "adaptive_window", "status_bar", "notes", "isolate"]


def zoo_cell(g) -> list[str]:
    """Success, mean tokens of all calls, re-read rate and budget adherence of one strategy x budget cell."""
    over = int((g["over_budget_steps"] > 0).sum()) if "over_budget_steps" in g else 0
    ratio = g["max_budget_ratio"].max() if "max_budget_ratio" in g else float("nan")
    held = "yes" if over == 0 else f"no ({over}/{len(g)}, max {ratio:.2f}x)"
    from harness.analysis import pass_hat_k

    per_task = [(len(t), int(t["success"].sum())) for _, t in g.groupby("instance_id")]
    k = min(n for n, _ in per_task)
    return [f"{int(g['success'].sum())}/{len(g)}", f"{pass_hat_k(per_task, k):.2f}" if k > 1 else "–",
            _int(g["total_input_tokens"].mean()), _pct(g["pooled_rr"].iloc[0]), held,
            f"{int(g['thrashing'].fillna(False).astype(bool).sum())}"]


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
    return _table(["strategy", "budget", "success", "pass^k (k = trials)", "mean input tok (all calls)", "re-read rate",
                   "held the budget (trials over, max ratio)", "thrashing trials"], rows) + (
        f"\n\n{NOTE_REALISTIC} Default suite (7 families x 2 instances, 2 trials). Input tokens count every model call of a "
        "trial: agent, summarizer, sub-agents and stop hook. A trial did not hold the budget when any of its "
        "requests was larger than the budget (`over_budget_steps` > 0).")


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
            rows.append([family, budget, *[f"{int(g[g['strategy'] == s]['success'].sum())}/{len(g[g['strategy'] == s])}"
                                           for s in strategies], str(len(worse))])
    return _table(["family", "budget", *[f"`{s}`" for s in strategies], "strategies below `none`"], rows) + (
        f"\n\n{NOTE_REALISTIC} A family discriminates when strategies fail where `none` succeeds; the last column "
        "counts the strategies whose success rate is below `none`'s in that family and budget.")


def zoo_summary(results: Path) -> dict[tuple[str, str], tuple[int, int, float]]:
    """(strategy, budget) -> (successes, trials, mean input tokens of all calls) of a strategy_zoo sweep."""
    t = _trials("strategy_zoo", results)
    t["budget_label"] = t["budget"].map(lambda b: f"{int(b) // 1000}k")
    return {(s, b): (int(g["success"].sum()), len(g), float(g["total_input_tokens"].mean()),
                     int((g["over_budget_steps"] > 0).sum()))
            for (s, b), g in t.groupby(["strategy", "budget_label"])}


def zoo_ranks(summary: dict, budget: str) -> dict[str, int]:
    """Rank of each strategy at ``budget``: most successes first, then fewest input tokens."""
    cells = sorted((k[0] for k in summary if k[1] == budget), key=lambda s: (-summary[s, budget][0], summary[s, budget][2]))
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
            rows.append([f"`{strategy}`", budget, f"{o[0]}/{o[1]}" if o else "-", f"{n[0]}/{n[1]}",
                         _int(o[2]) if o else "-", _int(n[2]), "yes" if n[3] == 0 else f"no ({n[3]}/{n[1]})",
                         f"{old_rank.get(strategy, '-')} → {new_rank[strategy]}{moved}"])
    return _table(["strategy", "budget", "success before", "success after", "input tok before (all calls)",
                   "input tok after (all calls)", "held the budget", "rank (success, then tokens)"], rows) + (
        f"\n\n{NOTE} * = the rank changed.")


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
        rows.append([family, *cells, _int(none["peak_context"].max()) if len(none) else "-", str(overflow),
                     ", ".join(f"`{s}`" for s in beaten) or "-"])
    return _table(["family", *[f"`{s}`" for s in strategies], "none: largest request", "none: context overflows",
                   "beat `none` on success"], rows) + (
        f"\n\n{NOTE_REALISTIC} 25K budget, 3 trials per "
        "instance. This is a MODEL, not a measurement: each visible fact (a line) is missed with a probability that "
        "grows with the context's length and is largest in its middle (configs/model/scripted.yaml gives the "
        "parameters and their sources). Seed 003 (Lost in the Middle) and seed 000 (Chroma's context rot) report "
        "the effect on real models; these figures show what the model implies, not what a model does.")


# --------------------------------------------------------------------------------------- calibration

def calibration(results: Path) -> str:
    """The reference agent (both profiles) beside the calibration LLM (benchmarks/calibration.py; no run folder)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import calibration as cal

    if not (cal.CALIBRATION / "README.md").exists():
        return f"(calibration trajectories not found at {cal.CALIBRATION})"
    parts = []
    for profile in ("realistic", "perfect"):
        rows = cal.calibrate(profile, 3) + [cal.default_size(profile, 3)]
        parts.append(f"Profile `{profile}` (3 trials per run; ratios are reference / LLM):\n\n{cal.table(rows)}")
    return "\n\n".join(parts) + "\n\nReference agent (scripted, not an LLM) under each profile, beside the LLM's recorded runs."


# ---------------------------------------------------------------------------------------- quickstart

QUICKSTART = ("strategy=headtail", "budget=25k")
RUNS = "results/runs"  # the CLI writes a run to RUNS/<folder_name of its config>


def run_quickstart(results: Path) -> list[str]:
    """Run the README's main job (``run strategy=headtail budget=25k``) into ``results/quickstart``; its lines."""
    from harness.cli import config_dict
    from harness.identity import folder_name
    from harness.runner import execute

    cfg = compose(*QUICKSTART, "progress=false")
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


TABLES = {"discrimination": discrimination, "quickstart": quickstart, "attention_model": attention_model, "calibration": calibration, "review44": review44, "strategy_zoo": strategy_zoo, "invoice_layers": invoice_layers, "seed004_demo": seed004_demo,
          "compression_six": compression_six, "status_bar": status_bar, "cache_pitfalls": cache_pitfalls}


TABLES.update({"select_tools": select_tools_sides, "cache_pitfalls_verdict": cache_pitfalls_verdict,
               "compression_six_verdict": compression_six_verdict, "status_cost_model": status_cost_model})

BLOCK = re.compile(r"<!-- table:(\w+) -->.*?<!-- /table:\1 -->", flags=re.S)


def render(text: str, results: Path) -> tuple[str, list[str]]:
    """``text`` with every ``<!-- table:NAME -->`` block regenerated, and the names regenerated."""
    done: list[str] = []

    def repl(match):
        name = match.group(1)
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


def stale_blocks(path: Path, results: Path) -> list[str]:
    """Names of the generated blocks of ``path`` that differ from a fresh rendering (wall times aside)."""
    committed = path.read_text()
    fresh, _ = render(committed, results)
    old = {m.group(1): mask_wall_times(m.group(0)) for m in BLOCK.finditer(committed)}
    new = {m.group(1): mask_wall_times(m.group(0)) for m in BLOCK.finditer(fresh)}
    return [name for name in old if old[name] != new.get(name)]


PRESETS = ("review44", "invoice_layers", "compression_six", "status_bar", "cache_pitfalls", "strategy_zoo",
           "attention_model")


def sweep_points(name: str) -> list[list[str]]:
    """The override lists of every job of preset ``name`` (cartesian over its sweeper params)."""
    from omegaconf import OmegaConf

    from harness.cli import _sweep_values

    cfg = compose(f"experiment={name}", hydra_config=True)
    params = OmegaConf.to_container(cfg.hydra.sweeper.params) or {}
    points: list[list[str]] = [[]]
    for key, value in params.items():
        points = [p + [f"{key}={v}"] for p in points for v in _sweep_values(str(value))]
    return points


DERIVED = {"discrimination": "strategy_zoo"}  # tables computed from another preset's sweep
DERIVED.update({"select_tools": "cache_pitfalls", "cache_pitfalls_verdict": "cache_pitfalls",
                "compression_six_verdict": "compression_six"})


def run_for(path: Path, results: Path) -> None:
    """Run what the generated blocks of ``path`` need (their presets, the main job) into ``results``."""
    names = [m.group(1) for m in BLOCK.finditer(path.read_text())]
    for name in dict.fromkeys(DERIVED.get(n, n) for n in names):
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
    parser.add_argument("--update", type=Path, action="append", help="rewrite the generated blocks of this markdown file")
    parser.add_argument("--check", type=Path, action="append", help="exit 1 if this file's generated blocks are stale")
    parser.add_argument("--run", action="store_true", help="run every preset into --results first")
    parser.add_argument("--before", type=Path, help="with strategy_zoo: a folder of an older strategy_zoo sweep to "
                                                    "compare with (success, tokens, rank before and after)")
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

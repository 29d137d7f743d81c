"""``python -m harness report`` and ``compare``: tables, plots and the regression gate.

``report RUN... [--out DIR]`` writes ``summary.md``, ``summary.csv`` and ``plots/*.png``:
into the folder given when there is one path (a run folder or a sweep folder), into the
deepest common parent folder of the paths when there are several, or into ``--out``.

``compare BASE CAND [--fail-on-regression] [--tolerance 0.10] [--alpha 0.05] [--json]`` prints the
paired comparison, base first: the successes of each side, the pairs only one side solved, McNemar's
p, the success difference (candidate - base, three decimals) with its paired-bootstrap interval,
and the input-token and cost ratios; ``--json``: the same figures as one JSON object. With
``--fail-on-regression`` it exits 1 when the candidate regresses.
Unknown paths and unpairable sides: one line, exit code 2.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness import analysis
from harness.budget import format_budget
from harness.curves import BAND, CUT, MIN_STEPS, OVER, PINNED_SHARE, THRASH_REPEATS, THRASH_REREAD
from harness.errors import UsageError
from harness.records import corruption_notes

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use
    from harness.lazy import pandas as pd

PLOTS = ("sawtooth.png", "cumulative_input.png", "pareto.png", "reread_cache.png")
TERMINAL_WIDTH = 120
REPORTS_ROOT = (
    Path("results") / "reports"
)  # where a report of several runs goes when their common folder is not under results/
OUTCOME_HEADERS = {
    "submitted": "submitted",
    "step_limit": "step_limit",
    "context_overflow": "overflow",
    "model_error": "model_err",
    "strategy_error": "strat_err",
}
REASON_CHARS = 200


def _load(paths: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    try:
        trials = analysis.load_trials(paths)
    except (FileNotFoundError, analysis.ForeignRecords) as exc:
        raise UsageError(str(exc)) from None
    if trials.empty:
        raise UsageError(f"no trials recorded in {', '.join(paths)}")
    return trials, analysis.load_steps(paths)


def output_dir(paths: list[str], out: str | None) -> Path:
    """Where ``report`` writes: ``--out``, else the one path, else the common parent of the paths when it
    lies in a ``results/`` folder, else ``results/reports/<names of the runs>``."""
    if out:
        path = Path(out)
        if path.exists() and not path.is_dir():
            raise UsageError(f"report: --out {out} is a file; give a folder (it is created if missing)")
        return path
    if len(paths) == 1:
        return Path(paths[0])
    common = Path(os.path.commonpath([str(Path(p).resolve()) for p in paths]))
    if "results" in common.parts:
        return common
    names = "+".join(Path(p).resolve().name for p in sorted(paths))
    return REPORTS_ROOT / (names[:80] or "report")


def write_report(paths: list[str], out: Path) -> tuple[pd.DataFrame, Path]:
    """Write summary.md, summary.csv and the plots of the runs under ``paths`` into ``out``."""
    from harness import plots  # matplotlib, slow to load: imported only when plots are drawn

    trials, steps = _load(paths)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summary = analysis.summarize(trials)
    summary.to_csv(out / "summary.csv", index=False)
    by_config = analysis.summarize(trials, by=analysis.CONFIG_KEYS)
    notes = analysis.pooling_notes(trials, analysis.CONFIG_KEYS)
    for note in notes:
        print(note, file=sys.stderr)
    written = []
    if not steps.empty:
        written.append(plots.sawtooth(steps, trials, out / "plots" / "sawtooth.png"))
        written.append(plots.cumulative_input_plot(steps, trials, out / "plots" / "cumulative_input.png"))
    written.append(plots.pareto(by_config, out / "plots" / "pareto.png", trials))
    written.append(plots.reread_cache(by_config, out / "plots" / "reread_cache.png", trials))
    md = render_markdown(trials, summary, by_config, paths, [p.relative_to(out) for p in written], notes)
    (out / "summary.md").write_text(md, encoding="utf-8")
    return summary, out / "summary.md"


BY_CONFIG_COLUMNS = [
    "config",
    "config_id",
    "strategy",
    "params",
    "budget",
    "model",
    "trials",
    "tasks",
    "run_dirs",
    "success_rate",
    "pass^",  # every pass^k column, in order
    "mean_total_input_tokens",
    "mean_input_tokens",
    "mean_subagent_input_tokens",
    "mean_cached_tokens",
    "mean_output_tokens",
    "cache_hit_ratio",
    "mean_cost",
    "held_budget",
    "over_budget_trials",
    "max_budget_ratio",
    "reread_rate",
    "mean_peak_context",
    "mean_compactions",
    "mean_steps",
    *[f"outcome_{o}" for o in analysis.OUTCOMES],
]
"""The columns of summary.md's per-configuration table, where ``by_config`` has them."""


def render_markdown(
    trials: pd.DataFrame,
    summary: pd.DataFrame,
    by_config: pd.DataFrame,
    paths: list[str],
    plot_paths: list[Path],
    notes: list[str] | None = None,
) -> str:
    """The text of summary.md: its header, the two tables, the token curves' shapes and the plots."""
    lines = [
        *_header_lines(trials, paths, notes or []),
        *_per_family_lines(summary),
        *_per_config_lines(by_config),
        *_curve_lines(trials),
        "## Plots",
        "",
        *[f"- ![{p.stem}]({p.as_posix()})" for p in plot_paths],
        "",
    ]
    return "\n".join(lines)


def _header_lines(trials: pd.DataFrame, paths: list[str], notes: list[str]) -> list[str]:
    """The title, the notes, what the reference agent's numbers mean, and which runs were read."""
    lines = ["# ctxbench report", ""]
    for note in notes:
        lines += [f"> **{note.split(':', 1)[0]}**:{note.split(':', 1)[1]}", ""]
    if analysis.all_reference(trials):
        lines += [
            f"> All {len(trials)} trials come from the **{analysis.reference_note(trials)}**: the numbers measure "
            "what each",
            "> strategy preserves and costs for a scripted policy, not the quality of a model.",
            "",
        ]
    return [*lines, f"Runs: {', '.join(paths)} ({trials['run_dir'].nunique()} run folders, {len(trials)} trials).", ""]


def _per_family_lines(summary: pd.DataFrame) -> list[str]:
    """The per configuration x family table and how to read it."""
    return [
        "## Per configuration x family",
        "",
        analysis.markdown_table(analysis.main_table(summary)),
        "Config: `strategy@budget` plus the settings that tell configurations apart (full identity: `config_id` "
        "in summary.csv). Success: rate with Wilson 95% interval. Input tokens: mean per trial over all model "
        "calls (agent, summarizer, sub-agents, stop hook) with a bootstrap 95% interval. Held budget: no agent "
        "request above the budget in any trial (else: trials that exceeded it, and the largest request / "
        "budget). Curve: token-curve shapes of the trials (see below).",
        "",
    ]


def _per_config_lines(by_config: pd.DataFrame) -> list[str]:
    """The per-configuration table over all families (``BY_CONFIG_COLUMNS``) and how to read it."""
    pass_cols = [c for c in by_config.columns if c.startswith("pass^")]
    cols = [c for name in BY_CONFIG_COLUMNS for c in (pass_cols if name == "pass^" else [name])]
    table = by_config[[c for c in cols if c in by_config.columns]].copy()
    table["budget"] = table["budget"].map(lambda b: format_budget(int(b)))
    return [
        "## Per configuration (all families)",
        "",
        analysis.markdown_table(table),
        "pass^k: the probability that k independent trials of a task all succeed (tau-bench), averaged over tasks. "
        "mean_total_input_tokens: all model calls; mean_input_tokens: the agent's calls alone.",
        "",
    ]


def _curve_lines(trials: pd.DataFrame) -> list[str]:
    """What each token-curve shape means, and how many trials of each configuration had each."""
    shapes = trials.groupby(["config", "curve_shape"]).size().unstack(fill_value=0)
    shapes["thrashing"] = trials.groupby("config")["thrashing"].apply(lambda s: int(s.fillna(False).astype(bool).sum()))
    return [
        "## Token curves",
        "",
        f"Shapes (harness/curves.py, docs/analysis.md): `short` below {MIN_STEPS} steps; `monotonic` when the "
        f"curve runs away (a quarter of the steps above {1 + OVER:.2f}x the budget) or only grows; `pinned` when "
        f"it settles within ±{BAND:.0%} of the budget (smoothed over 4 steps; {PINNED_SHARE:.0%} of the steps "
        f"from there, not still climbing); `sawtooth` when it is cut (a fall of over {CUT:.0%} of the budget, "
        "with hysteresis); `plateau` when it levels off below the budget without cuts; `flat` when it hardly "
        f"moves. `thrashing`: re-read rate above {THRASH_REREAD:.0%}, or one resource read {THRASH_REPEATS} "
        "times or more, whatever the shape.",
        "",
        analysis.markdown_table(shapes.reset_index()),
        "",
    ]


def cmd_report(runs: list[str], out_arg: str | None = None) -> int:
    """``report RUN... [--out DIR]``: write the report, print the per-configuration table and where it went."""
    out = output_dir(runs, out_arg)
    summary, md = write_report(runs, out)
    trials = analysis.load_trials(runs)
    print("\n".join(end_of_run_lines(trials)))
    for note in corruption_notes(analysis.run_dirs(runs)):  # lines of the records that are not in the report
        print(note)
    print(f"\nwrote {md} (per configuration x family, every column) and {out / 'plots'}/")
    if summary["reference_agent"].all():
        print(f"note: these results come from the {analysis.reference_note(trials)}.")
    return 0


# ---------------------------------------------------------------- the table at the end of a run


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def config_table(trials: pd.DataFrame, width: int = TERMINAL_WIDTH) -> list[str]:
    """One line per configuration: outcomes, success with its Wilson interval, mean tokens and cost.

    Built from ``analysis.summarize(trials, by=CONFIG_KEYS)``; the config label is shortened to fit ``width``.
    """
    summary = analysis.summarize(trials, by=analysis.CONFIG_KEYS)
    if summary.empty:
        return []
    label = summary["config"] if "config" in summary else summary["strategy"]
    cells = {
        **{head: summary[f"outcome_{o}"].astype(int).map(str) for o, head in OUTCOME_HEADERS.items()},
        "success [95% CI]": [
            f"{int(k)}/{int(n)} [{lo:.2f}, {hi:.2f}]"
            for k, n, lo, hi in zip(
                summary["successes"],
                summary["trials"],
                summary["success_ci_low"],
                summary["success_ci_high"],
                strict=False,
            )
        ],
        "input tok": summary["mean_total_input_tokens"].map(lambda v: f"{v:,.0f}"),
        "cost $": summary["mean_cost"].map(lambda v: f"{v:.4f}"),
    }
    widths = {h: max(len(h), *(len(v) for v in col)) for h, col in cells.items()}
    room = width - sum(widths.values()) - 2 * len(widths)
    names = [_fit(str(v), max(room, 12)) for v in label]
    name_width = max(len("config"), *(len(n) for n in names))
    lines = ["config".ljust(name_width) + "".join("  " + h.rjust(widths[h]) for h in cells)]
    for i, name in enumerate(names):
        lines.append(name.ljust(name_width) + "".join("  " + list(cells[h])[i].rjust(widths[h]) for h in cells))
    lines.append(
        "input tok: mean per trial over all model calls (total_input_tokens); cost $: mean per trial; "
        "overflow = context_overflow"
    )
    return lines


def failure_reasons(trials: pd.DataFrame) -> list[str]:
    """One line per distinct reason a trial ended without submitting (``model_error x4: ...``), most frequent first."""
    if trials.empty or "error" not in trials:
        return []
    failed = trials[(trials["outcome"] != "submitted") & trials["error"].notna() & (trials["error"].astype(str) != "")]
    counts = failed.groupby(["outcome", "error"]).size().sort_values(ascending=False, kind="stable")
    return [
        f"  {outcome} x{n}: {_fit(' '.join(str(error).split()), REASON_CHARS)}"
        for (outcome, error), n in counts.items()
    ]


def end_of_run_lines(trials: pd.DataFrame | list) -> list[str]:
    """What a run, a sweep and ``report`` print: the per-configuration table, then the failure reasons."""
    if not isinstance(trials, pd.DataFrame):
        trials = analysis.load_trials(trials)
    if trials.empty:
        return []
    reasons = failure_reasons(trials)
    return [
        *config_table(trials),
        *response_cache_lines(trials),
        *(["why trials failed:", *reasons] if reasons else []),
    ]


def response_cache_lines(trials: pd.DataFrame) -> list[str]:
    """One line when calls were replayed from the response cache: how many, paid, and what they cost when made."""
    if "from_cache_calls" not in trials:
        return []
    replayed = int(pd.to_numeric(trials["from_cache_calls"], errors="coerce").fillna(0).sum())
    if not replayed:
        return []
    calls = int(pd.to_numeric(trials.get("total_calls", 0), errors="coerce").fillna(0).sum())
    paid = float(trials["cost"].astype(float).sum())
    made = float(pd.to_numeric(trials["cost_uncached"], errors="coerce").fillna(trials["cost"]).sum())
    return [
        f"response cache: {replayed:,} of {calls:,} model calls replayed (cost 0); paid ${paid:.4f}, "
        f"the same calls cost ${made:.4f} when they were made"
    ]


def format_comparison(cmp: analysis.Comparison) -> str:
    """The text ``compare`` prints."""
    lines = [f"base:      {cmp.base_label}", f"candidate: {cmp.cand_label}", ""]
    for _, r in cmp.table.iterrows():
        stratum = str(r["stratum"]) if "stratum" in cmp.strata_keys else ""
        head = f"[{stratum}] " if stratum else ""
        lines.append(
            f"{head}{r['pairs']} pairs: successes base {r['base_successes']}, candidate {r['cand_successes']} "
            f"(base-only {r['base_only']}, candidate-only {r['cand_only']}; McNemar exact p={r['mcnemar_p']:.3g}); "
            f"success diff (candidate - base) {r['success_diff']:+.3f} "
            f"[{r['success_diff_ci_low']:+.3f}, {r['success_diff_ci_high']:+.3f}]"
        )
        tok = (
            "n/a"
            if pd.isna(r["input_ratio"])
            else f"x{r['input_ratio']:.3f} [{r['input_ratio_ci_low']:.3f}, {r['input_ratio_ci_high']:.3f}]"
        )
        cost = (
            "n/a (base cost 0)"
            if pd.isna(r["cost_ratio"])
            else f"x{r['cost_ratio']:.3f} [{r['cost_ratio_ci_low']:.3f}, {r['cost_ratio_ci_high']:.3f}]"
        )
        lines.append(f"{' ' * len(head)}input tokens (all calls) {tok}; cost {cost}")
        lines.append(f"{' ' * len(head)}-> {'REGRESSION: ' + r['reasons'] if r['regression'] else 'no regression'}")
    lines.append("")
    lines.append(
        f"rule: regression = (McNemar p < {cmp.alpha} and fewer candidate successes) or "
        f"(input-token or cost ratio > {1 + cmp.tolerance:.2f} with its 95% interval above 1)"
    )
    lines += [f"note: {n}" for n in cmp.notes]
    lines.append(f"verdict: {'REGRESSION' if cmp.regression else 'OK'}")
    return "\n".join(lines)


def comparison_json(cmp: analysis.Comparison) -> dict:
    """What ``compare --json`` prints: the sides, the rule, one object per stratum (every figure), notes, verdict."""
    strata = [{key: json_value(value) for key, value in row.items()} for row in cmp.table.to_dict("records")]
    return {
        "base": cmp.base_label,
        "candidate": cmp.cand_label,
        "alpha": cmp.alpha,
        "tolerance": cmp.tolerance,
        "strata_keys": list(cmp.strata_keys),
        "strata": strata,
        "notes": list(cmp.notes),
        "regression": cmp.regression,
        "verdict": "REGRESSION" if cmp.regression else "OK",
    }


def json_value(value: object) -> object:
    """A table cell as JSON holds it: numpy numbers as Python ones, NaN as null."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


def cmd_compare(
    base_path: str,
    cand_path: str,
    fail_on_regression: bool = False,
    tolerance: float = 0.10,
    alpha: float = 0.05,
    as_json: bool = False,
) -> int:
    """``compare BASE CAND``: print the paired comparison (``as_json``: one JSON object); exit code 1 when
    ``fail_on_regression`` and the candidate regresses."""
    if not 0 <= tolerance < 1:
        raise UsageError(f"compare: --tolerance {tolerance:g} must be at least 0 and below 1 (a success-rate drop)")
    if not 0 < alpha < 1:
        raise UsageError(f"compare: --alpha {alpha:g} must be between 0 and 1")
    base, _ = _load([base_path])
    cand, _ = _load([cand_path])
    try:
        cmp = analysis.paired(base, cand, tolerance=tolerance, alpha=alpha)
    except analysis.CompareError as exc:
        raise UsageError(str(exc)) from None
    print(json.dumps(comparison_json(cmp), indent=1) if as_json else format_comparison(cmp))
    return 1 if (fail_on_regression and cmp.regression) else 0

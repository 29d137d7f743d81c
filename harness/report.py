"""``python -m harness report`` and ``compare``: tables, plots and the regression gate.

``report RUN... [--out DIR]`` writes ``summary.md``, ``summary.csv``, ``plots/*.png`` and
``report_inputs.json`` (the runs it read, relative to the report's folder): into the folder given
when there is one path (a run folder or a sweep folder), into ``<common folder>/report-<the paths>``
when there are several under a ``results/`` folder (else ``results/reports/<their names>``), or into
``--out``. A folder holding a report of other runs is never overwritten: ``--out`` (or the one
path) is then one line and exit code 2, a default folder for several paths gets a hash of them.

``compare BASE CAND [CAND ...] [--fail-on-regression] [--tolerance 0.10] [--alpha 0.05] [--json]``
prints the arms (success with its interval, cost, cost per success, input tokens, re-reads,
compactions), success per family and arm, each candidate's paired comparison with the base (the
successes of each side, the pairs only one side solved, McNemar's p, the success difference with its
paired-bootstrap interval, the input-token and cost ratios) and its verdict (harness/verdicts.py:
McNemar's p Holm-adjusted over the candidates), and the Pareto frontier; ``--json``: the same figures
as one JSON object. With ``--fail-on-regression`` it exits 1 when the gate fails a candidate.
Unknown paths and unpairable sides (different family knobs included): one line, exit code 2.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness import analysis, verdicts
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
REPORT_INPUTS = "report_inputs.json"  # the runs a report read, beside its summary.md
REPORT_NAME_CHARS = 80


def _load_trials(paths: list[str]) -> pd.DataFrame:
    """The trials of ``paths`` (``analysis.load_trials``); a bad path or no trial is one ``UsageError`` line."""
    try:
        trials = analysis.load_trials(paths)
    except (FileNotFoundError, analysis.ForeignRecords) as exc:
        raise UsageError(str(exc)) from None
    if trials.empty:
        raise UsageError(f"no trials recorded in {', '.join(paths)}")
    return trials


def _load(paths: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The trials and the steps of ``paths``."""
    return _load_trials(paths), analysis.load_steps(paths)


def output_dir(paths: list[str], out: str | None) -> Path:
    """Where ``report`` writes: ``--out``, else the one path, else ``<common folder>/report-<the paths>`` when
    the paths' common folder lies in a ``results/`` folder, else ``results/reports/<names of the runs>``."""
    if out:
        path = Path(out)
        if path.exists() and not path.is_dir():
            raise UsageError(f"report: --out {out} is a file; give a folder (it is created if missing)")
        return path
    if len(paths) == 1:
        return Path(paths[0])
    resolved = [Path(p).resolve() for p in paths]
    common = Path(os.path.commonpath([str(p) for p in resolved]))
    if "results" in common.parts:
        return common / report_name(resolved, common)
    names = "+".join(sorted(p.name for p in resolved))
    return REPORTS_ROOT / (names[:REPORT_NAME_CHARS] or "report")


def report_name(resolved: list[Path], common: Path) -> str:
    """``report-<each path relative to common, / as _, joined by +>``; a longer name than ``REPORT_NAME_CHARS``
    is cut and ends in a hash of the paths."""
    parts = sorted(
        re.sub(r"[^A-Za-z0-9_.+-]+", "_", p.relative_to(common).as_posix().strip(".")) or p.name for p in resolved
    )
    name = "report-" + "+".join(parts)
    if len(name) <= REPORT_NAME_CHARS:
        return name
    return f"{name[: REPORT_NAME_CHARS - 9]}-{_digest(parts)}"


def _digest(items: list[str]) -> str:
    """Eight hex digits of a hash of ``items``."""
    return hashlib.sha256(json.dumps(items).encode("utf-8")).hexdigest()[:8]


def report_inputs(paths: list[str], out: Path) -> list[str]:
    """The runs a report in ``out`` reads, as its ``report_inputs.json`` records them: relative to ``out``, sorted."""
    return sorted({Path(os.path.relpath(Path(p).resolve(), out.resolve())).as_posix() for p in paths})


def held_inputs(out: Path) -> list[str] | None:
    """The inputs of the report ``out`` holds: None when it holds none (no summary.md), [] when it does not say."""
    if not (out / "summary.md").exists():
        return None
    try:
        return list(json.loads((out / REPORT_INPUTS).read_text(encoding="utf-8"))["inputs"])
    except (OSError, ValueError, KeyError, TypeError):
        return []


def claim_output_dir(paths: list[str], out: Path, chosen: bool) -> Path:
    """``out``, unless it holds a report of other inputs: then ``out-<hash of the inputs>`` for the default folder
    of several paths, else (``--out``, or the one path) a ``UsageError``. A folder's own report written before
    reports recorded their inputs (``report RUN`` into RUN) is its to overwrite."""
    held, mine = held_inputs(out), report_inputs(paths, out)
    own = len(paths) == 1 and out.resolve() == Path(paths[0]).resolve()
    if held is None or held == mine or (own and not held):
        return out
    if chosen or own:
        other = ", ".join(held) if held else f"its inputs not recorded in {REPORT_INPUTS}"
        flag = "another --out" if chosen else "--out"
        raise UsageError(
            f"report: {out} holds a report of other runs ({other}); give {flag}, or delete {out / 'summary.md'}"
        )
    distinct = out.with_name(f"{out.name}-{_digest(mine)}")
    if held_inputs(distinct) not in (None, report_inputs(paths, distinct)):
        raise UsageError(f"report: {out} and {distinct} hold reports of other runs; give --out")
    return distinct


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
    inputs = {"inputs": report_inputs(paths, out)}
    (out / REPORT_INPUTS).write_text(json.dumps(inputs, indent=1) + "\n", encoding="utf-8")
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
    out = claim_output_dir(runs, output_dir(runs, out_arg), chosen=bool(out_arg))
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


# ---------------------------------------------------------------- compare


def _pairs_lines(r: dict, head: str) -> list[str]:
    """A stratum's figures: its pairs and successes with McNemar's p and the success difference, then the
    input-token and cost ratios (``head``: the stratum's ``[label] ``, or nothing)."""
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
    return [
        f"{head}{r['pairs']} pairs: successes base {r['base_successes']}, candidate {r['cand_successes']} "
        f"(base-only {r['base_only']}, candidate-only {r['cand_only']}; McNemar exact p={r['mcnemar_p']:.3g}); "
        f"success diff (candidate - base) {r['success_diff']:+.3f} "
        f"[{r['success_diff_ci_low']:+.3f}, {r['success_diff_ci_high']:+.3f}]",
        f"{' ' * len(head)}input tokens (all calls) {tok}; cost {cost}",
    ]


def _decision_lines(r: dict, head: str, holm: bool) -> list[str]:
    """A stratum's verdict (with its Holm-adjusted p when ``holm``) and what the gate makes of it."""
    adjusted = f" (McNemar p Holm-adjusted over the candidates: {r['p_adjusted']:.3g})" if holm else ""
    gate = f"REGRESSION: {r['reasons']}" if r["regression"] else "no regression"
    return [f"{' ' * len(head)}-> {r['verdict_text']}{adjusted}", f"{' ' * len(head)}-> {gate}"]


def _stratum_lines(cmp: analysis.Comparison, holm: bool = False) -> list[str]:
    """Every stratum of one comparison: its figures, its verdict and the gate's word."""
    lines = []
    for r in cmp.table.to_dict("records"):
        head = f"[{r['stratum']}] " if "stratum" in cmp.strata_keys else ""
        lines += [*_pairs_lines(r, head), *_decision_lines(r, head, holm)]
    return lines


def rule_lines(alpha: float, tolerance: float) -> list[str]:
    """How ``compare`` decides (``harness.verdicts.RULE_LINES`` at these settings)."""
    return [line.format(alpha=alpha, high=1 + tolerance, low=1 - tolerance) for line in verdicts.RULE_LINES]


def format_comparison(cmp: analysis.Comparison) -> str:
    """The text of one paired comparison (a notebook's; ``compare`` prints ``format_compare``)."""
    lines = [f"base:      {cmp.base_label}", f"candidate: {cmp.cand_label}", "", *_stratum_lines(cmp), ""]
    lines += rule_lines(cmp.alpha, cmp.tolerance)
    lines += [f"note: {n}" for n in cmp.notes]
    lines.append(f"verdict: {'REGRESSION' if cmp.regression else 'OK'}")
    return "\n".join(lines)


def aligned(header: list[str], rows: list[list[str]], left: tuple[int, ...] = (0,)) -> list[str]:
    """A plain-text table: the columns ``left`` left-aligned, the others right-aligned, two spaces between."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    return [
        "  ".join(
            c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()
        for cells in (header, *rows)
    ]


def _money(value: float) -> str:
    return "–" if pd.isna(value) else f"{value:.4f}"


def arm_lines(arms: pd.DataFrame, base: str) -> list[str]:
    """The per-arm table (``analysis.arm_table``): success with its Wilson interval, cost, cost per success,
    input tokens, re-reads and compactions."""
    rows = [
        [
            f"{r['arm']} (base)" if r["arm"] == base else str(r["arm"]),
            str(r["trials"]),
            f"{r['successes']}/{r['trials']} [{r['success_ci_low']:.2f}, {r['success_ci_high']:.2f}]",
            _money(r["mean_cost"]),
            _money(r["cost_per_success"]),
            f"{r['mean_total_input_tokens']:,.0f}",
            f"{r['reread_rate']:.0%}",
            f"{r['mean_compactions']:.1f}",
        ]
        for r in arms.to_dict("records")
    ]
    header = ["arm", "trials", "success [95% CI]", "cost $", "$/success", "input tok", "re-read", "compactions"]
    return [
        "per arm (cost $: mean per trial, what the calls cost; $/success: total cost / successes; input tok: "
        "mean per trial, all calls; re-read: mean re-read rate; compactions: mean per trial):",
        *aligned(header, rows),
    ]


def family_lines(families: pd.DataFrame, labels: list[str]) -> list[str]:
    """Success per task family (rows) and arm (columns), ``successes/trials`` (``analysis.family_table``)."""
    cells = {(r["family"], r["arm"]): f"{r['successes']}/{r['trials']}" for r in families.to_dict("records")}
    rows = [[str(f), *(cells.get((f, lab), "–") for lab in labels)] for f in dict.fromkeys(families["family"])]
    return ["success per family (successes/trials):", *aligned(["family", *labels], rows)]


def pareto_lines(frontier: pd.DataFrame) -> list[str]:
    """The Pareto frontier of success against cost (input tokens when every arm costs 0) as a table."""
    if frontier.empty:
        return []
    measure = str(frontier["measure"].iloc[0])
    value = "cost $/trial" if measure == "cost" else "input tok/trial"
    rows = [
        [
            str(r["arm"]),
            f"{r['success_rate']:.2f}",
            _money(r["value"]) if measure == "cost" else f"{r['value']:,.0f}",
            "yes" if r["frontier"] else f"no (dominated by {r['dominated_by']})",
        ]
        for r in frontier.to_dict("records")
    ]
    title = "cost per trial" if measure == "cost" else "input tokens per trial: every arm costs 0"
    return [f"Pareto frontier (success vs {title}):", *aligned(["arm", "success", value, "on frontier"], rows, (0, 3))]


def _summary_lines(multi: analysis.MultiComparison) -> list[str]:
    """One line per candidate (and stratum): its verdict and the gate's word (several candidates)."""
    lines = [f"verdicts against {multi.labels[0]}:"]
    for label, cmp in zip(multi.labels[1:], multi.comparisons, strict=True):
        for r in cmp.table.to_dict("records"):
            stratum = f" [{r['stratum']}]" if "stratum" in cmp.strata_keys else ""
            lines.append(f"  {label}{stratum}: {r['verdict_text']} -> {'REGRESSION' if r['regression'] else 'OK'}")
    return lines


def format_compare(multi: analysis.MultiComparison) -> str:
    """The text ``compare`` prints: the arms, the per-arm and per-family tables, each candidate's paired
    comparison with its verdict, the Pareto frontier, the rules, the notes and the gate's verdict."""
    several = len(multi.comparisons) > 1
    heads = ["base:", *(f"candidate {i}:" if several else "candidate:" for i in range(1, len(multi.labels)))]
    width = max(len(h) for h in heads) + 1
    lines = [f"{h.ljust(width)}{label}" for h, label in zip(heads, multi.labels, strict=True)]
    arms = analysis.arm_table(multi.arms, multi.labels)
    lines += ["", *arm_lines(arms, multi.labels[0])]
    lines += ["", *family_lines(analysis.family_table(multi.arms, multi.labels), multi.labels), ""]
    for label, cmp in zip(multi.labels[1:], multi.comparisons, strict=True):
        lines += [f"{label} against {multi.labels[0]}:"] if several else []
        lines += [*_stratum_lines(cmp, holm=several), ""]
    lines += [*pareto_lines(analysis.pareto_frontier(arms)), ""]
    lines += rule_lines(multi.alpha, multi.tolerance)
    lines += [f"note: {n}" for n in multi.notes]
    lines += ["", *_summary_lines(multi)] if several else []
    lines.append(f"verdict: {'REGRESSION' if multi.regression else 'OK'}")
    return "\n".join(lines)


def _records(frame: pd.DataFrame) -> list[dict]:
    """A frame's rows as JSON objects (``json_value`` cells)."""
    return [{key: json_value(value) for key, value in row.items()} for row in frame.to_dict("records")]


def comparison_json(cmp: analysis.Comparison) -> dict:
    """One candidate's comparison as JSON: the sides, one object per stratum (every figure, the verdict and the
    gate's word), notes, and the gate's verdict."""
    return {
        "base": cmp.base_label,
        "candidate": cmp.cand_label,
        "strata_keys": list(cmp.strata_keys),
        "strata": _records(cmp.table),
        "notes": list(cmp.notes),
        "regression": cmp.regression,
        "verdict": "REGRESSION" if cmp.regression else "OK",
    }


def compare_json(multi: analysis.MultiComparison) -> dict:
    """What ``compare --json`` prints: the arms and settings, the per-arm and per-family tables, one object per
    candidate (``comparison_json``, labelled as the arms are), the Pareto frontier, notes and the gate's verdict.
    With one candidate its ``candidate``, ``strata_keys`` and ``strata`` are also at the top (the two-run form)."""
    arms = analysis.arm_table(multi.arms, multi.labels)
    candidates = [
        {**comparison_json(cmp), "base": multi.labels[0], "candidate": label}
        for label, cmp in zip(multi.labels[1:], multi.comparisons, strict=True)
    ]
    data = {
        "base": multi.labels[0],
        "candidates": multi.labels[1:],
        "alpha": multi.alpha,
        "tolerance": multi.tolerance,
        "rules": rule_lines(multi.alpha, multi.tolerance),
        "arms": _records(arms),
        "families": _records(analysis.family_table(multi.arms, multi.labels)),
        "comparisons": candidates,
        "pareto": _records(analysis.pareto_frontier(arms)),
        "notes": multi.notes,
        "regression": multi.regression,
        "verdict": "REGRESSION" if multi.regression else "OK",
    }
    if len(candidates) == 1:
        data.update({key: candidates[0][key] for key in ("candidate", "strata_keys", "strata")})
    return data


def json_value(value: object) -> object:
    """A table cell as JSON holds it: numpy numbers as Python ones, NaN as null."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


def cmd_compare(
    base_path: str,
    cand_paths: str | list[str],
    fail_on_regression: bool = False,
    tolerance: float = 0.10,
    alpha: float = 0.05,
    as_json: bool = False,
) -> int:
    """``compare BASE CAND [CAND ...]``: print the comparison of every candidate with the base (``as_json``: one
    JSON object); exit code 1 when ``fail_on_regression`` and the gate fails any candidate."""
    if not 0 <= tolerance < 1:
        raise UsageError(f"compare: --tolerance {tolerance:g} must be at least 0 and below 1 (a success-rate drop)")
    if not 0 < alpha < 1:
        raise UsageError(f"compare: --alpha {alpha:g} must be between 0 and 1")
    paths = [base_path, *([cand_paths] if isinstance(cand_paths, str) else cand_paths)]
    arms = [_load_trials([path]) for path in paths]
    try:
        multi = analysis.compare_runs(arms, [Path(p).resolve().name for p in paths], tolerance, alpha)
    except analysis.CompareError as exc:
        raise UsageError(str(exc)) from None
    print(json.dumps(compare_json(multi), indent=1) if as_json else format_compare(multi))
    for note in corruption_notes(analysis.run_dirs(paths)):  # on stderr: --json keeps stdout one JSON object
        print(note, file=sys.stderr)
    return 1 if (fail_on_regression and multi.regression) else 0


# ---------------------------------------------------------------- a study: the end of a sweep that declares one

STUDY_FOLDER = "study"  # the study's report in the sweep folder: summary.md, plots/pareto.png, ...


def study_runs(run_dirs: list[Path], baseline: str) -> list[Path]:
    """``run_dirs`` (a sweep's run folders, in the order they ran) with the one whose trials ran the arm (strategy
    name) ``baseline`` first; ``UsageError`` unless exactly one did."""
    ran = {d: set(analysis.load_trials([d], curves=False).get("strategy", pd.Series(dtype=str))) for d in run_dirs}
    base = [d for d, names in ran.items() if baseline in names]
    if len(base) != 1:
        found = ", ".join(sorted({n for names in ran.values() for n in names})) or "no trials"
        raise UsageError(
            f"study.baseline={baseline}: {len(base)} of the sweep's {len(run_dirs)} run folders ran it "
            f"(the study needs one; they ran: {found})"
        )
    return [*base, *(d for d in run_dirs if d != base[0])]


def print_study(run_dirs: list[Path], baseline: str, sweep_dir: Path, plots: bool = True) -> None:
    """What a sweep that declares ``study: {baseline: ARM}`` (configs/experiment/strategy_question.yaml) prints
    after its table: ``compare BASE CAND...`` over its run folders (``run_dirs``, the jobs that ran here; else
    every run folder below ``sweep_dir``, when a launcher ran them elsewhere), the baseline's first (the per-arm
    table, success per family, the verdicts, the Pareto frontier), then, with ``plots``, the runs' report written
    into ``<sweep>/study`` (``report``'s files; its Pareto plot has cost per trial on x). A study decides nothing
    for the exit code: a verdict never changes it, and a comparison that cannot be made is one line."""
    try:
        run_dirs = [d for d in run_dirs if (Path(d) / "trials.jsonl").exists()] or analysis.run_dirs([sweep_dir])
        runs = [str(d) for d in study_runs(run_dirs, baseline)]
        multi = analysis.compare_runs([_load_trials([r]) for r in runs], [Path(r).resolve().name for r in runs])
    except (UsageError, analysis.CompareError, FileNotFoundError, analysis.ForeignRecords) as exc:
        print(f"\nstudy: no comparison: {exc}")
        return
    names = " ".join(Path(r).name for r in runs)
    print(f"\nstudy: the arms against {baseline}, as `compare {names}` prints it (the exit code ignores verdicts)")
    print(format_compare(multi))
    if not plots:
        return
    try:
        out = claim_output_dir(runs, Path(sweep_dir) / STUDY_FOLDER, chosen=False)
    except UsageError as exc:
        print(f"study: no report: {exc}")
        return
    _, md = write_report(runs, out)
    priced = any(
        pd.to_numeric(arm.get("cost", pd.Series(dtype=float)), errors="coerce").fillna(0).gt(0).any()
        for arm in multi.arms
    )
    x = "cost per trial" if priced else "input tokens per trial: every arm costs 0"  # plots.pareto_x
    print(f"study report: {md}; Pareto plot (success against {x}): {out / 'plots' / 'pareto.png'}")

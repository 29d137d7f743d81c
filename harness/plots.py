"""Matplotlib figures of runs, written as PNG files (the data comes from harness.analysis).

Every figure states its units, draws the budget where one applies (dashed grey and labelled "budget
(not targeted)" for a strategy that does not aim at one, such as ``none``), and says in its title when
all trials come from the scripted reference agent (not an LLM).

Layout rules (tests/test_plots_layout.py checks them on the experiment presets): figures use
matplotlib's constrained layout and are saved with a tight bounding box; legends sit outside the
axes; long titles are wrapped, never clipped; a configuration whose label is long is drawn under a
short code (``C1``, ``C2`` …) and a key under the figure lists the full configuration; curves that
coincide are drawn once and the legend says "N identical curves"; a task family has one colour in
every figure (``FAMILY_COLORS``).

On the token curves and the sawtooth panels a strategy with a size trigger of its own (below or above
the budget: ``clear_tool_results`` ``trigger``, ``summarize`` ``threshold``; ``TRIGGER_PARAMS``, after
strategies/triggers.py) gets a purple dash-dot line at it, labelled ``trigger 60k (...)``; a trial
that ended in ``context_overflow`` gets a black ✕ at its last step. The Pareto plot puts cost per
trial on x (tokens when every configuration cost 0, and the axis says so) and lays its labels out so
that none covers another (leader lines to the points they name).
"""

from __future__ import annotations

import functools
import json
import math
import textwrap
import zlib
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from harness.analysis import all_reference, config_label, cumulative_input, reference_note  # noqa: E402
from harness.budget import format_budget, parse_budget  # noqa: E402
from harness.curves import BAND, THRASH_REREAD  # noqa: E402

SHAPE_STYLE = {"sawtooth": "-", "monotonic": "-", "pinned": "-", "flat": ":", "short": ":"}
FAMILY_COLORS = {  # one colour per task family, the same in every figure
    "code_review": "#1f77b4",
    "invoice_audit": "#ff7f0e",
    "brand_report": "#2ca02c",
    "people_tracker": "#d62728",
    "call_budget": "#9467bd",
    "failure_memory": "#8c564b",
    "callback_search": "#e377c2",
}
SPARE_COLORS = ["#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173"]
UNTARGETED = ("none",)  # strategies that never aim at the budget (plus every ``pitfall_*`` anti-pattern)
SHORT_LABEL = 22  # configuration labels longer than this are drawn as C1, C2 … with a key under the figure
KEY_CHARS = 150  # a key entry is cut here (the full identity: ``config`` / ``config_id`` in summary.csv)
LEGEND_ROWS = 8  # a panel legend lists at most this many curves; more are summarised per family
LINESTYLES = ["-", "--", "-.", ":"]
DPI = 110
TRIGGER_COLOR = "#6a3d9a"  # a strategy's own size trigger: purple dash-dot, never the budget's red dashes
OVERFLOW = "context_overflow"  # the outcome marked with a black ✕ at the trial's last step
TRIGGER_PARAMS = {  # the size-trigger parameter of the built-in strategies, by strategy name or class name
    "clear_tool_results": "trigger",
    "summarize": "threshold",
    "adaptive_window": "ratio",
    "server_clear_tool_uses": "trigger",
    "server_compaction": "trigger",
    "ClearToolResults": "trigger",
    "Summarize": "threshold",
    "AdaptiveWindow": "ratio",
}


def family_color(family: str) -> str:
    """The fixed colour of a task family (``FAMILY_COLORS``; an unknown family gets a stable spare colour)."""
    return FAMILY_COLORS.get(family) or SPARE_COLORS[zlib.crc32(str(family).encode()) % len(SPARE_COLORS)]


def targets_budget(strategy: str) -> bool:
    """Whether a strategy aims at the budget (``none`` and the ``pitfall_*`` anti-patterns do not)."""
    return str(strategy) not in UNTARGETED and not str(strategy).startswith("pitfall_")


def short_labels(labels: list[str]) -> list[str]:
    """The labels as drawn: unchanged when all are short and distinct, else ``C1``, ``C2`` … in order."""
    if all(len(label) <= SHORT_LABEL for label in labels) and len(set(labels)) == len(labels):
        return list(labels)
    return [f"C{i + 1}" for i in range(len(labels))]


def wrap(text: str, width_in: float, fontsize: float = 10) -> str:
    """``text`` wrapped to fit ``width_in`` inches at ``fontsize`` points (about 0.55 em per character)."""
    chars = max(20, int(width_in * 72 / (0.55 * fontsize)))
    return "\n".join(textwrap.fill(line, chars) for line in text.split("\n"))


def _suffix(trials: pd.DataFrame | None) -> str:
    return f" — {reference_note(trials)}" if trials is not None and all_reference(trials) else ""


def _figure(nrows: int, ncols: int, width: float, height: float, **kwargs) -> tuple[Figure, np.ndarray]:
    """A figure in constrained layout (suptitle, outside legends and the key get their own room)."""
    return plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False, layout="constrained", **kwargs)


def _suptitle(fig: Figure, text: str, fontsize: float = 10) -> None:
    fig.suptitle(wrap(text, fig.get_figwidth() * 0.95, fontsize), fontsize=fontsize)


def _save(fig: Figure, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight", pad_inches=0.1)
    plt.close(fig)
    return path


def _legend_outside(ax, fontsize: float = 7, **kwargs) -> None:
    """The axes' legend to the right of the axes, so that it covers no curve."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kwargs)


def _config_key(fig: Figure, shorts: list[str], fulls: list[str]) -> None:
    """Under the figure: which configuration each short code stands for (nothing when no code was needed)."""
    if shorts == fulls:
        return
    blank = [Line2D([], [], linestyle="none") for _ in shorts]
    entries = [f"{s} = {textwrap.shorten(f, KEY_CHARS, placeholder=' …')}" for s, f in zip(shorts, fulls, strict=False)]
    fig.legend(
        blank,
        entries,
        loc="outside lower center",
        fontsize=7,
        handlelength=0,
        handletextpad=0,
        title="configurations (full identity: config / config_id in summary.csv)",
        title_fontsize=7,
        alignment="left",
    )


def _budget_line(ax, budget: float, targeted: bool, band: bool = False) -> None:
    """The budget: red dashed (with the ±``BAND`` band when asked); grey dotted, "not targeted", when the
    strategy ignores it.

    The band is the ``pinned`` band of harness/curves.py and docs/analysis.md (``|level - B| <= BAND B``,
    BAND = 20%): a curve whose level settles inside it is ``pinned``, one that is cut back below it is
    a ``sawtooth``. The band drawn and every caption that names it read ``BAND``.
    """
    if not targeted:
        ax.axhline(
            budget,
            color="grey",
            linestyle=":",
            linewidth=1.1,
            label=f"budget {format_budget(int(budget))} (not targeted)",
        )
        return
    ax.axhline(budget, color="red", linestyle="--", linewidth=1.2, label=f"budget {format_budget(int(budget))}")
    if band:
        ax.axhspan(budget * (1 - BAND), budget * (1 + BAND), color="red", alpha=0.07, gid="budget-band")


def _labels(summary: pd.DataFrame) -> list[str]:
    """The readable configuration name per row (``config``), else ``strategy@budget`` (+ params where ambiguous)."""
    if "config" in summary:
        return [str(c) for c in summary["config"]]
    many = summary.groupby("strategy")["params"].nunique() if "params" in summary else pd.Series(dtype=int)
    return [
        config_label(r) if many.get(r["strategy"], 1) > 1 else f"{r['strategy']}@{format_budget(int(r['budget']))}"
        for _, r in summary.iterrows()
    ]


def _tokens_axis(ax) -> None:
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_k))
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))


def _k(value: float, _=None) -> str:
    """Token counts as 1.5K / 25K / 950K / 1M / 1.25M (a million is never "1,000K")."""
    if not value:
        return "0"
    if abs(value) >= 999_500:  # what would round to 1,000K
        return f"{value / 1e6:.2f}".rstrip("0").rstrip(".") + "M"
    return f"{value / 1000:.1f}K" if abs(value) < 10_000 and value % 1000 else f"{value / 1000:.0f}K"


def _usd(value: float, _=None) -> str:
    """Dollars per trial as $0 / $0.0012 / $1.5 / $1,234."""
    if not value:
        return "$0"
    return f"${value:,.0f}" if abs(value) >= 100 else f"${value:.3g}"


# ------------------------------------------------------------------------------- triggers, overflows


def trigger_tokens(value: object, budget: int) -> int | None:
    """A trigger parameter in tokens at ``budget``: a float in (0, 1] is that fraction of it, else a token count
    (``60k`` works); None when the value is not a threshold (the strategies' own rule, strategies/_common.py;
    harness does not import strategies)."""
    if isinstance(value, float) and 0 < value <= 1:
        return max(1, int(value * budget))
    try:
        return parse_budget(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else None
    except ValueError:
        return None


@functools.lru_cache(maxsize=512)
def _trigger(strategy: str, params_json: str, budget: int, class_name: str) -> tuple[int, str] | None:
    params = json.loads(params_json)
    name = TRIGGER_PARAMS.get(class_name.rpartition(".")[2]) or TRIGGER_PARAMS.get(strategy)
    if name is None or params.get(name) is None:
        return None
    tokens = trigger_tokens(params[name], budget)
    if tokens is None or tokens == budget:
        return None
    value = params[name]
    fraction = isinstance(value, float) and 0 < value <= 1
    return tokens, f"{strategy}: {name}" + (f" = {value:g} x budget" if fraction else "")


def trigger_of(row) -> tuple[int, str] | None:
    """A trial's own size trigger in tokens and its name, e.g. ``(60000, "clear_tool_results: trigger")``.

    Read from the row's ``strategy_params`` (trials.jsonl): the parameter ``TRIGGER_PARAMS`` names for the
    row's ``strategy_class`` (so an arm such as ``clear60`` is found by its class) or its ``strategy``; a
    fraction of the budget is resolved against the row's ``budget``. None for a strategy without a
    trigger of its own and for one at the budget itself (the budget line already shows it).
    """
    params = row.get("strategy_params")
    budget = row.get("budget")
    if not isinstance(params, dict) or budget is None or (isinstance(budget, float) and math.isnan(budget)):
        return None
    class_name = row.get("strategy_class")
    return _trigger(
        str(row.get("strategy")),
        json.dumps(params, sort_keys=True, default=str),
        int(budget),
        class_name if isinstance(class_name, str) else "",
    )


def _trigger_lines(ax, cell: pd.DataFrame) -> None:
    """A purple dash-dot line at each distinct size trigger of the trials in ``cell``, labelled with its name."""
    names: dict[int, list[str]] = {}
    for _, row in cell.iterrows():
        found = trigger_of(row)
        if found is not None and found[1] not in names.setdefault(found[0], []):
            names[found[0]].append(found[1])
    for tokens in sorted(names):
        ax.axhline(
            tokens,
            color=TRIGGER_COLOR,
            linestyle="-.",
            linewidth=1.2,
            gid="trigger",
            label=f"trigger {format_budget(tokens)} ({', '.join(names[tokens])})",
        )


def _overflow_marks(ax, agent: pd.DataFrame, cell: pd.DataFrame) -> None:
    """A black ✕ at the last step of every trial in ``cell`` that ended in ``context_overflow``."""
    if "outcome" not in cell:
        return
    points = []
    for _, row in cell[cell["outcome"] == OVERFLOW].iterrows():
        curve = _trial_curve(agent, row)
        if not curve.empty:
            points.append((curve["step"].iloc[-1], curve["request_tokens"].iloc[-1]))
    if points:
        xs, ys = zip(*points, strict=True)
        ax.plot(
            xs,
            ys,
            linestyle="none",
            marker="X",
            markersize=8,
            color="black",
            zorder=5,
            gid="overflow",
            label=f"context overflow ({len(points)} trial{'s' if len(points) > 1 else ''}; ✕ at the last step)",
        )


# ------------------------------------------------------------------------------------- token curves


def _trial_curve(agent: pd.DataFrame, row: pd.Series) -> pd.DataFrame:
    return agent[(agent["trial_id"] == row["trial_id"]) & (agent["run_dir"] == row["run_dir"])].sort_values("step")


def distinct_curves(curves: list[tuple[str, str, pd.DataFrame]]) -> list[tuple[list[str], str, pd.DataFrame]]:
    """Group ``(label, family, curve)`` by identical step/token values: ``(labels, family, curve)`` per
    distinct curve."""
    groups: dict[tuple, tuple[list[str], str, pd.DataFrame]] = {}
    for label, family, curve in curves:
        key = (family, tuple(curve["step"]), tuple(curve["request_tokens"]))
        groups.setdefault(key, ([], family, curve))[0].append(label)
    return list(groups.values())


def _plot_curves(ax, agent: pd.DataFrame, cell: pd.DataFrame, label_of) -> None:
    """One line per distinct trial curve, coloured by family; coinciding curves drawn once and counted in the legend."""
    curves = [(label_of(row), row["family"], _trial_curve(agent, row)) for _, row in cell.iterrows()]
    drawn = distinct_curves(curves)
    per_family: dict[str, int] = {}
    for labels, family, curve in drawn:
        k = per_family.get(family, 0)
        per_family[family] = k + 1
        label = labels[0] if len(labels) == 1 else f"{labels[0]} +{len(labels) - 1}: {len(labels)} identical curves"
        ax.plot(
            curve["step"],
            curve["request_tokens"],
            linewidth=1.2,
            color=family_color(family),
            linestyle=LINESTYLES[k % len(LINESTYLES)],
            label=label if len(drawn) <= LEGEND_ROWS else None,
        )
    if len(drawn) > LEGEND_ROWS:
        for family in sorted(per_family):
            n = int((cell["family"] == family).sum())
            ax.plot(
                [], [], color=family_color(family), label=f"{family}: {n} trials, {per_family[family]} distinct curves"
            )


def _budgets(ax, cell: pd.DataFrame, band: bool = False) -> None:
    """The budget line(s) of the trials in ``cell``: targeted when any of their strategies aims at the budget."""
    for budget, group in cell.groupby("budget"):
        _budget_line(ax, budget, any(targets_budget(s) for s in group["strategy"].unique()), band=band)


def token_curves_figure(steps: pd.DataFrame, trials: pd.DataFrame, title: str = "") -> Figure:
    """Prepared-request tokens per step, one line per trial, a panel per family, the budget line, each
    strategy's own size trigger (``_trigger_lines``) and a ✕ where a trial overflowed the context."""
    agent = steps[steps["kind"] == "agent"]
    families = sorted(trials["family"].unique())
    fig, axes = _figure(len(families), 1, 10, 3.2 * len(families) + (0.6 if title else 0.2))
    for ax, family in zip(axes[:, 0], families, strict=False):
        cell = trials[trials["family"] == family]
        _plot_curves(
            ax,
            agent,
            cell,
            lambda r: (
                f"{r['trial_id']} ({r['outcome']}{', ok' if r['success'] else ''}; {r.get('curve_shape') or '?'})"
            ),
        )
        _budgets(ax, cell)
        _trigger_lines(ax, cell)
        _overflow_marks(ax, agent, cell)
        ax.set_title(f"{family}: prepared-request tokens per agent step", fontsize=10)
        ax.set_xlabel("agent step (model call)")
        ax.set_ylabel("request tokens")
        _tokens_axis(ax)
        ax.grid(alpha=0.3)
        _legend_outside(ax)
    if title:
        _suptitle(fig, title)
    return fig


def token_curves(steps: pd.DataFrame, trials: pd.DataFrame, path: Path, title: str = "") -> Path:
    """``token_curves_figure`` saved as a PNG at ``path``."""
    return _save(token_curves_figure(steps, trials, title), path)


def _cell_title(strategy: str, budget: float, cell: pd.DataFrame) -> str:
    shapes = cell["curve_shape"].value_counts() if "curve_shape" in cell else pd.Series(dtype=int)
    thrash = int(cell["thrashing"].fillna(False).astype(bool).sum()) if "thrashing" in cell else 0
    text = f"{strategy} @ {format_budget(int(budget))}: " + ", ".join(f"{s} {n}" for s, n in shapes.items())
    return text + (f", THRASHING {thrash}" if thrash else "")


def sawtooth_figure(steps: pd.DataFrame, trials: pd.DataFrame) -> Figure:
    """Token curve of every trial, one panel per strategy (rows) x budget (columns), budget line and band.

    The band is ±``BAND`` (20%) of the budget, the ``pinned`` band of the curve-shape rules
    (harness/curves.py, docs/analysis.md): the title states the same constant that draws it. Each
    panel also draws the strategy's own size trigger and a ✕ where a trial overflowed the context.
    """
    agent = steps[steps["kind"] == "agent"]
    strategies = sorted(trials["strategy"].unique())
    budgets = sorted(trials["budget"].unique())
    fig, axes = _figure(len(strategies), len(budgets), 7.4 * len(budgets), 3.0 * len(strategies) + 0.8)
    for i, strategy in enumerate(strategies):
        for j, budget in enumerate(budgets):
            ax = axes[i, j]
            cell = trials[(trials["strategy"] == strategy) & (trials["budget"] == budget)]
            if cell.empty:
                ax.remove()  # no trials of this strategy at this budget
                continue
            _plot_curves(
                ax, agent, cell, lambda r: f"{r['instance_id']} t{r['trial']} ({'ok' if r['success'] else 'fail'})"
            )
            _budget_line(ax, budget, targets_budget(strategy), band=True)
            _trigger_lines(ax, cell)
            _overflow_marks(ax, agent, cell)
            ax.set_title(wrap(_cell_title(strategy, budget, cell), 4.0, 9), fontsize=9)
            ax.set_ylabel("request tokens")
            ax.set_xlabel("agent step")
            ax.tick_params(labelbottom=True)  # a panel above a missing one keeps its step numbers
            _tokens_axis(ax)
            ax.grid(alpha=0.3)
            _legend_outside(ax, fontsize=6)
    _suptitle(
        fig,
        f"Token curves: prepared-request tokens per agent step (red: budget, band ±{BAND:.0%}, the pinned band; "
        "grey dotted: a budget the strategy does not aim at; purple dash-dot: the strategy's own trigger; "
        "✕: context overflow; colour: task family)" + _suffix(trials),
    )
    return fig


def sawtooth(steps: pd.DataFrame, trials: pd.DataFrame, path: Path) -> Path:
    """``sawtooth_figure`` saved as a PNG at ``path``."""
    return _save(sawtooth_figure(steps, trials), path)


def cumulative_input_figure(steps: pd.DataFrame, trials: pd.DataFrame) -> Figure:
    """Mean cumulative input tokens (all model calls) by step, one line per configuration, a panel per budget."""
    cum = cumulative_input(steps, trials)
    budgets = sorted(trials["budget"].unique())
    names = ["config"] if "config" in cum else ["strategy", "params"]
    fulls = [
        str(n[0]) if len(n) == 1 or n[1] == "-" else f"{n[0]} [{n[1]}]"
        for n in cum.groupby(names).size().index.to_flat_index().map(lambda n: n if isinstance(n, tuple) else (n,))
    ]
    shorts = dict(zip(fulls, short_labels(fulls), strict=False))
    fig, axes = _figure(1, len(budgets), 6.4 * len(budgets) + 1.5, 4.4)
    for ax, budget in zip(axes[0], budgets, strict=False):
        part = cum[cum["budget"] == budget]
        for name, g in part.groupby(names):
            # carry each trial's total forward after it ended, then average over trials
            wide = (
                g.pivot_table(index="step", columns=["run_dir", "trial_id"], values="cum_input_tokens")
                .sort_index()
                .ffill()
            )
            name = name if isinstance(name, tuple) else (name,)
            full = str(name[0]) if len(name) == 1 or name[1] == "-" else f"{name[0]} [{name[1]}]"
            style = LINESTYLES[len(ax.lines) % len(LINESTYLES)]
            ax.plot(
                wide.index,
                wide.mean(axis=1),
                linewidth=1.8,
                linestyle=style,
                label=f"{shorts[full]} ({wide.shape[1]} trials)",
            )
        ax.set_title(f"budget {format_budget(int(budget))}", fontsize=10)
        ax.set_xlabel("step")
        ax.set_ylabel("cumulative input tokens (mean over trials)")
        _tokens_axis(ax)
        ax.grid(alpha=0.3)
        _legend_outside(ax)
    _config_key(fig, list(shorts.values()), list(shorts))
    _suptitle(
        fig, "Cumulative input tokens per step (all calls: agent, summarizer, sub-agents, stop hook)" + _suffix(trials)
    )
    return fig


def cumulative_input_plot(steps: pd.DataFrame, trials: pd.DataFrame, path: Path) -> Path:
    """``cumulative_input_figure`` saved as a PNG at ``path``."""
    return _save(cumulative_input_figure(steps, trials), path)


def _pareto_front(points: np.ndarray) -> list[int]:
    """Rows no other point beats: at most the cost (x) and at least the success (y), better on one."""
    return [
        i
        for i, (x, y) in enumerate(points)
        if not any((x2 <= x and y2 >= y) and (x2 < x or y2 > y) for x2, y2 in points)
    ]


def _label_spots(s: pd.DataFrame, x: str = "mean_total_input_tokens") -> dict[tuple[float, float], list[int]]:
    """Rows grouped by where their label goes: closer than 4% of the x range on the same success share one label."""
    spots: dict = {}
    span = max(float(s[x].max() - s[x].min()), 1e-12)
    for i, row in s.sort_values(x).iterrows():
        px, py = row[x], round(row["success_rate"], 3)
        spot = next((k for k in spots if k[1] == py and abs(k[0] - px) < 0.04 * span), (px, py))
        spots.setdefault(spot, []).append(i)
    return spots


PARETO_X = {  # the Pareto plot's x: column, bootstrap interval, axis label, tick formatter
    "cost": (
        "mean_cost",
        "cost_ci_low",
        "cost_ci_high",
        "mean cost per trial, $ (all calls: agent, summarizer, sub-agents, stop hook; bars: bootstrap 95%)",
    ),
    "tokens": (
        "mean_total_input_tokens",
        "total_input_tokens_ci_low",
        "total_input_tokens_ci_high",
        "mean input tokens per trial, standing in for cost: every configuration cost $0 (no pricing) "
        "(all calls: agent, summarizer, sub-agents, stop hook; bars: bootstrap 95%)",
    ),
}
LABEL_RADII = (9, 18, 30, 44, 62, 84)  # points from a marker to its label; beyond the first a leader line is drawn
LABEL_ANGLES = (-30, 30, 150, -150, -90, 90, 0, 180, -60, 60, 120, -120)  # degrees, tried in this order
MARKER_PT = 5  # half the size of a marker that labels keep clear of (markersize 7, edge included)


def pareto_x(config_summary: pd.DataFrame) -> str:
    """``"cost"`` when any configuration cost more than $0 (mean cost per trial on x), else ``"tokens"``."""
    cost = pd.to_numeric(config_summary.get("mean_cost", pd.Series(dtype=float)), errors="coerce").fillna(0)
    return "cost" if bool((cost > 0).any()) else "tokens"


def _label_box(anchor: tuple[float, float], size: tuple[float, float], dx: float, dy: float):
    """The display box of a label of ``size`` (w, h px) placed ``dx, dy`` px from ``anchor``, with its alignment."""
    w, h = size
    ha = "left" if dx > 1e-9 else "right" if dx < -1e-9 else "center"
    va = "bottom" if dy > 1e-9 else "top" if dy < -1e-9 else "center"
    x0 = anchor[0] + dx - {"left": 0.0, "right": w, "center": w / 2}[ha]
    y0 = anchor[1] + dy - {"bottom": 0.0, "top": h, "center": h / 2}[va]
    return matplotlib.transforms.Bbox.from_bounds(x0, y0, w, h), ha, va


def _overlap(a, b) -> float:
    """The area two display boxes share."""
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w * h if w > 0 and h > 0 else 0.0


def place_labels(
    ax,
    points: list[tuple[float, float]],
    texts: list[str],
    markers: list[tuple[float, float]] | None = None,
    fontsize: float = 8,
) -> list:
    """Annotate each of ``points`` (data coordinates) with its text so that no label covers another label, a
    marker (``markers``, default ``points``) or the axes' edge: the first free spot around the point, tried
    outwards (``LABEL_RADII`` x ``LABEL_ANGLES``), with a grey leader line when the label sits away from its
    point (where no spot is free, the one that covers least). Call it when the axes are laid out (their
    limits set, the figure drawn once); the labels take no part in the layout after. Returns the annotations."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    px = fig.dpi / 72  # display pixels per point
    frame = ax.get_window_extent(renderer)
    anchors = [tuple(ax.transData.transform(p)) for p in points]
    pad = MARKER_PT * px
    taken = [
        matplotlib.transforms.Bbox.from_extents(x - pad, y - pad, x + pad, y + pad)
        for x, y in (ax.transData.transform(p) for p in (points if markers is None else markers))
    ]
    sizes = []
    for text in texts:
        probe = ax.text(0, 0, text, fontsize=fontsize)
        box = probe.get_window_extent(renderer)
        probe.remove()
        sizes.append((box.width, box.height))
    notes = []
    for anchor, text, size in zip(anchors, texts, sizes, strict=True):
        best = None
        for radius in LABEL_RADII:
            for angle in LABEL_ANGLES:
                dx = radius * px * math.cos(math.radians(angle))
                dy = radius * px * math.sin(math.radians(angle))
                box, ha, va = _label_box(anchor, size, dx, dy)
                outside = box.width * box.height - _overlap(box, frame)
                cost = sum(_overlap(box.padded(1.5 * px), other) for other in taken) + 4 * outside
                if best is None or cost < best[0]:
                    best = (cost, radius, dx / px, dy / px, ha, va, box)
                if cost == 0:
                    break
            if best is not None and best[0] == 0:
                break
        assert best is not None
        _, radius, dx, dy, ha, va, box = best
        taken.append(box)
        note = ax.annotate(
            text,
            ax.transData.inverted().transform(anchor),
            xytext=(dx, dy),
            textcoords="offset points",
            ha=ha,
            va=va,
            fontsize=fontsize,
            gid="pareto-label",
            arrowprops=None
            if radius == LABEL_RADII[0]
            else {"arrowstyle": "-", "color": "grey", "linewidth": 0.6, "shrinkA": 0, "shrinkB": MARKER_PT - 2},
        )
        note.set_in_layout(False)
        notes.append(note)
    return notes


def pareto_figure(config_summary: pd.DataFrame, trials: pd.DataFrame | None = None) -> Figure:
    """Success rate (Wilson 95%) vs mean cost per trial (bootstrap 95%), one point per configuration.

    x is the mean cost per trial (all calls) when any configuration cost more than $0, else the mean
    input tokens of all calls, and the axis label says that tokens stand in for cost (``pareto_x``).
    The Pareto frontier is drawn; a configuration that did not hold its budget (some agent request
    above it, ``held_budget`` false) has a hollow marker ("exceeded budget" in the legend). Labels are
    laid out by ``place_labels``: none covers another, a leader line joins one placed away from its point.
    """
    fig, axes = _figure(1, 1, 10, 5.6)
    ax = axes[0, 0]
    s = config_summary.reset_index(drop=True)
    fulls = _labels(s)
    shorts = short_labels(fulls)
    axis = pareto_x(s)
    xcol, lo_col, hi_col, xlabel = PARETO_X[axis]
    colors = plt.cm.tab10(np.linspace(0, 1, 10))
    strategies = sorted(s["strategy"].unique())
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    budgets = sorted(s["budget"].unique())
    for _, row in s.iterrows():
        x, y = row[xcol], row["success_rate"]
        xerr = [[max(0.0, x - row.get(lo_col, x))], [max(0.0, row.get(hi_col, x) - x)]]
        yerr = [[max(0.0, y - row["success_ci_low"])], [max(0.0, row["success_ci_high"] - y)]]
        color = colors[strategies.index(row["strategy"]) % 10]
        marker = markers[budgets.index(row["budget"]) % len(markers)]
        held = bool(row.get("held_budget", True))
        ax.errorbar(
            x,
            y,
            xerr=xerr,
            yerr=yerr,
            fmt=marker,
            color=color,
            capsize=3,
            markersize=7,
            alpha=0.8,
            markerfacecolor=color if held else "none",
            markeredgewidth=1.0 if held else 1.8,
        )
    points = s[[xcol, "success_rate"]].to_numpy(dtype=float)
    front = _pareto_front(points)
    if len(front) > 1:
        fp = points[sorted(front, key=lambda i: points[i][0])]
        ax.plot(fp[:, 0], fp[:, 1], color="grey", linestyle=":", linewidth=1, label="Pareto frontier")
    for strategy in strategies:
        ax.plot([], [], "o", color=colors[strategies.index(strategy) % 10], label=strategy)
    for budget in budgets:
        ax.plot(
            [],
            [],
            markers[budgets.index(budget) % len(markers)],
            color="black",
            label=f"budget {format_budget(int(budget))}",
        )
    if "held_budget" in s and not s["held_budget"].fillna(True).astype(bool).all():
        ax.plot(
            [], [], "o", color="black", markerfacecolor="none", markeredgewidth=1.8, label="exceeded budget (hollow)"
        )
    ax.set_xlabel(wrap(xlabel, 9.0, 10))
    ax.set_ylabel("success rate (bars: Wilson 95%)")
    ax.set_ylim(-0.05, 1.1)
    ax.margins(x=0.12)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_usd if axis == "cost" else _k))
    ax.grid(alpha=0.3)
    _legend_outside(ax, fontsize=8)
    _config_key(fig, shorts, fulls)
    what = "cost per trial" if axis == "cost" else "input tokens (no cost recorded)"
    _suptitle(fig, f"Success vs {what} per configuration (up and left is better)" + _suffix(trials))
    fig.canvas.draw()  # the layout settles first: the labels are placed in its display coordinates
    spots = _label_spots(s, xcol)  # one label per spot: coinciding configurations are listed together
    place_labels(
        ax,
        list(spots),
        [(", " if shorts != fulls else "\n").join(shorts[i] for i in rows) for rows in spots.values()],
        markers=[tuple(p) for p in points],
    )
    return fig


def pareto(config_summary: pd.DataFrame, path: Path, trials: pd.DataFrame | None = None) -> Path:
    """``pareto_figure`` saved as a PNG at ``path``."""
    return _save(pareto_figure(config_summary, trials), path)


def reread_cache_figure(config_summary: pd.DataFrame, trials: pd.DataFrame | None = None) -> Figure:
    """Bars of re-read rate (15% thrashing line) and cache-hit ratio per configuration."""
    s = config_summary.reset_index(drop=True)
    fulls = _labels(s)
    shorts = short_labels(fulls)
    fig, axes = _figure(1, 2, max(9.0, 0.9 * len(s) * 2 + 2), 4.6)
    axes = axes[0]
    x = np.arange(len(s))
    bars = axes[0].bar(x, s["reread_rate"] * 100, color="tab:orange")
    axes[0].bar_label(bars, labels=[f"{v:.0%}" for v in s["reread_rate"]], fontsize=8)
    axes[0].axhline(THRASH_REREAD * 100, color="red", linestyle="--", linewidth=1)
    axes[0].set_ylabel("re-read rate (% of reads)")
    axes[0].set_title(
        f"Re-read rate (mean over trials; red dashed: {THRASH_REREAD:.0%}, loosen the budget first)", fontsize=10
    )
    bars = axes[1].bar(x, s["cache_hit_ratio"] * 100, color="tab:blue")
    axes[1].bar_label(bars, labels=[f"{v:.0%}" for v in s["cache_hit_ratio"]], fontsize=8)
    axes[1].set_ylabel("cache-hit ratio (% of input tokens cached)")
    axes[1].set_title("Cache-hit ratio (cached / input tokens)", fontsize=10)
    for ax in axes:
        ax.set_xticks(
            x, shorts, rotation=30 if shorts == fulls else 0, ha="right" if shorts == fulls else "center", fontsize=8
        )
        ax.set_ylim(0, 112)
        ax.grid(alpha=0.3, axis="y")
    _config_key(fig, shorts, fulls)
    _suptitle(fig, "Re-reads and prefix-cache hits per configuration" + _suffix(trials))
    return fig


def reread_cache(config_summary: pd.DataFrame, path: Path, trials: pd.DataFrame | None = None) -> Path:
    """``reread_cache_figure`` saved as a PNG at ``path``."""
    return _save(reread_cache_figure(config_summary, trials), path)


def trial_curve(curve: pd.DataFrame, events: pd.DataFrame, budget: int, ax=None, title: str = ""):
    """One trial's token curve with its strategy events marked (vertical lines, labelled); returns the axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 4.5))
    ax.plot(curve["step"], curve["request_tokens"], marker=".", linewidth=1.4, label="request tokens (agent step)")
    if "history_tokens" in curve:
        ax.plot(
            curve["step"],
            curve["history_tokens"],
            color="grey",
            linewidth=1,
            linestyle=":",
            label="full history tokens (messages only; what `none` would keep)",
        )
    ax.axhline(budget, color="red", linestyle="--", linewidth=1.2, label=f"budget {format_budget(int(budget))}")
    names = sorted(events["name"].unique()) if not events.empty else []
    colors = dict(zip(names, plt.cm.Set1(np.linspace(0, 1, max(len(names), 1))), strict=False))
    for name in names:
        steps = sorted(events.loc[events["name"] == name, "step"].unique())
        for k, step in enumerate(steps):
            ax.axvline(
                step, color=colors[name], alpha=0.35, linewidth=1, label=f"strategy event: {name}" if k == 0 else None
            )
    ax.set_xlabel("agent step")
    ax.set_ylabel("tokens")
    _tokens_axis(ax)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    if title:
        ax.set_title(title, fontsize=10)
    return ax

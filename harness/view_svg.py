"""The token curve of one trial as an inline SVG (no library, no script).

Request tokens per step (blue), the full history's tokens (grey, from steps.jsonl
``history_tokens``), the budget (red dashed), steps with strategy events (green ticks) and
cache breaks (orange rings). Each point links to its step's section.

The y axis (``layout``) has round ticks (1, 2 or 5 times a power of ten) and reaches the largest
request or the budget, and the full history too unless that is more than ``CLIP_FACTOR`` times
higher: then the history is clipped at the top of the axis, and the chart says so in words
(``history clipped at N; reaches M at step S``) above the frame. The budget's label goes where it
crosses no line of the chart (along the budget line, above it or below it), else above the frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import Sequence

WIDTH, HEIGHT, PAD_L, PAD_R, PAD_T, PAD_B = 760, 230, 56, 12, 22, 28
CLIP_FACTOR = 4  # the history is drawn in full while at most this many times the request/budget axis
HEADROOM = 1.05  # the axis ends at least 5% above the largest value drawn
CHAR_W, LABEL_H = 5.6, 11  # label size estimate for 10px text: width per character, height


@dataclass
class Layout:
    """The y axis and labels of one chart (what ``token_curve`` draws; tested on its own)."""

    top: float
    ticks: list[int]
    history: list[float | None]  # as drawn: clipped at ``top`` when ``clipped``
    clipped: str | None = None  # the note drawn above the frame when the history is clipped
    budget_label: tuple[float, float, str] | None = None  # x (end of the text), baseline y, text-anchor
    budget_box: tuple[float, float, float, float] | None = None  # x0, y0, x1, y1 of the label
    lines: list[list[tuple[float, float]]] = field(default_factory=list)  # the polylines drawn (tokens, history)


def nice_step(span: float, target: int = 5) -> int:
    """The smallest 1-2-5 step (1, 2, 5, 10, 20, ...) that divides ``span`` into at most ``target`` parts."""
    raw = max(span, 1) / target
    power = 10 ** math.floor(math.log10(raw))
    for mult in (1, 2, 5, 10):
        if mult * power >= raw:
            return max(1, int(mult * power))
    return int(10 * power)


def axis(value: float) -> tuple[int, list[int]]:
    """(top, ticks) of an axis from 0 that holds ``value`` with headroom, ticks on a 1-2-5 step."""
    need = max(value, 1) * HEADROOM
    step = nice_step(need)
    top = step * math.ceil(need / step)
    return top, list(range(0, top + 1, step))


def _scale(value: float, top: float) -> float:
    """The y coordinate of ``value`` on a [0, top] axis."""
    return PAD_T + (HEIGHT - PAD_T - PAD_B) * (1 - value / top) if top else HEIGHT - PAD_B


def _x(index: int, count: int) -> float:
    """The x coordinate of the ``index``-th of ``count`` steps."""
    span = WIDTH - PAD_L - PAD_R
    return PAD_L + (span * index / (count - 1) if count > 1 else span / 2)


def _points(values: Sequence[float | None], top: float) -> list[tuple[float, float]]:
    return [(_x(i, len(values)), _scale(v, top)) for i, v in enumerate(values) if v is not None]


def _crosses(segment: tuple[tuple[float, float], tuple[float, float]], box: tuple[float, float, float, float]) -> bool:
    """Whether a line segment meets a rectangle (Liang-Barsky clipping)."""
    (x0, y0), (x1, y1) = segment
    bx0, by0, bx1, by1 = box
    dx, dy = x1 - x0, y1 - y0
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, x0 - bx0), (dx, bx1 - x0), (-dy, y0 - by0), (dy, by1 - y0)):
        if p == 0:
            if q < 0:
                return False
        else:
            t = q / p
            if p < 0:
                lo = max(lo, t)
            else:
                hi = min(hi, t)
            if lo > hi:
                return False
    return True


def overlaps(box: tuple[float, float, float, float], lines: Sequence[Sequence[tuple[float, float]]]) -> bool:
    """Whether any polyline (or a lone point of one) touches ``box``."""
    for points in lines:
        if len(points) == 1:
            ((x, y),) = points
            if box[0] <= x <= box[2] and box[1] <= y <= box[3]:
                return True
        for a, b in zip(points, points[1:], strict=False):
            if _crosses((a, b), box):
                return True
    return False


def _budget_label(budget: int, top: float, lines: list[list[tuple[float, float]]]) -> tuple[tuple, tuple]:
    """Where the budget label goes: along the budget line, above or below it, where it crosses no line."""
    text = f"budget {budget:,}"
    width = CHAR_W * len(text) + 4
    y = _scale(budget, top)
    right, left = WIDTH - PAD_R - 2, PAD_L + 2 + width
    for k in range(9):  # from the right end to the left one
        x = right - (right - left) * k / 8
        for baseline in (y - 3, y + LABEL_H + 1):
            box = (x - width, baseline - LABEL_H + 2, x, baseline + 2)
            near = (box[0] - 3, box[1] - 3, box[2] + 3, box[3] + 3)  # the points' circles too
            if box[1] >= PAD_T and box[3] <= HEIGHT - PAD_B and not overlaps(near, lines):
                return (x, baseline, "end"), box
    x, baseline = right, PAD_T - 10  # nowhere free inside: above the frame, at the right
    return (x, baseline, "end"), (x - width, baseline - LABEL_H + 2, x, baseline + 2)


def layout(
    steps: Sequence[int], tokens: Sequence[int | None], history: Sequence[int | None], budget: int | None
) -> Layout:
    """The axis, the history as drawn, the clip note and the budget label of one chart."""
    base = max([v for v in (*tokens, budget or 0) if v] or [1])
    peak = max([v for v in history if v is not None] or [0])
    clipped = None
    if peak <= CLIP_FACTOR * base:
        top, ticks = axis(max(base, peak))
        drawn = [float(v) if v is not None else None for v in history]
    else:
        top, ticks = axis(base)
        drawn = [min(float(v), top) if v is not None else None for v in history]
        at = next(steps[i] for i, v in enumerate(history) if v == peak)
        clipped = f"history clipped at {top:,}; reaches {peak:,} at step {at}"
    lines = [_points(tokens, top), _points(drawn, top)]
    result = Layout(top, ticks, drawn, clipped, lines=lines)
    if budget:
        result.budget_label, result.budget_box = _budget_label(budget, top, lines)
    return result


def _axes(plot: Layout, count: int, steps: Sequence[int]) -> list[str]:
    """Frame, y ticks and labels, and the first and last step numbers."""
    parts = [
        f'<rect x="{PAD_L}" y="{PAD_T}" width="{WIDTH - PAD_L - PAD_R}" height="{HEIGHT - PAD_T - PAD_B}" '
        'class="frame"/>'
    ]
    for value in plot.ticks:
        y = _scale(value, plot.top)
        parts.append(f'<line class="tick" x1="{PAD_L - 3}" x2="{PAD_L}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text x="{PAD_L - 5}" y="{y + 3.5:.1f}" text-anchor="end">{value:,}</text>')
    if steps:
        parts.append(f'<text x="{_x(0, count):.1f}" y="{HEIGHT - 8}" text-anchor="middle">{steps[0]}</text>')
        parts.append(f'<text x="{_x(count - 1, count):.1f}" y="{HEIGHT - 8}" text-anchor="middle">{steps[-1]}</text>')
        parts.append(f'<text x="{WIDTH / 2:.0f}" y="{HEIGHT - 8}" text-anchor="middle">step</text>')
    return parts


def _polyline(points: list[tuple[float, float]], css: str) -> str:
    text = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<polyline class="{css}" fill="none" points="{text}"/>' if text else ""


def token_curve(
    anchor: str,
    steps: Sequence[int],
    tokens: Sequence[int | None],
    history: Sequence[int | None],
    budget: int | None,
    events: Sequence[str],
    breaks: Sequence[str | None],
) -> str:
    """The SVG of one trial; ``anchor`` prefixes the step sections' ids (``{anchor}-s{index}``)."""
    count = len(steps)
    plot = layout(steps, tokens, history, budget)
    top = plot.top
    parts = _axes(plot, count, steps)
    if budget and plot.budget_label is not None:  # layout places the label whenever there is a budget
        y = _scale(budget, top)
        x, baseline, where = plot.budget_label
        parts.append(f'<line class="budget" x1="{PAD_L}" x2="{WIDTH - PAD_R}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(
            f'<text class="budget-label" x="{x:.1f}" y="{baseline:.1f}" text-anchor="{where}">budget {budget:,}</text>'
        )
    if plot.clipped:
        parts.append(f'<text class="clip" x="{PAD_L + 2}" y="{PAD_T - 8}">▲ {escape(plot.clipped)}</text>')
    for i, name in enumerate(events):
        if name:
            x = _x(i, count)
            parts.append(
                f'<line class="event" x1="{x:.1f}" x2="{x:.1f}" y1="{PAD_T}" y2="{HEIGHT - PAD_B}">'
                f"<title>step {steps[i]}: {escape(name)}</title></line>"
            )
    parts.append(_polyline(plot.lines[1], "history"))
    parts.append(_polyline(plot.lines[0], "tokens"))
    for i, value in enumerate(tokens):
        if value is None:
            continue
        x, y = _x(i, count), _scale(value, top)
        title = f"step {steps[i]}: {value:,} tokens" + (f"; cache break: {breaks[i]}" if breaks[i] else "")
        ring = f'<circle class="break" cx="{x:.1f}" cy="{y:.1f}" r="5"/>' if breaks[i] else ""
        parts.append(
            f'<a href="#{anchor}-s{i}">{ring}<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="2.5">'
            f"<title>{escape(title)}</title></circle></a>"
        )
    return (
        f'<svg class="curve" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="token curve">{"".join(parts)}</svg>'
    )

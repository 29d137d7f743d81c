"""The token curve of one trial as an inline SVG (no library, no script).

Request tokens per step (blue), the full history's tokens (grey, from steps.jsonl
``history_tokens``, clipped at the top of the axis), the budget (red dashed), steps with strategy events (green ticks)
and cache breaks (orange rings). Each point links to its step's section.
"""
from __future__ import annotations

from html import escape
from typing import Sequence

WIDTH, HEIGHT, PAD_L, PAD_R, PAD_T, PAD_B = 760, 220, 56, 12, 12, 28


def _scale(value: float, top: float) -> float:
    """The y coordinate of ``value`` on a [0, top] axis."""
    return PAD_T + (HEIGHT - PAD_T - PAD_B) * (1 - value / top) if top else HEIGHT - PAD_B


def _x(index: int, count: int) -> float:
    """The x coordinate of the ``index``-th of ``count`` steps."""
    span = WIDTH - PAD_L - PAD_R
    return PAD_L + (span * index / (count - 1) if count > 1 else span / 2)


def _polyline(values: Sequence[float | None], top: float, css: str) -> str:
    points = " ".join(f"{_x(i, len(values)):.1f},{_scale(v, top):.1f}" for i, v in enumerate(values) if v is not None)
    return f'<polyline class="{css}" fill="none" points="{points}"/>' if points else ""


def _axes(top: float, count: int, steps: Sequence[int]) -> list[str]:
    """Frame, y labels (0, half, top) and the first and last step numbers."""
    parts = [f'<rect x="{PAD_L}" y="{PAD_T}" width="{WIDTH - PAD_L - PAD_R}" height="{HEIGHT - PAD_T - PAD_B}" class="frame"/>']
    for value in (0, top / 2, top):
        y = _scale(value, top)
        parts.append(f'<text x="{PAD_L - 4}" y="{y + 4:.1f}" text-anchor="end">{int(value):,}</text>')
    if steps:
        parts.append(f'<text x="{_x(0, count):.1f}" y="{HEIGHT - 8}" text-anchor="middle">{steps[0]}</text>')
        parts.append(f'<text x="{_x(count - 1, count):.1f}" y="{HEIGHT - 8}" text-anchor="middle">{steps[-1]}</text>')
        parts.append(f'<text x="{WIDTH / 2:.0f}" y="{HEIGHT - 8}" text-anchor="middle">step</text>')
    return parts


def token_curve(anchor: str, steps: Sequence[int], tokens: Sequence[int | None], history: Sequence[int | None],
                budget: int | None, events: Sequence[str], breaks: Sequence[str | None]) -> str:
    """The SVG of one trial; ``anchor`` prefixes the step sections' ids (``{anchor}-s{index}``)."""
    count = len(steps)
    values = [v for v in (*tokens, budget or 0) if v]
    top = max(values, default=1) * 1.25
    history = [min(v, top) if v is not None else None for v in history]  # the axis is the request's: history is clipped
    parts = _axes(top, count, steps)
    if budget:
        y = _scale(budget, top)
        parts.append(f'<line class="budget" x1="{PAD_L}" x2="{WIDTH - PAD_R}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text class="budget-label" x="{WIDTH - PAD_R - 2}" y="{y - 3:.1f}" text-anchor="end">budget {budget:,}</text>')
    for i, name in enumerate(events):
        if name:
            x = _x(i, count)
            parts.append(f'<line class="event" x1="{x:.1f}" x2="{x:.1f}" y1="{PAD_T}" y2="{HEIGHT - PAD_B}"><title>step {steps[i]}: {escape(name)}</title></line>')
    parts.append(_polyline(history, top, "history"))
    parts.append(_polyline(tokens, top, "tokens"))
    for i, value in enumerate(tokens):
        if value is None:
            continue
        x, y = _x(i, count), _scale(value, top)
        title = f"step {steps[i]}: {value:,} tokens" + (f"; cache break: {breaks[i]}" if breaks[i] else "")
        ring = f'<circle class="break" cx="{x:.1f}" cy="{y:.1f}" r="5"/>' if breaks[i] else ""
        parts.append(f'<a href="#{anchor}-s{i}">{ring}<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="2.5">'
                     f'<title>{escape(title)}</title></circle></a>')
    return (f'<svg class="curve" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
            f'role="img" aria-label="token curve">{"".join(parts)}</svg>')

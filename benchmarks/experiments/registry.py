"""Every table by name (the ``<!-- table:NAME -->`` blocks, the command line), and what each is computed from.

One dict literal, in the order ``experiments_table.py`` prints them; ruff's F601 rejects a repeated key.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import (
    attention_model,
    benchmark_tables,
    cache_pitfalls,
    compression_six,
    context_growth,
    invoice_layers,
    lost_in_middle,
    review44,
    review44_budget,
    semantic_filter,
    status_bar,
    status_cost_model,
    strategy_zoo,
    three_versions,
)
from .quickstart import quickstart

Table = Callable[[Path], str]

TABLES: dict[str, Table] = {
    "discrimination": strategy_zoo.discrimination,
    "quickstart": quickstart,
    "attention_model": attention_model.attention_model,
    "calibration": benchmark_tables.calibration,
    "review44": review44.review44,
    "strategy_zoo": strategy_zoo.strategy_zoo,
    "strategy_peaks": strategy_zoo.strategy_peaks,
    "invoice_layers": invoice_layers.invoice_layers,
    "seed004_demo": invoice_layers.seed004_demo,
    "compression_six": compression_six.compression_six,
    "status_bar": status_bar.status_bar,
    "cache_pitfalls": cache_pitfalls.cache_pitfalls,
    "memory_pressure": benchmark_tables.memory_pressure,
    "memory_pressure_long": benchmark_tables.memory_pressure_long,
    "issue34_families": benchmark_tables.issue34_families,
    "lost_in_middle": lost_in_middle.lost_in_middle,
    "lost_in_middle_verdict": lost_in_middle.lost_in_middle_verdict,
    "context_growth": context_growth.context_growth,
    "context_growth_verdict": context_growth.context_growth_verdict,
    "three_versions": three_versions.three_versions,
    "three_versions_verdict": three_versions.three_versions_verdict,
    "semantic_filter": semantic_filter.semantic_filter,
    "semantic_filter_verdict": semantic_filter.semantic_filter_verdict,
    "review44_budget": review44_budget.review44_budget,
    "review44_budget_verdict": review44_budget.review44_budget_verdict,
    "review44_verdict": review44.review44_verdict,
    "invoice_layers_verdict": invoice_layers.invoice_layers_verdict,
    "compression_six_verdict": compression_six.compression_six_verdict,
    "status_bar_verdict": status_bar.status_bar_verdict,
    "cache_pitfalls_verdict": cache_pitfalls.cache_pitfalls_verdict,
    "attention_model_verdict": attention_model.attention_model_verdict,
    "compression_six_acts": compression_six.compression_six_acts,
    "select_tools": cache_pitfalls.select_tools_sides,
    "status_cost_model": status_cost_model.status_cost_model,
}

DERIVED: dict[str, str] = {  # a table computed from another table's preset sweep
    "discrimination": "strategy_zoo",
    "strategy_peaks": "strategy_zoo",
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


def source_of(name: str) -> str:
    """What a block is computed from: its preset (or the main job); itself for a computed block."""
    return DERIVED.get(name, name)

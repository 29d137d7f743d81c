"""A finished trial's row in ``trials.jsonl``: what happened, and what it cost.

Columns are documented in docs/analysis.md. Token and cost columns come from the trial's
``CallRecorder``: one set per kind of call, plus the totals over all kinds.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from harness.accounting import total_columns
from harness.curves import trial_curve_fields
from strategies.base import strategy_class


@dataclass
class ReadTracker:
    """Counts the reads (results that carry a ``resource``) and re-reads of one agent."""

    reads: int = 0
    rereads: int = 0
    per_resource: Counter = field(default_factory=Counter)

    def observe(self, resource: Any) -> None:
        """Count one successful tool result that read ``resource`` (``None``: not a read)."""
        if resource is None:
            return
        self.reads += 1
        self.rereads += resource in self.per_resource
        self.per_resource[resource] += 1

    @property
    def max_per_resource(self) -> int:
        """The most times any one resource was read (0 without reads)."""
        return max(self.per_resource.values(), default=0)

    @property
    def rate(self) -> float:
        """Re-reads / reads (0 without reads)."""
        return round(self.rereads / self.reads, 4) if self.reads else 0.0


def agent_profile(model: Any) -> str | None:
    """The reference agent's profile name, through wrappers (fault injection, latency) that keep the inner model."""
    while model is not None:
        profile = getattr(model, "profile", None)
        if profile is not None:
            return str(getattr(profile, "name", profile))
        model = getattr(model, "inner", None)
    return None


def identity_columns(trial: Any) -> dict:
    """Who ran what: trial, run, strategy, budget, task instance, model."""
    settings, instance = trial.settings, trial.instance
    return {
        "trial_id": trial.trial_id,
        "run": settings.run_name,
        "strategy": settings.strategy_name,
        "strategy_class": strategy_class(trial.strategy),
        "strategy_params": settings.strategy_params,
        "budget": settings.budget,
        "family": instance.family,
        "instance_id": instance.id,
        "seed": instance.seed,
        "trial": trial.trial_index,
        "model": settings.model_name,
        "reference_agent": trial.is_reference,
        "agent_profile": agent_profile(trial.model) if trial.is_reference else None,
    }


def outcome_columns(trial: Any) -> dict:
    """The outcome, success and score."""
    graded = trial.outcome == "submitted" and trial.grade is not None
    return {
        "outcome": trial.outcome,
        "success": bool(graded and trial.grade.success),
        "score": float(trial.grade.score) if graded else 0.0,
        "steps": trial.steps,
    }


def token_columns(trial: Any) -> dict:
    """Tokens, cache figures and costs per kind of call (agent, summarizer, sub-agent, stop hook)."""
    totals = trial.recorder.totals
    agent, summ, sub, hook = totals["agent"], totals["summarizer"], totals["subagent"], totals["stop_hook"]
    return {
        "input_tokens": agent.input_tokens,
        "cached_tokens": agent.cached_tokens,
        "cached_source": "+".join(sorted(agent.cached_sources) or ["none"]),
        "cache_write_tokens": agent.cache_write_tokens,
        "output_tokens": agent.output_tokens,
        "sim_cached_tokens": agent.sim_cached_tokens,
        "cache_profile": trial.settings.cache_profile.name,
        "cache_lost_tokens": agent.cache_lost_tokens,
        "cache_breaks": agent.cache_breaks,
        "summarizer_calls": summ.calls,
        "summarizer_input_tokens": summ.input_tokens,
        "summarizer_cached_tokens": summ.cached_tokens,
        "summarizer_output_tokens": summ.output_tokens,
        "summarizer_sim_cached_tokens": summ.sim_cached_tokens,
        "hook_continues": trial.continues,
        "stop_hook_calls": hook.calls,
        "stop_hook_input_tokens": hook.input_tokens,
        "stop_hook_cached_tokens": hook.cached_tokens,
        "stop_hook_output_tokens": hook.output_tokens,
        "stop_hook_cost": round(hook.cost, 8),
        **trial.subagents.columns(),
        "subagent_calls": sub.calls,
        "subagent_input_tokens": sub.input_tokens,
        "subagent_cached_tokens": sub.cached_tokens,
        "subagent_output_tokens": sub.output_tokens,
        "subagent_cost": round(sub.cost, 8),
        **total_columns(totals),
        "cost": round(trial.recorder.total_cost(), 8),
        "cost_uncached": round(trial.recorder.total_cost_uncached(), 8),
        "from_cache_calls": trial.recorder.from_cache_calls(),
        "agent_cost": round(agent.cost, 8),
        "summarizer_cost": round(summ.cost, 8),
        "pricing": trial.settings.pricing.name,
        "price_source": trial.recorder.price_source(),
    }


def context_columns(trial: Any) -> dict:
    """Reads, re-reads, peak context, compactions."""
    return {
        "reads": trial.reads.reads,
        "rereads": trial.reads.rereads,
        "reread_rate": trial.reads.rate,
        "max_resource_reads": trial.reads.max_per_resource,
        "rate_limited_calls": trial.rate_limited,
        "peak_context": trial.peak_context,
        "over_budget_steps": trial.budget.over_steps,
        "max_budget_ratio": trial.budget.max_ratio,
        "final_history_tokens": trial.history_tokens,
        "compactions": trial.ctx.compactions,
        "rewrites_system": trial.rewrites_system,
        "tool_schema_tokens": trial.tool_schema_tokens,
        "tool_schema_tokens_saved": trial.tool_schema_tokens_saved,
        "unoffered_calls": trial.unoffered_calls,
        "tool_exceptions": trial.tool_exceptions,
    }


def trial_row(trial: Any, wall_s: float) -> dict:
    """The row of a finished ``harness.trial.Trial``."""
    row = {
        **identity_columns(trial),
        **outcome_columns(trial),
        **token_columns(trial),
        **context_columns(trial),
        "wall_s": round(wall_s, 4),
        "started_at": trial.started_at,
        "error": trial.error,
        "grade_detail": trial.grade.detail if trial.grade is not None else None,
    }
    row.update(trial.instance.trial_metrics(trial.tool_log))
    row.update(
        trial_curve_fields(
            trial.transcript.request_tokens,
            trial.settings.budget,
            row["reread_rate"],
            max_resource_reads=row["max_resource_reads"],
        )
    )
    return row

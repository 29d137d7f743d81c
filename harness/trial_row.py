"""A finished trial's row in ``trials.jsonl``: what happened, and what it cost.

Columns are documented in docs/analysis.md. Token and cost columns come from the trial's
``CallRecorder``: one set per kind of call, plus the totals over all kinds.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from harness.accounting import CallRecorder, total_columns
from harness.curves import trial_curve_fields
from tasks.base import Grade


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


@dataclass
class TrialIdentity:
    """Who ran what: the trial, the run, the strategy, the budget, the task instance and the model."""

    trial_id: str
    run: str
    strategy: str
    strategy_class: str
    strategy_params: dict
    budget: int
    family: str
    instance_id: str
    seed: int
    trial: int
    model: str
    reference_agent: bool
    agent_profile: str | None

    def columns(self) -> dict:
        """The identity columns, in the row's order."""
        return {
            "trial_id": self.trial_id,
            "run": self.run,
            "strategy": self.strategy,
            "strategy_class": self.strategy_class,
            "strategy_params": self.strategy_params,
            "budget": self.budget,
            "family": self.family,
            "instance_id": self.instance_id,
            "seed": self.seed,
            "trial": self.trial,
            "model": self.model,
            "reference_agent": self.reference_agent,
            "agent_profile": self.agent_profile,
        }


@dataclass
class CallCounts:
    """The tool calls an agent loop refused or that failed (``harness.tool_runner.ToolRunner`` counts them)."""

    rate_limited: int = 0  # task calls over the task's per-turn limit (answered with an error)
    unoffered_calls: int = 0  # calls to a tool of the run that was not offered at that step
    tool_exceptions: int = 0  # task tool calls that raised (answered with an error, the run went on)

    def add(self, other: CallCounts) -> None:
        """Add another loop's counts (a sub-agent's, to its trial's)."""
        self.rate_limited += other.rate_limited
        self.unoffered_calls += other.unoffered_calls
        self.tool_exceptions += other.tool_exceptions


@dataclass
class LoopCounts:
    """What the agent loop counted over the trial (sub-agents' refused calls and exceptions included)."""

    steps: int
    calls: CallCounts
    peak_context: int
    over_budget_steps: int
    max_budget_ratio: float
    final_history_tokens: int
    compactions: int
    rewrites_system: bool
    tool_schema_tokens: int
    tool_schema_tokens_saved: int


@dataclass
class TrialStats:
    """Everything a finished trial's row is made of; ``row()`` builds the row (``harness.trial.Trial`` fills it)."""

    identity: TrialIdentity
    outcome: str | None
    grade: Grade | None
    error: str | None
    counts: LoopCounts
    reads: ReadTracker
    recorder: CallRecorder
    cache_profile: str
    hook_continues: int
    subagent_columns: dict
    task_metrics: dict
    request_tokens: list[int]
    wall_s: float
    started_at: str

    def row(self) -> dict:
        """The trial's row in ``trials.jsonl``."""
        row = {
            **self.identity.columns(),
            **self.outcome_columns(),
            **self.token_columns(),
            **self.context_columns(),
            "wall_s": round(self.wall_s, 4),
            "started_at": self.started_at,
            "error": self.error,
            "grade_detail": self.grade.detail if self.grade is not None else None,
        }
        row.update(self.task_metrics)
        row.update(
            trial_curve_fields(
                self.request_tokens,
                self.identity.budget,
                row["reread_rate"],
                max_resource_reads=row["max_resource_reads"],
            )
        )
        return row

    def outcome_columns(self) -> dict:
        """The outcome, success and score."""
        graded = self.outcome == "submitted" and self.grade is not None
        return {
            "outcome": self.outcome,
            "success": bool(graded and self.grade is not None and self.grade.success),
            "score": float(self.grade.score) if graded and self.grade is not None else 0.0,
            "steps": self.counts.steps,
        }

    def token_columns(self) -> dict:
        """Tokens, cache figures and costs per kind of call (agent, summarizer, sub-agent, stop hook)."""
        recorder = self.recorder
        totals = recorder.totals
        agent, summ, sub, hook = totals["agent"], totals["summarizer"], totals["subagent"], totals["stop_hook"]
        return {
            "input_tokens": agent.input_tokens,
            "cached_tokens": agent.cached_tokens,
            "cached_source": "+".join(sorted(agent.cached_sources) or ["none"]),
            "cache_write_tokens": agent.cache_write_tokens,
            "output_tokens": agent.output_tokens,
            "sim_cached_tokens": agent.sim_cached_tokens,
            "cache_profile": self.cache_profile,
            "cache_lost_tokens": agent.cache_lost_tokens,
            "cache_breaks": agent.cache_breaks,
            "summarizer_calls": summ.calls,
            "summarizer_input_tokens": summ.input_tokens,
            "summarizer_cached_tokens": summ.cached_tokens,
            "summarizer_output_tokens": summ.output_tokens,
            "summarizer_sim_cached_tokens": summ.sim_cached_tokens,
            "hook_continues": self.hook_continues,
            "stop_hook_calls": hook.calls,
            "stop_hook_input_tokens": hook.input_tokens,
            "stop_hook_cached_tokens": hook.cached_tokens,
            "stop_hook_output_tokens": hook.output_tokens,
            "stop_hook_cost": round(hook.cost, 8),
            **self.subagent_columns,
            "subagent_calls": sub.calls,
            "subagent_input_tokens": sub.input_tokens,
            "subagent_cached_tokens": sub.cached_tokens,
            "subagent_output_tokens": sub.output_tokens,
            "subagent_cost": round(sub.cost, 8),
            **total_columns(totals),
            "cost": round(recorder.total_cost(), 8),
            "cost_uncached": round(recorder.total_cost_uncached(), 8),
            "from_cache_calls": recorder.from_cache_calls(),
            "agent_cost": round(agent.cost, 8),
            "summarizer_cost": round(summ.cost, 8),
            "pricing": recorder.pricing.name,
            "price_source": recorder.price_source(),
        }

    def context_columns(self) -> dict:
        """Reads, re-reads, peak context, compactions."""
        counts = self.counts
        return {
            "reads": self.reads.reads,
            "rereads": self.reads.rereads,
            "reread_rate": self.reads.rate,
            "max_resource_reads": self.reads.max_per_resource,
            "rate_limited_calls": counts.calls.rate_limited,
            "peak_context": counts.peak_context,
            "over_budget_steps": counts.over_budget_steps,
            "max_budget_ratio": counts.max_budget_ratio,
            "final_history_tokens": counts.final_history_tokens,
            "compactions": counts.compactions,
            "rewrites_system": counts.rewrites_system,
            "tool_schema_tokens": counts.tool_schema_tokens,
            "tool_schema_tokens_saved": counts.tool_schema_tokens_saved,
            "unoffered_calls": counts.calls.unoffered_calls,
            "tool_exceptions": counts.calls.tool_exceptions,
        }


def trial_row(stats: TrialStats) -> dict:
    """The row of a finished trial (``stats.row()``)."""
    return stats.row()

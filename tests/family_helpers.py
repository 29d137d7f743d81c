"""Shared helper for the task-family tests: one trial of the reference agent."""
from __future__ import annotations

from harness.loop import TrialSettings, run_trial
from harness.models.scripted import ScriptedModel
from harness.records import RunWriter
from strategies.none import NoManagement


def run(tmp_path, family, seed=0, strategy=None, budget=10_000_000, max_steps=400, trial_id="t"):
    """Run one trial (unbounded window by default) and return (row, instance)."""
    instance = family.generate(seed)
    writer = RunWriter(tmp_path / f"{trial_id}-{seed}")
    settings = TrialSettings(budget=budget, max_steps=max_steps, strategy_name="x", strategy_params={},
                             model_name="scripted")
    row = run_trial(trial_id=trial_id, trial_index=0, instance=instance, strategy=strategy or NoManagement(),
                    model=ScriptedModel(context_window=10_000_000), summarizer=None, settings=settings, writer=writer)
    writer.close()
    return row, instance

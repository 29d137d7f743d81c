"""Run one trial of a family's reference agent (shared by the family tests)."""
from harness.loop import TrialSettings, run_trial
from harness.models.scripted import ScriptedModel
from harness.records import RunWriter
from strategies.none import NoManagement


def run_reference(tmp_path, instance, strategy=None, max_steps=150, trial_id="t"):
    """The scripted reference agent on ``instance`` with ``strategy`` (default: none) and an unbounded window."""
    writer = RunWriter(tmp_path)
    settings = TrialSettings(budget=10_000_000, max_steps=max_steps, strategy_name="test", strategy_params={},
                             model_name="scripted")
    row = run_trial(trial_id=trial_id, trial_index=0, instance=instance, strategy=strategy or NoManagement(),
                    model=ScriptedModel(context_window=10_000_000), summarizer=None, settings=settings, writer=writer)
    writer.close()
    return row

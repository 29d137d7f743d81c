"""Grouping by full configuration identity, all-call totals and budget adherence in reports and comparisons."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from harness import analysis, identity
from tests.test_cli import harness

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "results" / "fixtures" / "smoke-1500"


def make_run(dest: Path, source: str = "headtail", **changes) -> Path:
    """Copy a fixture run, setting dotted identity keys (``hooks__completion_check=True``)."""
    shutil.copytree(FIXTURE / source, dest)
    ident = json.loads((dest / "identity.json").read_text())
    for dotted, value in changes.items():
        node, *path = ident, *dotted.split("__")
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    (dest / "identity.json").write_text(json.dumps(ident))
    return dest


def rewrite_trials(run: Path, edit) -> None:
    rows = [json.loads(line) for line in (run / "trials.jsonl").read_text().splitlines()]
    (run / "trials.jsonl").write_text("".join(json.dumps(edit(r) or r) + "\n" for r in rows))


# ---------------------------------------------------------------- identity helpers


def test_identity_hash_ignores_seed_trials_order_and_budget_spelling():
    a = {"budget": "8k", "seed": 0, "strategy": {"name": "headtail", "min_recent_rounds": 1}, "hooks": {"plan": False}}
    b = {
        "hooks": {"plan": False},
        "strategy": {"min_recent_rounds": 1, "name": "headtail"},
        "budget": 8000,
        "seed": 7,
        "trials": 3,
    }
    assert identity.config_id(a) == identity.config_id(b) and len(identity.config_id(a)) == 10
    assert identity.config_id({**a, "hooks": {"plan": True}}) != identity.config_id(a)
    flat = identity.flatten(identity.normalise(a))
    assert flat["hooks.plan"] is False and flat["budget"] == 8000
    other = identity.flatten(identity.normalise({**a, "hooks": {"plan": True}}))
    keys = identity.differing_keys([flat, other])
    assert keys == ["hooks.plan"]
    assert identity.readable_name(other, keys) == "headtail@8k hooks.plan=true"


# ---------------------------------------------------------------- grouping


def test_hook_settings_are_separate_configurations(tmp_path):
    # experiment review44 puts headtail_8k and headtail_8k_nohook in one sweep: they were one row
    make_run(tmp_path / "hook", hooks={"completion_check": True, "max_continues": 2, "plan": False})
    make_run(tmp_path / "nohook", hooks={"completion_check": False, "max_continues": 2, "plan": False})
    trials = analysis.load_trials([tmp_path])
    by_config = analysis.summarize(trials, by=analysis.CONFIG_KEYS)
    assert len(by_config) == 2 and set(by_config["trials"]) == {6}
    assert sorted(by_config["config"]) == [
        "headtail@1.5k hooks.completion_check=false",
        "headtail@1.5k hooks.completion_check=true",
    ]
    assert by_config["config_id"].nunique() == 2
    per_family = analysis.summarize(trials)
    assert len(per_family) == 2 and "family" in per_family.columns


def test_suite_sizes_are_separate_rows_and_duplicates_are_pooled_with_a_note(tmp_path):
    make_run(tmp_path / "a")
    make_run(tmp_path / "a_again")  # the same configuration run twice
    make_run(tmp_path / "bigger", suite__families__invoice_audit__pages=8)
    trials = analysis.load_trials([tmp_path])
    by_config = analysis.summarize(trials, by=analysis.CONFIG_KEYS)
    assert sorted(by_config["trials"]) == [6, 12]
    assert any("pages=8" in name for name in by_config["config"])
    notes = analysis.pooling_notes(trials)
    assert (
        len(notes) == 1 and notes[0].startswith("note:") and "2 run folders of one identical configuration" in notes[0]
    )


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_pooling_different_task_sizes_warns_loudly(tmp_path):
    # runs without identity.json fall back to strategy/params/budget/model, which cannot tell sizes apart
    for name in ("small", "big"):
        run = make_run(tmp_path / name)
        (run / "identity.json").unlink()
    rewrite_trials(tmp_path / "big", lambda r: r.update(instance_id=r["instance_id"].replace("-p4-", "-p8-")))
    trials = analysis.load_trials([tmp_path])
    assert trials["config_id"].str.startswith("legacy:").all()
    assert len(analysis.summarize(trials, by=analysis.CONFIG_KEYS)) == 1
    warnings = [n for n in analysis.pooling_notes(trials) if n.startswith("WARNING")]
    assert len(warnings) == 1 and "invoice_audit-p4" in warnings[0] and "invoice_audit-p8" in warnings[0]
    result = harness("report", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "WARNING" in result.stderr and "different suites or task sizes" in result.stderr
    assert "WARNING" in (tmp_path / "summary.md").read_text()


def test_compare_pairs_on_the_full_identity(tmp_path):
    # both sides hold hook on and hook off: before, the same (instance, seed, trial) twice -> exit 2
    hooks = {
        True: {"completion_check": True, "max_continues": 2, "plan": False},
        False: {"completion_check": False, "max_continues": 2, "plan": False},
    }
    for side, source in (("base", "headtail"), ("cand", "sliding_window")):
        for on in (True, False):
            make_run(tmp_path / side / f"hook_{on}", source=source, hooks=hooks[on])
    base = analysis.load_trials([tmp_path / "base"])
    cand = analysis.load_trials([tmp_path / "cand"])
    cmp = analysis.paired(base, cand)
    assert cmp.strata_keys == ["stratum"] and len(cmp.table) == 2
    assert set(cmp.table["stratum"]) == {"hooks.completion_check=True", "hooks.completion_check=False"}
    assert set(cmp.table["pairs"]) == {6}
    assert "headtail" in cmp.base_label and "sliding_window" in cmp.cand_label
    with pytest.raises(analysis.CompareError, match="several values"):
        analysis.paired(base, cand[cand["config"].str.contains("true")])


# ---------------------------------------------------------------- totals and budget adherence


def test_total_input_tokens_include_sub_agents_and_stop_hook(tmp_path):
    run = make_run(tmp_path / "run")
    rewrite_trials(run, lambda r: r.update(subagent_input_tokens=1_000, stop_hook_input_tokens=10))
    trials = analysis.load_trials([run])
    expected = trials["input_tokens"] + trials["summarizer_input_tokens"] + 1_010
    assert trials["total_input_tokens"].tolist() == expected.tolist()
    summary = analysis.summarize(trials)
    assert summary["mean_subagent_input_tokens"].iloc[0] == 1_000
    assert summary["mean_total_input_tokens"].iloc[0] == pytest.approx(expected.mean())
    # a row that carries the all-call total (new records) is taken as is
    rewrite_trials(run, lambda r: r.update(total_input_tokens=5))
    assert set(analysis.load_trials([run])["total_input_tokens"]) == {5}


def test_budget_adherence_from_steps_and_from_rows(tmp_path):
    trials = analysis.load_trials([FIXTURE])
    steps = analysis.load_steps([FIXTURE])
    agent = steps[steps["kind"] == "agent"].merge(trials[["run_dir", "trial_id", "budget"]], on=["run_dir", "trial_id"])
    over = agent[agent["request_tokens"] > agent["budget"]].groupby(["run_dir", "trial_id"]).size()
    got = trials.set_index(["run_dir", "trial_id"])["over_budget_steps"]
    assert got[over.index].tolist() == over.tolist() and got.drop(over.index).eq(0).all()
    summary = analysis.summarize(trials, by=analysis.CONFIG_KEYS).set_index("strategy")
    for col in ("over_budget_trials", "mean_over_budget_steps", "max_budget_ratio", "held_budget"):
        assert col in summary.columns
    none = summary.loc["none"]
    assert not none["held_budget"] and none["over_budget_trials"] == 6 and none["max_budget_ratio"] > 1
    assert "held budget" in analysis.main_table(analysis.summarize(trials)).columns
    # rows that carry the columns (new records) are taken as they are
    run = make_run(tmp_path / "run", source="none")
    rewrite_trials(run, lambda r: r.update(over_budget_steps=0, max_budget_ratio=0.5))
    held = analysis.summarize(analysis.load_trials([run]), by=analysis.CONFIG_KEYS).iloc[0]
    assert held["held_budget"] and held["max_budget_ratio"] == 0.5


def test_pareto_marks_configurations_that_exceeded_their_budget(tmp_path, monkeypatch):
    from harness import plots

    trials = analysis.load_trials([FIXTURE])
    by_config = analysis.summarize(trials, by=analysis.CONFIG_KEYS)
    faces = []
    real = plots.plt.Axes.errorbar

    def spy(self, *args, **kwargs):
        faces.append(kwargs.get("markerfacecolor"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(plots.plt.Axes, "errorbar", spy)
    plots.pareto(by_config, tmp_path / "pareto.png", trials)
    held = by_config["held_budget"].tolist()
    assert [isinstance(f, str) and f == "none" for f in faces] == [not h for h in held] and not all(held)
    assert isinstance(by_config, pd.DataFrame)

"""Every setting is checked before the first trial (issue 36): hooks, suite.instances, seeds, task knobs, the
size of the plan, each value of a sweep; and ``workers`` is capped at the trials to run.

The bad-input cases call the command line's entry (``harness.cli.main``) in this process, which is what
``python -m harness`` runs, so that each case costs a compose and not an interpreter start; one case runs in a
subprocess as the user does.
"""

from __future__ import annotations

import pytest

from harness.cli import main
from harness.config import MAX_PLANNED_TRIALS, SEED_MAX, SETTINGS, family_specs, compose
from harness.hooks import Hooks
from harness.runner import execute
from harness.workers import capped_workers
from tasks.base import KnobError, check_knobs, family_knobs
from tasks.registry import registered_families
from tests.helpers import compose as compose_run
from tests.test_cli import SMOKE1, harness

INVOICES = ["task=invoice_audit"]


def refused(capsys, tmp_path, monkeypatch, *args: str) -> str:
    """Run ``python -m harness run ARGS`` in-process in ``tmp_path``: its one error line (exit code 2, no folder)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["run", *args])
    lines = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and len(lines) == 1 and lines[0].startswith("ctxbench: error: "), lines
    assert not (tmp_path / "results").exists(), "a refused setting made a folder"
    return lines[0]


@pytest.mark.parametrize(
    "overrides,needle",
    [
        (["suite.instances=abc"], "suite.instances=abc must be an integer"),
        (["suite.instances=0"], "suite.instances=0 must be at least 1"),
        (["hooks.plan=maybe"], "hooks.plan=maybe must be true or false"),
        (["hooks.completion_check=maybe"], "hooks.completion_check=maybe must be true or false"),
        (["hooks.max_continues=-1"], "hooks.max_continues=-1 must be at least 0"),
        (["hooks.max_continues=abc"], "hooks.max_continues=abc must be an integer"),
        (["+hooks.bogus=1"], "hooks has no setting 'bogus' (its settings: plan, completion_check, max_continues)"),
        (["seed=1e30"], f"must be at most {SEED_MAX}"),
        (["faults=flaky", "faults.seed=abc"], "faults.seed=abc must be an integer"),
        ([f"seed={SEED_MAX}", "suite.instances=2"], f"the last instance's seed {SEED_MAX + 1} must be at most"),
        (["trials=100000000"], f"plans 1,000,000,000 trials; a run plans at most {MAX_PLANNED_TRIALS:,}"),
        (["model.profile_params.batch_cap=abc"], "reference-agent profile parameter batch_cap=abc must be an integer"),
        (["+model.profile_params.attention.rot=x"], "reference-agent profile parameter rot=x must be a number"),
        pytest.param(["suite.instances=100000"], "plans 1,000,000 trials", marks=pytest.mark.slow),
    ],
)
def test_a_bad_setting_is_one_line_before_the_first_trial(capsys, tmp_path, monkeypatch, overrides, needle):
    assert needle in refused(capsys, tmp_path, monkeypatch, *SMOKE1, *overrides)


@pytest.mark.parametrize(
    "overrides,needle",
    [
        ([*INVOICES, "task.pages=abc"], "bad task knob for invoice_audit: task knob pages=abc must be an integer"),
        ([*INVOICES, "task.pages=-3"], "task knob pages=-3 is out of range (valid: 2..2000)"),
        ([*INVOICES, "+task.bogus=3"], "task knob bogus=3 is not a knob (its knobs: pages, invoices_per_page, "),
        (["task=brand_report", "+task.notes_window=maybe"], "task knob notes_window=maybe must be true or false"),
        (["task=needle", "task.positions=abc"], "task knob positions=abc must be null or a list of integers"),
    ],
)
def test_a_bad_task_knob_is_one_line(capsys, tmp_path, monkeypatch, overrides, needle):
    assert needle in refused(capsys, tmp_path, monkeypatch, *SMOKE1, *overrides)


def test_a_bad_knob_of_a_suite_family_is_one_line(capsys, tmp_path, monkeypatch):
    line = refused(capsys, tmp_path, monkeypatch, *SMOKE1, "suite.families.code_review.bugs=abc")
    assert "bad task knob for code_review: task knob bugs=abc must be an integer" in line


@pytest.mark.parametrize(
    "overrides,needle",
    [
        ([*INVOICES, "task.pages=40,abc"], "task knob pages=abc must be an integer"),
        ([*INVOICES, "suite.instances=1,0"], "suite.instances=0 must be at least 1"),
        ([*INVOICES, "trials=1,100000000"], "plans 100,000,000 trials"),
        ([*INVOICES, "hooks.plan=true,maybe"], "hooks.plan=maybe must be true or false"),
        (["suite.families.code_review.bugs=3,abc"], "bad task knob for code_review: task knob bugs=abc must be"),
        (["task=call_budget,needle", "suite.instances=60"], "over 1 task family plans 120,000 trials"),
        pytest.param(
            ["task=invoice_audit,needle", "task.pages=40,41"],
            "task needle has no setting 'pages'",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_every_value_of_a_sweep_is_checked_before_its_first_job(capsys, tmp_path, monkeypatch, overrides, needle):
    assert needle in refused(capsys, tmp_path, monkeypatch, "-m", *SMOKE1, "trials=2000", *overrides)


def test_a_dry_run_checks_the_same(capsys, tmp_path, monkeypatch):
    assert "hooks.plan=maybe" in refused(capsys, tmp_path, monkeypatch, "--dry-run", *SMOKE1, "hooks.plan=maybe")


@pytest.mark.slow  # the same case runs in-process above; this one is the command exactly as typed
def test_a_huge_plan_is_refused_in_a_subprocess_too(tmp_path):
    result = harness("run", *SMOKE1, "trials=100000000", cwd=tmp_path)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "a run plans at most" in lines[0], result.stderr
    assert not (tmp_path / "results").exists()


def test_workers_are_capped_at_the_trials_to_run(tmp_path):
    assert capped_workers(1000, 7) == (7, "workers=1000 capped at 7: the run has 7 trials to run")
    assert capped_workers(1000, 1) == (1, "workers=1000 capped at 1: the run has 1 trial to run")
    assert capped_workers(4, 7) == (4, None) and capped_workers(4, 0) == (4, None)
    run = [*SMOKE1, "task=call_budget", "task.merchants=4", "task.noise=2", "trials=2", "workers=50"]
    lines: list[str] = []
    assert len(execute(compose_run(*run), tmp_path / "run", echo=lines.append)) == 2
    assert "workers=50 capped at 2: the run has 2 trials to run" in lines


def test_the_hooks_settings_are_the_hooks_fields():
    declared = {key.split(".", 1)[1] for key in SETTINGS if key.startswith("hooks.")}
    assert declared == set(Hooks.__dataclass_fields__)


def test_every_family_declares_the_knobs_its_config_sets():
    """Each family's config (configs/task/NAME.yaml, as the default suite holds it) sets declared knobs of the
    declared types, and its family builds from them."""
    specs = family_specs(compose(["suite=default"]))
    assert set(specs) <= set(registered_families())
    for name, spec in specs.items():
        family = registered_families()[name].task
        knobs = {k: v for k, v in spec.items() if k not in ("name", "_target_")}
        declared = family_knobs(family)
        assert set(knobs) <= set(declared), name
        assert all(declared[k].accepts(v) for k, v in knobs.items()), name
        assert isinstance(check_knobs(family, knobs), family)


def test_a_knob_is_checked_by_its_declared_type_before_the_constructor():
    family = registered_families()["invoice_audit"].task
    for bad in ({"pages": "abc"}, {"pages": True}, {"pages": 2.5}, {"bogus": 1}):
        with pytest.raises(KnobError):
            check_knobs(family, bad)

"""``python -m harness check strategy=... | task=...``: the conformance suite on any strategy or task family.

The strategies and families that break a rule are defined here, so that the command loads them by class path
(``tests.test_check_command:Mutating``) as it loads an author's own. Each must fail its check with a one-line
reason and exit code 1; every built-in strategy and family must pass; bad input is one line and exit code 2.
"""

from __future__ import annotations

import itertools
import random

import pytest
import yaml

from harness import check
from harness import strategy_conformance as sc
from harness import task_conformance as tc
from harness.cli import build_parser, main
from tasks.base import Grade, TaskFamily, TaskInstance, ToolResult
from tasks.needle import Needle
from tests.test_cli import ROOT, harness

HERE = "tests.test_check_command"
STRATEGY_CONFIGS = sorted((ROOT / "configs" / "strategy").glob("*.yaml"))
TASK_CONFIGS = sorted((ROOT / "configs" / "task").glob("*.yaml"))
FEW_HISTORIES = 3  # the default tier: a few random histories (and the recorded ones) per built-in strategy


# ---------------------------------------------------------------- strategies that break a rule


class Mutating:
    """Marks the newest message as seen, in the history itself."""

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The history, its last message changed in place."""
        messages[-1]["content"] = f"{messages[-1].get('content')} (seen)"
        return list(messages)


class Unstable:
    """A note with a random number after the task: two instances disagree."""

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The history with a random note after the head."""
        return [*messages[:2], {"role": "user", "content": f"note {random.random()}"}, *messages[2:]]


WORDS = frozenset({"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"})


class HashOrdered:
    """A note listing a set of words in set order: the same in one process, another under another hash seed."""

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The history with the words after the head."""
        return [*messages[:2], {"role": "user", "content": " ".join(WORDS)}, *messages[2:]]


class Unbindable:
    """Its tools cannot be listed."""

    def tools(self) -> list[dict]:
        """Fails."""
        raise RuntimeError("no tool table")

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The whole history."""
        return list(messages)


class Overbudget:
    """Declares a hard budget guarantee and sends the whole history."""

    budget_guarantee = "hard"
    budget_exception = "never"

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The whole history."""
        return list(messages)


# ---------------------------------------------------------------- task families that break a rule


class AcceptsAnything(Needle):
    """``needle`` whose grader passes every answer."""

    def generate(self, seed: int) -> TaskInstance:
        """A needle instance whose ``grade`` says success to anything."""
        instance = super().generate(seed)
        instance.grade = lambda answer: Grade(True, 1.0)  # type: ignore[method-assign]
        return instance


class Drifting(Needle):
    """``needle`` whose instance id counts the instances made: the same seed twice differs."""

    made = itertools.count()

    def generate(self, seed: int) -> TaskInstance:
        """A needle instance whose id carries a counter."""
        instance = super().generate(seed)
        instance.id = f"{instance.id}-{next(self.made)}"
        return instance


class KeylessInstance(TaskInstance):
    """An instance without ``answer_key``."""

    family = "keyless"

    def __init__(self, seed: int) -> None:
        self.seed, self.id = seed, f"keyless-s{seed}"
        self.system_prompt, self.user_prompt = "You answer.", "Submit n."
        self.tools, self.answer_schema = [], {"type": "object", "properties": {"n": {"type": "integer"}}}

    def call(self, name: str, args: dict) -> ToolResult:
        """No tools: every call is an error."""
        return ToolResult(f"ERROR: unknown tool {name!r}", is_error=True)

    def grade(self, answer: dict) -> Grade:
        """``n`` must be the seed."""
        right = isinstance(answer, dict) and answer.get("n") == self.seed
        return Grade(right, float(right))


class Keyless(TaskFamily):
    """A family whose instances have no answer key."""

    name = "keyless"

    def generate(self, seed: int) -> TaskInstance:
        """The instance of ``seed``."""
        return KeylessInstance(seed)


# ---------------------------------------------------------------- helpers


def rows(*overrides: str, histories: int = FEW_HISTORIES, seeds: int = 1) -> dict[str, tuple[str, str]]:
    """check's rows (without the second process) for ``overrides``: check -> (result, reason)."""
    if overrides[0].startswith("strategy="):
        spec, budget = check.strategy_spec(list(overrides))
        found = check.strategy_rows(spec, budget, histories, cross_process=False)
    else:
        found = check.task_rows(check.task_spec(list(overrides)), tuple(range(seeds)), cross_process=False)
    return {name: (status, reason) for name, _, status, reason in found}


def failed(found: dict[str, tuple[str, str]]) -> dict[str, str]:
    """The failing checks and their reasons."""
    return {name: reason for name, (status, reason) in found.items() if status == "FAIL"}


# ---------------------------------------------------------------- strategies


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_check_fails_a_mutating_strategy_with_one_line_and_exit_1(tmp_path):
    result = harness("check", f"strategy={HERE}:Mutating", "--histories", "2", cwd=tmp_path, pythonpath=[ROOT])
    assert result.returncode == 1, result.stderr
    row = next(line for line in result.stdout.splitlines() if "input not mutated" in line)
    assert row.split()[0] == "FAIL" and "prepare mutated its input (message" in row, result.stdout
    assert "checks failed" in result.stdout.splitlines()[-1]


def test_check_fails_a_strategy_that_is_not_deterministic():
    found = failed(rows(f"strategy={HERE}:Unstable"))
    assert set(found) == {"deterministic"}, found
    assert "two fresh instances returned different outputs" in found["deterministic"]


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_check_fails_a_strategy_whose_outputs_differ_in_another_process(capsys):
    assert check.cmd_check([f"strategy={HERE}:HashOrdered"], histories=1) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "another process" in line)
    assert row.split()[0] == "FAIL" and "another hash seed" in row, out
    assert failed(rows(f"strategy={HERE}:HashOrdered")) == {}  # one process alone cannot tell


def test_check_fails_a_strategy_that_breaks_its_hard_guarantee():
    found = failed(rows(f"strategy={HERE}:Overbudget"))
    assert set(found) == {"budget"}, found
    assert "declares hard but sent" in found["budget"] and "\n" not in found["budget"]


@pytest.mark.parametrize("path", STRATEGY_CONFIGS, ids=lambda p: p.stem)
def test_check_passes_every_built_in_strategy(path):
    # the random histories: tests/test_strategy_conformance.py (hypothesis); here the recorded ones, tools, hooks
    found = check.strategy_rows(yaml.safe_load(path.read_text()), None, 0, cross_process=False)
    assert {name: reason for name, _, status, reason in found if status == "FAIL"} == {}


@pytest.mark.slow
@pytest.mark.parametrize("path", STRATEGY_CONFIGS, ids=lambda p: p.stem)
def test_the_command_passes_every_built_in_strategy_at_its_defaults(path, tmp_path):
    result = harness("check", f"strategy={path.stem}", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_check_passes_a_built_in_strategy_with_a_parameter_and_a_budget(capsys):
    assert check.cmd_check(["strategy=headtail", "strategy.min_recent_rounds=2", "budget=3k"], histories=2) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "another process" in line)
    assert row.split()[0] == "pass", out
    assert out.splitlines()[-1] == f"all {len(check.STRATEGY_CHECKS)} checks passed"


def test_the_random_histories_are_the_same_for_the_same_seeds():
    first, second = sc.checked_histories(4, None), sc.checked_histories(4, None)
    assert [h.messages for h in first] == [h.messages for h in second]
    assert len({sc.digest(h.messages) for h in first}) == len(first)  # and differ from seed to seed
    assert any(h.name.startswith("recorded ") for h in first)


def test_the_recorded_histories_are_real_conversations():
    histories = sc.recorded_histories()
    assert len(histories) >= 3
    for name, messages in histories:
        assert sc.loop_ends(messages), name
        assert any(m.get("role") == "tool" for m in messages), name


def test_check_fails_a_strategy_that_cannot_be_bound_in_one_row():
    found = rows(f"strategy={HERE}:Unbindable")
    assert failed(found) == {"runs": "binding it (bind, tools) raised RuntimeError: no tool table"}
    assert {status for check, (status, _) in found.items() if check != "runs"} == {"skip"}


# ---------------------------------------------------------------- task families


@pytest.mark.parametrize("path", TASK_CONFIGS, ids=lambda p: p.stem)
def test_check_passes_every_built_in_family(path):
    found = check.task_rows(yaml.safe_load(path.read_text()), (0,), cross_process=False)
    assert {name: reason for name, _, status, reason in found if status == "FAIL"} == {}


@pytest.mark.slow
def test_the_command_passes_a_family_by_class_path_with_a_knob(tmp_path):
    result = harness("check", "task=tasks.needle:Needle", "task.documents=12", "--seeds", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    row = next(line for line in result.stdout.splitlines() if "another process" in line)
    assert row.split()[0] == "pass", result.stdout


def test_check_passes_a_family_by_its_config_name(capsys):
    assert check.cmd_check(["task=needle", "task.documents=12"], seeds=1) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"all {len(check.TASK_CHECKS)} checks passed"


def test_check_fails_a_family_whose_grader_accepts_anything():
    found = failed(rows(f"task={HERE}:AcceptsAnything"))
    assert set(found) == {"wrong_answers"}, found
    assert "the grader accepts an empty answer" in found["wrong_answers"]


def test_check_fails_a_family_whose_generate_is_not_deterministic():
    found = failed(rows(f"task={HERE}:Drifting"))
    assert set(found) == {"deterministic"}, found
    assert "seed 0: two instances of the same seed differ" in found["deterministic"]


def test_check_reports_a_family_without_an_answer_key_as_one_failing_row():
    found = rows(f"task={HERE}:Keyless")
    assert set(failed(found)) == {"answer_key"}, found
    assert "KeylessInstance has no answer_key()" in found["answer_key"][1]
    assert found["wrong_answers"][0] == "skip", found


def test_a_perturbed_key_changes_one_value():
    key = {"a": [], "b": {"c": ["x", "y"], "d": 2}}
    assert tc.perturbed(key) == {"a": [], "b": {"c": ["x"], "d": 2}}
    assert tc.perturbed({"n": 3.5}) == {"n": 10.5}
    assert tc.perturbed({"a": []}) is tc.NOTHING


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "args,needle",
    [
        (["strategy=nosuch"], "unknown strategy 'nosuch' (valid: "),
        (["strategy=headtail", "strategy.nokey=3"], "has no parameter 'nokey'"),
        (["strategy=headtail", "strategy.min_recent_rounds=abc"], "min_recent_rounds"),
        (["strategy=headtail", "budget=12q"], "invalid budget '12q'"),
        (["strategy=no_such_pkg.mod:Class"], "cannot import no_such_pkg.mod:Class"),
        (["strategy=collections:OrderedDict"], "a strategy needs a prepare(messages) method"),
        ([f"task={HERE}:Mutating"], "Mutating is not a task family"),
        (["task=nosuch"], "unknown task 'nosuch' (valid: "),
        (["task=needle", "task.documents=0"], "task knob documents=0 is out of range"),
        (["seed=3"], "check takes strategy=NAME_OR_CLASS_PATH or task=NAME_OR_CLASS_PATH"),
        (["strategy=headtail", "task=needle"], "(one of them)"),
        (["task=needle", "model=openai"], "is not a task.KEY=VALUE override"),
        (["strategy=headtail,none"], "not a sweep"),
        (["task=needle", "--seeds", "0"], "--seeds 1 or more"),
        ([], "the following arguments are required"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, needle, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["check", *args])
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], captured.err
    assert "Traceback" not in captured.err + captured.out


def test_the_overview_lists_check():
    overview = build_parser().format_help()
    assert any(line.split()[0] == "check" for line in overview.splitlines() if line.strip()), overview


def test_a_registered_family_without_a_config_is_checked_by_its_class(monkeypatch, tmp_path):
    assert check.registered_as_class_path("task=needle") == "task=needle"  # its config names it
    monkeypatch.setattr(check, "CONFIG_DIR", tmp_path)  # no configs: the registry's class
    assert check.registered_as_class_path("task=needle") == "task=tasks.needle:Needle"
    assert check.registered_as_class_path("task.documents=3") == "task.documents=3"

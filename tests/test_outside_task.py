"""A task family from outside the repository (examples/task_template), and docs/new_task.md that walks it.

Every command of docs/new_task.md runs here as the page shows it, from a temporary folder (where the records
land), with ``plots=false`` added to a run and the relay's wait cut to a second; each output line the page
quotes must be in the command's output. The run on the reference agent, the refusal of a family without a
reference policy and the relay are the default tier; the other commands (``check``, the dry run, the suite,
the installed package) are slow.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.models.base import PreflightError
from harness.records import read_jsonl
from harness.runner import TrialJob, check_tasks
from reference_agent.policies import policy_source
from reference_agent.scripted import ScriptedModel
from tasks.registry import registered_families
from tests.test_cli import ROOT, harness

TEMPLATE = ROOT / "examples" / "task_template"
PAGE = ROOT / "docs" / "new_task.md"
PREFIX = "PYTHONPATH=examples/task_template "
HARNESS = ".venv/bin/python -m harness "
CORE = ("run task=tally_task:Tally suite", "run task=tally_task.bare:BareTally suite", "model=relay")
"""The page's commands that the default tier runs (by a piece of their text): on the reference agent, refused
without a policy, on the relay. The other commands are slow."""

sys.path.insert(0, str(TEMPLATE))  # the template's package, for the tests that run in this process
from tally_task import Tally  # noqa: E402
from tally_task.bare import BareTally  # noqa: E402


@dataclass(frozen=True)
class Command:
    """A command of the page and the output lines it quotes (``...`` in a line matches anything)."""

    text: str
    quoted: tuple[str, ...]

    @property
    def refused(self) -> bool:
        """The page shows it ending in one error line (exit code 2)."""
        return any(line.startswith("ctxbench: error: ") for line in self.quoted)


def page_commands() -> list[Command]:
    """Every command of docs/new_task.md: ``bash`` blocks (a command a line) and ``console`` blocks (``$ `` lines)."""
    commands: list[Command] = []
    for kind, body in re.findall(r"```(bash|console)\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S):
        if kind == "bash":
            commands += [Command(line, ()) for line in body.splitlines() if line.strip()]
            continue
        for chunk in body.split("$ ")[1:]:
            first, *rest = chunk.splitlines()
            commands.append(Command(first, tuple(line for line in rest if line.strip() and line != "...")))
    return commands


def matches(quoted: str, output: str) -> bool:
    """Whether a line quoted on the page is a line of ``output`` (``...`` stands for anything)."""
    pattern = ".*".join(map(re.escape, quoted.split("...")))
    return any(re.fullmatch(pattern, line) for line in output.splitlines())


def installed(site: Path) -> Path:
    """The template laid out as pip installs it in ``site``: the package and a dist-info with its entry points."""
    project = tomllib.loads((TEMPLATE / "pyproject.toml").read_text())["project"]
    (site / "tally_task").mkdir(parents=True)
    for path in (TEMPLATE / "tally_task").glob("*.py"):
        (site / "tally_task" / path.name).write_bytes(path.read_bytes())
    info = site / "tally_task-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    groups = project["entry-points"]
    (info / "entry_points.txt").write_text(
        "".join(f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n" for g, eps in groups.items())
    )
    return site


def run_page_command(command: Command, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run ``command`` as the page says, from ``tmp_path`` (the records land there)."""
    text = command.text
    pythonpath = [TEMPLATE] if text.startswith(PREFIX) else [installed(tmp_path / "site")]
    text = text.removeprefix(PREFIX)
    assert text.startswith(HARNESS), text
    args = shlex.split(text.removeprefix(HARNESS).replace("$PWD", str(ROOT)))
    if args[0] == "run" and "--dry-run" not in args:
        args.append("plots=false")
    if "model=relay" in args:
        args.append("model.timeout=1")
    return harness(*args, cwd=tmp_path, pythonpath=pythonpath)


def assert_as_shown(command: Command, result: subprocess.CompletedProcess) -> None:
    """The command ended as the page shows: one error line and exit 2, or exit 0; and every quoted line is there."""
    output = result.stdout + result.stderr
    if command.refused:
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in output, output[-2000:]
    else:
        assert result.returncode == 0, output[-2000:]
    missing = [line for line in command.quoted if not matches(line, output)]
    assert not missing, (missing, output[-2000:])


def page_command(piece: str) -> Command:
    """The page's one command that contains ``piece``."""
    (command,) = [c for c in page_commands() if piece in c.text]
    return command


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_the_template_runs_on_the_reference_agent_and_grades(tmp_path):
    command = page_command(CORE[0])
    assert_as_shown(command, run_page_command(command, tmp_path))
    (run,) = (tmp_path / "results" / "runs").iterdir()
    rows = read_jsonl(run / "trials.jsonl")
    assert [(r["family"], r["outcome"], r["success"]) for r in rows] == [("tally", "submitted", True)]


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_family_without_a_policy_is_one_line_and_leaves_no_run_folder(tmp_path):
    command = page_command(CORE[1])
    result = run_page_command(command, tmp_path)
    assert_as_shown(command, result)
    assert command.refused and "reference_policy()" in result.stderr and "model=relay" in result.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_the_relay_writes_the_first_request_of_a_family_without_a_policy(tmp_path):
    command = page_command(CORE[2])
    assert_as_shown(command, run_page_command(command, tmp_path))
    assert (tmp_path / "results" / "relay-tally" / "tally-p4x5-s0-t0" / "0001.request.json").is_file()


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [c for c in page_commands() if not any(piece in c.text for piece in CORE)],
    ids=lambda c: c.text.removeprefix(PREFIX).removeprefix(HARNESS)[:60],
)
def test_every_other_command_on_the_page_runs_as_shown(tmp_path, monkeypatch, command):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the dry run's line about the missing key
    assert_as_shown(command, run_page_command(command, tmp_path))


def test_the_page_walks_every_step():
    texts = [c.text for c in page_commands()]
    steps = (*CORE, "harness check task=tally_task:Tally", "--dry-run", "suite=tally_smoke", "run task=tally ")
    assert [step for step in steps if sum(step in text for text in texts) != 1] == []


def code_lines() -> list[str]:
    """The lines of the page's ``python`` blocks, stripped."""
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_the_code_on_the_page_is_the_templates():
    source = {line.strip() for path in (TEMPLATE / "tally_task").glob("*.py") for line in path.read_text().splitlines()}
    assert code_lines() and not [line for line in code_lines() if line not in source]


# ---------------------------------------------------------------- the template family, in this process


def test_generation_is_deterministic_and_the_knobs_are_checked():
    assert Tally(pages=3).generate(7).fingerprint() == Tally(pages=3).generate(7).fingerprint()
    assert Tally(pages=3).generate(7).fingerprint() != Tally(pages=3).generate(8).fingerprint()
    with pytest.raises(ValueError, match="pages=0 is out of range"):
        Tally(pages=0)


@pytest.mark.parametrize("seed", range(5))
def test_the_answer_key_succeeds_and_other_answers_fail(seed):
    instance = Tally().generate(seed)
    assert instance.grade(instance.answer_key()).success
    total = instance.answer_key()["total"]
    for answer in ({"total": total + 1}, {"total": str(total)[::-1] + "9"}, {}, {"total": None}, {"total": True}, []):
        assert not instance.grade(answer).success  # type: ignore[arg-type]


def test_tools_answer_bad_calls_with_an_error_result():
    instance = Tally(pages=2).generate(0)
    for name, args in (("read_page", {"page": 3}), ("read_page", {"page": "x"}), ("write", {}), ("read_page", {})):
        assert instance.call(name, args).is_error
    page = instance.call("read_page", {"page": "2"})
    assert not page.is_error and page.resource == "page-2" and page.content.startswith("Ledger page 2 of 2")


def test_where_a_policy_comes_from():
    assert policy_source(Tally().generate(0)) == "instance"
    assert policy_source(BareTally().generate(0)) is None
    needle = registered_families()["needle"].task().generate(0)
    assert policy_source(needle) == "family"


def test_the_reference_agent_refuses_only_a_family_it_has_no_policy_for():
    model = ScriptedModel()
    model.check_task(Tally().generate(0))
    with pytest.raises(PreflightError, match="model=scripted cannot run task family tally: it has no reference policy"):
        model.check_task(BareTally().generate(0))


class _NoCheck:
    """A model that declares no ``check_task`` (an API backend, the relay)."""


def test_the_runner_checks_the_first_planned_instance_of_each_family():
    family = BareTally()
    planned = [TrialJob("t0", "tally", family, 0, 0, family.generate(0)), TrialJob("t1", "tally", family, 0, 1)]
    with pytest.raises(ConfigError, match="no reference policy"):
        check_tasks([ScriptedModel()], planned)
    check_tasks([_NoCheck()], planned)  # a model without check_task accepts every family
    read_back = [TrialJob("t0", "tally", family, 0, 0)]  # a rerun's plan read back: its first run was checked
    check_tasks([ScriptedModel()], read_back)
    assert read_back[0].instance is None  # and it generated nothing

"""Typed strategy parameters (harness/params.py): converted by their declared types before the first trial.

The class-path strategies below are what a user writes outside the repo (``strategy=tests.test_strategy_params:Typed``);
refusals go through ``harness.cli.main`` in-process (``--dry-run``: nothing runs), one end-to-end run in a subprocess.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Literal

import pytest
import yaml

from harness.budget import Tokens
from harness.cli import main
from harness.config import CONFIG_DIR, STRATEGY_SWEEPS, compose, compose_checked, container_dict, sweep_values
from harness.params import Mismatch, ParameterError, convert_spec, convert_value
from harness.records import read_jsonl
from harness.runner import build
from strategies.triggers import Trigger
from tests.test_cli import harness

TYPED = "tests.test_strategy_params:Typed"


class Typed:
    """A class-path strategy with typed parameters; ``prepare`` fails unless it received them converted."""

    budget_guarantee = "none"

    def __init__(
        self,
        trigger: Tokens = 50_000,
        keep: int = 2,
        mode: Literal["fast", "slow"] = "fast",
        tools: list[str] | None = None,
        fraction: Trigger = 0.8,
    ) -> None:
        self.trigger, self.keep, self.mode, self.tools, self.fraction = trigger, keep, mode, tools, fraction

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The history unchanged, once the parameters are what they were declared to be."""
        if not isinstance(self.trigger, int) or not isinstance(self.keep, int):
            raise TypeError(f"unconverted parameters: trigger={self.trigger!r} keep={self.keep!r}")
        return messages


@dataclasses.dataclass
class TypedData:
    """A class-path strategy declared as a dataclass."""

    budget: Tokens = 8_000
    rounds: int = 3

    def prepare(self, messages: list[dict]) -> list[dict]:
        """The history unchanged."""
        return messages


class Sloppy:
    """A plugin whose default does not fit its own hint (common outside the repo)."""

    def __init__(self, limit: int = None) -> None:  # type: ignore[assignment]
        self.limit = limit


def spec(target: str, **params) -> dict:
    """The spec of class ``target`` (``pkg.mod:Class``) named by its class path, as harness/plugins.py makes it."""
    return {"name": target, "_target_": target.replace(":", "."), **params}


def refusal(capsys, tmp_path: Path, *args: str) -> str:
    """The one error line of ``run ARGS --dry-run`` (exit code 2, nothing written under ``tmp_path``)."""
    with pytest.raises(SystemExit) as exit_:
        main(["run", *args, "suite=smoke", f"hydra.run.dir={tmp_path / 'run'}", "--dry-run"])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert exit_.value.code == 2 and len(lines) == 1, lines
    assert not (tmp_path / "run").exists()
    assert "Traceback" not in lines[0] and "not supported between" not in lines[0]
    return lines[0].removeprefix("ctxbench: error: ")


@pytest.mark.parametrize(
    "hint,value,converted",
    [
        (Tokens, "60k", 60_000),
        (Tokens, "0.5M", 500_000),
        (Tokens, 1234, 1234),
        (Tokens | None, None, None),
        (Trigger, 0.5, 0.5),
        (Trigger, "60k", 60_000),
        (Trigger, 60000.0, 60_000),
        (Trigger, None, None),
        (int, 3, 3),
        (float, 2, 2),  # an int is a float (PEP 484), passed on as it was written
        (bool, False, False),
        (str, "x", "x"),
        (list[str], ["a", "b"], ["a", "b"]),
        (list[str] | tuple[str, ...], ("a",), ["a"]),  # the first member that fits
        (tuple[str, ...], ["a"], ("a",)),
        (int | None, None, None),
        (Literal["fast", "slow"], "slow", "slow"),
        (dict, {"a": 1}, {"a": 1}),
    ],
)
def test_declared_types_convert_what_they_accept(hint, value, converted):
    result = convert_value(hint, value)
    assert result == converted and type(result) is type(converted)


@pytest.mark.parametrize(
    "hint,value,expects",
    [
        (Tokens, "abc", "a token count such as 60000, 60k or 0.5M"),
        (Tokens, 0, "a token count"),
        (Trigger, 1.5, "a fraction of the budget in (0, 1] or a token count"),
        (Trigger, True, "a fraction of the budget"),
        (int, "3", "an integer"),
        (int, True, "an integer"),
        (float, "x", "a number"),
        (bool, 1, "true or false"),
        (str, 3, "a text"),
        (list[str], "a", "a list of texts"),
        (list[str], [1], "a list of texts"),
        (int | None, "x", "an integer or null"),
        (Literal["fast", "slow"], "medium", "one of fast, slow"),
        (Literal[1, 2], True, "one of 1, 2"),
    ],
)
def test_declared_types_refuse_with_what_they_take(hint, value, expects):
    with pytest.raises(Mismatch) as refused:
        convert_value(hint, value)
    assert expects in refused.value.expects


def test_a_class_path_strategy_receives_converted_values():
    strategy = build(spec(TYPED, trigger="60k", keep=4, fraction="0.5M"), "strategy")
    assert (strategy.trigger, strategy.keep, strategy.fraction) == (60_000, 4, 500_000)
    data = build(spec("tests.test_strategy_params:TypedData", budget="0.5M"), "strategy")
    assert (data.budget, data.rounds) == (500_000, 3)


def test_the_spec_keeps_the_value_as_written():
    """The config (so the identity, the folder name and ``strategy_params``) keeps ``60k``; the strategy gets 60000."""
    written = spec(TYPED, trigger="60k")
    converted = convert_spec(written)
    assert written["trigger"] == "60k" and converted["trigger"] == 60_000


def test_an_unknown_parameter_lists_the_known_ones():
    with pytest.raises(ParameterError) as refused:
        convert_spec(spec(TYPED, nope=1))
    assert str(refused.value) == (
        f"strategy.nope=1: {TYPED} has no parameter nope (its parameters: trigger, keep, mode, tools, fraction)"
    )


def test_a_value_equal_to_the_default_is_accepted_as_the_class_chose_it():
    assert convert_spec(spec("tests.test_strategy_params:Sloppy", limit=None))["limit"] is None
    with pytest.raises(ParameterError, match="takes an integer"):
        convert_spec(spec("tests.test_strategy_params:Sloppy", limit="x"))


def test_class_path_bad_token_value_is_one_line_exit_2(capsys, tmp_path):
    line = refusal(capsys, tmp_path, f"strategy={TYPED}", "strategy.trigger=abc")
    assert line == (
        f"strategy.trigger=abc: {TYPED}'s parameter trigger takes a token count such as 60000, 60k or 0.5M "
        "(default 50000)"
    )


def test_class_path_unknown_parameter_is_one_line_exit_2(capsys, tmp_path):
    line = refusal(capsys, tmp_path, f"strategy={TYPED}", "+strategy.nope=1")
    assert line.startswith("strategy.nope=1: ") and "(its parameters: trigger, keep, mode, tools, fraction)" in line


def test_built_in_bad_value_says_what_the_parameter_takes(capsys, tmp_path):
    line = refusal(capsys, tmp_path, "strategy=clear_tool_results", "strategy.keep=foo")
    assert line == "strategy.keep=foo: clear_tool_results's parameter keep takes an integer (default 3)"
    line = refusal(capsys, tmp_path, "strategy=status_bar", "strategy.mode=both")
    assert line == "strategy.mode=both: status_bar's parameter mode takes one of replace, append (default replace)"


def test_a_bad_sweep_value_is_refused_before_the_first_job(capsys, tmp_path):
    """0.5 fits the first strategy (a fraction of the budget) and not the second: every combination is checked."""
    args = ["-m", "strategy=server_clear_tool_uses,clear_tool_results", "strategy.clear_at_least=0,0.5"]
    line = refusal(capsys, tmp_path, *args)
    assert (
        line
        == "strategy.clear_at_least=0.5: clear_tool_results's parameter clear_at_least takes an integer (default 0)"
    )


def test_a_nested_base_strategy_is_converted_by_its_own_class(capsys, tmp_path):
    base = "{_target_: strategies.headtail.HeadTail, min_recent_rounds: x}"
    line = refusal(capsys, tmp_path, "strategy=status_bar", f"strategy.base={base}")
    assert line.startswith("strategy.base.min_recent_rounds=x: strategies.headtail.HeadTail's parameter")
    assert build(spec("strategies.isolate:Isolate", subagent_budget="4k"), "strategy").subagent_budget == 4000


def shipped_specs() -> list[dict]:
    """Every strategy config of the repo, and every arm's strategy with its own parameters."""
    specs = {p.stem: yaml.safe_load(p.read_text()) for p in sorted((CONFIG_DIR / "strategy").glob("*.yaml"))}
    arms = []
    for path in sorted((CONFIG_DIR / "arm").glob("*.yaml")):
        arm = yaml.safe_load(path.read_text())
        chosen = next(
            d["override /strategy"] for d in arm["defaults"] if isinstance(d, dict) and "override /strategy" in d
        )
        arms.append({**specs[chosen], **(arm.get("strategy") or {})})
    return [*specs.values(), *arms]


def test_every_shipped_strategy_config_converts_to_what_it_wrote():
    """Typing the built-in strategies changes no shipped config: each converts to itself, a budget spelling
    (``trigger: 60k``) to its token count."""
    for written in shipped_specs():
        converted = convert_spec(written)
        for key, value in written.items():
            if isinstance(value, str) and value[-1:] in ("k", "M") and isinstance(converted[key], int):
                continue  # configs/arm/clear60.yaml's trigger 60k -> 60000
            assert converted[key] == value and type(converted[key]) is type(value), (written["name"], key)


@pytest.mark.slow
def test_a_run_hands_the_strategy_60000_for_60k(tmp_path):
    result = harness(
        "run",
        f"strategy={TYPED}",
        "strategy.trigger=60k",
        "suite=smoke",
        "trials=1",
        "progress=false",
        "plots=false",
        f"hydra.run.dir={tmp_path / 'run'}",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    rows = read_jsonl(tmp_path / "run" / "trials.jsonl")
    assert rows and all(r["outcome"] != "strategy_error" for r in rows), {r["outcome"] for r in rows}
    assert {str(r["strategy_params"]["trigger"]) for r in rows} == {"60k"}  # recorded as written


@pytest.mark.slow
def test_every_strategy_an_experiment_preset_sweeps_converts():
    """The presets' own sweeps (``strategy``, ``arm``, ``variant/<preset>``) choose strategies that all convert."""
    for path in sorted((CONFIG_DIR / "experiment").glob("*.yaml")):
        cfg, _ = compose_checked([f"experiment={path.stem}"])
        swept = {k: v for k, v in (cfg.hydra.sweeper.get("params") or {}).items() if k in STRATEGY_SWEEPS or "/" in k}
        for key, values in swept.items():
            for value in sweep_values(str(values)):
                chosen = compose([f"experiment={path.stem}", f"{key}={value}"])
                convert_spec(container_dict(chosen.strategy, resolve=True))  # raises ParameterError on a refusal

"""Arms (configs/arm/): named strategy configurations, each with its own parameters and budget, swept together.

1. Every arm composes: its name is its file's stem and the strategy's ``name``, and it builds its strategy with
   the parameters it declares (triggers in absolute tokens, whatever the budget).
2. No arm sets a parameter that its strategy's constructor does not take.
3. ``run -m arm=...`` is one sweep with one run folder per arm, named for the arm, whose rows and identity carry
   the arm's name; ``arm=none`` is exactly ``strategy=none budget=1M``; without ``arm=`` nothing changes.
4. ``arm=`` beside ``strategy=`` is refused in one line; an unknown arm lists the arms.
5. The study preset ``experiment=strategy_question`` sweeps the three arms on the long suite, one folder each.
6. docs/strategy_question.md quotes the calibration block's verdict lines verbatim, and its links resolve.

Fast: compositions in process, one small sweep (one trial of one small family per arm) in a subprocess.
"""

from __future__ import annotations

import inspect
import json
import re

import pytest
from hydra.utils import get_class
from omegaconf import OmegaConf

from harness.budget import parse_budget
from harness.config import CONFIG_DIR, compose, config_dict, options, run_folder_name, validate_overrides
from harness.errors import UsageError
from harness.identity import normalise
from harness.records import read_jsonl
from harness.runner import _node, build, recorded_strategy_name
from tests.test_cli import ROOT, harness
from tests.test_docs_calibration_claim import block as calibration_block
from tests.test_docs_readme import anchors, links

ARMS = options("arm")
QUESTION = {  # the arms of the user's question: the strategy config each runs, and its triggers in tokens
    "none": ("none", {}),
    "clear60": ("clear_tool_results", {"trigger": 60_000}),
    "sum100": ("summarize", {"threshold": 100_000}),
}
SMALL = ["suite=smoke", "task=call_budget", "task.merchants=4", "task.noise=2", "trials=1"]  # one small trial per arm
QUIET = ["progress=false", "plots=false"]
HASH = re.compile(r"-[0-9a-f]{10}$")


def declared(arm: str) -> dict:
    """The arm file's own ``strategy`` body (what it sets on top of the strategy's config)."""
    body = OmegaConf.to_container(OmegaConf.load(CONFIG_DIR / "arm" / f"{arm}.yaml"))
    assert isinstance(body, dict)
    return dict(body.get("strategy") or {})


def test_the_question_s_arms_exist():
    assert set(QUESTION) <= set(ARMS)


@pytest.mark.parametrize("arm", ARMS)
def test_every_arm_builds_its_strategy_with_the_declared_parameters(arm):
    cfg = compose([f"arm={arm}"])
    spec = _node(cfg.strategy)
    assert spec["name"] == arm == recorded_strategy_name(spec)  # the label of every row
    for key, value in declared(arm).items():
        assert spec[key] == value, key
    budget = parse_budget(cfg.budget)
    strategy = build(spec, "strategy")  # a rejected parameter would raise ConfigError here
    if arm in QUESTION:
        config_name, tokens = QUESTION[arm]
        own = OmegaConf.load(CONFIG_DIR / "strategy" / f"{config_name}.yaml")
        assert spec["_target_"] == own._target_
        for key, value in tokens.items():  # absolute tokens: the same at any budget
            assert strategy.size_trigger.tokens(budget) == strategy.size_trigger.tokens(25_000) == value, key
        assert budget == 1_000_000


@pytest.mark.parametrize("arm", ARMS)
def test_no_arm_sets_a_parameter_its_strategy_does_not_take(arm):
    spec = _node(compose([f"arm={arm}"]).strategy)
    signature = inspect.signature(get_class(spec["_target_"]))
    takes = set(signature.parameters)
    open_ended = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
    extra = set(declared(arm)) - {"name", "_target_"} - takes
    assert open_ended or not extra, f"arm {arm}: {spec['_target_']} takes no {sorted(extra)}"


def identity(overrides: list[str]) -> dict:
    return normalise(config_dict(compose(overrides)))


def test_arm_none_is_strategy_none_at_1m_and_no_arm_changes_nothing():
    assert identity(["arm=none"]) == identity(["strategy=none", "budget=1M"])
    assert run_folder_name(compose(["arm=none"])) == run_folder_name(compose(["strategy=none", "budget=1M"]))
    default = compose([])
    assert default.hydra.runtime.choices.arm is None
    assert (default.strategy.name, default.budget) == ("none", "25k")
    assert "arm" not in config_dict(default)


def test_an_arm_s_parameter_and_budget_can_still_be_overridden():
    cfg = compose(["arm=clear60", "strategy.trigger=80k", "budget=200k"])
    assert (cfg.strategy.name, cfg.strategy.trigger, cfg.budget) == ("clear60", "80k", "200k")


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_a_sweep_over_arms_writes_one_folder_per_arm_named_for_it(tmp_path):
    result = harness("run", "-m", "arm=none,clear60,sum100", *SMALL, *QUIET, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    (sweep,) = (tmp_path / "results" / "sweeps").iterdir()
    assert HASH.sub("", sweep.name) == "arm-clear60.none.sum100"
    jobs = sorted(p for p in sweep.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert [HASH.sub("", p.name) for p in jobs] == [f"{a}-1M-call_budget" for a in ("clear60", "none", "sum100")]
    for job in jobs:
        arm = job.name.split("-")[0]
        assert {r["strategy"] for r in read_jsonl(job / "trials.jsonl")} == {arm}
        ident = json.loads((job / "identity.json").read_text())
        assert ident["strategy"]["name"] == arm and ident["budget"] == "1M"
    for arm in ("none@1M", "clear60@1M", "sum100@1M"):
        assert arm in result.stdout  # the sweep's table labels each arm
    assert "\nstudy: " not in result.stdout  # no study declared (tests/test_study.py): the sweep's table ends it


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["arm=clear60", "strategy=headtail"], "arm=clear60 chooses the strategy and its parameters: drop strategy="),
        (["-m", "arm=none,clear60", "strategy=none,headtail"], "chooses the strategy and its parameters"),
        (["arm=bogus"], "unknown arm 'bogus' (valid: clear60, none, sum100"),
    ],
)
def test_bad_arm_overrides_are_refused_before_composing(args, needle):
    with pytest.raises(UsageError) as caught:  # the command line prints it as one line, exit code 2
        validate_overrides(args)
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def test_an_arm_beside_a_strategy_is_one_line_from_the_command_line(tmp_path):
    result = harness("run", "arm=sum100", "strategy=summarize", "--dry-run", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "ctxbench: error: arm=sum100 chooses the strategy and its parameters: drop strategy=summarize, "
        "or set one parameter with strategy.KEY=VALUE (configs/arm/README.md)"
    ]
    assert not (tmp_path / "results").exists()


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_the_strategy_question_preset_sweeps_the_three_arms_on_the_long_suite():
    cfg = compose(["experiment=strategy_question"])
    assert OmegaConf.to_container(cfg.hydra.sweeper.params) == {"arm": "none,clear60,sum100"}
    assert cfg.suite.name == "long" and cfg.hydra.sweep.dir == "results/experiments/strategy_question"
    for arm in QUESTION:
        job = compose(["experiment=strategy_question", f"arm={arm}"])
        assert job.hydra.sweep.subdir == f"arm-{arm}"  # fixed folders, named for the arm
        assert (job.strategy.name, job.budget, job.suite.name) == (arm, "1M", "long")


DOC = ROOT / "docs" / "strategy_question.md"


def test_the_strategy_question_page_quotes_the_calibration_verdicts_verbatim_and_its_links_resolve():
    """docs/strategy_question.md quotes each verdict line of docs/reference_agent.md's generated calibration
    block as it is (a regenerated block fails here until the page quotes it again), and its links resolve."""
    text = DOC.read_text(encoding="utf-8")
    verdicts = [line for line in calibration_block().splitlines() if line.startswith("- ")]
    assert len(verdicts) == 3
    for line in verdicts:
        assert f"> {line}" in text.splitlines(), line
    broken = []
    for link in links(DOC):
        path, _, anchor = link.partition("#")
        target = (DOC.parent / path).resolve() if path else DOC
        if not target.exists() or (anchor and target.suffix == ".md" and anchor not in anchors(target)):
            broken.append(link)
    assert not broken, broken
    for command in ("run -m experiment=strategy_question", "compare RUN_NONE RUN_CLEAR60 RUN_SUM100"):
        assert f".venv/bin/python -m harness {command}" in text

"""One registration per family (``FAMILY = FamilySpec(...)``), found by ``tasks.registry``; the reference agent
takes each family's policy from it, and a family without one runs under the default policy."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from reference_agent.policies import FACTORIES, reference_policy
from reference_agent.policies.default import EMPTY_ANSWER_NOTE, EmptyAnswerPolicy
from tasks.base import FamilySpec, TaskInstance
from tasks.needle import Needle, NeedleInstance
from tasks.registry import family_spec, registered_families
from tests.family_helpers import run_reference
from tests.test_import_graph import cycles, import_graph

ROOT = Path(__file__).resolve().parent.parent
TASK_CONFIGS = sorted((ROOT / "configs" / "task").glob("*.yaml"))


def test_every_family_of_the_repository_is_registered():
    assert sorted(registered_families()) == sorted(p.stem for p in TASK_CONFIGS)


@pytest.mark.parametrize("path", TASK_CONFIGS, ids=lambda p: p.stem)
def test_each_task_config_targets_its_registered_class(path):
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    spec = family_spec(config["name"])
    assert spec is not None and spec.name == path.stem
    module, _, name = config["_target_"].rpartition(".")
    assert (spec.task.__name__, __import__(module, fromlist=[name]).__dict__[name]) == (name, spec.task)


@pytest.mark.parametrize("name", sorted(registered_families()))
def test_each_registration_names_a_policy_the_reference_agent_loads(name):
    spec = registered_families()[name]
    assert issubclass(spec.instance, TaskInstance) and callable(spec.grader)
    assert spec.policy is not None and spec.policy.startswith("reference_agent.policies.")
    assert name in FACTORIES


def test_a_policy_gets_the_instance_attributes_its_registration_names():
    instance = registered_families()["brand_report"].task(pages=2, posts_per_page=4, weeks=1, notes_window=False)
    assert reference_policy(instance.generate(0)).notes_window is False


def test_a_spec_must_name_its_task_class_and_a_policy_path():
    with pytest.raises(ValueError, match="names task class"):
        FamilySpec("haystack", Needle, NeedleInstance, lambda answer: None)
    with pytest.raises(ValueError, match="is not 'package.module:Class'"):
        FamilySpec("needle", Needle, NeedleInstance, lambda answer: None, policy="reference_agent.policies.needle")


class _Unregistered(NeedleInstance):
    """A needle instance of a family nobody registered."""

    family = "unregistered_needle"


def test_a_family_without_a_policy_runs_under_the_default_policy(tmp_path):
    instance = _Unregistered(Needle(documents=2, doc_tokens=50, position=1), 0, 1, "Amber", "1234-5678", ["a", "b"])
    assert isinstance(reference_policy(instance), EmptyAnswerPolicy)
    row = run_reference(tmp_path, instance)
    assert (row["success"], row["score"], row["steps"]) == (False, 0.0, 1)


def test_the_default_policy_submits_an_empty_answer_and_summarizes():
    policy = EmptyAnswerPolicy()
    message = policy.act([{"role": "user", "content": "anything"}], [])
    assert message["content"] == EMPTY_ANSWER_NOTE
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["submit"]
    assert message["tool_calls"][0]["function"]["arguments"] == "{}"
    assert policy.summarize("")


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_no_import_cycle_inside_tasks():
    graph = {m: {t for t in targets if t.startswith("tasks")} for m, targets in import_graph().items()}
    assert not [c for c in cycles(graph) if any(m.startswith("tasks") for m in c)]


@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "suite").glob("*.yaml")), ids=lambda p: p.stem)
def test_a_suite_names_registered_families_by_one_defaults_line_each(path):
    """A suite takes a family with ``- /task@families.<name>: <name>``; its sizes override that family's knobs."""
    suite = yaml.safe_load(path.read_text(encoding="utf-8"))
    lines = [entry for entry in suite["defaults"] if isinstance(entry, dict)]
    named = {key.removeprefix("/task@families."): value for entry in lines for key, value in entry.items()}
    assert named and all(key == value and key in registered_families() for key, value in named.items())
    assert set(suite.get("families") or {}) <= set(named)

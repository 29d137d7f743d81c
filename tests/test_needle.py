"""The ``needle`` family (source 003, Lost in the Middle): one fact at a chosen document among many."""

import pytest

from reference_agent.policies import reference_policy
from reference_agent.profiles import REALISTIC, LineDraws, attend
from reference_agent.scripted import ScriptedModel
from tasks.base import KnobError
from tasks.needle import Needle
from tests.family_helpers import run, run_reference


def test_generation_is_deterministic_and_places_the_fact_in_the_chosen_document():
    family = Needle(documents=20, doc_tokens=200, position=5)
    instance = family.generate(1)
    assert instance.fingerprint() == family.generate(1).fingerprint() != family.generate(2).fingerprint()
    holding = [d for d in instance.documents if f"the {instance.vault} vault is {instance.code}" in d]
    assert len(holding) == 1 and holding[0].startswith("[Document 5]")
    assert not holding[0].split("\n")[0].count(instance.code)  # never the first line (always seen)
    others = [d for d in instance.documents if d is not holding[0]]
    assert all("access code of the" in d and instance.vault not in d for d in others)


def test_length_follows_doc_tokens():
    short, long = (
        Needle(doc_tokens=t).generate(0).call("search_documents", {"query": "x"}).content for t in (200, 2000)
    )
    assert 8 < len(long) / len(short) < 12


@pytest.mark.parametrize("knobs", [{"position": 0}, {"position": 21}, {"documents": 0}, {"doc_tokens": 10}])
def test_bad_knobs(knobs):
    with pytest.raises(KnobError):
        Needle(**knobs)


def test_grading_and_bad_arguments():
    instance = Needle().generate(0)
    assert instance.grade({"code": instance.code}).success
    assert not instance.grade({"code": "unknown"}).success and not instance.grade({}).success
    assert instance.call("search_documents", {}).is_error and instance.call("nope", {}).is_error


@pytest.mark.parametrize("position", [1, 10, 20])
def test_the_perfect_agent_always_finds_the_fact(tmp_path, position):
    row, _ = run(tmp_path, Needle(doc_tokens=300, position=position), seed=0)
    assert row["success"] and row["steps"] == 2
    assert row["fact_document"] == position and row["fact_position"] == round((position - 1) / 19, 4)


def test_the_agent_answers_unknown_when_the_fact_is_out_of_view(tmp_path):
    instance = Needle(doc_tokens=200, position=3).generate(0)
    policy = reference_policy(instance)
    result = instance.call("search_documents", {"query": "x"}).content
    hidden = result.replace(f"the {instance.vault} vault is {instance.code}", "the vault is (smudged)")
    messages = [
        {"role": "system", "content": instance.system_prompt},
        {"role": "user", "content": instance.user_prompt},
        {
            "role": "assistant",
            "content": "I will search the bulletins.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search_documents", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": hidden},
    ]
    reply = policy.act(messages, instance.tools)
    assert '"unknown"' in reply["tool_calls"][0]["function"]["arguments"]


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_fact_place_matches_the_attention_models_view():
    """The model's chance computed from ``fact_place`` is the rate at which ``attend`` keeps the fact's line."""
    instance = Needle(doc_tokens=5000, position=10).generate(0)
    before, total = instance.fact_place()
    expected = 1 - REALISTIC.attention.miss(before / total, total // 4)
    messages = [
        {"role": "system", "content": instance.system_prompt},
        {"role": "user", "content": instance.user_prompt},
        {"role": "assistant", "content": "I will search the bulletins."},
        {"role": "tool", "content": instance.call("search_documents", {"query": "x"}).content},
    ]
    assert sum(len(m["content"]) for m in messages) == total
    line = f"the {instance.vault} vault is {instance.code}"
    kept = sum(
        line in attend(messages, REALISTIC.attention, LineDraws(f"{instance.id}:{t}:agent"))[3]["content"]
        for t in range(400)
    )
    assert 0.7 < expected < 0.95 and abs(kept / 400 - expected) < 0.06


def test_a_trial_under_the_realistic_profile_searches_once_and_submits(tmp_path):
    instance = Needle(doc_tokens=5000, position=10).generate(0)
    row = run_reference(tmp_path, instance, model=ScriptedModel(profile="realistic", context_window=10_000_000))
    assert row["outcome"] == "submitted" and row["steps"] == 2 and row["reads"] == 1


def test_positions_cycle_through_the_seeds_and_keep_the_content():
    family = Needle(doc_tokens=200, positions=[1, 10, 20])
    assert [family.generate(s).position for s in range(4)] == [1, 10, 20, 1]
    fixed = Needle(doc_tokens=200, position=10).generate(1)
    assert family.generate(1).fingerprint() == fixed.fingerprint()
    for bad in ([], [0], "1,2"):
        with pytest.raises(KnobError):
            Needle(positions=bad)

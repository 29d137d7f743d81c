import json

import pytest

from tasks.base import KnobError
from tasks.callback_search import DEF_GREP, CallbackSearch
from tasks.policy_kit import make_call, reply
from tests.family_helpers import run_reference, unmanaged_requests

SMOKE = dict(files=24, functions_per_file=2)


@pytest.mark.parametrize("knobs,seeds", [(SMOKE, [0, 1, 2, 3]), ({}, [0, 1])])
def test_reference_agent_succeeds_unmanaged(tmp_path, knobs, seeds):
    for seed in seeds:
        instance = CallbackSearch(**knobs).generate(seed)
        row = run_reference(tmp_path / str(seed), instance)
        assert row["outcome"] == "submitted" and row["success"] and row["score"] == 1.0, row["grade_detail"]
        assert row["rereads"] == 0, "files still in view are not read again"


def test_generation_identical_per_seed_and_differs_across_seeds():
    family = CallbackSearch(**SMOKE)
    assert family.generate(1).fingerprint() == family.generate(1).fingerprint()
    assert family.generate(1).fingerprint() != family.generate(2).fingerprint()


def test_codebase_shape_and_distractors():
    instance = CallbackSearch().generate(0)
    assert len(instance.files) == 120
    assert any(p.startswith("tests/") for p in instance.files) and any(p.startswith("docs/") for p in instance.files)
    name = instance.target["function"]
    assert f"def {name}(" in instance.files[instance.target["file"]]
    assert "def handle_callback(" in instance.files["src/notify/handlers.py"]
    assert f"def {name}_v1(" in instance.files["src/payment/legacy_gateway.py"]
    assert not any(f"{name}_v1(" in text for path, text in instance.files.items()
                   if path.startswith("src/") and path != "src/payment/legacy_gateway.py"), "nothing in src calls it"
    assert 2 <= len(instance.sites) <= 4


def test_empty_and_wrong_answers_fail():
    instance = CallbackSearch(**SMOKE).generate(0)
    right = {**instance.target, "call_sites": instance.sites}
    assert instance.grade(right).success
    assert not instance.grade({}).success and instance.grade({}).score == 0
    wrong_target = {"file": "src/notify/handlers.py", "function": "handle_callback", "call_sites": instance.sites}
    assert not instance.grade(wrong_target).success and instance.grade(wrong_target).score == 0
    missing = instance.grade({**instance.target, "call_sites": instance.sites[:-1]})
    assert not missing.success and 0.4 < missing.score < 1


@pytest.mark.parametrize("name,args", [("read_file", {"path": "src/nope.py"}), ("read_file", {}),
                                       ("grep", {"pattern": "("}), ("grep", {"pattern": ""}), ("grep", {}),
                                       ("nope", {})])
def test_bad_arguments_are_tool_errors(name, args):
    instance = CallbackSearch(**SMOKE).generate(0)
    result = instance.call(name, args)
    assert result.is_error and result.content.startswith("ERROR")


def test_reads_have_resources_and_grep_is_capped():
    instance = CallbackSearch(grep_cap=10).generate(0)
    listing = instance.call("list_files", {})
    assert listing.resource == "list_files" and "docs/payment.md" in listing.content
    read = instance.call("read_file", {"path": instance.target["file"]})
    assert read.resource == f"file:{instance.target['file']}" and "    1  " in read.content
    grep = instance.call("grep", {"pattern": "def "})
    assert "more matches not shown; narrow the pattern" in grep.content
    assert len(grep.content.splitlines()) == 12


@pytest.mark.parametrize("knobs", [dict(files=5), dict(functions_per_file=1), dict(grep_cap=0)])
def test_knobs_out_of_range(knobs):
    with pytest.raises(KnobError):
        CallbackSearch(**knobs)


def _head(instance):
    return [{"role": "system", "content": instance.system_prompt}, {"role": "user", "content": instance.user_prompt}]


def _names(action):
    return [c["function"]["name"] for c in action.get("tool_calls") or []]


def test_restated_candidates_survive_a_cut_and_the_listing_is_not_rerun():
    """The listing and the grep are cut; the candidates and which are checked survive in a notes block
    (or the latest reply): the policy reads the next unchecked candidate, without listing or grepping again."""
    instance = CallbackSearch(**SMOKE).generate(0)
    policy = instance.reference_policy()
    grep = instance.call("grep", {"pattern": DEF_GREP}).content
    candidates = sorted({line.split(":", 1)[0] for line in grep.splitlines()[1:] if line.startswith("src/")})
    assert len(candidates) >= 2
    notes = {"role": "user", "content": "[notes] Your notes so far (written with write_note):\n"
                                        f"- Candidates: {', '.join(candidates)}\n- Candidates checked: {candidates[0]}"}
    action = policy.act([*_head(instance), notes], instance.tools)
    assert _names(action) == ["read_file"] and json.loads(action["tool_calls"][0]["function"]["arguments"]) == {
        "path": candidates[1]}


def test_every_reply_restates_the_working_set():
    """Each reply of the search phase restates the candidates and which are checked; of the verify phase, the
    target, the files to verify and which are verified, and the call sites."""
    instance = CallbackSearch(**SMOKE).generate(0)
    policy = instance.reference_policy()
    replies = [policy.act(messages, instance.tools)["content"] for messages in unmanaged_requests(instance)]
    searching = [r for r in replies if "Search phase: reading candidate" in r]
    verifying = [r for r in replies if "Verify phase: reading" in r]
    assert searching and verifying
    for replies_of_phase, heads in ((searching, ("Candidates: ", "Candidates checked: ")),
                                    (verifying, ("TARGET: ", "To verify: ", "Verified so far: ", "Call sites so far: "))):
        for text in replies_of_phase:
            starts = [line.split(": ", 1)[0] + ": " for line in text.splitlines()]
            assert all(head in starts for head in heads), text


def test_a_lost_listing_is_not_rerun():
    """A read of the search is visible but neither the listing nor any note: grep again, do not list again."""
    instance = CallbackSearch(**SMOKE).generate(0)
    policy = instance.reference_policy()
    path = sorted(instance.files)[0]
    read = instance.call("read_file", {"path": path}).content
    messages = [*_head(instance), reply("", {**make_call("read_file", path=path), "id": "c1"}),
                {"role": "tool", "tool_call_id": "c1", "content": read}]
    assert _names(policy.act(messages, instance.tools)) == ["grep"]


@pytest.mark.parametrize("budget", [8_000, 25_000])
def test_notes_over_headtail_find_and_verify_without_thrashing(tmp_path, budget):
    from strategies.headtail import HeadTail
    from strategies.notes import Notes
    from tests.family_helpers import run

    row, _ = run(tmp_path, CallbackSearch(), seed=0, strategy=Notes(base=HeadTail()), budget=budget, max_steps=60)
    assert row["outcome"] == "submitted" and row["success"], row["grade_detail"]
    assert row["rereads"] == 0, "nothing is read twice"

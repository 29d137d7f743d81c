import pytest

from tasks.base import KnobError
from tasks.callback_search import CallbackSearch
from tests.family_helpers import run_reference

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

import ast

import pytest

from strategies.headtail import HeadTail
from tasks.base import KnobError
from tasks.code_review import HELPERS, CodeReview, detect
from tests.family_helpers import run

SMOKE = dict(files=8, bugs=3)


def test_generation_is_byte_identical_per_seed_and_differs_across_seeds():
    family = CodeReview(**SMOKE)
    assert family.generate(3).fingerprint() == family.generate(3).fingerprint()
    assert family.generate(3).fingerprint() != family.generate(4).fingerprint()


def test_repository_is_valid_python_with_the_planted_bugs():
    instance = CodeReview().generate(0)
    assert len(instance.files) == 44 and len(instance.bugs) == 6
    assert len({b.kind for b in instance.bugs}) == 6 and instance.bugs
    assert "wrong_arg_order" in {b.kind for b in instance.bugs}
    for text in instance.files.values():
        ast.parse(text)
    signatures = {n: p for m in HELPERS for n, p, _ in HELPERS[m]}
    found = {(p, f) for p, t in instance.files.items() for f, _ in detect(t, signatures)}
    assert found == {(b.file, b.function) for b in instance.bugs}
    # the cross-file bug is invisible without the helper's definition
    blind = {(p, f) for p, t in instance.files.items() for f, _ in detect(t, {})}
    assert blind < found


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("knobs", [SMOKE, {}])
def test_reference_agent_succeeds_unmanaged(tmp_path, seed, knobs):
    row, instance = run(tmp_path, CodeReview(**knobs), seed)
    assert row["outcome"] == "submitted" and row["success"] and row["score"] == 1.0
    assert row["rereads"] == 0 and row["file_coverage"] == 1.0
    assert row["files_total"] == len(instance.files)


def test_grading():
    instance = CodeReview(**SMOKE).generate(0)
    truth = [{"file": b.file, "function": b.function} for b in instance.bugs]
    assert instance.grade({"findings": truth}).success
    empty = instance.grade({"findings": []})
    assert not empty.success and empty.score == 0
    wrong = instance.grade({"findings": truth[:-1] + [{"file": truth[0]["file"], "function": "serialize_x"}]})
    assert not wrong.success and 0 < wrong.score < 1
    assert not instance.grade({}).success and not instance.grade({"findings": "x"}).success


@pytest.mark.parametrize("name,args", [("read_file", {}), ("read_file", {"path": "nope.py"}), ("read_file", {"path": 3}),
                                       ("grep", {"pattern": "("}), ("grep", {}), ("nope", {})])
def test_bad_arguments_are_tool_errors(name, args):
    result = CodeReview(**SMOKE).generate(0).call(name, args)
    assert result.is_error and result.content.startswith("ERROR")


def test_tools_have_resources_and_grep_caps_output():
    instance = CodeReview().generate(0)
    path = next(iter(instance.files))
    assert instance.call("read_file", {"path": path}).resource == f"file:{path}"
    assert instance.call("list_files", {}).resource == "listing"
    many = instance.call("grep", {"pattern": "def "})
    assert "more matching lines not shown" in many.content and len(many.content.splitlines()) <= 62


@pytest.mark.parametrize("knobs", [dict(files=3), dict(files=10, bugs=0), dict(files=10, bugs=8), dict(files=500)])
def test_knobs_out_of_range(knobs):
    with pytest.raises(KnobError):
        CodeReview(**knobs)


def test_headtail_tight_budget_costs_rereads(tmp_path):
    row, _ = run(tmp_path, CodeReview(files=16, bugs=4), 0, strategy=HeadTail(), budget=6_000)
    assert row["reread_rate"] > 0 and row["compactions"] > 0
    assert row["outcome"] == "submitted"


def test_summary_keeps_findings_and_progress_but_not_file_texts():
    instance = CodeReview(**SMOKE).generate(0)
    policy = instance.reference_policy()
    path = next(iter(instance.files))
    history = (f"[user]: {instance.user_prompt}\n[tool_call] list_files {{}}\n[tool list_files]: {instance.listing()}\n"
               f"[assistant]: Reviewed {path}: clean\nFindings so far: none\nProgress: last reviewed: {path} (1 of 8 files)")
    summary = policy.summarize(history)
    assert f"last reviewed: {path}" in summary and "remaining files: " in summary and "def " not in summary


def test_the_clean_off_by_one_template_is_correct_in_its_own_context():
    """Issue 13 §3: a clean function that skips row 0 must say why (raw csv.reader rows, header first) and
    do what its docstring says; it must not read objects' ``.quantity`` (the case reviewers called a real bug)."""
    import csv
    import io
    import random

    from tasks.code_review import _t_off_by_one

    name, lines = _t_off_by_one(random.Random(0), "reply", "clean")
    source = "\n".join(lines)
    assert ".quantity" not in source and "header" in lines[1]
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102 - generated template code, run on a CSV it documents
    rows = list(csv.reader(io.StringIO("id,name,quantity\n1,a,3\n2,b,4\n")))
    assert namespace[name](rows) == 7, "sums every record's quantity, the header skipped"

import ast
import re
from datetime import date
from decimal import Decimal

import pytest

from reference_agent.policies import reference_policy
from reference_agent.policies.code_review_patterns import detect
from strategies.headtail import HeadTail
from tasks.base import KnobError
from tasks.code_review import HELPERS, CodeReview
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
    assert found == {(b.file, b.function) for b in instance.bugs + instance.other_bugs}
    # the cross-file bug is invisible without the helper's definition
    blind = {(p, f) for p, t in instance.files.items() for f, _ in detect(t, {})}
    assert blind < found


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("knobs", [SMOKE, {}])
def test_reference_agent_succeeds_unmanaged(tmp_path, seed, knobs):
    row, instance = run(tmp_path, CodeReview(**knobs), seed)
    assert row["outcome"] == "submitted" and row["success"] and row["score"] == 1.0
    # no file twice; at default size it searches first and reads the candidates only (the calibration LLM read 10
    # of 41), at smoke size (8 files) it reads every in-scope file, as the smoke LLM did
    assert row["rereads"] == 0 and 0 < row["file_coverage"] <= 1.0
    if not knobs:  # at default size the candidates are a minority of the 41 files in scope
        assert row["file_coverage"] < 0.75
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


@pytest.mark.parametrize(
    "name,args",
    [
        ("read_file", {}),
        ("read_file", {"path": "nope.py"}),
        ("read_file", {"path": 3}),
        ("grep", {"pattern": "("}),
        ("grep", {}),
        ("nope", {}),
    ],
)
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


def test_the_ledger_survives_a_tight_headtail_budget(tmp_path):
    """Every reply restates the whole ledger, and headtail keeps the newest round: cuts cost no success."""
    row, _ = run(tmp_path, CodeReview(files=16, bugs=4), 0, strategy=HeadTail(), budget=6_000)
    assert row["compactions"] > 0 and row["outcome"] == "submitted" and row["success"]


@pytest.mark.parametrize(
    ("strategy", "budget", "figures"),
    [(None, 10_000_000, (4, 17_925, 0)), (HeadTail(min_recent_rounds=1), 3_000, (8, 22_288, 10))],
    ids=["none", "headtail-3k"],
)
def test_a_small_repository_is_read_whole_and_cut_helpers_are_read_again(tmp_path, strategy, budget, figures):
    """The smoke calibration cells (calibration/code_review__{none__1M,headtail__3k}__smoke, LLM 4 steps / 17,041
    tokens and 11 / 30,573): list and grep, read the four service files, then the helper modules, submit at step 4;
    under headtail at 3k the ledger keeps no signatures, so a file whose helper calls were unchecked when the
    modules were cut is read again together with them, and the bug categories are re-grepped before submitting."""
    from reference_agent.scripted import ScriptedModel
    from tests.family_helpers import run_reference

    instance = CodeReview(**SMOKE).generate(0)
    model = ScriptedModel(profile="realistic", context_window=10_000_000)
    row = run_reference(tmp_path, instance, strategy=strategy, budget=budget, model=model)
    assert (row["steps"], row["input_tokens"], row["rereads"]) == figures
    assert row["score"] == 1.0 and row["files_read"] == 7  # every in-scope file, app/support/ never


def test_summary_keeps_findings_and_progress_but_not_file_texts():
    instance = CodeReview(**SMOKE).generate(0)
    policy = reference_policy(instance)
    path = next(iter(instance.files))
    history = (
        f"[user]: {instance.user_prompt}\n[tool_call] list_files {{}}\n[tool list_files]: {instance.listing()}\n"
        f"[assistant]: Reviewed {path}: clean\nFindings so far: none\nProgress: last reviewed: {path} (1 of 8 files)"
    )
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


# --- issue 13 §3: every bug and decoy template, checked by running it (tasks/README.md, "code_review rules") ---


def _helper_namespace() -> dict:
    """The three shared helper modules, executed: helper name -> function."""
    from tasks.code_review import _helper_module

    namespace: dict = {}
    for path in HELPERS:
        exec(_helper_module(path), namespace)  # noqa: S102 - the generated helper modules
    return namespace


class _Handle:
    """A file handle that records whether it was closed (probe of ``load_*_fixture``)."""

    def __init__(self, registry):
        self.closed = False
        registry.append(self)

    def read(self, *args):
        return '{"records": [1, 2]}'

    def close(self):
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _Conn:
    """A DB connection whose cursor records each execute (probe of ``find_*s_by_owner``)."""

    def __init__(self):
        self.executed = []

    def cursor(self):
        return self

    def execute(self, sql, params=()):
        self.executed.append((sql, params))

    def fetchall(self):
        return []


def _obj(**fields):
    from types import SimpleNamespace

    return SimpleNamespace(**fields)


# helper -> (arguments in the helper's own order, expected result): a call with the first two swapped differs
HELPER_PROBES = {
    "scale_amount": ((-5, 2), Decimal("-10.00")),
    "apply_discount": ((200, 10), Decimal("180.00")),
    "split_total": ((10, 3), [Decimal("3.33"), Decimal("3.33"), Decimal("3.34")]),
    "days_between": ((date(2024, 1, 1), date(2024, 1, 11)), 10),
    "shift_date": ((date(2024, 1, 5), 1), date(2024, 1, 8)),
    "clamp_window": ((0, 12, 10), 10),
    "pad_label": (("ab", 4), "ab  "),
    "truncate_text": (("alpha beta gamma", 12), "alpha beta\u2026"),
    "join_fields": ((["a", "b"], ","), "a,b"),
}


def _behaves(name: str, fn, source: str) -> bool | None:
    """Whether a template function does what its docstring says (None: not a bug or decoy template)."""
    import csv
    import inspect
    import io

    params = list(inspect.signature(fn).parameters)
    try:
        if re.fullmatch(r"total_\w+_quantity", name):
            if params[0] == "rows":  # the documented raw csv.reader rows, header first
                return fn(list(csv.reader(io.StringIO("id,name,quantity\n1,a,3\n2,b,4\n")))) == 7
            return fn([_obj(quantity=2), _obj(quantity=3)]) == 5
        if re.fullmatch(r"\w+_path_prefixes", name):
            return fn(["a", "b"]) == [(), ("a",), ("a", "b")]
        if re.fullmatch(r"is_\w+_expired", name):
            return fn(_obj(expires_at=10), 5) is False and fn(_obj(expires_at=10), 15) is True and fn(None, 0) is True
        if re.fullmatch(r"is_\w+_valid", name):
            return fn(_obj(expires_at=10), 5) is True and fn(_obj(expires_at=10), 15) is False and fn(None, 0) is False
        if re.fullmatch(r"collect_\w+_tags", name):
            fn(_obj(tags=["x"]))
            return fn(_obj(tags=["y"])) == ["y"] and fn(_obj(tags=["x", "x"]), ["z"]) == ["z", "x"]
        if re.fullmatch(r"format_\w+_row", name):
            default = inspect.signature(fn).parameters[params[1]].default
            return isinstance(default, tuple) and fn(_obj(id=1, status="a", updated_at="t")) == "1,a,t"
        if re.fullmatch(r"load_\w+_fixture", name):
            handles: list = []
            fn.__globals__["open"] = lambda *a, **k: _Handle(handles)
            return fn("fixture.json") == [1, 2] and all(h.closed for h in handles)
        if re.fullmatch(r"find_\w+s_by_owner", name):
            conn = _Conn()
            fn(conn, "1 OR 1=1")
            return all("1 OR 1=1" not in sql and "1 OR 1=1" in params for sql, params in conn.executed)
        if re.fullmatch(r"average_\w+_value", name):
            return fn([]) == 0 and fn([_obj(value=2), _obj(value=4)]) == 3
        if re.fullmatch(r"(prepare|compute|derive|resolve)_\w+", name):
            helper = next(h for h in HELPER_PROBES if h in source.split("result = ")[1])
            args, expected = HELPER_PROBES[helper]
            return fn(*args) == expected
    except Exception:  # noqa: BLE001 - a template that raises on documented input misbehaves
        return False
    return None


def _template_verdicts(text: str, helpers: dict) -> dict[str, bool]:
    """Every bug/decoy template function of a generated module -> whether it behaves as documented."""
    import json
    import logging

    verdicts = {}
    for node in ast.parse(text).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        namespace = {**helpers, "log": logging.getLogger("probe"), "json": json, "TABLE": "t_items"}
        source = ast.get_source_segment(text, node)
        exec(source, namespace)  # noqa: S102 - one generated function
        verdict = _behaves(node.name, namespace[node.name], source)
        if verdict is not None:
            verdicts[node.name] = verdict
    return verdicts


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_every_template_misbehaves_exactly_where_a_bug_is_planted_over_many_seeds():
    """Issue 13 §3, for every template at once: over 25 repositories, each bug and decoy template function is
    run on the input its docstring describes. The planted bugs misbehave; every decoy and clean variant does
    what its docstring, argument names and types say (so an expert reading it in context agrees it is right)."""
    helpers = _helper_namespace()
    seen_kinds: set[str] = set()
    for seed in range(25):
        instance = CodeReview().generate(seed)
        planted = {(b.file, b.function) for b in instance.bugs + instance.other_bugs}
        seen_kinds |= {b.kind for b in instance.bugs}
        for path, text in instance.files.items():
            if path in HELPERS:
                continue
            for name, ok in _template_verdicts(text, helpers).items():
                assert ok == ((path, name) not in planted), (seed, path, name, ok)
    assert seen_kinds == {
        "wrong_arg_order",
        "off_by_one",
        "inverted_comparison",
        "mutable_default",
        "resource_leak",
        "sql_injection",
        "zero_division",
    }


@pytest.mark.parametrize("variant", ["bug", "decoy", "clean"])
def test_each_template_rule_holds_for_every_noun(variant):
    """One rule per template (tasks/README.md): the bug variant misbehaves on documented input, the decoy and
    clean variants behave, for every noun of every domain (and every helper for the cross-file template)."""
    import random

    from tasks.code_review import BUG_TEMPLATES, DOMAINS, _t_call

    helpers = _helper_namespace()
    nouns = sorted({n for ns in DOMAINS.values() for n in ns})
    for noun in nouns:
        blocks = [template(random.Random(noun), noun, variant) for template in BUG_TEMPLATES.values()]
        blocks += [
            _t_call(random.Random(noun), noun, variant, (module, helper))
            for module in HELPERS
            for helper in HELPERS[module]
        ]
        for name, lines in blocks:
            verdicts = _template_verdicts("\n".join(lines) + "\n", helpers)
            assert verdicts == {name: variant != "bug"}, (noun, name, verdicts)


def test_helper_modules_do_what_their_docstrings_say():
    """The shared helpers are correct too (truncate_text keeps within ``limit`` with its ellipsis)."""
    helpers = _helper_namespace()
    for text, limit in [("alpha beta gamma", 12), ("abcdefgh", 4), ("a b", 2), ("word", 10)]:
        assert len(helpers["truncate_text"](text, limit)) <= limit
    for helper, (args, expected) in HELPER_PROBES.items():
        assert helpers[helper](*args) == expected, helper


def test_the_scope_rule_changes_the_answer_over_many_seeds():
    """Issue 13 §3 (an early constraint must change the answer): every instance puts ``other_teams`` domains out
    of scope in its prompt, each with a real planted bug that the answer excludes; reporting it fails."""
    for seed in range(40):
        instance = CodeReview().generate(seed)
        assert len(instance.out_of_scope) == 1 and f"files under {instance.out_of_scope[0]}" in instance.user_prompt
        assert len(instance.other_bugs) == 1 and instance.other_bugs[0].file.startswith(instance.out_of_scope)
        assert not any(b.file.startswith(instance.out_of_scope) for b in instance.bugs)
        truth = [{"file": b.file, "function": b.function} for b in instance.bugs]
        extra = [{"file": b.file, "function": b.function} for b in instance.other_bugs]
        assert instance.grade({"findings": truth}).success and not instance.grade({"findings": truth + extra}).success
    assert not CodeReview(other_teams=0).generate(0).out_of_scope


def test_without_the_task_statement_the_reviewer_reports_out_of_scope_bugs():
    """The scope is stated once, in the task: a policy that no longer sees it reviews every listed file."""
    from tasks.code_review import SCOPE

    instance = CodeReview(**SMOKE).generate(0)
    assert SCOPE.search(instance.user_prompt)
    policy = reference_policy(instance)
    listing = instance.call("list_files", {}).content
    with_task = policy._state([listing], [instance.user_prompt])[1]
    without = policy._state([listing], [])[1]
    assert set(without) - set(with_task) == {p for p in instance.files if p.startswith(instance.out_of_scope)}


def test_a_summary_s_remaining_files_are_filtered_by_the_visible_scope():
    """A summary written without the task lists every remaining file; with the task in view (the head) the
    reviewer still skips the out-of-scope ones."""
    instance = CodeReview().generate(0)
    policy = reference_policy(instance)
    listed = list(instance.files)
    summary = f"Progress: last reviewed: {listed[0]}; remaining files: {', '.join(listed[1:])}"
    order = policy._state([], [instance.user_prompt, summary])[1]
    assert order and not any(p.startswith(instance.out_of_scope) for p in order)

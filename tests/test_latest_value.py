"""``latest_value``: generation, the grader, the tool's errors, the archive, and the reference agent."""

import pytest

from strategies.sliding_window import SlidingWindow
from tasks.base import KnobError
from tasks.latest_value import LatestValue
from tasks.latest_value.world import ADOPT_PATTERNS, COPY_PATTERNS, DIRECT_PATTERNS, REVERT_PATTERNS, render_message
from tests.family_helpers import run_reference

SMOKE = dict(shipments=3, pages=4, messages_per_page=4, updates_per_page=2, retention=1, asked=4, attachment_lines=3)


def answer_of(instance, values=None):
    """A submission of ``values`` (default: the expected ones) for the asked pairs."""
    values = values or instance.expected
    return {"values": [{"shipment": s, "field": f, "value": v} for (s, f), v in values.items()]}


def test_generation_identical_per_seed_and_differs_across_seeds():
    family = LatestValue(**SMOKE)
    assert family.generate(2).fingerprint() == family.generate(2).fingerprint()
    assert family.generate(2).fingerprint() != family.generate(3).fingerprint()
    assert LatestValue().generate(0).fingerprint() == LatestValue().generate(0).fingerprint()


def test_grader_right_partial_empty_and_malformed():
    instance = LatestValue().generate(0)
    assert instance.grade(answer_of(instance)).success and instance.grade(answer_of(instance)).score == 1.0
    (first, value), *_ = instance.expected.items()
    wrong = {**instance.expected, first: "D99" if first[1] != "pallets" else "999"}
    graded = instance.grade(answer_of(instance, wrong))
    assert not graded.success and graded.score == 0.9 and f"{first[0]} {first[1]}" in graded.detail["wrong"]
    for bad in ({}, {"values": None}, {"values": "x"}, {"values": [1, None, {"shipment": 3}]}, None, []):
        result = instance.grade(bad)  # type: ignore[arg-type]
        assert not result.success and result.score == 0.0
    loose = {
        "values": [
            {"shipment": s.lower(), "field": f.upper(), "value": f" {v} "} for (s, f), v in instance.expected.items()
        ]
    }
    assert instance.grade(loose).success  # case and spacing are not what is graded


@pytest.mark.parametrize(
    "name,args",
    [
        ("read_updates", {"cursor": "cur_0000000000"}),
        ("read_updates", {"cursor": 7}),
        ("read_updates", {"page": 2}),
        ("read_updates", {"cursor": "", "extra": 1}),
        ("nope", {}),
    ],
)
def test_bad_arguments_are_tool_errors(name, args):
    result = LatestValue(**SMOKE).generate(0).call(name, args)
    assert result.is_error and result.content.startswith("ERROR")


def test_pages_come_by_cursor_and_old_pages_are_archived():
    instance = LatestValue(pages=8, retention=2).generate(0)
    cursor, seen = "", []
    for page in range(1, 6):
        result = instance.call("read_updates", {"cursor": cursor})
        assert not result.is_error and result.resource == f"page:{page}"
        seen.append(cursor)
        cursor = result.content.rsplit("next_cursor: ", 1)[1].split()[0]
    assert not instance.call("read_updates", {"cursor": seen[2]}).is_error  # page 3: within the 2 behind page 5
    archived = instance.call("read_updates", {"cursor": seen[0]})  # page 1 is gone for good
    assert archived.is_error and "archived" in archived.content
    assert instance.trial_metrics([{"name": "read_updates", "args": {"cursor": seen[0]}, "is_error": True}]) == {
        "archived_reads": 1
    }


@pytest.mark.parametrize("seed", range(20))
def test_rule_every_change_line_matches_one_template_and_filler_none(seed):
    instance = LatestValue().generate(seed)
    patterns = [p for _, p in DIRECT_PATTERNS] + COPY_PATTERNS + REVERT_PATTERNS + ADOPT_PATTERNS
    changes = sum(1 for m in instance.channel.messages if any(p.match(m.text) for p in patterns))
    assert changes == 18 * 3  # every update slot of the middle pages, and no filler line
    assert all(sum(1 for p in patterns if p.match(m.text)) <= 1 for m in instance.channel.messages)


@pytest.mark.parametrize("seed", range(20))
def test_rule_a_withdrawal_restores_a_stated_value_that_never_changes_again(seed):
    instance = LatestValue().generate(seed)
    messages = {m.id: m for m in instance.channel.messages}
    assert instance.channel.reverts, "every default instance has withdrawals"
    deep = 0
    for withdrawal, shipment, name, restored, page in instance.channel.reverts:
        text = render_message(messages[restored])
        assert shipment in text and messages[restored].page == page
        later = [m for m in instance.channel.messages if m.id > withdrawal and shipment in m.text and m.text != ""]
        assert not any(p.match(m.text) and n == name for m in later for n, p in DIRECT_PATTERNS)
        deep += page < messages[withdrawal].page - 3
    assert deep, "the mechanism is exercised: a withdrawal restores a value from an archived page"
    asked = set(instance.expected)
    settled = {(r[1], r[2]) for r in instance.channel.reverts} | {(a[1], a[2]) for a in instance.channel.adoptions}
    assert len(asked & settled) >= min(len(settled), 2 * len(asked) // 3), "settled fields are asked first"


def test_knobs_are_checked():
    with pytest.raises(KnobError):
        LatestValue(updates_per_page=8, messages_per_page=8)
    with pytest.raises(KnobError):
        LatestValue(shipments=2, asked=9)


@pytest.mark.parametrize("knobs,seeds", [(SMOKE, [0, 1, 2]), ({}, [0])])
def test_reference_agent_succeeds_unmanaged(tmp_path, knobs, seeds):
    for seed in seeds:
        instance = LatestValue(**knobs).generate(seed)
        row = run_reference(tmp_path / str(seed), instance)
        assert row["outcome"] == "submitted" and row["success"], row["grade_detail"]


def test_sliding_window_loses_values_settled_by_an_archived_message(tmp_path):
    instance = LatestValue().generate(0)
    row = run_reference(tmp_path, instance, strategy=SlidingWindow(), budget=8_000)
    assert row["outcome"] == "submitted" and not row["success"]
    wrong = row["grade_detail"]["wrong"]
    settled = {f"{s} {f}" for _, s, f, _, _ in [*instance.channel.reverts, *instance.channel.adoptions]}
    assert wrong and set(wrong) <= settled  # only withdrawals and adoptions went wrong: their page was archived


@pytest.mark.parametrize("seed", range(20))
def test_rule_an_adoption_names_an_archived_proposal_whose_value_then_stands(seed):
    instance = LatestValue().generate(seed)
    messages = {m.id: m for m in instance.channel.messages}
    assert instance.channel.adoptions, "every default instance adopts proposals"
    for adoption, shipment, name, proposal, page in instance.channel.adoptions:
        text = messages[proposal].text
        assert shipment in text and messages[proposal].page == page
        assert page < messages[adoption].page - instance_retention(), "the proposal's page is archived by then"
        assert not any(p.match(text) for p in ADOPT_PATTERNS + REVERT_PATTERNS), "a proposal is filler"
        later = [m for m in instance.channel.messages if m.id > adoption and shipment in m.text]
        assert not any(p.match(m.text) and n == name for m in later for n, p in DIRECT_PATTERNS)
        value = instance.channel.final[(shipment, name)]
        assert value in text.replace(" pallets", ""), "the adopted value is the one the proposal states"
    adopted = {(a[1], a[2]) for a in instance.channel.adoptions}
    assert adopted & set(instance.expected), "an adopted field is asked"


def instance_retention() -> int:
    return LatestValue().retention

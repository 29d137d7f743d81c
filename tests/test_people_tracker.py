import pytest

from strategies.headtail import HeadTail
from tasks.base import KnobError
from tasks.people_tracker import PeopleTracker, page_moves
from tests.family_helpers import run

SMOKE = dict(people=2, moves=2, roundups=1, noise=3)


def test_generation_is_byte_identical_per_seed_and_differs_across_seeds():
    family = PeopleTracker(**SMOKE)
    assert family.generate(3).fingerprint() == family.generate(3).fingerprint()
    assert family.generate(3).fingerprint() != family.generate(4).fingerprint()


def test_every_move_is_findable_and_distractors_are_not_moves():
    instance = PeopleTracker().generate(0)
    people = set(instance.names)
    stated = set()
    for page in instance.pages.values():
        stated |= page_moves(page.body, people)
    assert stated == {(m.person, m.month, m.to) for m in instance.moves}
    assert any("denied" in p.body for p in instance.pages.values())
    assert any(not set(p.names) & people for p in instance.pages.values())  # similar names


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("knobs", [SMOKE, {}])
def test_reference_agent_succeeds_unmanaged(tmp_path, seed, knobs):
    row, _ = run(tmp_path, PeopleTracker(**knobs), seed)
    assert row["outcome"] == "submitted" and row["success"] and row["score"] == 1.0


def test_grading():
    instance = PeopleTracker().generate(0)
    truth = [{"person": m.person, "month": m.month, "company": m.to} for m in instance.moves]
    assert instance.grade({"moves": truth}).success
    assert instance.grade({"moves": [{k: v.upper() if k != "month" else v for k, v in t.items()} for t in truth]}).success
    empty = instance.grade({"moves": []})
    assert not empty.success and empty.score == 0
    no_dates = instance.grade({"moves": [{**t, "month": ""} for t in truth]})
    assert not no_dates.success and no_dates.score == 0
    left_not_joined = instance.grade({"moves": [{**t, "company": m.frm} for t, m in zip(truth, instance.moves)]})
    assert not left_not_joined.success
    partial = instance.grade({"moves": truth[1:]})
    assert not partial.success and 0 < partial.score < 1


@pytest.mark.parametrize("name,args", [("search", {}), ("search", {"query": "  "}), ("open_page", {}),
                                       ("open_page", {"url": "https://nope.example/x"}), ("x", {})])
def test_bad_arguments_are_tool_errors(name, args):
    result = PeopleTracker(**SMOKE).generate(0).call(name, args)
    assert result.is_error and result.content.startswith("ERROR")


def test_resources():
    instance = PeopleTracker(**SMOKE).generate(0)
    result = instance.call("search", {"query": instance.names[0]})
    assert result.resource.startswith("search:") and "https://" in result.content
    url = next(iter(instance.pages))
    assert instance.call("open_page", {"url": url}).resource == url


@pytest.mark.parametrize("knobs", [dict(people=0), dict(people=19), dict(moves=0), dict(roundups=7), dict(noise=-1)])
def test_knobs_out_of_range(knobs):
    with pytest.raises(KnobError):
        PeopleTracker(**knobs)


class ForgetFacts:
    """Clears every page but the latest and strips the moves from the agent's notes (keeps its progress line),
    like a summary that kept "what was done" but dropped the dates and companies."""

    def prepare(self, messages):
        pages = [m for m in messages if m.get("role") == "tool" and m.get("_tool") == "open_page"]
        out = []
        for m in messages:
            if m.get("role") == "tool" and m.get("_tool") == "open_page" and m is not pages[-1]:
                m = {**m, "content": "[cleared]"}
            elif m.get("role") == "assistant" and m.get("content"):
                kept = [line for line in m["content"].splitlines() if line.startswith("Progress:")]
                m = {**m, "content": "\n".join(kept)}
            out.append(m)
        return out


def test_summary_keeps_noted_moves_with_dates():
    instance = PeopleTracker(**SMOKE).generate(0)
    policy = instance.reference_policy()
    m = instance.moves[0]
    history = (f"[user]: {instance.user_prompt}\n[assistant]: Notes on https://x.example/a: {m.person} {m.month} {m.to}\n"
               f"Moves so far: {m.person} {m.month} {m.to}\nProgress: done: none; current: {m.person}; opened: "
               f"https://x.example/a; remaining: none")
    summary = policy.summarize(history)
    assert f"{m.person} {m.month} {m.to}" in summary and f"current: {m.person}" in summary


def test_context_faithful_agent_loses_what_it_cannot_see(tmp_path):
    row, _ = run(tmp_path, PeopleTracker(**SMOKE), 0, strategy=ForgetFacts())
    assert row["outcome"] == "submitted" and not row["success"] and row["score"] < 1


def test_headtail_tight_budget_rereads(tmp_path):
    row, _ = run(tmp_path, PeopleTracker(people=3), 0, strategy=HeadTail(), budget=5_000)
    assert row["outcome"] == "submitted" and row["rereads"] > 0

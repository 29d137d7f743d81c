import pytest

from strategies.sliding_window import SlidingWindow
from tasks.base import KnobError
from tasks.brand_report import BrandReport, negative_counts, shifted_windows
from tests.family_helpers import run

SMOKE = dict(pages=3, posts_per_page=8, weeks=2)


def test_generation_is_byte_identical_per_seed_and_differs_across_seeds():
    family = BrandReport(**SMOKE)
    assert family.generate(3).fingerprint() == family.generate(3).fingerprint()
    assert family.generate(3).fingerprint() != family.generate(4).fingerprint()


def test_window_is_stated_once_and_outside_posts_exist():
    instance = BrandReport().generate(0)
    assert instance.user_prompt.count(instance.start.isoformat()) == 1
    outside = [i for i in instance.items if i.kind == "post" and i.negative
               and not instance.start.isoformat() <= i.when[:10] <= instance.end.isoformat()]
    assert len(outside) > sum(instance.truth.values())
    assert {"ad", "repost", "post"} <= {i.kind for i in instance.items}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("knobs", [SMOKE, {}])
def test_reference_agent_succeeds_unmanaged(tmp_path, seed, knobs):
    row, _ = run(tmp_path, BrandReport(**knobs), seed)
    assert row["outcome"] == "submitted" and row["success"] and row["score"] == 1.0


def test_grading():
    instance = BrandReport().generate(0)
    assert instance.grade({"counts": dict(instance.truth)}).success
    empty = instance.grade({"counts": {}})
    assert not empty.success and empty.score == 0
    brands = list(instance.truth)
    swapped = dict(instance.truth)
    swapped[brands[0]], swapped[brands[1]] = instance.truth[brands[1]] + 1, instance.truth[brands[0]]
    assert not instance.grade({"counts": swapped}).success
    every_week = {b: sum(1 for i in instance.items if i.kind == "post" and b in i.negative) for b in brands}
    wrong = instance.grade({"counts": every_week})
    assert not wrong.success and wrong.score < 0.5
    assert not instance.grade({}).success


@pytest.mark.parametrize("name,args", [("get_posts", {}), ("get_posts", {"page": 0}), ("get_posts", {"page": "x"}),
                                       ("search_posts", {"brand": "Nope"}), ("search_posts", {"brand": 3}), ("x", {})])
def test_bad_arguments_are_tool_errors(name, args):
    result = BrandReport(**SMOKE).generate(0).call(name, args)
    assert result.is_error and result.content.startswith("ERROR")


def test_search_posts_filters_by_brand_and_aliases():
    instance = BrandReport().generate(0)
    brand, aliases = instance.brands[0]
    result = instance.call("search_posts", {"brand": brand.lower(), "page": 1})
    assert not result.is_error and result.resource == f"search:{brand}:1"
    assert instance.call("get_posts", {"page": 2}).resource == "page:2"


@pytest.mark.parametrize("knobs", [dict(pages=0), dict(posts_per_page=2), dict(weeks=0)])
def test_knobs_out_of_range(knobs):
    with pytest.raises(KnobError):
        BrandReport(**knobs)


class ForgetWindow:
    """Keeps everything but strips the date window from the task statement (a lost constraint)."""

    def prepare(self, messages):
        out = list(messages)
        task = out[1]["content"]
        out[1] = {**out[1], "content": task.split(" Count only last week")[0] + " The feed has" + task.split("The feed has")[1]}
        return out


def test_lost_window_makes_the_agent_count_every_date_and_fail(tmp_path):
    row, instance = run(tmp_path, BrandReport(), 0, strategy=ForgetWindow())
    assert row["outcome"] == "submitted" and not row["success"]


def test_sliding_window_that_cuts_task_and_notes_fails(tmp_path):
    row, _ = run(tmp_path, BrandReport(pages=6, posts_per_page=8), 0, strategy=SlidingWindow(max_messages=1))
    assert not row["success"]


@pytest.mark.parametrize("knobs", [{}, dict(pages=10, weeks=2)])
def test_every_window_boundary_changes_the_answer(knobs):
    """A window one day off (either end moved either way, or the whole window moved) gives different counts
    for every seed, so an agent that ignores or misreads the window cannot pass by luck."""
    family = BrandReport(**knobs)
    for seed in range(150):
        instance = family.generate(seed)
        brands = [b for b, _ in instance.brands]
        assert negative_counts(instance.items, brands, instance.start, instance.end) == instance.truth
        for name, (start, end) in shifted_windows(instance.start, instance.end).items():
            assert negative_counts(instance.items, brands, start, end) != instance.truth, (seed, name)


def test_notes_window_knob_keeps_the_task_and_only_changes_the_notes(tmp_path):
    """``notes_window=False`` (preset context_growth): same feed, the notes say "last week", and once a window
    drops the task statement the agent loses the dates and counts every week; the default notes keep them."""
    terse = BrandReport(**SMOKE, notes_window=False)
    assert terse.generate(0).data_fingerprint() == BrandReport(**SMOKE).generate(0).data_fingerprint()
    assert terse.generate(0).id == "brand_report-p3-terse-s0"
    row, _ = run(tmp_path / "full", terse, 0)
    assert row["success"]
    with pytest.raises(KnobError):
        BrandReport(notes_window="no")
    knobs = dict(pages=12, posts_per_page=30)
    dated, _ = run(tmp_path / "dated", BrandReport(**knobs), 0, strategy=SlidingWindow(), budget=6_000)
    lost, instance = run(tmp_path / "lost", BrandReport(**knobs, notes_window=False), 0, strategy=SlidingWindow(),
                         budget=6_000)
    assert not lost["success"]
    assert sum(lost["grade_detail"]["given"].values()) > sum(instance.truth.values())  # every week counted
    assert dated["score"] > lost["score"]

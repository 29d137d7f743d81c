"""Calibration as a ranking benchmark (benchmarks/calibration.py): every recorded run is a cell.

The mechanics run by default (finding the cells, their overrides, the ranking and Kendall's tau);
replaying every cell on the reference agent is what docs/reference_agent.md's generated block holds,
checked by the slow tests/test_docs_reference_agent.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import calibration as cal  # noqa: E402

CELLS = cal.cells()


def test_the_recorded_runs_in_the_repository_are_found_with_their_own_overrides():
    repo = [c for c in CELLS if c.folder.parent == ROOT / "calibration"]
    assert repo, "calibration/ holds the relay recordings"
    for cell in repo:
        assert f"task={cell.family}" in cell.overrides and f"strategy={cell.strategy}" in cell.overrides
        assert not any(o.startswith(("model=", "model.folder", "hydra", "plots")) for o in cell.overrides)
        assert cell.llm["model"] == "relay" and cell.size in ("default", "smoke")


@pytest.mark.skipif(
    not (cal.CALIBRATION / "README.md").exists(), reason="shared/calibration is not beside this checkout"
)
def test_the_shared_runs_are_found_by_name_and_by_readme():
    names = {c.name: c for c in CELLS}
    smoke = names["code_review__headtail__3k__smoke"]
    assert "task.files=8" in smoke.overrides and "max_steps=20" in smoke.overrides and smoke.size == "smoke"
    assert "max_steps=40" in names["code_review__none__1M__default"].overrides
    older = names["call_budget_headtail_2k"]
    assert older.size == "custom" and "task.merchants=4" in older.overrides and "budget=2k" in older.overrides


def test_kendall_tau_and_the_ranking():
    llm = cal.ranking({"none": (1.0, 300.0), "headtail": (1.0, 60.0), "sliding_window": (1.0, 50.0)})
    assert llm == {"sliding_window": 0, "headtail": 1, "none": 2}
    assert cal.kendall_tau(llm, llm) == 1.0
    reverse = {k: 2 - v for k, v in llm.items()}
    assert cal.kendall_tau(llm, reverse) == -1.0
    # success comes first: a failing cheap strategy ranks below a succeeding expensive one
    assert cal.ranking({"a": (0.0, 10.0), "b": (1.0, 1000.0)}) == {"b": 0, "a": 1}


def test_agreement_and_tolerance_of_a_cell():
    cell = cal.Cell(
        Path("x"), "f", "none", "1M", "default", [], llm={"success": True, "steps": 10, "input_tokens": 1000}
    )
    cell.ours = [
        {"success": True, "steps": 14, "input_tokens": 700},
        {"success": False, "steps": 16, "input_tokens": 700},
    ]
    assert cal.agrees(cell) and cal.within(cell)
    cell.ours = [{"success": False, "steps": 16, "input_tokens": 600}] * 2
    assert not cal.agrees(cell) and not cal.within(cell)


def test_tau_b_counts_near_equal_token_counts_as_ties():
    llm = {"none": (1.0, 376.0), "headtail": (1.0, 106.0), "sliding_window": (1.0, 99.0)}
    ours = {"none": (1.0, 444.0), "headtail": (1.0, 81.0), "sliding_window": (1.0, 110.0)}
    assert cal.kendall_tau(cal.ranking(llm), cal.ranking(ours)) == pytest.approx(1 / 3)
    assert cal.kendall_tau_b(llm, ours) == pytest.approx(2 / 6**0.5)  # headtail-sliding tie in the LLM's ranking
    assert cal.kendall_tau_b(llm, llm) == 1.0
    assert cal.order((0.0, 10.0), (1.0, 500.0)) == -1 and cal.order((1.0, 100.0), (1.0, 105.0)) == 0


def test_only_protocol_2_runs_count_and_older_runs_are_listed_apart():
    top = [c for c in CELLS if c.folder.parent == ROOT / "calibration"]
    older = [c for c in CELLS if c.folder.parent == ROOT / "calibration" / "protocol-1"]
    assert top and older, "calibration/ holds protocol-2 runs, calibration/protocol-1/ the older ones"
    assert all(c.protocol == 2 and c.verified and c.counted for c in top)
    assert all(c.protocol == 1 and not c.verified and not c.counted for c in older)
    assert all(not c.verified for c in CELLS if c.folder.parent == cal.CALIBRATION)  # shared/: before the protocol


def test_the_verdict_and_group_table_ignore_unverified_runs():
    def cell(name: str, protocol: int, success: bool) -> cal.Cell:
        made = cal.Cell(
            Path(name), "f", name, "8k", "default", [], llm={"success": success, "steps": 10, "input_tokens": 1000}
        )
        made.protocol = protocol
        made.ours = [{"success": True, "steps": 10, "input_tokens": 1000}]
        return made

    verified = [cell("a", 2, True), cell("b", 2, True)]
    unverified = cell("c", 1, False)  # would disagree on success if it counted
    assert "100% of 2 cells" in cal.verdict(verified + [unverified])
    assert "| f | default | 2 |" in cal.group_table(verified + [unverified])
    assert "no protocol-2 run" in cal.verdict([unverified])
    report = cal.report(verified + [unverified], "realistic", 1)
    assert report.index("Unverified reading") > report.index("success agrees")


def test_the_rerecorded_table_pairs_a_cell_before_and_after():
    old = cal.Cell(
        Path("x"),
        "f",
        "none",
        "1M",
        "default",
        [],
        llm={"success": False, "outcome": "step_limit", "steps": 17, "input_tokens": 565_000},
    )
    new = cal.Cell(
        Path("x"),
        "f",
        "none",
        "1M",
        "default",
        [],
        llm={"success": True, "outcome": "submitted", "steps": 8, "input_tokens": 129_000},
    )
    new.protocol = 2
    assert cal.rerecorded([old, new]) == [(old, new)]
    assert "| x | 17 | 8 | 565,000 | 129,000 | no (step_limit) | yes |" in cal.rerecorded_table([old, new])


def test_a_run_of_another_instance_is_its_own_group(tmp_path):
    """``FAMILY__STRATEGY__BUDGET__SIZE__seedN`` is a cell of instance N, ranked apart from seed 0's cells."""
    seed0 = cal.named_cell(tmp_path / "late_question__none__1M__default")
    seed1 = cal.named_cell(tmp_path / "late_question__headtail__8k__default__seed1")
    assert seed0 is not None and seed1 is not None
    assert (seed0.instance, seed0.group) == ("", ("late_question", "default"))
    assert (seed1.strategy, seed1.budget, seed1.instance) == ("headtail", "8k", "seed1")
    assert seed1.group == ("late_question", "default__seed1")
    assert cal.named_cell(tmp_path / "late_question__none__1M__default__s1") is None

"""Source 002 §2.6.4's replace-vs-append cost model against the prefix-cache simulator.

benchmarks/experiments/status_cost_model.py.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from experiments import status_cost_model as tables  # noqa: E402
from harness.tokens import TokenCounter  # noqa: E402

ALPHA = tables.STATUS_ALPHA


@pytest.mark.parametrize("status,reply,rounds", tables.STATUS_GRID)
def test_the_simulator_agrees_with_the_sources_formula_under_a_kv_cache(status, reply, rounds):
    counter = TokenCounter()
    cost = {
        mode: tables.simulated_cost(tables.status_requests(mode, status, reply, rounds, counter), counter)
        for mode in ("replace", "append")
    }
    formula = ALPHA * status * rounds * (rounds - 1) / 2 - (rounds - 1) * (1 - ALPHA) * reply
    simulated = cost["append"] - cost["replace"]
    assert (simulated < 0) == (formula < 0), "same choice"
    assert abs(simulated - formula) <= 0.1 * abs(formula), (simulated, formula)


def test_without_the_reply_in_cache_replacing_costs_nothing_extra():
    counter = TokenCounter()
    runs = {mode: tables.status_requests(mode, 50, 1000, 10, counter) for mode in ("replace", "append")}
    cost = {mode: tables.simulated_cost(reqs, counter, with_reply=False) for mode, reqs in runs.items()}
    assert cost["replace"] < cost["append"], (
        "the formula would pick append here (R large); a prompt cache picks replace"
    )


def test_the_requests_have_the_sizes_asked_for():
    counter = TokenCounter()
    (replace_first, _), *_ = tables.status_requests("replace", 50, 200, 3, counter)
    assert counter.text(replace_first[-1]["content"]) == 50
    append = tables.status_requests("append", 50, 200, 3, counter)
    assert sum(m["content"].startswith("status") for m in append[-1][0]) == 3
    replace = tables.status_requests("replace", 50, 200, 3, counter)
    assert sum(m["content"].startswith("status") for m in replace[-1][0]) == 1

"""``select_tools`` (source 003 SelectTools) and the harness's ``expose_tools`` hook: what is offered, what a
hidden tool's call gets, and what it does to tokens and to the prefix cache (the tools head the cached prefix)."""

import pytest

from harness.cache_sim import CacheProfile, PrefixCacheSimulator
from harness.conversation import InvalidConversation, check_tool_subset
from harness.tokens import TokenCounter
from strategies.select_tools import SelectTools, rank_tools
from tasks.failure_memory import FailureMemory
from tests.helpers import FakeContext, call
from tests.test_pitfalls import trial


def schema(name, description):
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": {"type": "object", "properties": {}}},
    }


CATALOGUE = [
    schema("read_ticket", "Read a support ticket thread."),
    schema("query_api", "Call the billing REST API (GET)."),
    schema("export_report", "Create a CSV export of a reporting dataset."),
    schema("submit", "Submit your final answer."),
]
TASK = {"role": "user", "content": "Read the support ticket, then export the billing dataset."}


def bound(strategy):
    strategy.bind(FakeContext(100_000, tools=CATALOGUE))
    return strategy


def names(tools):
    return [t["function"]["name"] for t in tools]


def test_rank_is_the_seeds_word_count_with_a_stable_sort():
    ranked = rank_tools("export the reporting dataset", CATALOGUE, min_word=4)
    assert names(ranked)[0] == "export_report", "three of its words occur in the query"
    assert names(rank_tools("nothing relevant", CATALOGUE, min_word=4)) == names(CATALOGUE), "ties keep the order"
    assert names(rank_tools("get the rest", CATALOGUE, min_word=3))[0] == "query_api", "min_word lets short words in"


def test_before_the_first_reply_the_task_chooses():
    strategy = bound(SelectTools(max_tools=1))
    messages = [{"role": "system", "content": "s"}, TASK]
    assert strategy.prepare(messages) == messages, "the history is sent unchanged"
    assert names(strategy.expose_tools(CATALOGUE)) == ["read_ticket", "submit"]


def test_recent_tools_stay_and_the_catalogue_order_is_kept():
    strategy = bound(SelectTools(max_tools=1, keep_recent_rounds=1))
    messages = [
        {"role": "system", "content": "s"},
        TASK,
        {"role": "assistant", "content": "Now call the billing API.", "tool_calls": [call("c1", "export_report")]},
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
    ]
    strategy.prepare(messages)
    assert names(strategy.expose_tools(CATALOGUE)) == ["query_api", "export_report", "submit"]
    assert strategy.ctx.events == [], "the first choice is not a change"
    messages += [
        {"role": "assistant", "content": "Read the ticket thread again.", "tool_calls": [call("c2", "read_ticket")]},
        {"role": "tool", "tool_call_id": "c2", "content": "thread"},
    ]
    strategy.prepare(messages)
    assert names(strategy.expose_tools(CATALOGUE)) == ["read_ticket", "query_api", "submit"], "no word matches: a tie"
    event, data = strategy.ctx.events[-1]
    assert event == "tool_exposure" and data["added"] == ["read_ticket"] and data["removed"] == ["export_report"]


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="select_tools"):
        SelectTools(max_tools=-1)


def test_check_tool_subset_keeps_submit_and_refuses_new_tools():
    check_tool_subset([CATALOGUE[0], CATALOGUE[3]], CATALOGUE)
    with pytest.raises(InvalidConversation, match="submit"):
        check_tool_subset([CATALOGUE[0]], CATALOGUE)
    for bad in ([schema("other", "x"), CATALOGUE[3]], [CATALOGUE[3], CATALOGUE[3]]):
        with pytest.raises(InvalidConversation, match="expose_tools"):
            check_tool_subset(bad, CATALOGUE)


def test_the_simulator_counts_the_tools_in_the_cached_prefix():
    counter = TokenCounter()
    messages = [{"role": "system", "content": "You are an agent. " * 200}, TASK]
    profile = CacheProfile("exact", min_tokens=1, block=1, scope="last")
    same = PrefixCacheSimulator(profile, counter)
    same.observe(messages, CATALOGUE)
    assert same.observe(messages, CATALOGUE).cached == counter.tools(CATALOGUE) + counter.messages(messages)
    changed = PrefixCacheSimulator(profile, counter)
    changed.observe(messages, CATALOGUE)
    hit = changed.observe(messages, [CATALOGUE[0], CATALOGUE[3]])
    assert hit.cached < counter.tools(CATALOGUE), "nothing after the first changed tool is served"
    assert hit.lost > counter.messages(messages)


class HidesEverything(SelectTools):
    """Offers submit only: every task call is refused."""

    def expose_tools(self, tools):
        return [t for t in tools if t["function"]["name"] == "submit"]


class DropsSubmit(SelectTools):
    def expose_tools(self, tools):
        return tools[:-1]


FAMILY = FailureMemory(tickets=3, ticket_messages=4, rows=30, page_rows=10)


def test_loop_offers_the_choice_counts_the_saving_and_records_it(tmp_path):
    row, transcript = trial(tmp_path, SelectTools(max_tools=1), family=FAMILY, max_steps=60)
    assert row["outcome"] == "submitted" and row["success"]
    assert row["tool_schema_tokens_saved"] > 0 and row["tool_schema_tokens"] > 0
    events = transcript  # the transcript's events (tests/test_loop.py trial)
    offered = [e["tools_offered"] for e in events if e["event"] == "request"]
    assert all("submit" in o for o in offered) and len({tuple(o) for o in offered}) > 1
    assert any(e["event"] == "strategy" and e["name"] == "tool_exposure" for e in events)
    assert row["cache_breaks"] > 0, "a change of the offered set breaks the cached prefix"


def test_a_call_to_a_hidden_tool_is_refused_and_counted(tmp_path):
    row, transcript = trial(tmp_path, HidesEverything(), family=FAMILY, max_steps=4)
    assert row["unoffered_calls"] >= 1 and row["reads"] == 0, "refused calls are not executed"
    results = [e for e in transcript if e["event"] == "tool"]
    assert results and all(e["is_error"] for e in results)
    bodies = {e["ref"]: e["message"] for e in transcript if e["event"] == "message"}
    assert "is not offered at this step (offered now: submit)" in bodies[results[0]["ref"]]["content"]


def test_a_strategy_that_hides_submit_ends_the_trial(tmp_path):
    row, _ = trial(tmp_path, DropsSubmit(), family=FAMILY, max_steps=4)
    assert row["outcome"] == "strategy_error" and "submit" in row["error"]


def test_without_the_hook_nothing_is_saved_or_refused(tmp_path):
    from strategies.none import NoManagement

    row, _ = trial(tmp_path, NoManagement(), family=FAMILY, max_steps=60)
    assert row["tool_schema_tokens_saved"] == 0 and row["unoffered_calls"] == 0 and row["tool_schema_tokens"] > 0

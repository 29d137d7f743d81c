"""The prefix-cache simulator on hand-built request sequences."""

import json

from harness.cache_sim import PROFILES, CacheProfile, PrefixCacheSimulator, get_profile
from harness.tokens import MESSAGE_OVERHEAD, TokenCounter
from tests.helpers import history

EXACT = CacheProfile("exact", min_tokens=1, block=1)
TOOLS = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]


def requests(messages, start=3):
    """The requests an unmanaged agent sends: each round appended to the previous request."""
    return [messages[:n] for n in range(start, len(messages) + 1, 2)]


def test_profile_rounding():
    openai = PROFILES["openai"]
    assert openai.round(1023) == 0 and openai.round(1024) == 1024 and openai.round(1300) == 1280
    assert PROFILES["deepseek"].round(63) == 0 and PROFILES["deepseek"].round(130) == 128
    assert PROFILES["none"].round(10_000) == 0
    assert get_profile({"name": "openai", "min_tokens": 0}).block == 128


def test_timestamp_at_the_head_of_the_system_prompt_gives_no_hits():
    counter = TokenCounter()
    sim = PrefixCacheSimulator(PROFILES["openai"], counter)
    body = history(rounds=4, size=400)
    results = []
    for step, request in enumerate(requests(body)):
        system = {"role": "system", "content": f"2025-01-0{step + 1}T10:00:0{step}Z {'x ' * 50}"}
        results.append(sim.observe([system, *request[1:]], TOOLS))
    # the tool schemas come first and are below the 1,024-token minimum, so nothing is served
    assert [r.cached for r in results] == [0] * len(results)
    # even a token-exact cache serves only the role and the first digits of the date
    counter = TokenCounter()
    exact = PrefixCacheSimulator(EXACT, counter)
    rules = " ".join(f"rule{k}" for k in range(500))
    stamped = [
        exact.observe([{"role": "system", "content": f"{t}Z {rules}"}, {"role": "user", "content": "u"}])
        for t in ("2025-01-01T10:00:00", "2025-01-02T11:30:00")
    ]
    assert stamped[1].prefix <= MESSAGE_OVERHEAD + counter.text("system") + counter.text("2025-01-0")
    assert counter.text(rules) > 500


def test_append_only_history_gives_growing_hits_and_loses_nothing():
    counter = TokenCounter()
    sim = PrefixCacheSimulator(PROFILES["openai"], counter)
    body = history(rounds=8, size=400)
    results = [sim.observe(request, TOOLS) for request in requests(body)]
    cached = [r.cached for r in results]
    assert cached[0] == 0 and cached == sorted(cached) and cached[-1] > 0
    for request, result in zip(requests(body)[:-1], results[1:], strict=False):
        previous = counter.tools(TOOLS) + counter.messages(request)
        assert result.prefix == previous and result.cached == previous // 128 * 128 * (previous >= 1024)
        assert result.lost == 0


def test_cleared_tool_result_loses_exactly_the_tail_after_it():
    counter = TokenCounter()
    sim = PrefixCacheSimulator(EXACT, counter)
    body = history(rounds=6, size=300)
    first = body[:-2]
    sim.observe(first, TOOLS)
    cleared_at = 5  # the second tool result
    assert first[cleared_at]["role"] == "tool"
    cleared = {**first[cleared_at], "content": "[cleared: re-read f1_0.py if needed]"}
    second = [*first[:cleared_at], cleared, *first[cleared_at + 1 :], *body[-2:]]
    result = sim.observe(second, TOOLS)
    head = counter.tools(TOOLS) + counter.messages(first[:cleared_at])
    tail = counter.messages(first[cleared_at:])
    role_header = MESSAGE_OVERHEAD + counter.text("tool")  # the cleared message still starts like a tool message
    assert result.prefix == head + role_header
    assert result.lost == tail - role_header


def test_matches_any_earlier_request_not_only_the_previous():
    counter = TokenCounter()
    sim = PrefixCacheSimulator(EXACT, counter)
    body = history(rounds=4, size=200)
    sim.observe(body, TOOLS)
    sim.observe([body[0], {"role": "user", "content": "something else entirely"}], TOOLS)
    again = sim.observe(body, TOOLS)
    assert again.prefix == counter.tools(TOOLS) + counter.messages(body)
    last_only = PrefixCacheSimulator(CacheProfile("slot", 1, 1, scope="last"), TokenCounter())
    last_only.observe(body, TOOLS)
    last_only.observe([body[0], {"role": "user", "content": "something else entirely"}], TOOLS)
    assert last_only.observe(body, TOOLS).prefix < again.prefix


def test_only_the_first_differing_message_is_tokenized():
    counter = TokenCounter()
    sim = PrefixCacheSimulator(EXACT, counter)
    body = history(rounds=30, size=300)
    for request in requests(body):
        sim.observe(request, TOOLS)
    request = [*body, {"role": "user", "content": "next"}]
    counter.request(request, TOOLS)  # the loop has counted the request already
    before = counter.encoded_chars
    sim.observe(request, TOOLS)
    new = counter.encoded_chars - before
    assert new < 50, new  # at most the first differing message, never the 30 rounds of history


def test_private_keys_do_not_change_the_key():
    sim = PrefixCacheSimulator(EXACT, TokenCounter())
    body = history(rounds=2, size=50)
    sim.observe(body, TOOLS)
    relabeled = [{**m, "_step": 99} for m in body]
    assert sim.observe(relabeled, TOOLS).prefix == sim.observe(body, TOOLS).prefix
    assert json.dumps(body[0])  # unchanged


def test_loop_records_simulated_cache_and_attributes_breaks(tmp_path):
    from harness.records import read_jsonl
    from strategies.headtail import HeadTail
    from strategies.none import NoManagement
    from tasks.invoice_audit import InvoiceAudit
    from tests.test_loop import trial

    family = InvoiceAudit(pages=12, invoices_per_page=10, duplicates=3, max_distance=8)
    row, _ = trial(tmp_path / "none", NoManagement(), family=family)
    steps = read_jsonl(tmp_path / "none" / "steps.jsonl")
    assert row["cached_source"] == "simulated" and row["cache_profile"] == "openai"
    assert [s["cached_tokens"] for s in steps] == [s["sim_cached_tokens"] for s in steps]
    assert row["cached_tokens"] == row["sim_cached_tokens"] > 0 and row["cache_breaks"] == 0
    assert all(s["cache_break"] is None for s in steps)

    row, _ = trial(tmp_path / "headtail", HeadTail(), budget=5_000, family=family)
    steps = read_jsonl(tmp_path / "headtail" / "steps.jsonl")
    broken = [s for s in steps if s["cache_lost_tokens"]]
    assert broken and row["cache_breaks"] == len(broken)
    assert all(s["cache_break"] == "compaction" for s in broken)
    assert row["cache_lost_tokens"] == sum(s["cache_lost_tokens"] for s in steps)

    class ClearFirstResultLater:  # rewrites history without logging an event
        def prepare(self, messages):
            if len(messages) < 12:
                return list(messages)
            first = next(i for i, m in enumerate(messages) if m["role"] == "tool")
            return [*messages[:first], {**messages[first], "content": "[cleared]"}, *messages[first + 1 :]]

    row, _ = trial(tmp_path / "clear", ClearFirstResultLater(), family=family)
    steps = read_jsonl(tmp_path / "clear" / "steps.jsonl")
    assert [s["cache_break"] for s in steps if s["cache_lost_tokens"]] == ["strategy rewrite"]


def test_llamacpp_slot_also_holds_the_reply_as_generated():
    counter = TokenCounter()
    sim = PrefixCacheSimulator(PROFILES["llamacpp"], counter)
    first = [{"role": "system", "content": "rules " * 100}, {"role": "user", "content": "task"}]
    sim.observe(first, TOOLS)
    reply = {"role": "assistant", "content": "thinking out loud " * 20}
    sim.observe_reply(reply)
    nudge = {"role": "user", "content": "use a tool"}
    second = [*first, reply, nudge]
    result = sim.observe(second, TOOLS)
    assert result.prefix == counter.tools(TOOLS) + counter.messages([*first, reply]) and result.lost == 0
    # a tool call parsed from text: the slot holds the raw text, the request the rebuilt message
    parsed = {
        "role": "assistant",
        "content": "",
        "_raw_content": '```json\n{"name": "read", "arguments": {}}\n```',
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{}"}}],
    }
    sim.observe_reply(parsed)
    third = [*second, parsed, {"role": "tool", "tool_call_id": "call_1", "content": "file"}]
    result = sim.observe(third, TOOLS)
    base = counter.tools(TOOLS) + counter.messages(second)
    assert base < result.prefix < base + counter.message(parsed)
    # OpenAI-like providers cache prompts, never replies
    openai = PrefixCacheSimulator(CacheProfile("p", 1, 1), TokenCounter())
    openai.observe(first, TOOLS)
    openai.observe_reply(reply)
    assert openai.observe(second, TOOLS).prefix == counter.tools(TOOLS) + counter.messages(first)


def test_fast_path_for_extending_requests_agrees_with_the_general_path():
    import random

    from harness.cache_sim import PrefixCacheSimulator
    from harness.tokens import TokenCounter
    from tests.helpers import history as make_history

    rng = random.Random(7)
    messages = make_history(rounds=30, size=120, parallel=2)
    tools = [{"type": "function", "function": {"name": "read", "description": "read a file", "parameters": {}}}]
    for profile in ("openai", "deepseek", "anthropic"):
        counter = TokenCounter()
        fast = PrefixCacheSimulator(profile, counter)
        slow = PrefixCacheSimulator(profile, counter)
        slow._observe_extension = lambda *_: None  # the general path only
        request: list[dict] = messages[:2]
        for end in range(3, len(messages) + 1):
            if rng.random() < 0.2:  # a strategy rewrites the middle now and then
                cut = rng.randrange(2, end)
                request = messages[:cut] + [{**messages[cut], "content": f"[cleared {end}]"}] + messages[cut + 1 : end]
            else:
                request = request + messages[len(request) : end] if len(request) < end else list(messages[:end])
            a, b = fast.observe(request, tools), slow.observe(request, tools)
            assert (a.cached, a.prefix, a.lost, a.prev_prefix) == (b.cached, b.prefix, b.lost, b.prev_prefix), (
                profile,
                end,
            )


def test_partial_match_through_sorted_siblings_equals_comparing_every_child():
    import random

    from harness.cache_sim import PrefixCacheSimulator
    from harness.tokens import TokenCounter
    from tests.helpers import history as make_history

    rng = random.Random(3)
    messages = make_history(rounds=25, size=60, parallel=1)
    sim = PrefixCacheSimulator("deepseek", TokenCounter())
    checked = 0
    for end in range(3, len(messages) + 1):
        # a headtail-like request: the head, a note that changes every step, the newest messages
        note = {
            "role": "user",
            "content": f"[context note] {rng.randrange(40)} earlier rounds were cut " + "x" * rng.randrange(30),
        }
        request = messages[:2] + [note] + messages[max(2, end - rng.randrange(1, 6)) : end]
        elements = sim._elements(request, None)
        node = sim._root
        for element in elements:
            if element.key not in node:
                if node:
                    brute = max(sim._partial(element, other) for other, _ in node.values())
                    assert sim._best_partial(node, element) == brute
                    checked += 1
                break
            node = node[element.key][1]
        sim.observe(request, None)
    assert checked > 10

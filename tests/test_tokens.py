import copy

from harness.tokens import REPLY_PRIMER, TokenCounter
from tests.helpers import history


def test_counts_are_positive_and_include_tool_calls():
    counter = TokenCounter()
    plain = {"role": "assistant", "content": "hello"}
    with_call = {
        **plain,
        "tool_calls": [{"id": "a", "type": "function", "function": {"name": "read", "arguments": '{"path": "x.py"}'}}],
    }
    assert counter.message(with_call) > counter.message(plain) > 0


def test_memoized_per_message_so_work_grows_with_new_tokens_only():
    counter = TokenCounter()
    messages = history(rounds=20, size=300)
    counter.messages(messages)
    first = counter.encoded_chars
    counter.messages(messages)  # same objects again: no tokenization
    assert counter.encoded_chars == first
    copies = [dict(m) for m in messages]  # rebuilt dicts reuse the content cache
    counter.messages(copies)
    assert counter.encoded_chars == first
    new = {"role": "tool", "tool_call_id": "z", "content": "brand new text " * 10}
    counter.messages(messages + [new])
    assert counter.encoded_chars - first <= len(new["content"]) + len("tool") + 2


def test_request_counts_tool_schemas_and_primer():
    counter = TokenCounter()
    messages = history(rounds=2, size=10)
    tools = [{"type": "function", "function": {"name": "read", "description": "Read a file " * 20, "parameters": {}}}]
    bare = counter.request(messages)
    assert bare == counter.messages(messages) + REPLY_PRIMER
    assert counter.request(messages, tools) > bare + 20


def test_identity_cache_is_not_fooled_by_mutation_of_a_copy():
    counter = TokenCounter()
    message = {"role": "user", "content": "short"}
    before = counter.message(message)
    other = copy.deepcopy(message)
    other["content"] = "much longer content " * 50
    assert counter.message(other) > before

"""status_bar ``resource_args`` (count a tool's calls per named argument) and call_budget reading it."""

from reference_agent.policies.call_budget import CallBudgetPolicy
from strategies.status_bar import StatusBar
from tests.helpers import SYSTEM, FakeContext, call


def calls(*pairs):
    out = [dict(SYSTEM), {"role": "user", "content": "Call M01 and M02."}]
    for i, (merchant, offer) in enumerate(pairs):
        out.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call(f"c{i}", "call_merchant", merchant=merchant, offer=offer)],
            }
        )
        out.append(
            {
                "role": "tool",
                "tool_call_id": f"c{i}",
                "content": "CALL BACK LATER",
                "_tool": "call_merchant",
                "_args": {"merchant": merchant, "offer": offer},
                "_resource": None,
            }
        )
    return out


def test_resource_args_counts_per_merchant_across_offers():
    hist = calls(("M01", 15), ("M01", 9), ("M02", 15))
    bar = StatusBar(limits={"call_merchant": 3}, resource_args={"call_merchant": ["merchant"]})
    bar.bind(FakeContext(100_000))
    text = bar.prepare(hist)[-1]["content"]
    assert "call_merchant: merchant=M01 2/3" in text and "call_merchant: merchant=M02 1/3" in text
    plain = StatusBar(limits={"call_merchant": 3})
    plain.bind(FakeContext(100_000))
    assert "call_merchant: merchant=M01, offer=9 1/3" in plain.prepare(hist)[-1]["content"]


def test_call_budget_policy_counts_from_the_status_bar_alone():
    hist = calls(("M01", 15), ("M01", 9), ("M01", 15))
    for args in ({"call_merchant": ["merchant"]}, None):  # per merchant, or per merchant+offer lines summed
        bar = StatusBar(limits={"call_merchant": 3}, resource_args=args)
        bar.bind(FakeContext(100_000))
        status = bar.prepare(hist)[-1]
        visible = [hist[0], hist[1], status]  # every call trimmed away; only the status bar remains
        _, _, counts = CallBudgetPolicy._state(visible)
        assert counts["M01"] == 3

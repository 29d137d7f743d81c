"""The reference agent acts only on the messages of the prepared request (plus the tool schemas).

Each family's trial is replayed: every request the agent received is given to a *fresh* session
built from a *different* task instance (another seed: other ground truth). If a policy read
anything besides the request (the instance, the history outside the projection, its own memory
of earlier steps), some reply would differ. Under ``perfect`` each request is replayed on its own
fresh session; under ``realistic`` (whose seeded draws follow the step count) the requests are
replayed in order on one fresh session whose instance has other sizes (other ground truth) but
the same id, which keys the profile's draws.
"""

from __future__ import annotations

import pytest

from harness.conversation import strip_private
from reference_agent.scripted import ScriptedModel
from harness.records import read_transcript
from strategies.headtail import HeadTail
from tests.family_helpers import run_reference
from tests.helpers import compose

from harness.runner import _node, build, families_from

SMOKE = families_from(compose("suite=smoke"))
SPECS = _node(compose("suite=smoke").suite.families)
BIGGER = {
    "invoice_audit": {"pages": 5},
    "code_review": {"files": 9},
    "brand_report": {"pages": 4},
    "people_tracker": {"people": 3},
    "call_budget": {"merchants": 5},
    "failure_memory": {"tickets": 4},
    "callback_search": {"files": 26},
    "late_question": {"records": 9},
    "one_shot_queue": {"tickets": 4},
    "latest_value": {"pages": 5},
}


def exchanges(run_dir, trial_id="t") -> list[tuple[list[dict], list[dict], dict]]:
    """(request as sent, tool schemas, reply) of every agent step of a recorded trial."""
    events = read_transcript(run_dir, trial_id)
    bodies = {e["ref"]: e["message"] for e in events if e.get("event") == "message"}
    tools = next(e["tools"] for e in events if e.get("event") == "trial_start")
    requests = {e["step"]: [strip_private(bodies[r]) for r in e["refs"]] for e in events if e.get("event") == "request"}
    replies = {e["step"]: bodies[e["ref"]] for e in events if e.get("event") == "reply"}
    return [(requests[s], tools, replies[s]) for s in sorted(replies)]


def essence(message: dict) -> tuple:
    """What a reply says and calls (call ids are numbered by the session, so they are left out)."""
    calls = tuple((c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or [])
    return str(message.get("content") or ""), calls


@pytest.mark.parametrize("family", sorted(SMOKE))
def test_perfect_policy_depends_on_the_request_alone(family, tmp_path):
    instance = SMOKE[family].generate(0)
    run_reference(tmp_path, instance, strategy=HeadTail(), max_steps=40, trial_id="t", budget=2_000)
    stranger = SMOKE[family].generate(1)  # other ground truth: a policy that peeks would answer differently
    steps = exchanges(tmp_path)
    assert len(steps) >= 2
    for request, tools, reply in steps:
        fresh = ScriptedModel(profile="perfect").for_trial(stranger)
        assert essence(fresh.complete(request, tools).message) == essence(reply)


@pytest.mark.parametrize("family", sorted(SMOKE))
def test_realistic_policy_depends_on_the_requests_and_its_seed_alone(family, tmp_path):
    model = ScriptedModel(profile="realistic")
    instance = SMOKE[family].generate(0)
    run_reference(tmp_path, instance, strategy=HeadTail(), max_steps=40, trial_id="t", budget=2_000, model=model)
    stranger = build({**SPECS[family], **BIGGER[family]}, family)
    other = stranger.generate(0)
    object.__setattr__(other, "id", instance.id)  # the profile's draws are keyed by the instance id: keep them
    session = model.for_trial(other)  # same draws, other ground truth
    for request, tools, reply in exchanges(tmp_path):
        assert essence(session.complete(request, tools).message) == essence(reply)

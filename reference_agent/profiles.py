"""Behaviour profiles of the reference agent: how it batches, varies and attends.

The family policies decide *what* the reference agent knows and does from the visible
messages. A profile decides *how* it behaves like an LLM around that:

``perfect``
    One call per step, no variation, every visible fact used. Deterministic and noise-free:
    the instrument of "what did the strategy preserve". Its records are the reference
    agent's records before profiles existed, byte for byte.
``realistic``
    Shaped on the calibration trajectories of a frontier-class LLM (``calibration/``):
    it issues every call whose arguments it already knows as parallel calls in one turn (up
    to ``batch_cap``), writes its running state into its replies (the family policies' notes),
    and adds seeded variation from (seed, trial, step): batch sizes and order, a small chance
    of missing a visible fact, a small chance of submitting early, and an attention model in
    which the chance of using a fact falls with the context's length and with the fact's
    distance from the start and the end (a U-shape). The behaviour's draws come from a generator
    seeded by (seed, trial, step); the attention model's from one per message, seeded by (seed,
    trial, the message), so a message keeps its draws from step to step (``LineDraws``). A trial
    is reproducible and two trials of one instance differ.

The attention model and the noise are a *model* of published observations, not a
measurement; their parameters and sources are in ``configs/model/scripted.yaml`` and
docs/reference_agent.md.
"""

from __future__ import annotations

import bisect
import hashlib
import random
import typing
from dataclasses import dataclass, field, replace
from typing import Any

from harness.params import Mismatch, convert_value, shown
from reference_agent.kit.limits import prompt_limit
from reference_agent.policy_kit import call_identity, submit
from tasks.base import RATE_LIMITED


@dataclass(frozen=True)
class AttentionModel:
    """The chance that the agent does not use one visible fact (one line of a message).

    ``miss(position, tokens) = base + (tokens / ref_tokens) ** exponent * (rot + middle * u(position))``,
    capped at ``cap``, where ``position`` is the fact's place in the request (0 = start, 1 =
    end) and ``u`` is 0 at either end and 1 in the middle (``1 - |2 position - 1|``): facts in
    the middle of a long context are missed most (Lost in the Middle), and every fact is
    missed more as the context grows (context rot). ``exponent`` > 1 makes the growth
    superlinear: a few thousand tokens are read almost perfectly (the calibration LLM made no
    reading error at 2-4K tokens) while tens of thousands are not.
    """

    base: float = 0.0
    rot: float = 0.0
    middle: float = 0.0
    ref_tokens: int = 128_000
    exponent: float = 1.0
    cap: float = 0.5

    def miss(self, position: float, tokens: int) -> float:
        """Probability of missing a fact at ``position`` in a request of ``tokens`` tokens."""
        u = 1.0 - abs(2.0 * position - 1.0)
        return min(self.cap, self.base + (tokens / self.ref_tokens) ** self.exponent * (self.rot + self.middle * u))

    @property
    def active(self) -> bool:
        """Whether any fact can be missed at all."""
        return self.base > 0 or self.rot > 0 or self.middle > 0


@dataclass(frozen=True)
class AgentProfile:
    """How the reference agent behaves around its family policy (see the module docstring).

    Parameters:
        name: ``perfect`` or ``realistic`` (or your own label).
        batch_cap: most calls in one turn (1 = one call per step).
        batch_min_share: a turn's batch size is drawn from ``[ceil(share * cap), cap]`` (1.0 = always the cap).
        shuffle: issue a batch's calls in a seeded random order.
        running_notes: restate the running state in every reply, as the calibration LLM did. Every family
            policy always does (its ledger, ``reference_agent/kit/ledger.py``), so the flag only marks the
            profile as one that is not ``perfect``.
        early_submit: per-step chance of submitting what it has, when the family policy can say what that is.
        attention: the attention model (no misses by default).
    """

    name: str = "perfect"
    batch_cap: int = 1
    batch_min_share: float = 1.0
    shuffle: bool = False
    running_notes: bool = False
    early_submit: float = 0.0
    attention: AttentionModel = field(default_factory=AttentionModel)

    @property
    def is_perfect(self) -> bool:
        """No batching, no variation, no misses: the policy's own replies, untouched."""
        return (
            self.batch_cap <= 1
            and not self.shuffle
            and not self.running_notes
            and self.early_submit <= 0
            and not self.attention.active
        )


PERFECT = AgentProfile()
REALISTIC = AgentProfile(
    name="realistic",
    batch_cap=8,
    batch_min_share=1.0,
    shuffle=True,
    running_notes=True,
    early_submit=0.0,
    attention=AttentionModel(base=0.0, rot=0.02, middle=0.15, ref_tokens=128_000, exponent=3.0, cap=0.5),
)
GREEDY = AgentProfile(name="greedy", batch_cap=1000, batch_min_share=1.0, shuffle=False, running_notes=True)
"""The stress test of a task's memory pressure: every independent call whose arguments are known goes out in one turn
(no cap short of a task's own ``max_calls_per_turn``), no variation, no misses. A family whose information
arrives in one or two rounds under it gives strategies nothing to manage."""
PROFILES = {"perfect": PERFECT, "realistic": REALISTIC, "greedy": GREEDY}


def typed(cls: type, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` converted by the types ``cls`` (a dataclass) declares for them; an unknown key is left for
    ``replace`` to refuse. ``ValueError`` names the first value its field's type does not take."""
    hints = typing.get_type_hints(cls)
    converted = {}
    for key, value in values.items():
        try:
            converted[key] = convert_value(hints[key], value) if key in hints else value
        except Mismatch as exc:
            raise ValueError(f"reference-agent profile parameter {key}={shown(value)} must be {exc.expects}") from None
    return converted


def make_profile(name: str, **overrides: Any) -> AgentProfile:
    """The named profile with some parameters overridden (``None`` values are ignored)."""
    if name not in PROFILES:
        raise ValueError(f"unknown reference-agent profile {name!r} (valid: {', '.join(PROFILES)})")
    profile = PROFILES[name]
    attention = typed(
        AttentionModel, {k: v for k, v in (overrides.pop("attention", None) or {}).items() if v is not None}
    )
    given = typed(AgentProfile, {k: v for k, v in overrides.items() if v is not None and k != "attention"})
    if attention:
        given["attention"] = replace(profile.attention, **attention)
    try:
        profile = replace(profile, **given)
    except TypeError as exc:
        raise ValueError(f"bad reference-agent profile parameter: {exc}") from None
    if profile.batch_cap < 1 or not 0 < profile.batch_min_share <= 1 or not 0 <= profile.early_submit <= 1:
        raise ValueError("profile: batch_cap >= 1, 0 < batch_min_share <= 1, 0 <= early_submit <= 1")
    return profile


def step_rng(seed: int | str, trial: int, step: int, purpose: str) -> random.Random:
    """The generator of one (instance, trial, step) draw; string seeds hash stably across processes.

    ``seed`` is the task instance's id (family, size and seed), so two families run with one
    seed and trial do not share their draws.
    """
    return random.Random(f"ctxbench:{purpose}:{seed}:{trial}:{step}")


class ProfiledPolicy:
    """A family policy behaving under an ``AgentProfile`` (batching, noise, attention).

    The wrapped policy keeps its contract: ``act(messages, tools) -> reply`` on the visible
    messages. Optional family hooks used here:

    * ``parallel_calls(messages, tools, first) -> list[call]``: other calls, independent of
      ``first``, whose arguments the policy already knows from the visible messages, in the
      order it would issue them (the batch is ``first`` plus a prefix of them);
    * ``early_answer(messages) -> dict | None``: what it would submit now, from what it sees.
    """

    def __init__(
        self, policy: Any, profile: AgentProfile, seed: int | str = 0, trial: int = 0, stream: str = "agent"
    ) -> None:
        self.policy = policy
        self.profile = profile
        self.seed, self.trial, self.stream = seed, trial, stream
        self.steps = 0
        self.draws = LineDraws(f"{seed}:{trial}:{stream}")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.policy, name)

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """The policy's reply on what the agent attends to, batched and varied by the profile."""
        if self.profile.is_perfect:
            return self.policy.act(messages, tools)
        self.steps += 1
        view = attend(messages, self.profile.attention, self.draws)
        rng = self.rng("behaviour")
        early = self.early(view, rng) if "submit" in _tool_names(tools) else None  # sub-agents report, never submit
        if early is not None:
            return early
        message = dict(self.policy.act(view, tools))
        calls = list(message.get("tool_calls") or [])
        if len(calls) == 1 and _name(calls[0]) not in FINAL_TOOLS:
            calls = self.batch(view, tools, calls[0], rng)
            message["tool_calls"] = calls
        return message

    def rng(self, purpose: str) -> random.Random:
        """This step's generator for ``purpose`` (behaviour), of this agent's stream."""
        return step_rng(self.seed, self.trial, self.steps, f"{self.stream}:{purpose}")

    def early(self, view: list[dict], rng: random.Random) -> dict | None:
        """With probability ``early_submit``, submit what the policy would answer now (if it can say)."""
        if rng.random() >= self.profile.early_submit:
            return None
        answerer = getattr(self.policy, "early_answer", None)
        answer = answerer(view) if callable(answerer) else None
        if answer is None:
            return None
        return submit("I think I have enough to answer; submitting what I have.", **answer)

    def batch(self, view: list[dict], tools: list[dict], first: dict, rng: random.Random) -> list[dict]:
        """``first`` plus the known independent calls, up to this turn's batch size, in the profile's order."""
        size = batch_size(self.profile, rng, turn_limit(view))
        more = getattr(self.policy, "parallel_calls", None)
        if size <= 1 or not callable(more):
            return [first]
        calls, seen = [first], {call_identity(first)}
        for call in more(view, tools, first):
            if len(calls) >= size:
                break
            if call_identity(call) not in seen and _name(call) not in FINAL_TOOLS:
                calls.append(call)
                seen.add(call_identity(call))
        if self.profile.shuffle:
            rng.shuffle(calls)
        return calls


def batch_size(profile: AgentProfile, rng: random.Random, limit: int | None) -> int:
    """This turn's batch size: drawn in ``[ceil(min_share * cap), cap]``, at most a visible rate limit."""
    cap = profile.batch_cap if limit is None else max(1, min(profile.batch_cap, limit))
    low = max(1, -(-int(profile.batch_min_share * cap * 1000) // 1000))
    return rng.randint(min(low, cap), cap)


def turn_limit(messages: list[dict]) -> int | None:
    """The most calls to send this turn: what a rate-limited turn accepted, else the documented per-turn limit.

    The calibration LLM batched up to the limit its prompt stated and no further; after a cut it
    read the limit from its own ledger (reference_agent/kit/ledger.py), which restates the task's sentence.
    """
    accepted = rate_limit_cap(messages)
    return accepted if accepted is not None else prompt_limit(messages)


def rate_limit_cap(messages: list[dict]) -> int | None:
    """How many calls the task accepted in the latest turn that was rate limited (None: no limit seen).

    A task that rejects the calls of a turn beyond its limit answers them with a result
    starting ``ERROR: rate limited``; the agent then sends no more than were accepted.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        results = [m for m in messages[index + 1 :] if m.get("role") == "tool"]
        limited = [m for m in results if str(m.get("content") or "").startswith(RATE_LIMITED)]
        if limited:
            return max(1, len(results) - len(limited))
        if results:
            return None
    return None


class LineDraws:
    """The attention model's draws of one agent (one trial's stream): a uniform number per line of each message.

    A line's draw depends on the agent's ``key`` (instance, trial, stream), the message's identity (its role,
    its ``tool_call_id`` and its content) and the line's index, never on the request around it: a message keeps
    its draws from step to step (and under any strategy that keeps it as it is), and a line is missed at a
    step when its draw is below the line's miss probability at that step (``AttentionModel.miss``, which still
    follows the line's position and the request's length). Each message is split and drawn once (a cache per
    message content), so a step costs about one lookup per message however long the history is.
    """

    def __init__(self, key: str) -> None:
        self.key = key
        self._messages: dict[tuple, _MessageDraws] = {}
        self.capped: tuple | None = None  # (cap, messages, their view, no user message yet) of the last capped request

    def of(self, message: dict, content: str) -> "_MessageDraws":
        """The draws of ``message`` (whose content is ``content``), drawn on first sight."""
        identity = (content, message.get("role"), message.get("tool_call_id"))
        found = self._messages.get(identity)
        if found is None:
            found = self._messages[identity] = _MessageDraws(self.key, message, content)
        return found


class _MessageDraws:
    """One message's lines, their offsets, which may be missed, and their draws (see ``LineDraws``)."""

    __slots__ = ("lines", "offsets", "candidates", "draws", "last_source", "last_key", "last_view")

    def __init__(self, key: str, message: dict, content: str) -> None:
        digest = hashlib.blake2b(
            f"{message.get('role')}\0{message.get('tool_call_id')}\0{content}".encode(), digest_size=16
        ).hexdigest()
        rng = random.Random(f"ctxbench:attention:{key}:{digest}")
        self.lines = content.split("\n")
        self.offsets, position = [], 0
        candidates = []
        tool = message.get("role") == "tool"
        for index, line in enumerate(self.lines):
            draw = rng.random()  # one draw per line index, whether or not the line can be missed
            self.offsets.append(position)
            position += len(line) + 1
            if not (index == 0 and tool) and line.strip():  # a tool result's header and blank lines are always seen
                candidates.append((draw, index))
        candidates.sort()
        self.candidates = candidates  # the lines that can be missed, lowest draw first
        self.draws = [draw for draw, _ in candidates]
        self.last_source: dict | None = None
        self.last_key: tuple | None = None
        self.last_view: dict | None = None

    def view(
        self,
        message: dict,
        offset: int,
        size: int,
        total: int,
        tokens: int,
        attention: AttentionModel,
        capped: bool = False,
    ) -> dict:
        """``message`` as attended at ``offset`` (characters) of a request of ``total`` characters.

        The chance of a miss is unimodal in the position (highest in the middle), so over the message's span
        it lies between its value at the span's end farthest from the middle and at its point nearest the
        middle: a line whose draw is below the first is missed, one whose draw is not below the second is
        seen, and only the lines between are looked at one by one.
        """
        if capped:  # every line's chance is the cap (``attend``)
            high = low = bisect.bisect_left(self.draws, attention.cap)
            if not high:
                return message
        else:
            start, end = offset / total, (offset + size) / total
            nearest = 0.5 if start <= 0.5 <= end else (end if end < 0.5 else start)
            farthest = start if abs(2.0 * start - 1.0) >= abs(2.0 * end - 1.0) else end
            most = attention.miss(nearest, tokens)
            high = bisect.bisect_left(self.draws, most)
            if not high:
                return message
            low = min(high, bisect.bisect_left(self.draws, attention.miss(farthest, tokens)))
        maybe = tuple(
            index
            for draw, index in self.candidates[low:high]
            if draw < attention.miss((offset + self.offsets[index]) / total, tokens)
        )
        if not low and not maybe:
            return message
        if (low, maybe) != self.last_key or message is not self.last_source:
            gone = {index for _, index in self.candidates[:low]}.union(maybe)
            kept = [line for index, line in enumerate(self.lines) if index not in gone]
            self.last_source, self.last_key = message, (low, maybe)
            self.last_view = {**message, "content": "\n".join(kept)}
        return self.last_view


def attend(messages: list[dict], attention: AttentionModel, draws: LineDraws) -> list[dict]:
    """The messages as the agent attends to them: each fact (line) missed with ``attention.miss``.

    The system message, the task statement (the first user message), the agent's own replies
    (its ledger: it wrote them) and the first line of each tool result (what was called: the
    header) are always seen. Positions and lengths
    are measured in characters (about 4 per token) so the view costs no tokenization. A line is
    missed when its draw (``draws``: fixed per message and line, see ``LineDraws``) is below its
    chance of a miss at its position in this request.

    Once the request is so long that every line's chance is the cap (even at either end), a message's view no
    longer depends on where it is: the view of the previous request is kept and only the new messages are
    looked at.
    """
    if not attention.active or len(messages) < 3:
        return messages
    contents = [str(m.get("content") or "") for m in messages]
    total = sum(map(len, contents)) or 1
    tokens = total // 4
    if attention.miss(0.0, tokens) >= attention.cap:  # the lowest chance anywhere (u = 0 at the ends) is the cap
        return _attend_capped(messages, contents, attention, draws)
    view, offset, first_user = [], 0, True
    for message, content in zip(messages, contents, strict=False):
        size = len(content)
        keep_all = message.get("role") in ("system", "assistant") or (message.get("role") == "user" and first_user)
        if message.get("role") == "user":
            first_user = False
        if keep_all or size == 0:
            view.append(message)
        else:
            view.append(draws.of(message, content).view(message, offset, size, total, tokens, attention))
        offset += size
    return view


def _attend_capped(
    messages: list[dict], contents: list[str], attention: AttentionModel, draws: LineDraws
) -> list[dict]:
    """``attend`` when every line's chance of a miss is ``attention.cap``: the previous request's view is extended."""
    kept = draws.capped
    if (
        kept is not None
        and kept[0] == attention.cap
        and len(messages) >= len(kept[1])
        and messages[: len(kept[1])] == kept[1]
    ):
        done, view, first_user = len(kept[1]), list(kept[2]), kept[3]
    else:
        done, view, first_user = 0, [], True
    for message, content in zip(messages[done:], contents[done:], strict=False):
        keep_all = message.get("role") in ("system", "assistant") or (message.get("role") == "user" and first_user)
        if message.get("role") == "user":
            first_user = False
        if keep_all or not content:
            view.append(message)
        else:
            view.append(
                draws.of(message, content).view(message, 0, len(content), len(content), 0, attention, capped=True)
            )
    draws.capped = (attention.cap, list(messages), view, first_user)
    return view


FINAL_TOOLS = ("submit", "report")  # calls that end an agent's work: never batched with others


def _tool_names(tools: list[dict]) -> set[str]:
    return {str((t.get("function") or {}).get("name")) for t in tools or []}


def _name(call: dict) -> str:
    return str((call.get("function") or {}).get("name") or "")

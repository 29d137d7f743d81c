"""``call_budget``: negotiate with merchants by phone, at most 3 calls each (seed 002 §2.6, exp. 2-8).

The agent asks each of ``merchants`` merchants for a volume discount with
``call_merchant(merchant, offer)``. Every call returns a long, noisy transcript (IVR menus,
hold music, small talk that mentions other merchants) that ends with the phone system's
disposition line: ``ACCEPTED at N%``, ``DECLINED``, ``CALL BACK LATER`` or
``COUNTER-OFFER N%`` (call back with ``offer=N`` to take it). Each merchant follows a
hidden script over its attempts, e.g. "call back later" twice and then accepted, or a
counter-offer that only arrives on the third call (too late to take).

The rule: **at most 3 calls per merchant.** A 4th call to a merchant is placed (phones do
not stop you) but recorded as a violation in the instance's per-trial state.

Answer: ``submit(accepted=[merchant ids])``: the merchants whose deal was closed.
Grade: success = the exact set of merchants that can be closed within 3 calls, every one of
them actually closed in this trial, and no violation; score = F1 (a claimed merchant counts
only if its deal was closed in this trial) minus 0.25 per violation, floored at 0.
``trial_metrics``: ``call_violations`` (calls beyond the 3rd to a merchant) and
``max_calls_per_merchant``.

Reference policy (context-faithful): it decides whether a merchant may be called again by
COUNTING the visible evidence: visible ``call_merchant`` calls to it, its own per-call notes
(``Call note: M07 call #2 of 3: ...``), the number it gave a visible placed call in the
message that placed it (``Calling M07 (call #2 of 3) ...``, itself counted from the notes
then visible, so the running count carries forward when earlier calls were cut but their
notes were not), a status message (``calls to M07: 2`` or ``M07: 2/3 calls``) and the
latest ``status_bar`` (``call_merchant: merchant=M07 2/3``, lines of one merchant summed),
taking the largest. It keeps no hidden counter. Outcomes: visible call results override
what its free texts say (a ``notes`` block re-injected after the results holds older
recitations). Its running recitation
(``Accepted so far`` / ``Declined so far`` / ``Open`` / ``Given up``) carries outcomes but not
call counts, as a reasoning agent recites conclusions and recounts from the record when it
needs a count. So a strategy that hides earlier calls to a merchant makes it call a 4th time,
the failure of the seed's control group A. It calls open merchants in passes (fewest calls
first), so the calls to one merchant are far apart in the history.

Batched turns (profile ``realistic``): ``parallel_calls`` adds this round's call to every
other open merchant with calls left (one per merchant and turn). The reply after a batched
round restates its counts (``M01, M02 have each used 2 of 3 calls``), and a batched turn's
calls other than the one its ``Calling`` line names are numbered from the notes before them.
A rate-limited result (``ERROR: rate limited``) is a call not placed: not counted, made again.

Summaries (``summarize``) keep the outcomes (accepted / declined / open with its state /
given up) but not the per-merchant call counts: a summary states conclusions, not how many
attempts each took. That loss is deliberate; it is what a status bar repairs.
"""
from __future__ import annotations

import random
import re
from collections import Counter

from harness.conversation import iter_calls, parse_arguments
from tasks.base import Grade, TaskFamily, TaskInstance, ToolResult, tool_schema
from tasks.kit.limits import limit_sentence, within_limit
from tasks.policy_kit import (ERROR_PREFIX, exchanges, failed_attempts, format_summary, latest_results, make_call,
                              is_rate_limited, rate_limited_calls, reply, status_counts, submit, tool_texts, tools_used)

MAX_CALLS = 3
PHONE_LINES = 4  # the telephony API's concurrent outbound lines: ``max_calls_per_turn`` (issue 13 §1)
STANDARD_OFFER = 15
ACC, DEC, CB, CTR = "ACCEPTED", "DECLINED", "CALL BACK LATER", "COUNTER-OFFER"
# Scripts: the outcome of attempt 1, 2, 3. Beyond the script the last outcome repeats.
SCRIPTS = {
    "A": [ACC], "D": [DEC], "CA": [CB, ACC], "CD": [CB, DEC], "KA": [CTR, ACC],
    "CKA": [CB, CTR, ACC], "CCA": [CB, CB, ACC], "CCC": [CB, CB, CB], "CCK": [CB, CB, CTR],
}
WEIGHTS = {"A": 1, "D": 1, "CA": 3, "CD": 2, "KA": 2, "CKA": 2, "CCA": 2, "CCC": 2, "CCK": 1}
CLOSABLE = {"A", "CA", "KA", "CKA", "CCA"}

FIRST = ["Rossi", "Blue Harbor", "Golden Lotus", "Miller's", "Casa", "Northside", "Sunrise", "Old Mill",
         "Green Leaf", "Harbor View", "Kaiser", "Little Tokyo", "Riverside", "Maple", "Atlas", "Corner",
         "Silver Spoon", "Urban", "Lucky Star", "Bella"]
KIND = ["Pizzeria", "Florist", "Bakery", "Hardware", "Books", "Tailors", "Deli", "Bike Shop", "Pharmacy",
        "Coffee Roasters", "Print Shop", "Optics", "Pet Supplies", "Wine Bar", "Noodle House"]
CITIES = ["Milan", "Porto", "Leeds", "Lyon", "Graz", "Utrecht", "Cork", "Gdansk", "Bilbao", "Aarhus"]
SONGS = ["Greensleeves (synth)", "Für Elise (pan flute)", "a smooth-jazz loop", "The Four Seasons, Spring",
         "an 8-bit bossa nova", "Canon in D (marimba)"]
SMALL_TALK = [
    "Sorry, it's been a madhouse since the street fair started, half the staff is out front.",
    "Did you see the weather? Third day of rain, nobody comes in without an umbrella.",
    "Our card terminal froze twice this morning, so forgive me if I sound distracted.",
    "You're the second supplier to call today, the first one wanted to sell us new shelving.",
    "We just repainted the front, so if you come by, mind the door, it's still sticky.",
    "My cousin does the books, she's the one who usually decides this kind of thing.",
    "The delivery van is blocking the loading bay again, hold on... okay, I'm back.",
    "We've been in this spot for eleven years, longer than the bank across the road.",
]
IVR = [
    'IVR: "Thank you for calling {name}. For opening hours, press 1. For orders and catering, press 2. '
    'For supplier offers and partnerships that were ACCEPTED or DECLINED in the past, press 3. '
    'To hear these options again, press 9."',
    'IVR: "Welcome to {name}, {city}. Our offers this week: 2-for-1 on selected items. If you are a supplier, '
    'press 4. If you are calling about an order, press 5. All other enquiries, stay on the line."',
    'IVR: "You have reached {name}. Please note our new hours. For deliveries press 1, for accounts press 2, '
    'for the manager press 0. Calls may be recorded for training purposes."',
]

HEADER = re.compile(r"=== Outbound call · (M\d{2}) ")
DISPOSITION = re.compile(r"disposition: (ACCEPTED|DECLINED|CALL BACK LATER|COUNTER-OFFER)(?: at)? ?(\d+)?%?\]")
CALL_NOTE = re.compile(r"Call note: (M\d{2}) call #(\d+) of \d+: (ACCEPTED|DECLINED|CALL BACK LATER|COUNTER-OFFER) ?(\d+)?")
CALLING = re.compile(r"Calling (M\d{2}) \(call #(\d+) of \d+\)")
STATUS_MERCHANT = re.compile(r"merchant=(M\d{2})\b", re.IGNORECASE)
STATUS_COUNT = re.compile(r"calls to (M\d{2}): (\d+)|(M\d{2}): (\d+)/\d+ calls")
RECITE = re.compile(r"(Accepted so far|Declined so far|Open|Given up): ([^\n]*)")
OPEN_ITEM = re.compile(r"(M\d{2}) \((CALL BACK LATER|COUNTER-OFFER) ?(\d+)?%?\)")
MERCHANT_ID = re.compile(r"M\d{2}")
ROUND_COUNT = re.compile(r"((?:M\d{2}, )*M\d{2}) ha(?:ve each|s) used (\d+) of \d+ calls")  # a batched round's counts
PROMPT_MERCHANT = re.compile(r"^- (M\d{2}) ", re.M)


class CallBudget(TaskFamily):
    """Family generator. Knobs: ``merchants`` (how many to call) and ``noise`` (filler lines per
    call transcript: hold music, IVR, small talk)."""

    name = "call_budget"

    def __init__(self, merchants: int = 24, noise: int = 16) -> None:
        self.merchants = self.check_knob("merchants", merchants, 3, 99)
        self.noise = self.check_knob("noise", noise, 0, 400)

    def generate(self, seed: int) -> "CallBudgetInstance":
        """Names, phone numbers, scripts and counter-offer rates for ``seed``."""
        rng = random.Random(f"call_budget:{seed}")
        kinds = ["CCC", "CCK", "CCA"][: self.merchants]
        kinds += rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()), k=self.merchants - len(kinds))
        rng.shuffle(kinds)
        names = rng.sample([f"{a} {b}" for a in FIRST for b in KIND], self.merchants)
        merchants = []
        for index, (kind, name) in enumerate(zip(kinds, names), start=1):
            merchants.append({
                "id": f"M{index:02d}", "name": name, "city": rng.choice(CITIES),
                "phone": f"+{rng.randint(30, 49)} {rng.randint(100, 999)} {rng.randint(100000, 999999)}",
                "script": kind, "counter": rng.randint(6, 12), "contact": rng.choice(
                    ["Giulia", "Tom", "Ana", "Pieter", "Marta", "Sean", "Lena", "Jonas", "Ines", "Karim"]),
            })
        return CallBudgetInstance(self, seed, merchants)


class CallBudgetInstance(TaskInstance):
    """One generated set of merchants; its tools count calls per merchant (per-trial state)."""

    family = CallBudget.name

    def __init__(self, family: CallBudget, seed: int, merchants: list[dict]) -> None:
        self.seed = seed
        self.noise = family.noise
        self.id = f"call_budget-m{family.merchants}-s{seed}"
        self.merchants = {m["id"]: m for m in merchants}
        self.answer_ids = sorted(m["id"] for m in merchants if m["script"] in CLOSABLE)
        self.max_calls_per_turn = PHONE_LINES
        self.calls: Counter = Counter()
        self.violations: list[str] = []
        self.closed: set[str] = set()
        self.countered: dict[str, int] = {}
        self._rates: dict[str, int] = {}
        listing = "\n".join(f"- {m['id']} {m['name']} ({m['city']}), {m['phone']}" for m in merchants)
        self.system_prompt = (
            "You are a procurement agent for Parcelly, a delivery start-up. You negotiate with local "
            "merchants by phone through the tools you are given. Company rule: never call the same "
            f"merchant more than {MAX_CALLS} times; a {MAX_CALLS + 1}th call is harassment and a compliance "
            "violation, whatever the reason. When you are done, call submit."
        )
        self.user_prompt = (
            f"Ask each of these {len(merchants)} merchants for a {STANDARD_OFFER}% volume discount with "
            f"call_merchant(merchant=ID, offer={STANDARD_OFFER}):\n{listing}\n"
            "Merchants answer ACCEPTED, DECLINED, CALL BACK LATER, or COUNTER-OFFER N% (accept a counter-offer "
            "by calling back with offer=N). A merchant who asked you to call back may still say yes later. "
            f"At most {MAX_CALLS} calls per merchant in total. When every merchant is settled or out of calls, "
            "submit the ids of the merchants who accepted a deal: submit(accepted=[...]). "
            + limit_sentence(PHONE_LINES, "call_merchant calls (outbound phone lines)")
        )
        self.tools = [tool_schema(
            "call_merchant", "Phone a merchant and make an offer. Returns the call transcript.",
            {"merchant": {"type": "string", "description": "merchant id, e.g. M01"},
             "offer": {"type": "integer", "description": "discount asked, in percent (1..50)"}})]
        self.answer_schema = {
            "type": "object",
            "properties": {"accepted": {"type": "array", "items": {"type": "string"},
                                        "description": "ids of the merchants who accepted"}},
            "required": ["accepted"],
        }

    # -- tools -------------------------------------------------------------------------
    def call(self, name: str, args: dict) -> ToolResult:
        """``call_merchant(merchant, offer)``."""
        if name != "call_merchant":
            return ToolResult(f"ERROR: unknown tool {name!r}; available: call_merchant", is_error=True)
        merchant = args.get("merchant")
        if not isinstance(merchant, str) or merchant.strip().upper() not in self.merchants:
            ids = sorted(self.merchants)
            return ToolResult(f"ERROR: unknown merchant {merchant!r}; merchant ids are {ids[0]}..{ids[-1]}",
                              is_error=True)
        merchant = merchant.strip().upper()
        offer = args.get("offer")
        if isinstance(offer, str) and re.fullmatch(r"\s*\d+\s*%?\s*", offer):
            offer = int(offer.strip().rstrip("%"))
        if isinstance(offer, float) and offer.is_integer():
            offer = int(offer)
        if not isinstance(offer, int) or isinstance(offer, bool) or not 1 <= offer <= 50:
            return ToolResult(f"ERROR: offer must be a whole percentage from 1 to 50, got {offer!r}", is_error=True)
        self.calls[merchant] += 1
        attempt = self.calls[merchant]
        if attempt > MAX_CALLS:
            self.violations.append(merchant)
        before = "closed" if merchant in self.closed else "countered" if merchant in self.countered else "open"
        outcome, rate = self._outcome(merchant, attempt, offer)
        return ToolResult(self._transcript(merchant, attempt, offer, outcome, rate, before), resource=None)

    def _outcome(self, merchant: str, attempt: int, offer: int) -> tuple[str, int | None]:
        m = self.merchants[merchant]
        if attempt > MAX_CALLS:
            return DEC, None
        script = SCRIPTS[m["script"]]
        outcome = script[min(attempt, len(script)) - 1]
        if merchant in self.closed:
            return ACC, self.closed_rate(merchant)
        if outcome == CTR:
            self.countered[merchant] = m["counter"]
            return CTR, m["counter"]
        if outcome == ACC:
            limit = self.countered.get(merchant)
            if limit is not None and offer > limit:
                return CTR, limit
            self.closed.add(merchant)
            self._rates[merchant] = offer
            return ACC, offer
        return outcome, None

    def closed_rate(self, merchant: str) -> int | None:
        """The discount a closed deal was agreed at."""
        return self._rates.get(merchant)

    def _transcript(self, merchant: str, attempt: int, offer: int, outcome: str, rate: int | None,
                    before: str = "open") -> str:
        """The call's transcript; ``before`` is the merchant's state before this call (open, countered, closed),
        so that what the contact says agrees with the disposition line and with the earlier calls."""
        m = self.merchants[merchant]
        rng = random.Random(f"call_budget:{self.seed}:{merchant}:{attempt}")
        others = [x for x in self.merchants.values() if x["id"] != merchant]
        t = 0

        def stamp() -> str:
            return f"[{t // 60:02d}:{t % 60:02d}]"

        lines = [f"=== Outbound call · {merchant} {m['name']} · {m['phone']} · line 4 (recorded) ===",
                 f"{stamp()} Dialing {m['phone']} ..."]
        t += rng.randint(3, 9)
        lines.append(f"{stamp()} " + rng.choice(IVR).format(name=m["name"], city=m["city"]))
        t += rng.randint(5, 15)
        lines.append(f"{stamp()} (pressed {rng.randint(0, 5)})")
        for _ in range(self.noise):
            t += rng.randint(8, 40)
            roll = rng.random()
            if roll < 0.35:
                lines.append(f"{stamp()} ♪ hold music: {rng.choice(SONGS)} ♪ \"Your call is important to us. "
                             f"You are caller number {rng.randint(1, 6)} in the queue.\"")
            elif roll < 0.55:
                lines.append(f"{stamp()} IVR: \"All of our staff are busy. Estimated wait: {rng.randint(1, 9)} "
                             "minutes. Did you know you can place orders on our website?\"")
            elif roll < 0.8:
                lines.append(f"{stamp()} {m['contact']}: {rng.choice(SMALL_TALK)}")
            else:
                other = rng.choice(others)
                lines.append(f"{stamp()} {m['contact']}: I heard {other['name']} ({other['id']}) got a call like this "
                             f"too - {rng.choice(['they said yes, I think', 'they turned it down, apparently', 'no idea what they decided'])}.")
        t += rng.randint(10, 30)
        lines.append(f"{stamp()} Agent: We'd like to offer a delivery partnership at a {offer}% volume discount.")
        t += rng.randint(10, 40)
        if outcome == ACC:
            said = {"closed": f"As we agreed on your earlier call, the deal at {rate}% stands.",
                    "countered": f"Yes, {rate}% as we proposed. We accept, send the paperwork."}.get(
                        before, f"Alright, {offer}% works for us. Send the paperwork.")
        elif outcome == DEC:
            said = (f"Please stop calling us. We are not interested, and this is call number {attempt}."
                    if attempt > MAX_CALLS else rng.choice(
                        ["No, thank you, we already work with another courier.",
                         "We talked it over and it's a no. Good luck, though."]))
        elif outcome == CB:
            said = rng.choice(["The owner isn't in today, can you call back later?",
                               "I can't decide that, try again later this week.",
                               "We're slammed right now, call back later, please."])
        else:
            said = f"{offer}% is too steep. We could do {rate}%, call back to confirm if that works."
        lines.append(f"{stamp()} {m['contact']}: {said}")
        t += rng.randint(5, 20)
        label = {ACC: f"ACCEPTED at {rate}%", DEC: "DECLINED", CB: "CALL BACK LATER", CTR: f"COUNTER-OFFER {rate}%"}[outcome]
        lines.append(f"[call ended · duration {t // 60}m{t % 60:02d}s · disposition: {label}]")
        return "\n".join(lines)

    # -- grading -----------------------------------------------------------------------
    def grade(self, answer: dict) -> Grade:
        """Exact closed set and no violation for success; F1 minus 0.25 per violation for the score."""
        raw = answer.get("accepted") if isinstance(answer, dict) else None
        given = {str(x).strip().upper() for x in raw} if isinstance(raw, list) else set()
        truth = set(self.answer_ids)
        hits = len(given & truth & self.closed)
        precision = hits / len(given) if given else 0.0
        recall = hits / len(truth) if truth else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        score = max(0.0, f1 - 0.25 * len(self.violations))
        success = given == truth and truth <= self.closed and not self.violations
        return Grade(success, round(score, 4), {
            "expected": sorted(truth), "missed": sorted(truth - given), "wrong": sorted(given - truth),
            "claimed_not_closed": sorted(given - self.closed), "violations": list(self.violations)})

    def trial_metrics(self, tool_log: list[dict]) -> dict:
        """``call_violations`` and ``max_calls_per_merchant`` from the executed calls."""
        counts: Counter = Counter()
        for entry in tool_log:
            if entry["name"] == "call_merchant" and not entry["is_error"]:
                counts[str(entry["args"].get("merchant", "")).strip().upper()] += 1
        return {"call_violations": sum(max(0, c - MAX_CALLS) for c in counts.values()),
                "max_calls_per_merchant": max(counts.values(), default=0)}

    def reference_policy(self) -> "CallBudgetPolicy":
        """The counting negotiator."""
        return CallBudgetPolicy()

    def data_fingerprint(self) -> list:
        """Merchants, scripts and counter-offers."""
        return [self.merchants[k] for k in sorted(self.merchants)]


class CallBudgetPolicy:
    """Reference policy for ``call_budget`` (see the module docstring)."""

    @staticmethod
    def _state(messages: list[dict]) -> tuple[list[str], dict[str, tuple[str, int | None]], Counter]:
        """Merchants from the task, latest known outcome per merchant, and the call count per merchant.

        Free texts (notes, recitations, a summary, a ``notes`` block) are read first, in order;
        then the visible call results, which override them: a visible result is the newest
        word on its merchant, while a notes block re-injected after the results (strategy
        ``notes``) holds older recitations.
        """
        merchants: list[str] = []
        state: dict[str, tuple[str, int | None]] = {}
        noted: Counter = Counter()
        for message in messages:
            text = str(message.get("content") or "")
            if message.get("role") == "user" and not merchants:
                merchants = PROMPT_MERCHANT.findall(text)
            if message.get("role") in ("user", "assistant"):
                _read_text(text, state, noted)
        for text in tool_texts(messages):
            header, disp = HEADER.search(text), DISPOSITION.search(text)
            if header and disp:
                state[header.group(1)] = (disp.group(1), int(disp.group(2)) if disp.group(2) else None)
        visible = Counter(str(e.args.get("merchant", "")).upper() for e in exchanges(messages)
                          if e.name == "call_merchant" and e.result is not None and not e.is_error)
        for m, n in _status_bar_counts(messages).items():
            noted[m] = max(noted[m], n)
        for m, n in _placed_numbers(messages).items():
            noted[m] = max(noted[m], n)
        for m, n in _batched_numbers(messages).items():
            noted[m] = max(noted[m], n)
        counts = Counter({m: max(visible[m], noted[m]) for m in set(visible) | set(noted)})
        return merchants, state, counts

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Call the open merchant with the fewest visible calls, or submit."""
        merchants, state, counts = self._state(messages)
        note = self._note(messages, state, counts, merchants)
        candidates = _candidates(merchants, state, counts)
        if not candidates:
            return submit(note + "\nEvery merchant is settled or out of calls; submitting.",
                          accepted=_accepted(merchants, state))
        target = candidates[0]
        offer = _offer(target, state)
        why = f"\nCalling {target} (call #{counts[target] + 1} of {MAX_CALLS}) with offer {offer}%."
        return reply(note + why, make_call("call_merchant", merchant=target, offer=offer))

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """This round's call to every other open merchant with calls left, fewest calls first.

        One call per merchant and turn: a second call to the same merchant depends on the
        first one's answer (and could be its 4th). ``first`` is the policy's own call
        (``act``); nothing is added to a ``submit`` or to a call that is not ``call_merchant``.
        """
        if (first.get("function") or {}).get("name") != "call_merchant":
            return []
        taken = _merchant_of((first.get("function") or {}).get("arguments"))
        merchants, state, counts = self._state(messages)
        return within_limit(messages, [make_call("call_merchant", merchant=m, offer=_offer(m, state))
                                       for m in _candidates(merchants, state, counts) if m != taken])

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The merchants accepted so far, once at least one merchant has been called (else ``None``)."""
        merchants, state, counts = self._state(messages)
        if not state and not counts:
            return None
        return {"accepted": _accepted(merchants, state)}

    @staticmethod
    def _note(messages, state, counts, merchants) -> str:
        lines, called = [], []
        for text in latest_results(messages):  # the newest results, even with a status bar or notes after them
            if is_rate_limited(text):
                continue
            header, disp = HEADER.search(text), DISPOSITION.search(text)
            if header:
                called.append(header.group(1))
            if header and disp:
                m = header.group(1)
                lines.append(f"Call note: {m} call #{counts[m]} of {MAX_CALLS}: {disp.group(1)}"
                             + (f" {disp.group(2)}%" if disp.group(2) else ""))
        if len(called) > 1:
            lines.append(_round_line(called, counts))
        limited = [str(e.args.get("merchant", "")).upper() for e in rate_limited_calls(messages)]
        if limited:
            lines.append(f"Rate limited, so not placed and not counted: {', '.join(limited)}; calling again.")
        lines += _recitation(merchants, state, counts)
        return "\n".join(lines)

    def summarize(self, history_text: str) -> str:
        """Outcomes per merchant; the call counts are not carried (see the module docstring)."""
        state: dict[str, tuple[str, int | None]] = {}
        noted: Counter = Counter()
        merchants = PROMPT_MERCHANT.findall(history_text)
        for block in history_text.split("\n["):
            header, disp = HEADER.search(block), DISPOSITION.search(block)
            if header and disp:
                state[header.group(1)] = (disp.group(1), int(disp.group(2)) if disp.group(2) else None)
            else:
                _read_text(block, state, noted)
        lines = _recitation(merchants, state, Counter())
        findings = [line for line in lines if line.startswith(("Accepted", "Declined"))]
        progress = [line for line in lines if line.startswith(("Open", "Given up"))]
        untouched = [m for m in merchants if m not in state]
        progress.append("Not called yet: " + (", ".join(untouched) or "none"))
        return format_summary(findings, tools_used(history_text), failed_attempts(history_text), progress)


def _placed_numbers(messages: list[dict]) -> Counter:
    """The highest number of a visible placed call per merchant, as the message that placed it said.

    The policy writes ``Calling M07 (call #2 of 3)`` in the message that calls, counting the
    calls its notes record, so the number carries forward when earlier calls were cut and
    only their notes are visible. A call counts when its result is visible and is not an
    error (an error is not a placed call).
    """
    placed = {m.get("tool_call_id") for m in messages
              if m.get("role") == "tool" and not str(m.get("content") or "").startswith(ERROR_PREFIX)}
    numbers: Counter = Counter()
    for message in messages:
        if message.get("role") != "assistant":
            continue
        called = {_merchant_of(raw) for call_id, name, raw in iter_calls(message)
                  if name == "call_merchant" and call_id in placed}
        for m, n in CALLING.findall(str(message.get("content") or "")):
            if m in called:
                numbers[m] = max(numbers[m], int(n))
    return numbers


def _batched_numbers(messages: list[dict]) -> Counter:
    """The number of each placed call of a batched turn, counted from the notes written before it.

    A turn that places several calls names only its first in its ``Calling ...`` line; the
    others are numbered the way an LLM recounts ("each has now used 2 of 3 calls"): one more
    than the highest count for that merchant in the visible notes and placed calls up to and
    including that turn's own text. Only turns with two or more placed ``call_merchant``
    calls are numbered here (one-call turns carry their own number), so a one-call-per-step
    agent's counts are exactly what they were. Errors (a rate-limited call) are not placed.
    """
    placed = {m.get("tool_call_id") for m in messages
              if m.get("role") == "tool" and not str(m.get("content") or "").startswith(ERROR_PREFIX)}
    running: Counter = Counter()
    numbers: Counter = Counter()
    for message in messages:
        if message.get("role") != "assistant":
            continue
        text = str(message.get("content") or "")
        for m, n, _outcome, _rate in CALL_NOTE.findall(text):
            running[m] = max(running[m], int(n))
        for m, n in _round_counts(text).items():
            running[m] = max(running[m], n)
        called = [_merchant_of(raw) for call_id, name, raw in iter_calls(message)
                  if name == "call_merchant" and call_id in placed]
        for m in called:
            running[m] += 1
            if len(called) > 1:
                numbers[m] = max(numbers[m], running[m])
        for m, n in CALLING.findall(text):
            if m in called:
                running[m] = max(running[m], int(n))
    return numbers


def _round_line(called: list[str], counts: Counter) -> str:
    """The calls used by the merchants of a batched round, in plain words (``ROUND_COUNT``).

    ``Round of 4 calls done: M01, M02 have each used 2 of 3 calls; M03 has used 1 of 3 calls.``
    It restates the round's call notes grouped by count, the way an LLM keeps its running
    count in its reply, so one missed line does not lose a merchant's count.
    """
    groups: dict[int, list[str]] = {}
    for m in sorted(set(called)):
        groups.setdefault(counts[m], []).append(m)
    parts = [f"{', '.join(ms)} {'have each' if len(ms) > 1 else 'has'} used {n} of {MAX_CALLS} calls"
             for n, ms in sorted(groups.items(), reverse=True)]
    return f"Round of {len(called)} calls done: " + "; ".join(parts) + "."


def _round_counts(text: str) -> Counter:
    """Calls per merchant stated by the round lines (``_round_line``) of a free text."""
    counts: Counter = Counter()
    for group, n in ROUND_COUNT.findall(text):
        for m in MERCHANT_ID.findall(group):
            counts[m] = max(counts[m], int(n))
    return counts


def _candidates(merchants: list[str], state: dict, counts: Counter) -> list[str]:
    """Open merchants (not called yet, call back later, counter-offer) with calls left, fewest calls first."""
    open_ = [m for m in merchants if state.get(m, (None,))[0] in (None, CB, CTR)]
    return sorted((m for m in open_ if counts[m] < MAX_CALLS), key=lambda m: (counts[m], merchants.index(m)))


def _offer(merchant: str, state: dict) -> int:
    """The offer of the next call: a visible counter-offer's rate, else the standard offer."""
    outcome, rate = state.get(merchant, (None, None))
    return rate if outcome == CTR and rate else STANDARD_OFFER


def _accepted(merchants: list[str], state: dict) -> list[str]:
    """The merchants whose latest known outcome is ACCEPTED, sorted."""
    return sorted(m for m in merchants if state.get(m, ("",))[0] == ACC)


def _merchant_of(raw: str | dict | None) -> str:
    """The merchant id of a ``call_merchant`` call's raw arguments (upper case; empty when unreadable)."""
    try:
        return str(parse_arguments(raw).get("merchant", "")).strip().upper()
    except ValueError:
        return ""


def _status_bar_counts(messages: list[dict]) -> Counter:
    """Calls per merchant from the latest visible ``status_bar`` (strategy) message, summed over its
    ``call_merchant`` resource lines (``merchant=M07 2/3``, or ``merchant=M07, offer=9 1`` per offer)."""
    counts: Counter = Counter()
    for resource, (n, _limit) in (status_counts(messages) or {}).get("call_merchant", {}).items():
        match = STATUS_MERCHANT.search(resource)
        if match:
            counts[match.group(1).upper()] += n
    return counts


def _read_text(text: str, state: dict, noted: Counter) -> None:
    """Apply the notes, recitations and status lines of one free text, in order."""
    for line in text.splitlines():
        note = CALL_NOTE.search(line)
        if note:
            m = note.group(1)
            noted[m] = max(noted[m], int(note.group(2)))
            state[m] = (note.group(3), int(note.group(4)) if note.group(4) else None)
            continue
        for a, b, c, d in STATUS_COUNT.findall(line):
            m, n = (a, b) if a else (c, d)
            noted[m] = max(noted[m], int(n))
        for m, n in _round_counts(line).items():
            noted[m] = max(noted[m], n)
        recite = RECITE.search(line)
        if recite:
            kind, items = recite.groups()
            if kind == "Open":
                for m, outcome, rate in OPEN_ITEM.findall(items):
                    state[m] = (outcome, int(rate) if rate else None)
            else:
                value = {"Accepted so far": ACC, "Declined so far": DEC, "Given up": "GAVE UP"}[kind]
                for m in MERCHANT_ID.findall(items):
                    state[m] = (value, None)


def _recitation(merchants: list[str], state: dict, counts: Counter) -> list[str]:
    accepted = [m for m in merchants if state.get(m, ("",))[0] == ACC]
    declined = [m for m in merchants if state.get(m, ("",))[0] == DEC]
    open_, gave_up = [], []
    for m in merchants:
        outcome, rate = state.get(m, (None, None))
        if outcome in (CB, CTR):
            if counts[m] >= MAX_CALLS:
                gave_up.append(m)
            else:
                open_.append(f"{m} ({outcome}{f' {rate}%' if rate else ''})")
        elif outcome == "GAVE UP":
            gave_up.append(m)
    return [f"Accepted so far: {', '.join(accepted) or 'none'}", f"Declined so far: {', '.join(declined) or 'none'}",
            f"Open: {', '.join(open_) or 'none'}", f"Given up: {', '.join(gave_up) or 'none'}"]

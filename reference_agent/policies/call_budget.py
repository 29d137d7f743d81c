"""The reference policy of ``call_budget``: the negotiator who counts its calls from what it can see."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from harness.conversation import iter_calls, parse_arguments
from reference_agent.kit.incremental import PrefixFold, TextMemo, per_request
from reference_agent.kit.ledger import Ledger, newest_ledger, quoted_rules
from reference_agent.kit.limits import within_limit
from reference_agent.policy_kit import (
    ERROR_PREFIX,
    exchanges,
    failed_attempts,
    format_summary,
    latest_results,
    make_call,
    is_rate_limited,
    rate_limited_calls,
    reply,
    status_counts,
    submit,
    tool_texts,
    tools_used,
)
from tasks.call_budget.world import ACC, CB, CTR, DEC, DISPOSITION, HEADER, MAX_CALLS, STANDARD_OFFER

CALL_NOTE = re.compile(
    r"Call note: (M\d{2}) call #(\d+) of \d+: (ACCEPTED|DECLINED|CALL BACK LATER|COUNTER-OFFER) ?(\d+)?"
)
CALLING = re.compile(r"Calling (M\d{2}) \(call #(\d+) of \d+\)")
STATUS_MERCHANT = re.compile(r"merchant=(M\d{2})\b", re.IGNORECASE)
STATUS_COUNT = re.compile(r"calls to (M\d{2}): (\d+)|(M\d{2}): (\d+)/\d+ calls")
RECITE = re.compile(r"(Accepted so far|Declined so far|Open|Given up): ([^\n]*)")
OPEN_ITEM = re.compile(r"(M\d{2}) \((CALL BACK LATER|COUNTER-OFFER) ?(\d+)?%?\)")
MERCHANT_ID = re.compile(r"M\d{2}")
ROUND_COUNT = re.compile(r"((?:M\d{2}, )*M\d{2}) ha(?:ve each|s) used (\d+) of \d+ calls")  # a batched round's counts
PROMPT_MERCHANT = re.compile(r"^- (M\d{2}) ", re.M)
# the ledger (reference_agent/kit/ledger.py): the task's rules quoted, the merchant list,
# each merchant's calls and answer
RULES = (
    re.compile(r"Ask each of these \d+ merchants for a \d+% volume discount with call_merchant\([^)]*\)"),
    re.compile(r"Merchants answer ACCEPTED[^\n]*?offer=N\)\."),
    re.compile(r"At most \d+ calls per merchant in total\."),
    re.compile(r"When every merchant is settled or out of calls[^\n]*?\)\."),
    re.compile(r"The API allows at most \d+ [^\n]*? per turn[^\n]*?\."),
)
MERCHANTS_RULE = re.compile(r"^- Merchants to call: ((?:M\d{2}(?:, )?)+)$", re.M)


class CallBudgetPolicy:
    """Reference policy for ``call_budget`` (see the module docstring)."""

    @staticmethod
    def _state(
        messages: list[dict], folds: tuple | None = None
    ) -> tuple[list[str], dict[str, tuple[str, int | None]], Counter]:
        """Merchants from the task, latest known outcome per merchant, and the call count per merchant.

        Free texts (notes, recitations, a summary, a ``notes`` block) are read first, in order;
        then the visible call results, which override them: a visible result is the newest
        word on its merchant, while a notes block re-injected after the results (strategy
        ``notes``) holds older recitations. The counts come from the newest ledger when one is visible.
        ``folds`` (``_folds()``): folds kept from the previous request, so only the new messages are read.
        """
        folds = folds or _folds()
        read = folds[0]([m for m in messages if m.get("role") in ("user", "assistant")])
        merchants = list(read.merchants)
        state = dict(read.state)
        state.update(folds[1](tool_texts(messages)))
        newest = newest_ledger(messages)
        if newest is not None:  # the ledger's counts plus every call placed since it was written
            return merchants, state, _ledger_counts(newest[1]) + _placed_since(messages[newest[0] :])
        noted = Counter(read.noted)
        visible = Counter(
            str(e.args.get("merchant", "")).upper()
            for e in exchanges(messages)
            if e.name == "call_merchant" and e.result is not None and not e.is_error
        )
        for m, n in _status_bar_counts(messages).items():
            noted[m] = max(noted[m], n)
        for m, n in _placed_numbers(messages).items():
            noted[m] = max(noted[m], n)
        for m, n in _batched_numbers(messages).items():
            noted[m] = max(noted[m], n)
        return merchants, state, Counter({m: max(visible[m], noted[m]) for m in set(visible) | set(noted)})

    @per_request
    def _visible(self, messages: list[dict]) -> tuple[list[str], dict[str, tuple[str, int | None]], Counter]:
        """``_state`` once per request, folding only the messages new since the last one (``kit.incremental``)."""
        folds = self.__dict__.get("_kept_folds")
        if folds is None:
            folds = self._kept_folds = _folds()
        return self._state(messages, folds)

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Call the open merchant with the fewest visible calls, or submit."""
        merchants, state, counts = self._visible(messages)
        note = self._note(messages, state, counts, merchants)
        candidates = _candidates(merchants, state, counts)
        if not candidates:
            return submit(
                note + "\nEvery merchant is settled or out of calls; submitting.", accepted=_accepted(merchants, state)
            )
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
        merchants, state, counts = self._visible(messages)
        return within_limit(
            messages,
            [
                make_call("call_merchant", merchant=m, offer=_offer(m, state))
                for m in _candidates(merchants, state, counts)
                if m != taken
            ],
        )

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The merchants accepted so far, once at least one merchant has been called (else ``None``)."""
        merchants, state, counts = self._visible(messages)
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
                lines.append(
                    f"Call note: {m} call #{counts[m]} of {MAX_CALLS}: {disp.group(1)}"
                    + (f" {disp.group(2)}%" if disp.group(2) else "")
                )
        if len(called) > 1:
            lines.append(_round_line(called, counts))
        limited = [str(e.args.get("merchant", "")).upper() for e in rate_limited_calls(messages)]
        if limited:
            lines.append(f"Rate limited, so not placed and not counted: {', '.join(limited)}; calling again.")
        return "\n".join([*lines, _ledger(messages, merchants, state, counts)])

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
    placed = {
        m.get("tool_call_id")
        for m in messages
        if m.get("role") == "tool" and not str(m.get("content") or "").startswith(ERROR_PREFIX)
    }
    numbers: Counter = Counter()
    for message in messages:
        if message.get("role") != "assistant":
            continue
        called = {
            _merchant_of(raw)
            for call_id, name, raw in iter_calls(message)
            if name == "call_merchant" and call_id in placed
        }
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
    placed = {
        m.get("tool_call_id")
        for m in messages
        if m.get("role") == "tool" and not str(m.get("content") or "").startswith(ERROR_PREFIX)
    }
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
        called = [
            _merchant_of(raw)
            for call_id, name, raw in iter_calls(message)
            if name == "call_merchant" and call_id in placed
        ]
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
    parts = [
        f"{', '.join(ms)} {'have each' if len(ms) > 1 else 'has'} used {n} of {MAX_CALLS} calls"
        for n, ms in sorted(groups.items(), reverse=True)
    ]
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
    for kind, m, value in _text_facts(text):
        if kind == "noted":
            noted[m] = max(noted[m], value)
        else:
            state[m] = value


def _parse_text(text: str) -> tuple[tuple[str, str, Any], ...]:
    """What one free text says, in order: ``("noted", merchant, calls)`` and ``("state", merchant, outcome)``."""
    facts: list[tuple[str, str, Any]] = []
    for line in text.splitlines():
        note = CALL_NOTE.search(line)
        if note:
            m = note.group(1)
            facts.append(("noted", m, int(note.group(2))))
            facts.append(("state", m, (note.group(3), int(note.group(4)) if note.group(4) else None)))
            continue
        for a, b, c, d in STATUS_COUNT.findall(line):
            m, n = (a, b) if a else (c, d)
            facts.append(("noted", m, int(n)))
        for m, n in _round_counts(line).items():
            facts.append(("noted", m, n))
        recite = RECITE.search(line)
        if recite:
            kind, items = recite.groups()
            if kind == "Open":
                for m, outcome, rate in OPEN_ITEM.findall(items):
                    facts.append(("state", m, (outcome, int(rate) if rate else None)))
            else:
                value = {"Accepted so far": ACC, "Declined so far": DEC, "Given up": "GAVE UP"}[kind]
                for m in MERCHANT_ID.findall(items):
                    facts.append(("state", m, (value, None)))
    return tuple(facts)


_text_facts = TextMemo(_parse_text)  # each reply is read again at every later step: parse it once


def _folds() -> tuple[PrefixFold, PrefixFold]:
    """The folds of ``_state``: the free texts (messages), then the call results (texts)."""
    return PrefixFold(_TextState, _read_message), PrefixFold(dict, _read_result)


class _TextState:
    """The free texts folded in order: the merchants (the task's list, or a ledger's when the task is cut),
    the latest outcome per merchant and the highest call count noted per merchant."""

    def __init__(self) -> None:
        self.merchants: list[str] = []
        self.state: dict[str, tuple[str, int | None]] = {}
        self.noted: Counter = Counter()


def _read_message(read: _TextState, message: dict) -> None:
    text = str(message.get("content") or "")
    if message.get("role") == "user" and not read.merchants:
        read.merchants = _prompt_merchants(text)
    if message.get("role") == "assistant" and not read.merchants and MERCHANTS_RULE.search(text):
        read.merchants = MERCHANT_ID.findall(MERCHANTS_RULE.search(text).group(1))  # the task is cut
    _read_text(text, read.state, read.noted)


_prompt_merchants = TextMemo(PROMPT_MERCHANT.findall)


def _read_result(state: dict, text: str) -> None:
    """A visible call result: the newest word on its merchant."""
    outcome = _result_outcome(text)
    if outcome is not None:
        state[outcome[0]] = outcome[1]


def _parse_result(text: str) -> tuple[str, tuple[str, int | None]] | None:
    header, disp = HEADER.search(text), DISPOSITION.search(text)
    if header and disp:
        return header.group(1), (disp.group(1), int(disp.group(2)) if disp.group(2) else None)
    return None


_result_outcome = TextMemo(_parse_result)


LEDGER_COUNT = re.compile(r"^(M\d{2}): (\d+)/\d+ calls")


def _ledger_counts(ledger: Ledger) -> Counter:
    """Each merchant's calls as the ledger's checked lines state them."""
    return Counter({m.group(1): int(m.group(2)) for line in ledger.checked for m in [LEDGER_COUNT.match(line)] if m})


def _placed_since(messages: list[dict]) -> Counter:
    """Calls placed in ``messages`` (from the ledger's own reply on): every call_merchant call whose result is not a
    rate limit or an error; one whose result is out of view counts (it was placed; its answer is unknown)."""
    return Counter(
        _merchant_of(json.dumps(e.args))
        for e in exchanges(messages)
        if e.name == "call_merchant" and not (e.result is not None and e.result.startswith(ERROR_PREFIX))
    )


def _ledger(messages: list[dict], merchants: list[str], state: dict, counts: Counter) -> str:
    """The whole ledger: the rules and the merchant list (rules), who accepted, declined, is open or was given up
    (facts), each called merchant's calls so far and its answer (checked), the merchants not called yet (remaining)."""
    rules = quoted_rules(messages, RULES)
    if merchants and not any(r.startswith("Merchants to call: ") for r in rules):
        rules.append("Merchants to call: " + ", ".join(merchants))
    checked = []
    for m in merchants:
        if counts[m]:
            outcome, rate = state.get(m, (None, None))
            checked.append(
                f"{m}: {counts[m]}/{MAX_CALLS} calls"
                + (f", {outcome}" if outcome else "")
                + (f" {rate}%" if rate else "")
            )
    untouched = [m for m in merchants if not counts[m] and m not in state]
    return Ledger(
        rules=rules,
        facts=_recitation(merchants, state, counts),
        checked=checked,
        remaining=["Not called yet: " + (", ".join(untouched) or "none")],
    ).render()


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
    return [
        f"Accepted so far: {', '.join(accepted) or 'none'}",
        f"Declined so far: {', '.join(declined) or 'none'}",
        f"Open: {', '.join(open_) or 'none'}",
        f"Given up: {', '.join(gave_up) or 'none'}",
    ]

"""What ``python -m harness view`` shows, read from a run folder.

A trial's transcript is replayed in order. The *history* at a step is every message the
loop appended so far: the messages logged right after ``trial_start`` (the initial
history), each ``reply`` and each ``tool`` result of the agent (not of a sub-agent), and
the nudges and hook messages the loop appends (they carry ``_nudge`` / ``_hook``). Each
``request`` is compared with that history by ref and content:

- a history message the request lacks is **cut** (or **replaced**, when a request message
  stands in for it: same ``tool_call_id``, or the same role and ``_step``);
- a request message that is no history message is a **replacement** (``offloaded`` when
  it says so), a **summary** (summary text, or a summarizer call at that step) or an
  **inserted** note or placeholder;
- the rest are **kept**.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from harness.records import STEPS, TRIALS, read_steps, read_transcript, read_trials

KEPT, CUT, REPLACED, OFFLOADED, SUMMARY, INSERTED = "kept", "cut", "replaced", "offloaded", "summary", "inserted"
STEP_EVENTS = ("strategy", "summarizer", "hook", "subagent_start", "subagent_end")


@dataclass
class Slot:
    """One message of a step's request, or one cut from the history, with its mark."""

    ref: str
    message: dict
    mark: str
    stands_for: str | None = None  # the history ref a replacement stands in for, or the ref that replaced a cut one


@dataclass
class StepView:
    """One agent request: the prepared request, what was cut, and what happened at that step."""

    index: int
    step: int
    tokens: int | None
    history_size: int
    request: list[Slot]
    cut: list[Slot]
    row: dict = field(default_factory=dict)  # the steps.jsonl row (kind agent)
    events: list[dict] = field(default_factory=list)  # strategy, summarizer, hook and sub-agent events
    tools: list[dict] = field(default_factory=list)  # the agent's tool events
    reply: str | None = None  # ref of the model's reply

    @property
    def cache_break(self) -> Any:
        """The step's ``cache_break`` from steps.jsonl (None when the prefix cache held)."""
        return self.row.get("cache_break")


@dataclass
class TrialView:
    """One trial: its row, its transcript's messages and its steps."""

    trial_id: str
    row: dict
    start: dict
    end: dict
    messages: dict[str, dict]
    steps: list[StepView]


def _in_history(message: dict) -> bool:
    """Loop-appended messages that are logged only when a request first includes them."""
    return bool(message.get("_nudge") or message.get("_hook"))


def _replaced_key(message: dict) -> tuple | None:
    """What a replacement shares with the message it replaces."""
    if message.get("tool_call_id"):
        return ("tool", message["tool_call_id"])
    if message.get("role") == "system":
        return ("system",)
    if message.get("_step") is not None:
        return (message.get("role"), message["_step"])
    return None


def _new_mark(message: dict, summarized: bool) -> str:
    """The mark of a request message that is no history message and replaces none."""
    text = str(message.get("content") or "")
    if text.startswith("[summary") or (summarized and "summary" in text.lower()):
        return SUMMARY
    if "offloaded" in text[:40]:
        return OFFLOADED
    return INSERTED


def compare(
    refs: list[str], history: list[str], messages: dict[str, dict], summarized: bool = False
) -> tuple[list[Slot], list[Slot]]:
    """The request's slots and the cut history messages, marked (see the module docstring)."""
    in_request, in_history = set(refs), set(history)
    missing: dict[tuple, str] = {}  # replaced key -> the first cut history ref with that key
    for ref in history:
        key = _replaced_key(messages.get(ref, {}))
        if ref not in in_request and key is not None:
            missing.setdefault(key, ref)
    slots, replaced_by = [], {}
    for ref in refs:
        message = messages.get(ref, {})
        if ref in in_history:
            slots.append(Slot(ref, message, KEPT))
            continue
        key = _replaced_key(message)
        old = missing.get(key) if key is not None else None
        if old is not None and old not in replaced_by:
            replaced_by[old] = ref
            text = str(message.get("content") or "")
            mark = OFFLOADED if "offloaded" in text[:40] else SUMMARY if text.startswith("[summary") else REPLACED
            slots.append(Slot(ref, message, mark, stands_for=old))
        else:
            slots.append(Slot(ref, message, _new_mark(message, summarized)))
    cut = [
        Slot(ref, messages.get(ref, {}), REPLACED if ref in replaced_by else CUT, replaced_by.get(ref))
        for ref in history
        if ref not in in_request
    ]
    return slots, cut


def _attach(steps: list[StepView], events: list[dict], rows: Mapping[int | None, dict]) -> None:
    """Give each step its steps.jsonl row, its events, tool calls and reply (by step number)."""
    # an event without a step looks up None and finds no step
    by_step: dict[int | None, StepView] = {view.step: view for view in steps}  # a repeated step: the last request
    for view in steps:
        view.row = rows.get(view.step, {})
    for event in events:
        target = by_step.get(event.get("step"))
        if target is None:
            continue
        kind = event["event"]
        if kind == "tool" and "subagent" not in event:
            target.tools.append(event)
        elif kind == "reply":
            target.reply = event.get("ref")
        elif kind in STEP_EVENTS or (kind == "tool" and "subagent" in event):
            target.events.append(event)


def replay(events: list[dict], rows: Mapping[int | None, dict]) -> tuple[dict[str, dict], list[StepView]]:
    """The messages by ref and the step views of one transcript."""
    messages: dict[str, dict] = {}
    history: list[str] = []
    seen: set[str] = set()
    steps: list[StepView] = []
    initial = False
    summarized: set[Any] = set()

    def append(ref: str | None) -> None:
        if ref and ref not in seen:
            seen.add(ref)
            history.append(ref)

    for event in events:
        kind = event.get("event")
        if kind == "message":
            messages[event["ref"]] = event.get("message") or {}
            if initial or _in_history(messages[event["ref"]]):
                append(event["ref"])
            continue
        initial = kind == "trial_start"
        if kind in ("reply",) or (kind == "tool" and "subagent" not in event):
            append(event.get("ref"))
        elif kind == "summarizer":
            summarized.add(event.get("step"))
        elif kind == "request":
            refs = list(event.get("refs") or [])
            request, cut = compare(refs, history, messages, event.get("step") in summarized)
            steps.append(
                StepView(len(steps), event.get("step", len(steps) + 1), event.get("tokens"), len(history), request, cut)
            )
    _attach(steps, events, rows)
    return messages, steps


def load_trial(run_dir: Path, row: dict, step_rows: list[dict]) -> TrialView:
    """One trial of a run folder."""
    trial_id = row["trial_id"]
    events = read_transcript(run_dir, trial_id)
    rows: dict[int | None, dict] = {
        r.get("step"): r for r in step_rows if r.get("trial_id") == trial_id and r.get("kind", "agent") == "agent"
    }
    messages, steps = replay(events, rows)
    start = next((e for e in events if e.get("event") == "trial_start"), {})
    end = next((e for e in events if e.get("event") == "trial_end"), {})
    return TrialView(trial_id, row, start, end, messages, steps)


def load_run(run_dir: Path, trial: str | None = None) -> list[TrialView]:
    """The trials of a run folder (only ``trial`` when given: an id or a unique prefix of one)."""
    run_dir = Path(run_dir)
    if not (run_dir / TRIALS).exists():
        raise FileNotFoundError(f"{run_dir}: not a run folder (no {TRIALS})")
    rows = read_trials(run_dir / TRIALS)  # the valid rows: view says which lines it skipped (corruption_notes)
    if trial is not None:
        exact = [r for r in rows if r["trial_id"] == trial]
        rows = exact or [r for r in rows if r["trial_id"].startswith(trial)]
        if len(rows) != 1:
            found = "no trial" if not rows else f"{len(rows)} trials"
            raise LookupError(f"{found} matching {trial!r} in {run_dir}")
    step_rows = read_steps(run_dir / STEPS)
    return [load_trial(run_dir, row, step_rows) for row in rows]

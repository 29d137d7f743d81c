"""Loop hooks (source 000 §7.4): a start hook that asks for a plan, a stop hook that checks completion.

* Start hook (``hooks.plan``): a planning instruction is added after the task, before the
  first model call.
* Stop hook (``hooks.completion_check``): when the agent submits, an independent check
  decides whether the work is complete. If not, the submission is refused with a
  "continue" message (as the ``submit`` tool's result), up to ``hooks.max_continues`` times.
  For the reference agent the check is code: the task instance's
  ``completion_check(visible_messages, answer) -> str | None`` judges what the agent can
  show for its work in the request it submitted from (for example, files listed but with no
  review visible). For an LLM backend it is one model call to the agent's model, billed as
  its own kind of call (``kind=stop_hook``).
Both are recorded as ``hook`` events in the transcript.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from harness.conversation import render_history
from harness.models.base import Completion

PLAN_INSTRUCTION = (
    "[start hook] Before your first action, write a short numbered plan for this task in your reply, "
    "then follow it. Keep track of what is done and what remains."
)
CONTINUE_MESSAGE = (
    "[stop hook] Your submission was not accepted yet: the completion check found unfinished work: {gaps}. "
    "Continue the task, then call submit again."
)
JUDGE_PROMPT = (
    "You are an independent completion checker for an agent's task. Read the task, the agent's visible work "
    "and its answer. Reply with exactly COMPLETE if the work covers everything the task asks for, or "
    "INCOMPLETE: <what is missing, one line> otherwise."
)


@dataclass(frozen=True)
class Hooks:
    """Which loop hooks are on. ``max_continues`` caps the stop hook's refusals per trial."""

    plan: bool = False
    completion_check: bool = False
    max_continues: int = 2


def completion_gaps(
    instance: Any, model: Any, request: list[dict], answer: dict, judge: Callable[[list[dict]], Completion]
) -> str | None:
    """What is unfinished (one line), or ``None`` when the check accepts the submission."""
    if getattr(model, "is_reference", False):
        check = getattr(instance, "completion_check", None)
        return check(request, answer) if callable(check) else None
    verdict = judge(
        [
            {"role": "system", "content": JUDGE_PROMPT},
            {"role": "user", "content": f"{render_history(request)}\n\n[answer]: {answer}"},
        ]
    )
    text = str(verdict.message.get("content") or "").strip()
    if text.upper().startswith("INCOMPLETE"):
        return text.split(":", 1)[1].strip() if ":" in text else "the checker found the work incomplete"
    return None

"""The per-trial objects a strategy and the transcript see: ``TrialContext`` and ``MessageTable``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from harness.records import Transcript, remove_store
from harness.summarizer import summary_request
from harness.tokens import CountsTokens, TokenCounter


class MessageTable:
    """Gives every distinct message a short ref (``m0``, ``m1`` ...) and logs its body once.

    Look-ups are by identity first, so a step costs O(new messages); a rebuilt message
    with the same content gets the same ref.
    """

    def __init__(self, transcript: Transcript) -> None:
        self._transcript = transcript
        self._by_id: dict[int, tuple[dict, str]] = {}
        self._by_content: dict[str, str] = {}

    def ref(self, message: dict) -> str:
        """The ref of ``message``, logging its body the first time it is seen."""
        entry = self._by_id.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1]
        key = json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)
        ref = self._by_content.get(key)
        if ref is None:
            ref = f"m{len(self._by_content)}"
            self._by_content[key] = ref
            self._transcript.message(ref, message, key)
        self._by_id[id(message)] = (message, ref)
        return ref


class TrialContext(CountsTokens):
    """The ``StrategyContext`` of one trial (see harness/contracts.py)."""

    def __init__(
        self,
        budget: int,
        counter: TokenCounter,
        store: Path,
        transcript: Transcript,
        summarizer_call: Callable[[list[dict]], str],
        subagent_runner: Callable[..., str],
    ) -> None:
        self.budget = budget
        self.store = store
        remove_store(store)  # every attempt starts from an empty store: nothing an aborted attempt left
        self.counter = counter
        self.tools: list[dict] = []
        self.step = 0
        self.compactions = 0
        self.events_this_step: list[str] = []
        self.subagent: int | None = None  # the sub-agent run this context belongs to (None: the main agent)
        self._transcript = transcript
        self._summarizer_call = summarizer_call  # (request) -> summary text; records the call
        self._subagent_runner = subagent_runner  # (task, max_steps) -> conclusion; records its calls

    def summarize(self, messages: list[dict], instructions: str = "") -> str:
        """Call the summarizer model on ``messages``; billed to the trial as a summarizer call."""
        return self._summarizer_call(summary_request(messages, instructions))

    def run_subagent(self, task: str, max_steps: int = 60, strategy: Any = None, budget: int | None = None) -> str:
        """Run a sub-agent with a fresh context on ``task``; billed apart (``kind=subagent``).

        ``strategy`` (a fresh, unbound strategy object) manages the sub-agent's context under
        ``budget`` (default: the trial's budget); without one the sub-agent is unmanaged.
        """
        return self._subagent_runner(task, max_steps, strategy, budget)

    def log(self, event: str, **data: Any) -> None:
        """Record a strategy event; ``compaction`` events are counted in the trial row."""
        if event == "compaction":
            self.compactions += 1
        self.events_this_step.append(event)
        marker = {"subagent": self.subagent} if self.subagent is not None else {}
        self._transcript.event("strategy", step=self.step, name=event, data=data, **marker)

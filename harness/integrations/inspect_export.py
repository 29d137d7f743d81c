"""Run folders as inspect_ai eval logs: ``python -m harness export RUN... --to inspect DIR`` (the ``inspect`` extra).

Each run folder (``trials.jsonl``, ``steps.jsonl``, ``transcripts/``) becomes one ``.eval`` log, and each
job folder of a sweep one log of its own, built from inspect's log API (``EvalLog``, ``EvalSample``,
``ModelEvent`` ...) and written by ``write_eval_log``; ``inspect view --log-dir DIR`` browses them all.

- **Log.** ``task`` is ``<strategy>@<budget>`` (what differs between the logs of a sweep); the suite is
  the dataset; ``model`` is ``ctxbench/<model>``. The eval's ``metadata`` and ``task_args`` hold the
  strategy, its parameters, the budget and the suite; ``model_args`` says when the model is the
  scripted reference agent (a policy, not an LLM), as do the tags (``reference-agent``).
- **Samples.** One per trial: ``id`` is the task instance, ``epoch`` the trial index + 1. ``input`` is the
  trial's first messages but the system prompt (the task), ``messages`` the full history the loop kept, ``output`` the
  last reply. ``metadata``: the strategy, its parameters, the budget, the outcome, the compaction events
  (step and data) and the trial's whole ``trials.jsonl`` row (``trial_row``).
- **Scores.** ``success`` (``C``/``I``, the grader's verdict; its ``explanation`` names the outcome and its
  ``metadata`` holds ``outcome``, ``score`` and the grader's detail) and ``score`` (the grader's 0-1
  score). ``model_error`` / ``strategy_error`` trials carry the sample ``error``; ``step_limit`` and
  ``context_overflow`` the sample ``limit`` (``turn``, ``context``).
- **Events.** One ``ModelEvent`` per model call, in order: an agent call's ``input`` is the prepared
  request (what the strategy sent at that step, from the transcript), its ``output`` the reply with the
  call's usage; summarizer calls are ``ModelEvent`` s with ``role="summarizer"`` (their request and
  reply); sub-agent and stop-hook calls, whose messages the transcript does not hold, are
  ``ModelEvent`` s with their usage only (``role`` ``subagent`` / ``stop_hook``; a sub-agent's calls sit in
  a span with its tool calls). Tool results are ``ToolEvent`` s, ``compaction`` strategy events are
  ``CompactionEvent`` s (``tokens_before``: the history's message tokens, ``tokens_after``: the request's
  tokens, tool schemas included, unless the strategy logged its own), other strategy and hook events
  ``InfoEvent`` s.
- **Usage.** ctxbench's ``prompt_tokens`` count every input token; inspect's ``input_tokens`` exclude cache
  reads and writes, so ``input_tokens = prompt - cached - cache_write``, ``input_tokens_cache_read =
  cached`` (simulated for the reference agent: ``cached_source`` in each event's metadata),
  ``input_tokens_cache_write = cache_write``. A sample's ``model_usage`` sums every call of the trial
  (``total_input_tokens`` = input + cache read + cache write, ``total_cached_tokens``,
  ``total_output_tokens`` of ``trials.jsonl``); ``role_usage`` splits it by kind of call.

Times: a trial's events are stamped from its ``started_at`` plus the recorded latencies.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
import sys
from collections import defaultdict, deque
from datetime import datetime, timedelta, timezone
from importlib import metadata as package_metadata
from pathlib import Path
from typing import Any, Iterable

from inspect_ai.event import CompactionEvent, InfoEvent, ModelEvent, SpanBeginEvent, SpanEndEvent, ToolEvent
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalError,
    EvalLog,
    EvalMetric,
    EvalPlan,
    EvalPlanStep,
    EvalResults,
    EvalSample,
    EvalSampleLimit,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import CORRECT, INCORRECT, Score
from inspect_ai.tool import ToolCallError, ToolInfo, ToolParams
from pydantic import ValidationError

from harness.budget import format_budget
from harness.errors import UsageError
from harness.integrations.inspect_messages import from_dict
from harness.records import STEPS, TRIALS, corruption_notes, read_steps, read_transcript, read_trials, trial_files

FORMAT = "inspect"
AGENT = "agent"
ERROR_OUTCOMES = ("model_error", "strategy_error")
LIMITS = {"step_limit": "turn", "context_overflow": "context"}
SUMMARY_WORDS = ("summar", "compaction", "layered", "context_aware")
EDIT_KEYS = ("cleared", "edit", "id")


# ---------------------------------------------------------------- folders


def run_folders(target: Path) -> list[Path]:
    """The run folders of ``target``: itself when it holds ``trials.jsonl``, else every job folder below it."""
    folders = [path.parent for path in trial_files(Path(target))]
    if not folders:
        raise FileNotFoundError(f"{target}: not a run or sweep folder (no {TRIALS} in it or below it)")
    return folders


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _stable_id(*parts: str) -> str:
    """A 22-character id derived from ``parts`` (the same run exports with the same ids)."""
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:22]


# ---------------------------------------------------------------- usage and messages


def usage_of(row: dict) -> ModelUsage:
    """inspect's usage of one ``steps.jsonl`` row (input tokens without cache reads and writes)."""
    prompt, cached = int(row.get("prompt_tokens") or 0), int(row.get("cached_tokens") or 0)
    write, output = int(row.get("cache_write_tokens") or 0), int(row.get("output_tokens") or 0)
    return ModelUsage(
        input_tokens=max(prompt - cached - write, 0),
        output_tokens=output,
        total_tokens=prompt + output,
        input_tokens_cache_read=cached,
        input_tokens_cache_write=write,
        reasoning_tokens=row.get("reasoning_tokens") or None,
        total_cost=row.get("cost"),
    )


def _sum_usage(usages: Iterable[ModelUsage]) -> ModelUsage:
    total = ModelUsage(input_tokens_cache_read=0, input_tokens_cache_write=0)  # zeros, not "unreported", without calls
    for usage in usages:
        total = total + usage
    return total


def tool_infos(tools: list[dict]) -> list[ToolInfo]:
    """inspect tool definitions of OpenAI-shaped schemas (a schema inspect cannot take keeps name and description)."""
    infos = []
    for tool in tools or []:
        function = tool.get("function") or {}
        try:
            params = ToolParams(**(function.get("parameters") or {}))
        except (ValidationError, TypeError):
            params = ToolParams()
        infos.append(
            ToolInfo(
                name=str(function.get("name", "")),
                description=str(function.get("description") or ""),
                parameters=params,
            )
        )
    return infos


class Messages:
    """The inspect messages of one transcript, by ref (one object per ref, its id ``<trial>/<ref>``)."""

    def __init__(self, trial_id: str) -> None:
        self.trial_id = trial_id
        # by ref as the transcript gives it: an event without a ref is kept (and looked up) under None
        self.dicts: dict[str | None, dict] = {}
        self._made: dict[str | None, ChatMessage] = {}

    def add(self, ref: str | None, message: dict) -> None:
        """Remember a ``message`` event."""
        self.dicts[ref] = message or {}

    def get(self, ref: str | None) -> ChatMessage | None:
        """The inspect message of ``ref`` (None for an unknown ref or one inspect cannot map)."""
        if ref not in self._made and ref in self.dicts:
            try:
                self._made[ref] = from_dict(self.dicts[ref], f"{self.trial_id}/{ref}")
            except ValueError:
                return None
        return self._made.get(ref)

    def of(self, refs: Iterable[str | None]) -> list[ChatMessage]:
        """The inspect messages of ``refs``, in order."""
        return [m for m in (self.get(ref) for ref in refs) if m is not None]


# ---------------------------------------------------------------- one trial's events


class Clock:
    """Event times of one trial: its start plus the latencies recorded so far."""

    def __init__(self, started_at: str | None) -> None:
        self.start = _parse_time(started_at)
        self.elapsed = 0.0

    def stamp(self) -> dict:
        """``timestamp`` and ``working_start`` for the next event."""
        return {"timestamp": self.start + timedelta(seconds=self.elapsed), "working_start": self.elapsed}

    def advance(self, seconds: float) -> None:
        """Add a call's latency."""
        self.elapsed += max(float(seconds or 0.0), 0.0)


def _parse_time(text: str | None) -> datetime:
    try:
        moment = datetime.fromisoformat(str(text))
    except ValueError:
        return datetime(1970, 1, 1, tzinfo=timezone.utc)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def compaction_type(data: dict, summarized: bool) -> str:
    """inspect's compaction type of a ``compaction`` strategy event: ``summary``, ``edit`` or ``trim``."""
    method = str(data.get("method") or "")
    if summarized or data.get("summarizer_calls") or any(word in method for word in SUMMARY_WORDS):
        return "summary"
    if method == "offload" or any(key in data for key in EDIT_KEYS):
        return "edit"
    return "trim"


class TrialEvents:
    """Replays one transcript (with its ``steps.jsonl`` rows) into inspect events, the history and the compactions."""

    def __init__(self, trial_id: str, model: str, rows: list[dict], started_at: str | None) -> None:
        self.model = model
        self.messages = Messages(trial_id)
        self.clock = Clock(started_at)
        self.events: list[Any] = []
        self.history: list[str] = []
        self.initial: list[str | None] = []  # refs of the messages before the first request
        self.compactions: list[dict] = []
        self.tools: list[ToolInfo] = []
        self.last_reply: ChatMessageAssistant | None = None
        self._rows = {
            kind: [r for r in rows if r.get("kind", AGENT) == kind] for kind in ("summarizer", "subagent", "stop_hook")
        }
        self._agent_rows: dict[Any, deque[dict]] = defaultdict(deque)
        for row in rows:
            if row.get("kind", AGENT) == AGENT:
                self._agent_rows[row.get("step")].append(row)
        self._used: set[int] = set()
        self._pending: ModelEvent | None = None
        self._summarized: set[Any] = set()
        self._request_tokens: dict[Any, int | None] = {}  # by step; None for a request without its tokens
        self._starting = False
        self._span: str | None = None

    # -- the replay

    def replay(self, events: list[dict]) -> None:
        """Turn every transcript event into inspect events, in order."""
        for event in events:
            kind = event.get("event")
            handler = getattr(self, f"_on_{kind}", None)
            self._starting = self._starting and kind == "message"
            if handler is not None:
                handler(event)
        for kind in self._rows:  # calls no transcript event placed: at the end, so the usage is complete
            self._usage_calls(kind, lambda row: True)

    def _on_trial_start(self, event: dict) -> None:
        self.tools = tool_infos(event.get("tools") or [])
        self._starting = True

    def _on_message(self, event: dict) -> None:
        ref, message = event.get("ref"), event.get("message") or {}
        self.messages.add(ref, message)
        if self._starting:
            self.initial.append(ref)
        if self._starting or message.get("_nudge") or message.get("_hook"):
            self._append(ref)

    def _on_request(self, event: dict) -> None:
        step = event.get("step")
        self._request_tokens[step] = event.get("tokens")
        rows = self._agent_rows.get(step)
        row = rows.popleft() if rows else {}
        offered = event.get("tools_offered")
        tools = [t for t in self.tools if t.name in offered] if offered is not None else self.tools
        self._pending = self._model_event(
            AGENT,
            row,
            self.messages.of(event.get("refs") or []),
            tools,
            {"step": step, "request_tokens": event.get("tokens"), "history_messages": len(self.history)},
        )
        self._emit(self._pending)

    def _on_reply(self, event: dict) -> None:
        ref = event.get("ref")
        self._append(ref)
        reply = self.messages.get(ref)
        if isinstance(reply, ChatMessageAssistant):
            self.last_reply = reply
            if self._pending is not None:
                stop = "tool_calls" if reply.tool_calls else "stop"
                self._pending.output.choices = [ChatCompletionChoice(message=reply, stop_reason=stop)]
                self._pending.output.completion = reply.text
        self._pending = None

    def _on_tool(self, event: dict) -> None:
        if "subagent" in event:
            self._emit(self._tool_event(event, event.get("content"), None))
            return
        ref = event.get("ref")
        self._append(ref)
        message = self.messages.dicts.get(ref, {})
        self._emit(self._tool_event(event, message.get("content"), message.get("tool_call_id")))

    def _on_summarizer(self, event: dict) -> None:
        step = event.get("step")
        self._summarized.add(step)
        row = self._take("summarizer", lambda r: r.get("step") == step)
        made = self._model_event(
            "summarizer", row or {}, self.messages.of(event.get("request") or []), [], {"step": step}
        )
        reply = ChatMessageAssistant(content=str(event.get("reply") or ""))
        made.output.choices = [ChatCompletionChoice(message=reply, stop_reason="stop")]
        made.output.completion = reply.text
        self._emit(made)

    def _on_strategy(self, event: dict) -> None:
        data = dict(event.get("data") or {})
        step, name = event.get("step"), str(event.get("name") or "")
        where = {"subagent": event["subagent"]} if "subagent" in event else {}
        if name != "compaction":
            self._emit(
                InfoEvent(
                    source="ctxbench strategy",
                    data={"event": name, "step": step, **where, **data},
                    **self.clock.stamp(),
                )
            )
            return
        self.compactions.append({"step": step, **where, **data})
        row = next(iter(self._agent_rows.get(step) or []), {})
        before = data.get("tokens_before", row.get("history_tokens"))
        self._emit(
            CompactionEvent(
                type=compaction_type(data, step in self._summarized),
                source=str(data.get("method") or "ctxbench"),
                tokens_before=before if isinstance(before, int) else None,
                tokens_after=data.get("tokens_after") if isinstance(data.get("tokens_after"), int) else None,
                metadata={"step": step, **where, **data},
                **self.clock.stamp(),
            )
        )

    def _on_hook(self, event: dict) -> None:
        self._emit(
            InfoEvent(
                source="ctxbench hook", data={k: v for k, v in event.items() if k != "event"}, **self.clock.stamp()
            )
        )
        step = event.get("step")
        self._usage_calls("stop_hook", lambda row: row.get("step") == step)

    def _on_subagent_start(self, event: dict) -> None:
        name = f"sub-agent {event.get('subagent')}"
        self._emit(SpanBeginEvent(id=self._span_id(event), name=name, type="agent", **self.clock.stamp()))
        self._span = self._span_id(event)
        self._emit(
            InfoEvent(
                source="ctxbench sub-agent", data={k: v for k, v in event.items() if k != "event"}, **self.clock.stamp()
            )
        )

    def _on_subagent_end(self, event: dict) -> None:
        run = event.get("subagent")
        self._usage_calls("subagent", lambda row: row.get("subagent") == run)
        self._emit(
            InfoEvent(
                source="ctxbench sub-agent", data={k: v for k, v in event.items() if k != "event"}, **self.clock.stamp()
            )
        )
        self._span = None
        self._emit(SpanEndEvent(id=self._span_id(event), **self.clock.stamp()))

    def _on_trial_end(self, event: dict) -> None:
        if self._pending is not None:  # a request that got no reply: the call failed, the trial ended
            self._pending.error = str(event.get("error") or event.get("outcome") or "no reply")
            self._pending = None
        self._fill_compaction_sizes()

    # -- helpers

    def _emit(self, event: Any) -> None:
        """Add an event, inside the sub-agent span in progress when there is one."""
        if self._span is not None and event.span_id is None:
            event.span_id = self._span
        self.events.append(event)

    def _append(self, ref: str | None) -> None:
        if ref and ref not in self.history:
            self.history.append(ref)

    def _span_id(self, event: dict) -> str:
        return f"{self.messages.trial_id}/subagent-{event.get('subagent')}"

    def _take(self, kind: str, wanted: Any) -> dict | None:
        """The first unused ``steps.jsonl`` row of ``kind`` that ``wanted`` accepts (marked used)."""
        for row in self._rows[kind]:
            if id(row) not in self._used and wanted(row):
                self._used.add(id(row))
                return row
        return None

    def _usage_calls(self, kind: str, wanted: Any) -> None:
        """Usage-only model events for the unused rows of ``kind`` that ``wanted`` accepts."""
        while (row := self._take(kind, wanted)) is not None:
            meta = {"step": row.get("step"), "note": "usage only: the transcript does not hold this call's messages"}
            if "subagent" in row:
                meta.update(subagent=row["subagent"], substep=row.get("substep"))
            self._emit(self._model_event(kind, row, [], [], meta))

    def _model_event(
        self, kind: str, row: dict, messages: list[ChatMessage], tools: list[ToolInfo], meta: dict
    ) -> ModelEvent:
        """One model call: its request, an empty output (filled by the reply) with the row's usage, and the
        row's figures."""
        stamp = self.clock.stamp()
        latency = float(row.get("latency_s") or 0.0)
        self.clock.advance(latency)
        usage = usage_of(row) if row else None
        figures = {
            key: row[key]
            for key in (
                "cached_source",
                "tokens_source",
                "cost",
                "cache_break",
                "from_cache",
                "history_tokens",
                "over_budget",
                "budget_ratio",
            )
            if key in row
        }
        return ModelEvent(
            model=self.model,
            role=None if kind == AGENT else kind,
            input=messages,
            tools=tools,
            tool_choice="auto",
            config=GenerateConfig(),
            output=ModelOutput(model=self.model, usage=usage, time=latency),
            working_time=latency,
            completed=stamp["timestamp"] + timedelta(seconds=latency),
            metadata={"kind": kind, **meta, **figures},
            **stamp,
        )

    def _tool_event(self, event: dict, content: Any, call_id: str | None) -> ToolEvent:
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        error = ToolCallError("unknown", str(content or "")) if event.get("is_error") else None
        meta = {"step": event.get("step"), "resource": event.get("resource")}
        if "subagent" in event:
            meta["subagent"] = event["subagent"]
        return ToolEvent(
            id=str(call_id or f"{self.messages.trial_id}/step-{event.get('step')}-{event.get('name')}"),
            function=str(event.get("name") or ""),
            arguments=args,
            result=str(content or ""),
            error=error,
            metadata=meta,
            **self.clock.stamp(),
        )

    def _fill_compaction_sizes(self) -> None:
        """A compaction event without its own ``tokens_after`` gets the tokens of the request it prepared."""
        for event in self.events:
            if isinstance(event, CompactionEvent) and event.tokens_after is None:
                tokens = self._request_tokens.get((event.metadata or {}).get("step"))
                event.tokens_after = tokens if isinstance(tokens, int) else None

    def usage_by_kind(self) -> dict[str, ModelUsage]:
        """The trial's usage per kind of call (every model event's)."""
        by_kind: dict[str, list[ModelUsage]] = defaultdict(list)
        for event in self.events:
            if isinstance(event, ModelEvent) and event.output.usage is not None:
                by_kind[event.role or AGENT].append(event.output.usage)
        return {kind: _sum_usage(usages) for kind, usages in by_kind.items()}


# ---------------------------------------------------------------- one trial's sample


def agent_note(row: dict) -> str:
    """What the model of a trial is, in words (the reference agent is no LLM)."""
    if row.get("reference_agent"):
        profile = f" (profile {row['agent_profile']})" if row.get("agent_profile") else ""
        return f"scripted reference agent{profile}: a policy, not an LLM"
    return f"LLM {row.get('model')}"


def sample_scores(row: dict, answer: Any) -> dict[str, Score]:
    """The grader's verdict (``success``: C/I, with the outcome) and its 0-1 ``score``."""
    outcome = row.get("outcome")
    detail = {"outcome": outcome, "score": row.get("score"), "grade_detail": row.get("grade_detail")}
    text = None if answer is None else json.dumps(answer, ensure_ascii=False, default=str)
    verdict = "success" if row.get("success") else "no success"
    return {
        "success": Score(
            value=CORRECT if row.get("success") else INCORRECT,
            answer=text,
            explanation=f"outcome {outcome}; {verdict}, score {row.get('score')}",
            metadata=detail,
        ),
        "score": Score(value=float(row.get("score") or 0.0), answer=text, metadata=detail),
    }


def sample_metadata(row: dict, compactions: list[dict]) -> dict:
    """The strategy, its parameters, the budget, the outcome, the compaction events and the whole trial row."""
    return {
        "strategy": row.get("strategy"),
        "strategy_class": row.get("strategy_class"),
        "strategy_params": row.get("strategy_params") or {},
        "budget": row.get("budget"),
        "family": row.get("family"),
        "seed": row.get("seed"),
        "trial": row.get("trial"),
        "trial_id": row.get("trial_id"),
        "outcome": row.get("outcome"),
        "reference_agent": bool(row.get("reference_agent")),
        "agent": agent_note(row),
        "compactions": row.get("compactions", len(compactions)),
        "compaction_events": compactions,
        "peak_context": row.get("peak_context"),
        "steps": row.get("steps"),
        "trial_row": row,
    }


def _error_and_limit(row: dict, settings: dict) -> tuple[EvalError | None, EvalSampleLimit | None]:
    """The sample's error (model or strategy error) or limit (step limit, context overflow)."""
    outcome, message = row.get("outcome"), str(row.get("error") or row.get("outcome") or "")
    if outcome in ERROR_OUTCOMES:
        return EvalError(message=f"{outcome}: {message}", traceback="", traceback_ansi=""), None
    if outcome in LIMITS:
        limit = (
            settings.get("max_steps")
            if outcome == "step_limit"
            else (settings.get("model") or {}).get("context_window")
        )
        return None, EvalSampleLimit(type=LIMITS[outcome], limit=float(limit or 0), reason=message)
    return None, None


def trial_sample(run_dir: Path, row: dict, rows: list[dict], model: str, settings: dict) -> EvalSample:
    """The sample of one trial: its prepared requests and calls as events, its history, scores and usage."""
    trial_id = row["trial_id"]
    events = read_transcript(run_dir, trial_id)
    replay = TrialEvents(trial_id, model, rows, row.get("started_at"))
    replay.replay(events)
    end = next((e for e in events if e.get("event") == "trial_end"), {})
    by_kind = replay.usage_by_kind()
    started = replay.clock.start
    wall = float(row.get("wall_s") or 0.0)
    error, limit = _error_and_limit(row, settings)
    output = ModelOutput(model=model)
    if replay.last_reply is not None:
        output.choices = [ChatCompletionChoice(message=replay.last_reply, stop_reason="stop")]
        output.completion = replay.last_reply.text
    return EvalSample(
        id=str(row.get("instance_id") or trial_id),
        epoch=int(row.get("trial") or 0) + 1,
        input=[m for m in replay.messages.of(replay.initial) if m.role != "system"] or "",
        target="",
        messages=replay.messages.of(replay.history),
        output=output,
        scores=sample_scores(row, end.get("answer")),
        metadata=sample_metadata(row, replay.compactions),
        events=replay.events,
        model_usage={model: _sum_usage(by_kind.values())},
        role_usage=by_kind,
        started_at=started,
        completed_at=started + timedelta(seconds=wall),
        total_time=wall,
        working_time=wall,
        uuid=_stable_id(str(run_dir.resolve()), trial_id),
        error=error,
        limit=limit,
        turn_count=row.get("steps"),
    )


# ---------------------------------------------------------------- one run's log


def model_name(row: dict) -> str:
    """inspect's model name of a run: ``ctxbench/<model>`` (a name with a provider already is kept)."""
    name = str(row.get("model") or "unknown")
    return name if "/" in name else f"ctxbench/{name}"


def _version(package: str) -> str:
    try:
        return package_metadata.version(package)
    except package_metadata.PackageNotFoundError:
        return "unknown"


def _results(samples: list[EvalSample]) -> EvalResults:
    """The scores over all samples: accuracy of ``success``, mean of ``score``."""
    n = len(samples)
    success = sum(s.scores["success"].value == CORRECT for s in samples) / n if n else 0.0
    mean = sum(float(s.scores["score"].value) for s in samples) / n if n else 0.0
    return EvalResults(
        total_samples=n,
        completed_samples=n,
        scores=[
            EvalScore(
                name="success",
                scorer="success",
                scored_samples=n,
                metrics={"accuracy": EvalMetric(name="accuracy", value=success)},
            ),
            EvalScore(
                name="score", scorer="score", scored_samples=n, metrics={"mean": EvalMetric(name="mean", value=mean)}
            ),
        ],
    )


def _spec(run_dir: Path, first: dict, settings: dict, samples: list[EvalSample], eval_id: str) -> EvalSpec:
    """The eval's spec: task ``<strategy>@<budget>``, the suite as dataset, the ctxbench settings as metadata."""
    budget = first.get("budget")
    label = format_budget(budget) if isinstance(budget, int) and budget > 0 else str(budget)
    suite = (settings.get("suite") or {}).get("name") or run_dir.name
    strategy, params = first.get("strategy"), first.get("strategy_params") or {}
    reference = bool(first.get("reference_agent"))
    ids = list(dict.fromkeys(str(s.id) for s in samples))
    info = {
        "strategy": strategy,
        "strategy_params": params,
        "budget": budget,
        "suite": suite,
        "run_folder": str(run_dir),
        "reference_agent": reference,
        "agent": agent_note(first),
        "pricing": first.get("pricing"),
        "settings": settings,
    }
    return EvalSpec(
        eval_id=eval_id,
        run_id=eval_id,
        created=min((s.started_at for s in samples if s.started_at), default=None) or datetime.now(timezone.utc),
        task=f"{strategy}@{label}",
        task_id=_stable_id(str(run_dir.resolve()), "task"),
        task_args={
            "strategy": strategy,
            "budget": budget,
            "suite": suite,
            **{f"strategy.{k}": v for k, v in params.items()},
        },
        solver="ctxbench",
        solver_args={"strategy": strategy, **params},
        tags=["ctxbench", str(strategy), f"budget={label}", *(["reference-agent"] if reference else [])],
        dataset=EvalDataset(name=suite, samples=len(ids), sample_ids=ids),
        model=model_name(first),
        model_args={
            "reference_agent": reference,
            "agent": agent_note(first),
            **({"profile": first["agent_profile"]} if first.get("agent_profile") else {}),
        },
        config=EvalConfig(epochs=max((s.epoch for s in samples), default=1)),
        packages={"ctxbench": _version("ctxbench"), "inspect_ai": _version("inspect_ai")},
        metadata=info,
    )


def run_log(run_dir: Path) -> EvalLog:
    """The eval log of one run folder: one sample per trial of ``trials.jsonl``."""
    run_dir = Path(run_dir)
    trials = read_trials(run_dir / TRIALS)  # the valid rows (harness.record_schema); cmd_export names the others
    steps: dict[str | None, list[dict]] = defaultdict(list)  # by trial_id
    for row in read_steps(run_dir / STEPS):
        steps[row["trial_id"]].append(row)
    settings = _read_json(run_dir / "identity.json")
    first = trials[0] if trials else {}
    model = model_name(first)
    samples = [trial_sample(run_dir, row, steps.get(row["trial_id"], []), model, settings) for row in trials]
    eval_id = _stable_id(str(run_dir.resolve()))
    planned = len(_read_json(run_dir / "plan.json").get("jobs") or []) or len(trials)
    usage = _sum_usage(u for s in samples for u in s.model_usage.values())
    roles: dict[str, list[ModelUsage]] = defaultdict(list)
    for sample in samples:
        for kind, part in sample.role_usage.items():
            roles[kind].append(part)
    ends = [s.completed_at for s in samples if s.completed_at]
    return EvalLog(
        status="success" if len(trials) >= planned else "cancelled",
        eval=_spec(run_dir, first, settings, samples, eval_id),
        plan=EvalPlan(
            name="ctxbench",
            steps=[
                EvalPlanStep(
                    solver="ctxbench loop",
                    params={
                        "strategy": first.get("strategy"),
                        "strategy_params": first.get("strategy_params") or {},
                        "budget": first.get("budget"),
                    },
                )
            ],
        ),
        results=_results(samples),
        stats=EvalStats(
            started_at=samples[0].started_at if samples else "",
            completed_at=max(ends) if ends else "",
            model_usage={model: usage} if samples else {},
            role_usage={kind: _sum_usage(parts) for kind, parts in roles.items()},
        ),
        samples=samples,
    )


# ---------------------------------------------------------------- writing


def _slug(text: str) -> str:
    """``text`` as one part of a log file name: no ``_`` (inspect splits the name on it) nor path characters."""
    return re.sub(r"[^A-Za-z0-9.=@+-]+", "-", text).strip("-") or "run"


def log_name(log: EvalLog) -> str:
    """``<created>_<task>_<eval id>.eval``: inspect's own file name pattern, which its viewer reads the task from."""
    created = _parse_time(str(log.eval.created)).strftime("%Y-%m-%dT%H-%M-%S+00-00")
    return f"{created}_{_slug(log.eval.task)}_{log.eval.eval_id}.eval"


def export_runs(targets: Iterable[Path], out_dir: Path) -> list[tuple[Path, EvalLog]]:
    """Write one ``.eval`` log per run folder of ``targets`` (run or sweep folders) into ``out_dir``."""
    out_dir = Path(out_dir)
    folders = [folder for target in targets for folder in run_folders(Path(target))]
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[tuple[Path, EvalLog]] = []
    for folder in folders:
        log = run_log(folder)
        path = out_dir / log_name(log)
        write_eval_log(log, str(path), format="eval")
        written.append((path, log))
    return written


def inspect_command() -> str:
    """``inspect`` as printed so that it runs: the script installed beside this Python (``.venv/bin/inspect``,
    relative when under the working directory), else ``inspect`` on the PATH."""
    found = shutil.which("inspect", path=str(Path(sys.executable).parent))
    if not found:
        return "inspect"
    script = Path(found)
    try:
        return shlex.quote(str(script.relative_to(Path.cwd())))
    except ValueError:
        return shlex.quote(str(script))


def cmd_export(runs: Iterable[str | Path], fmt: str, out_dir: str | Path) -> int:
    """The ``export RUN... --to inspect DIR`` command: write the logs and say where, with their samples and sizes."""
    if fmt != FORMAT:
        raise UsageError(f"export: unknown format {fmt!r} (valid: {FORMAT})")
    try:
        written = export_runs([Path(run) for run in runs], Path(out_dir))
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    for path, log in written:
        print(f"wrote {path} ({len(log.samples or [])} samples, {path.stat().st_size / 1024:,.0f} KiB)")
    for note in corruption_notes(folder for run in runs for folder in run_folders(Path(run))):
        print(note, file=sys.stderr)
    print(f"browse them: {inspect_command()} view --log-dir {shlex.quote(str(out_dir))}")
    return 0

"""The agent loop: one trial, from the task's prompts to ``submit`` or a limit.

The history is append-only. Before every model call the strategy projects it
(``prepare``), the harness validates the projection, counts it, checks the model's
context window, and sends it. Tool calls are executed by the task instance (or the
strategy, for tools it offers); the harness adds ``submit``, which grades and ends the
trial. Everything is logged to the trial's transcript and to ``steps.jsonl``.

``Trial`` holds one trial's state in its fields; each method does one thing (start,
prepare, call, execute tools, finish). Every model call, whatever its kind, is recorded
by the trial's ``CallRecorder`` (harness/accounting.py).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

from harness.accounting import BudgetTracker, CallRecorder
from harness.cache_sim import PROFILES, CacheProfile
from harness.conversation import (InvalidConversation, check_tool_order, check_tool_subset, escape_text, iter_calls,
                                  parse_arguments, reply_problem, strip_private, validate_projection)
from harness.hooks import CONTINUE_MESSAGE, PLAN_INSTRUCTION, Hooks, completion_gaps
from harness.models.base import Completion, ContextOverflowError, ModelError, request_options, session_for
from harness.models.toolparse import parse_error_message
from harness.pricing import Pricing
from harness.records import RunWriter
from harness.subagent import SubagentRunner
from harness.tokens import REPLY_PRIMER, TokenCounter
from harness.trial_context import MessageTable, TrialContext
from harness.trial_row import ReadTracker, trial_row
from strategies.base import ToolError
from tasks.base import Grade, rate_limited_message

OUTCOMES = ("submitted", "step_limit", "context_overflow", "model_error", "strategy_error")
NO_TOOL_CALL = (
    "Your reply contained no tool call. Continue the task with the tools; call submit(...) with your answer when done."
)


def submit_tool(answer_schema: dict) -> dict:
    """The ``submit`` tool the harness adds to every task."""
    return {
        "type": "function",
        "function": {
            "name": "submit",
            "description": "Submit your final answer. This ends the task.",
            "parameters": answer_schema,
        },
    }


@dataclass
class TrialSettings:
    """Per-run limits and labels that every trial needs."""

    budget: int
    max_steps: int
    strategy_name: str
    strategy_params: dict
    model_name: str
    pricing: Pricing = field(default_factory=Pricing)
    run_name: str = ""
    cache_profile: CacheProfile = field(default_factory=lambda: PROFILES["openai"])
    hooks: Hooks = field(default_factory=Hooks)


@dataclass
class Prepared:
    """One step's request as sent: the projection, its refs, the stripped messages and its token count."""

    request: list[dict] = field(default_factory=list)
    message_tokens: int = 0
    refs: list[str] = field(default_factory=list)
    sent: list[dict] = field(default_factory=list)
    tokens: int = 0
    budget_fields: dict = field(default_factory=dict)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Trial:
    """One trial of one strategy on one task instance; ``run()`` returns its row."""

    def __init__(self, *, trial_id: str, trial_index: int, instance: Any, strategy: Any, model: Any, summarizer: Any,
                 settings: TrialSettings, writer: RunWriter, text_cache: dict[str, int] | None = None) -> None:
        self.trial_id, self.trial_index, self.instance = trial_id, trial_index, instance
        self.strategy, self.model, self.settings = strategy, model, settings
        self.started, self.started_at = time.perf_counter(), _now()
        self.counter = TokenCounter(text_cache)
        self.transcript = writer.transcript(trial_id)
        self.table = MessageTable(self.transcript)
        self.agent = session_for(model, instance, trial_index)
        self.summarizer = (self.agent if summarizer is None or summarizer is model
                           else session_for(summarizer, instance, trial_index))
        self.recorder = CallRecorder(trial_id, self.counter, settings.pricing, settings.cache_profile, writer.step)
        self.ctx = TrialContext(settings.budget, self.counter, writer.run_dir / "stores" / trial_id, self.transcript,
                                self.summarize, self.run_subagent)
        self.tool_log: list[dict] = []
        self.reads = ReadTracker()
        self.subagents = SubagentRunner(self)
        self.history: list[dict] = [{"role": "system", "content": instance.system_prompt},
                                    {"role": "user", "content": instance.user_prompt}]
        self.history_tokens = 0
        self.tools: list[dict] = []
        self.all_tools: list[dict] = []
        self.strategy_tool_names: set[str] = set()
        self.outcome: str | None = None
        self.error: str | None = None
        self.grade: Any = None
        self.answer: dict | None = None
        self.steps = 0
        self.continues = 0
        self.rate_limited = 0
        self.peak_context = 0
        self.budget = BudgetTracker(settings.budget)
        self.previous = Prepared()
        self._stripped: dict[int, tuple[dict, dict]] = {}
        self.rewrites_system = bool(getattr(strategy, "rewrites_system", False))  # deliberate experiments only
        self.order_tools = getattr(strategy, "order_tools", None)
        self.server_options = getattr(strategy, "server_options", None)  # server-side strategies (strategies/server_side.py)
        self.expose_tools = getattr(strategy, "expose_tools", None)  # dynamic tool exposure (strategies/base.py)
        self.tool_schema_tokens = 0  # tool-schema tokens sent over the agent's requests
        self.tool_schema_tokens_saved = 0  # tool-schema tokens not sent because expose_tools hid them
        self.unoffered_calls = 0  # calls to a tool of the trial that was not offered at that step
        self.tool_exceptions = 0  # task tool calls that raised (answered with an error, the run went on)

    # ------------------------------------------------------------ the run

    def run(self) -> dict:
        """Run the trial to its end and return its row."""
        self.start()
        while self.outcome is None and self.steps < self.settings.max_steps:
            self.step()
        return self.finish()

    def start(self) -> None:
        """Add the start hook, bind the strategy, offer the tools, log the trial's start."""
        if self.settings.hooks.plan:
            self.history.append({"role": "user", "content": PLAN_INSTRUCTION, "_hook": "plan"})
            self.transcript.event("hook", step=0, name="plan")
        self.history_tokens = self.counter.messages(self.history)
        extra_tools = self.bind_strategy()
        self.strategy_tool_names = {t["function"]["name"] for t in extra_tools}
        self.all_tools = self.tools = list(self.instance.tools) + extra_tools + [submit_tool(self.instance.answer_schema)]
        self.ctx.tools = self.tools
        self.transcript.event(
            "trial_start", trial_id=self.trial_id, instance=self.instance.id, family=self.instance.family,
            seed=self.instance.seed, trial=self.trial_index, strategy=self.settings.strategy_name,
            strategy_params=self.settings.strategy_params, budget=self.settings.budget, model=self.settings.model_name,
            reference_agent=self.is_reference, tools=self.tools, started_at=self.started_at)
        for message in self.history:
            self.table.ref(message)

    def bind_strategy(self) -> list[dict]:
        """Bind the strategy to the trial context and return its extra tools (a failure ends the trial)."""
        try:
            if hasattr(self.strategy, "bind"):
                self.strategy.bind(self.ctx)
            return list(self.strategy.tools()) if hasattr(self.strategy, "tools") else []
        except Exception as exc:  # a strategy that cannot even start
            self.end("strategy_error", f"{type(exc).__name__}: {exc}")
            return []

    def step(self) -> None:
        """One model call: prepare, send, record, then run the reply's tool calls."""
        self.steps += 1
        self.ctx.step = self.steps
        self.ctx.events_this_step = []
        prepared = self.prepare()
        if prepared is None or not self.fits_window(prepared):
            return
        completion = self.call_model(prepared)
        if completion is None or not self.observe_server_edits(completion):
            return
        reply = self.append_reply(completion)
        completion = replace(completion, message=self.stripped(reply))  # counted as the history keeps it
        calls = list(iter_calls(reply))
        self.recorder.record("agent", self.steps, prepared.request, self.tools, completion, prepared.tokens, {
            "history_tokens": self.history_tokens, "tool_calls": [name for _, name, _ in calls],
            "strategy_events": list(self.ctx.events_this_step), **prepared.budget_fields,
        }, events=list(self.ctx.events_this_step))
        if not calls:
            self.nudge(reply)
            return
        self.execute_tools(calls, prepared.request, reply)

    def end(self, outcome: str, error: str | None = None) -> None:
        """End the trial with ``outcome`` (and why)."""
        self.outcome, self.error = outcome, error

    @property
    def is_reference(self) -> bool:
        """Whether the model is the scripted reference agent (not an LLM)."""
        return bool(getattr(self.model, "is_reference", False))

    # ------------------------------------------------------------ prepare

    def prepare(self) -> Prepared | None:
        """The strategy's projection, validated, counted and logged; ``None`` ends the trial (strategy_error)."""
        try:
            request = self.strategy.prepare(list(self.history))
            known = self.known_prefix(request)
            validate_projection(request, self.history[0], allow_system_rewrite=self.rewrites_system, start=known)
            self.tools = self.step_tools()
        except InvalidConversation as exc:
            self.end("strategy_error", f"invalid projection at step {self.steps}: {exc}")
            return None
        except ModelError as exc:  # the strategy's summarizer call failed: the model's fault, not the strategy's
            self.end("context_overflow" if isinstance(exc, ContextOverflowError) else "model_error",
                     f"the summarizer call failed at step {self.steps}: {exc}")
            return None
        except Exception as exc:
            self.end("strategy_error", f"strategy raised at step {self.steps}: {type(exc).__name__}: {exc}")
            return None
        prepared = self.measure(request, known)
        self.peak_context = max(self.peak_context, prepared.tokens)
        prepared.budget_fields = self.budget.observe(prepared.tokens)
        self.count_tool_schemas()
        names = [t["function"]["name"] for t in self.tools]
        tool_order = {"tool_order": names} if self.order_tools is not None else {}
        if self.expose_tools is not None:
            tool_order["tools_offered"] = names
        self.transcript.event("request", step=self.steps, refs=prepared.refs, tokens=prepared.tokens, **tool_order)
        return prepared

    def step_tools(self) -> list[dict]:
        """This step's tool schemas: the strategy's order (``order_tools``) and choice (``expose_tools``), checked.

        The schemas precede the messages in the cached prefix, so both hooks are for measured
        experiments. An unchanged choice keeps the previous list object (the memoized counts stay valid).
        """
        tools = self.all_tools
        if self.order_tools is not None:
            tools = list(self.order_tools(list(tools)))
            check_tool_order(tools, self.all_tools)
        if self.expose_tools is not None:
            exposed = list(self.expose_tools(list(tools)))
            check_tool_subset(exposed, tools)
            tools = self.tools if exposed == self.tools else exposed
        return tools

    def count_tool_schemas(self) -> None:
        """Add this step's tool-schema tokens, and those ``expose_tools`` left out, to the trial's totals."""
        sent = self.counter.tools(self.tools)
        self.tool_schema_tokens += sent
        if self.expose_tools is not None:
            self.tool_schema_tokens_saved += max(0, self.counter.tools(self.all_tools) - sent)

    def known_prefix(self, request: list[dict]) -> int:
        """How many leading messages ``request`` shares with the previous request (0 unless it extends it).

        A request that extends the previous one (append-only strategies) is only checked,
        counted and logged for its new messages; the list comparison runs in C.
        """
        previous = self.previous.request
        if previous and len(request) >= len(previous) and request[:len(previous)] == previous:
            return len(previous)
        return 0

    def measure(self, request: list[dict], known: int) -> Prepared:
        """Count, ref and strip ``request``, reusing the previous request's figures for its first ``known`` messages."""
        base = self.previous if known else Prepared()
        tail = request[known:]
        message_tokens = base.message_tokens + self.counter.messages(tail)
        prepared = Prepared(
            request=request, message_tokens=message_tokens,
            refs=base.refs + [self.table.ref(m) for m in tail],
            sent=base.sent + [self.stripped(m) for m in tail],
            tokens=message_tokens + self.counter.tools(self.tools) + REPLY_PRIMER,
        )
        self.previous = prepared
        return prepared

    def stripped(self, message: dict) -> dict:
        """``strip_private`` memoized by identity, so a step does not copy the whole history."""
        entry = self._stripped.get(id(message))
        if entry is None or entry[0] is not message:
            entry = (message, strip_private(message))
            self._stripped[id(message)] = entry
        return entry[1]

    # ------------------------------------------------------------ call

    def fits_window(self, prepared: Prepared) -> bool:
        """Whether the request fits the model's context window (else the trial ends as ``context_overflow``)."""
        if prepared.tokens <= self.agent.context_window:
            return True
        self.end("context_overflow", f"request of {prepared.tokens:,} tokens exceeds the "
                                     f"{self.agent.context_window:,}-token context window")
        return False

    def call_model(self, prepared: Prepared) -> Completion | None:
        """Send the request; a failure ends the trial (``context_overflow`` or ``model_error``) and gives ``None``.

        A server-side strategy's ``server_options()`` travel with the agent's call only, as request options.
        """
        try:
            options = dict(self.server_options() or {}) if self.server_options is not None else {}
        except Exception as exc:
            self.end("strategy_error", f"strategy server_options raised at step {self.steps}: {type(exc).__name__}: {exc}")
            return None
        try:
            with request_options(**options):
                return self.agent.complete(list(prepared.sent), self.tools)
        except ContextOverflowError as exc:
            self.end("context_overflow", str(exc))
        except ModelError as exc:
            self.end("model_error", str(exc))
        except Exception as exc:  # a backend bug must not kill the run
            self.end("model_error", f"{type(exc).__name__}: {exc}")
        return None

    def observe_server_edits(self, completion: Completion) -> bool:
        """Hand the edits the server applied to the strategy (``observe_server_edits``), which logs them as
        strategy events of this step; without such a strategy they are logged as ``server_edit`` events.
        False (the trial ends with ``strategy_error``) when the strategy raises."""
        edits = list(getattr(completion, "context_edits", None) or [])
        if not edits:
            return True
        observe = getattr(self.strategy, "observe_server_edits", None)
        if not callable(observe):
            for edit in edits:
                self.ctx.log("server_edit", **edit)
            return True
        try:
            observe(edits)
        except Exception as exc:
            self.end("strategy_error", f"strategy observe_server_edits raised at step {self.steps}: "
                                       f"{type(exc).__name__}: {exc}")
            return False
        return True

    def append_reply(self, completion: Completion) -> dict:
        """Append the model's reply to the history and log it (made sendable first: ``sendable_reply``)."""
        reply = sendable_reply(completion.message)
        reply["_step"] = self.steps
        self.append(reply)
        self.transcript.event("reply", step=self.steps, ref=self.table.ref(reply), latency_s=round(completion.latency_s, 6))
        return reply

    def append(self, message: dict) -> None:
        """Append one message to the history and count it (lone surrogates in its text escaped: ``escape_text``)."""
        content = message.get("content")
        if isinstance(content, str) and not content.isascii():
            message["content"] = escape_text(content)
        self.history.append(message)
        self.history_tokens += self.counter.message(message)

    def nudge(self, reply: dict) -> None:
        """A reply without a tool call: tell the model why (its parse error, or that it must use the tools)."""
        parse_error = reply.get("_parse_error")
        names = [t["function"]["name"] for t in self.tools if t.get("function")]
        content = parse_error_message(parse_error, names) if parse_error else NO_TOOL_CALL
        self.append({"role": "user", "content": content, "_step": self.steps, "_nudge": True})

    # ------------------------------------------------------------ tools

    def execute_tools(self, calls: list[tuple[str, str, Any]], request: list[dict], reply: dict) -> None:
        """Run every tool call of the reply, append the results, and end the trial on ``submit``."""
        submitted = False
        task_calls = 0
        for call_id, name, raw in calls:
            args: dict = {}
            resource = None
            try:
                args = parse_arguments(raw)
            except ValueError as exc:
                content, is_error = f"ERROR: could not parse the arguments of {name}: {exc}. Fix the JSON and call again.", True
            else:
                task_calls += self.is_task_call(name)
                if self.is_task_call(name) and self.over_call_limit(task_calls):
                    content, is_error = rate_limited_message(self.instance.max_calls_per_turn), True
                    self.rate_limited += 1
                else:
                    content, is_error, resource, accepted = self.execute_one(name, args, request, reply)
                    submitted = submitted or accepted
            self.append_result(call_id, name, args, content, is_error, resource)
        if submitted:
            self.end("submitted", self.error)

    def is_task_call(self, name: str) -> bool:
        """Whether ``name`` is one of the task's own tools (not ``submit``, not a strategy tool)."""
        return name != "submit" and name not in self.strategy_tool_names

    def over_call_limit(self, task_calls: int) -> bool:
        """Whether the ``task_calls``-th task call of this turn exceeds the task's per-turn limit."""
        limit = getattr(self.instance, "max_calls_per_turn", None)
        return limit is not None and task_calls > limit

    def execute_one(self, name: str, args: dict, request: list[dict], reply: dict) -> tuple[str, bool, Any, bool]:
        """Run one parsed call: ``(content, is_error, resource, submitted)``."""
        if name == "submit":
            return (*self.submit(args, request, reply), None, self.answer is not None)
        if self.is_unoffered(name):
            self.unoffered_calls += 1
            offered = ", ".join(t["function"]["name"] for t in self.tools)
            return f"ERROR: the tool {name} is not offered at this step (offered now: {offered}).", True, None, False
        if name in self.strategy_tool_names:
            return (*self.strategy_tool(name, args), None, False)
        try:
            result = self.instance.call(name, args)
        except Exception as exc:  # a task tool that raises on odd arguments: the model sees an error, the run goes on
            self.tool_exceptions += 1
            return (f"ERROR: {name} failed on these arguments ({type(exc).__name__}: {str(exc)[:200]}); check them "
                    "against the tool's schema and call again.", True, None, False)
        return result.content, result.is_error, result.resource, False

    def is_unoffered(self, name: str) -> bool:
        """Whether ``name`` is one of the trial's tools that ``expose_tools`` did not offer at this step.

        Such a call is answered with an error and not executed: a model can only call what the
        request offers (a wrong choice of tools costs a step, as it would with a real model).
        """
        if self.expose_tools is None or self.tools is self.all_tools:
            return False
        known = {t["function"]["name"] for t in self.all_tools}
        return name in known and name not in {t["function"]["name"] for t in self.tools}

    def submit(self, args: dict, request: list[dict], reply: dict) -> tuple[str, bool]:
        """Grade the answer, unless the stop hook finds unfinished work and refuses it."""
        hooks = self.settings.hooks
        if hooks.completion_check and self.continues < hooks.max_continues:
            try:
                gaps = completion_gaps(self.instance, self.model, [*request, reply], args, self.judge)
            except ModelError as exc:
                self.end("model_error", f"the stop hook's judge call failed: {exc}")
                return "ERROR: the completion check could not run.", True
            if gaps:
                self.continues += 1
                self.transcript.event("hook", step=self.steps, name="completion_check", accepted=False, gaps=gaps)
                self.ctx.events_this_step.append("stop_hook")
                return CONTINUE_MESSAGE.format(gaps=gaps), False
        self.answer = args
        self.grade = self.safe_grade(args)
        return "Answer received. The task is over.", False

    def safe_grade(self, args: dict) -> Grade:
        """The grader's verdict; a grader that raises makes a failed trial with its reason, never a crash."""
        try:
            return self.instance.grade(args)
        except Exception as exc:
            self.error = f"the grader raised {type(exc).__name__}: {str(exc)[:200]}"
            return Grade(success=False, score=0.0, detail={"grader_error": self.error})

    def strategy_tool(self, name: str, args: dict) -> tuple[str, bool]:
        """Run a tool the strategy offers; an exception (not a ``ToolError``) is a ``strategy_error``."""
        try:
            return str(self.strategy.call(name, args)), False
        except ToolError as exc:
            return f"ERROR: {exc}", True
        except Exception as exc:
            self.end("strategy_error", f"strategy tool {name} raised: {type(exc).__name__}: {exc}")
            return f"ERROR: internal error in {name}", True

    def append_result(self, call_id: str, name: str, args: dict, content: str, is_error: bool, resource: Any) -> None:
        """Append a tool result to the history, count the read and log it."""
        self.reads.observe(None if is_error else resource)
        self.tool_log.append({"step": self.steps, "name": name, "args": args, "is_error": is_error, "resource": resource})
        message = {"role": "tool", "tool_call_id": call_id, "content": content, "_step": self.steps,
                   "_tool": name, "_args": args, "_error": is_error, "_resource": resource}
        self.append(message)
        self.transcript.event("tool", step=self.steps, name=name, args=args, is_error=is_error, resource=resource,
                              ref=self.table.ref(message))

    # ------------------------------------------------------------ other kinds of call

    def summarize(self, request: list[dict]) -> str:
        """A summarizer call (``ctx.summarize``): sent, logged and recorded as ``kind=summarizer``.

        Any failure of the call is a ``ModelError`` (a backend bug included), so the trial ends as
        ``model_error`` however the strategy lets it through.
        """
        try:
            completion = self.summarizer.complete(request, [])
        except ModelError:
            raise
        except Exception as exc:
            raise ModelError(f"{type(exc).__name__}: {exc}") from exc
        tokens = self.counter.request(request, [])
        self.transcript.event("summarizer", step=self.ctx.step, request=[self.table.ref(m) for m in request],
                              reply=completion.message.get("content"))
        self.recorder.record("summarizer", self.ctx.step, request, [], completion, tokens)
        return str(completion.message.get("content") or "")

    def judge(self, request: list[dict]) -> Completion:
        """A stop-hook call to the agent's model, recorded as ``kind=stop_hook``."""
        completion = self.agent.complete(request, [])
        self.recorder.record("stop_hook", self.ctx.step, request, [], completion, self.counter.request(request, []))
        return completion

    def run_subagent(self, task: str, max_steps: int, strategy: Any = None, budget: int | None = None) -> str:
        """A sub-agent run (``ctx.run_subagent``); its calls are recorded as ``kind=subagent``."""
        return self.subagents.run(task, max_steps, strategy, budget)

    # ------------------------------------------------------------ finish

    def finish(self) -> dict:
        """Close the transcript and return the trial's row."""
        if self.outcome is None:
            self.outcome = "step_limit"
        row = trial_row(self, wall_s=time.perf_counter() - self.started)
        self.transcript.event("trial_end", outcome=self.outcome, success=row["success"], score=row["score"],
                              error=self.error, answer=self.answer, steps=self.steps)
        self.transcript.commit()
        return row


def sendable_reply(message: dict) -> dict:
    """The model's reply as the history keeps it: an assistant message that can be sent back as it is.

    Lone surrogates in its calls' names and arguments are escaped (``escape_text``; its text is escaped by
    ``Trial.append``, as every message's is).
    Tool calls that cannot be run as they are (``reply_problem``: shared or missing ids, no name)
    are set aside under ``_rejected_tool_calls``, and the problem becomes the reply's
    ``_parse_error``, which the model is told at the next step, as for an unreadable call.
    """
    reply = dict(message)
    reply["role"] = "assistant"
    problem = reply_problem(reply)
    if problem is not None:
        reply["_rejected_tool_calls"] = reply.pop("tool_calls")
        reply["_parse_error"] = problem
        reply["content"] = reply.get("content") or ""
    elif reply.get("tool_calls"):
        reply["tool_calls"] = [escaped_call(call) for call in reply["tool_calls"]]
    return reply


def escaped_call(call: dict) -> dict:
    """A tool call with its arguments as JSON text and lone surrogates escaped (the same call when it has both).

    A backend may hand over the arguments already decoded (an object): they are written back as
    text, which is what the history holds and what ``parse_arguments`` reads.
    """
    function = call["function"]
    arguments, name = function.get("arguments"), function["name"]
    if isinstance(arguments, str) and arguments.isascii() and name.isascii():
        return call
    if arguments is None:
        arguments = ""
    elif not isinstance(arguments, str):
        try:
            arguments = json.dumps(arguments, ensure_ascii=False, default=str)
        except (ValueError, RecursionError):
            arguments = "<arguments that cannot be written as JSON>"
    return {**call, "function": {**function, "name": escape_text(name), "arguments": escape_text(arguments)}}


def run_trial(*, trial_id: str, trial_index: int, instance: Any, strategy: Any, model: Any, summarizer: Any,
              settings: TrialSettings, writer: RunWriter, text_cache: dict[str, int] | None = None) -> dict:
    """Run one trial and return its row (the caller appends it to ``trials.jsonl``)."""
    return Trial(trial_id=trial_id, trial_index=trial_index, instance=instance, strategy=strategy, model=model,
                 summarizer=summarizer, settings=settings, writer=writer, text_cache=text_cache).run()

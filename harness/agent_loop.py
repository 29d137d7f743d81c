"""The one agent loop: the step pipeline that the main agent and every sub-agent run.

A step: the strategy projects the append-only history (``prepare``), the harness validates the
projection and takes this step's tool schemas from the strategy (``order_tools``,
``expose_tools``), counts the request and checks the model's context window, sends it with the
strategy's ``server_options``, hands the edits the server reports to the strategy
(``observe_server_edits``), appends the reply, records the call, and runs the reply's tool
calls: the task's own (at most the task's ``max_calls_per_turn`` a turn; a tool that is not
offered is refused), the strategy's, and the final tool, which ends the run. A failure ends the
run with an outcome (``OUTCOMES``) and its reason.

``AgentLoop`` is that pipeline, parameterised by the final tool and the kind of call its model
calls are recorded as; a subclass says where the rest of its records go: ``harness.trial.Trial``
(the main agent: ``submit``, ``kind=agent``, a transcript and a trial row) and
``harness.subagent.Subagent`` (a sub-agent: ``report``, ``kind=subagent``, a conclusion).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Any, Protocol

from harness.accounting import BudgetTracker, CallRecorder
from harness.contracts import FullStrategy, ToolError, full_strategy, tool_name
from harness.conversation import (
    InvalidConversation,
    escape_text,
    iter_calls,
    parse_arguments,
    reply_problem,
    validate_projection,
)
from harness.models.base import Completion, ContextOverflowError, ModelError, request_options
from harness.models.toolparse import parse_error_message
from harness.request_meter import Prepared, RequestMeter
from harness.tokens import TokenCounter
from harness.tool_offer import ToolOffer
from harness.trial_context import TrialContext
from tasks.base import Grade, ToolResult, rate_limited_message

OUTCOMES = ("submitted", "step_limit", "context_overflow", "model_error", "strategy_error")


class Session(Protocol):
    """What the loop calls on a model's session: its context window and ``complete``."""

    context_window: int

    def complete(self, messages: list[dict], tools: list[dict]) -> Completion:
        """Reply to a request."""


class TaskEnvironment(Protocol):
    """What the loop reads of a task instance (``tasks.base.TaskInstance`` has it all)."""

    family: str
    id: str
    seed: int
    system_prompt: str
    user_prompt: str
    tools: list[dict]
    answer_schema: dict
    max_calls_per_turn: int | None

    def call(self, name: str, args: dict) -> ToolResult:
        """Execute a task tool."""

    def grade(self, answer: dict) -> Grade:
        """Grade a submitted answer."""

    def trial_metrics(self, tool_log: list[dict]) -> dict[str, Any]:
        """Extra per-trial metrics from the tool log."""


@dataclass(frozen=True)
class CallResult:
    """A tool call's result: its text, whether it failed, the resource it read, and whether it ended the run."""

    content: str
    is_error: bool = False
    resource: Any = None
    ends: bool = False


class LogHooks:
    """The optional logging hooks of an agent loop: each does nothing unless a subclass overrides it."""

    def log_request(self, prepared: Prepared) -> None:
        """Log a request about to be sent (nothing by default)."""

    def log_reply(self, reply: dict, completion: Completion) -> None:
        """Log the reply just appended (nothing by default)."""


class AgentLoop(LogHooks, ABC):
    """One agent's run through the step pipeline (see the module docstring)."""

    call_kind: str
    """The ``kind`` its model calls are recorded as (harness/accounting.py)."""
    no_tool_call: str
    """What the agent is told after a reply without a tool call."""

    def __init__(
        self,
        *,
        instance: TaskEnvironment,
        strategy: Any,
        session: Session,
        counter: TokenCounter,
        recorder: CallRecorder,
        ctx: TrialContext,
        budget: BudgetTracker,
        final_tool: dict,
        max_steps: int,
        history: list[dict],
    ) -> None:
        self.instance, self.agent, self.counter, self.recorder = instance, session, counter, recorder
        self.strategy: FullStrategy = full_strategy(strategy)
        self.ctx, self.max_steps, self.history = ctx, max_steps, history
        self.offer = ToolOffer(final_tool)  # what tools a step offers
        self.meter = RequestMeter(counter, budget, self.ref)  # what a request counts, and the totals of them
        self.history_tokens = 0
        self.outcome: str | None = None
        self.error: str | None = None
        self.steps = 0
        self.rate_limited = 0  # task calls over the task's per-turn limit (answered with an error)
        self.unoffered_calls = 0  # calls to a tool of the run that was not offered at that step
        self.tool_exceptions = 0  # task tool calls that raised (answered with an error, the run went on)

    # ------------------------------------------------------------ what a subclass says

    @abstractmethod
    def record_step(self) -> int:
        """The step number its model calls are recorded under."""

    @abstractmethod
    def step_fields(self, prepared: Prepared, calls: list[tuple[str, str, Any]]) -> dict:
        """The extra fields of this step's row in ``steps.jsonl``."""

    @abstractmethod
    def final_call(self, args: dict, request: list[dict], reply: dict) -> CallResult:
        """Run the final tool (``ends``: the run is over)."""

    @abstractmethod
    def log_result(self, message: dict, name: str, args: dict, is_error: bool, resource: Any) -> None:
        """Log an appended tool result (``message``) where this agent's records go."""

    def result_resource(self, resource: Any, is_error: bool) -> Any:
        """The ``_resource`` a tool result keeps in the history."""
        return resource

    # ------------------------------------------------------------ the run

    def run_steps(self) -> None:
        """Step until the run ends or has made ``max_steps`` steps."""
        while self.outcome is None and self.steps < self.max_steps:
            self.step()

    @property
    def final_name(self) -> str:
        """The name of the tool that ends the run (``submit``; a sub-agent's ``report``)."""
        return self.offer.final_name

    def offer_tools(self) -> None:
        """Bind the strategy and offer the task's tools, the strategy's and the final tool."""
        self.offer.open(self.instance.tools, self.bind_strategy())
        self.ctx.tools = self.offer.tools

    def bind_strategy(self) -> list[dict]:
        """Bind the strategy to the context and return its extra tools (a failure ends the run)."""
        try:
            self.strategy.bind(self.ctx)
            return list(self.strategy.tools())
        except Exception as exc:  # a strategy that cannot even start
            self.end("strategy_error", f"{type(exc).__name__}: {exc}")
            return []

    def begin_step(self) -> None:
        """Start collecting this step's strategy events."""
        self.ctx.events_this_step = []

    def step(self) -> None:
        """One model call: prepare, send, record, then run the reply's tool calls."""
        self.steps += 1
        self.begin_step()
        prepared = self.prepare()
        if prepared is None:
            return
        overflow = self.meter.overflow(prepared, self.agent.context_window)
        if overflow is not None:
            self.end("context_overflow", overflow)
            return
        completion = self.call_model(prepared)
        if completion is None or not self.observe_server_edits(completion):
            return
        reply = self.append_reply(completion)
        completion = replace(completion, message=self.meter.stripped(reply))  # counted as the history keeps it
        calls = list(iter_calls(reply))
        self.recorder.record(
            self.call_kind,
            self.record_step(),
            prepared.request,
            self.offer.tools,
            completion,
            prepared.tokens,
            self.step_fields(prepared, calls),
            events=list(self.ctx.events_this_step),
        )
        if not calls:
            self.nudge(reply)
            return
        self.execute_tools(calls, prepared.request, reply)

    def end(self, outcome: str, error: str | None = None) -> None:
        """End the run with ``outcome`` (and why)."""
        self.outcome, self.error = outcome, error

    # ------------------------------------------------------------ prepare

    def prepare(self) -> Prepared | None:
        """The strategy's projection, validated, counted and logged; ``None`` ends the run."""
        try:
            request = self.strategy.prepare(list(self.history))
            known = self.meter.known_prefix(request)
            validate_projection(
                request, self.history[0], allow_system_rewrite=self.strategy.rewrites_system, start=known
            )
            self.offer.choose(self.strategy)
        except InvalidConversation as exc:
            self.end("strategy_error", f"invalid projection at step {self.steps}: {exc}")
            return None
        except ModelError as exc:  # the strategy's summarizer call failed: the model's fault, not the strategy's
            self.end(
                "context_overflow" if isinstance(exc, ContextOverflowError) else "model_error",
                f"the summarizer call failed at step {self.steps}: {exc}",
            )
            return None
        except Exception as exc:
            self.end("strategy_error", f"strategy raised at step {self.steps}: {type(exc).__name__}: {exc}")
            return None
        prepared = self.meter.measure(request, known, self.offer)
        self.log_request(prepared)
        return prepared

    def ref(self, message: dict) -> str:
        """The transcript's ref of ``message`` (none by default: only the main agent's messages are logged)."""
        return ""

    # ------------------------------------------------------------ call

    def call_model(self, prepared: Prepared) -> Completion | None:
        """Send the request with the strategy's ``server_options()`` (request options of this call only);
        a failure ends the run (``context_overflow`` or ``model_error``) and gives ``None``."""
        try:
            options = dict(self.strategy.server_options() or {})
        except Exception as exc:
            self.end(
                "strategy_error", f"strategy server_options raised at step {self.steps}: {type(exc).__name__}: {exc}"
            )
            return None
        try:
            with request_options(**options):
                return self.agent.complete(list(prepared.sent), self.offer.tools)
        except ContextOverflowError as exc:
            self.end("context_overflow", str(exc))
        except ModelError as exc:
            self.end("model_error", str(exc))
        except Exception as exc:  # a backend bug must not kill the run
            self.end("model_error", f"{type(exc).__name__}: {exc}")
        return None

    def observe_server_edits(self, completion: Completion) -> bool:
        """Hand the edits the server applied to the strategy (``observe_server_edits``: strategy events of
        this step). False (the run ends with ``strategy_error``) when the strategy raises."""
        edits = list(completion.context_edits or [])
        if not edits:
            return True
        try:
            self.strategy.observe_server_edits(edits)
        except Exception as exc:
            self.end(
                "strategy_error",
                f"strategy observe_server_edits raised at step {self.steps}: {type(exc).__name__}: {exc}",
            )
            return False
        return True

    def append_reply(self, completion: Completion) -> dict:
        """Append the model's reply to the history and log it (made sendable first: ``sendable_reply``)."""
        reply = sendable_reply(completion.message)
        reply["_step"] = self.steps
        self.append(reply)
        self.log_reply(reply, completion)
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
        names = [tool_name(t) for t in self.offer.tools if t.get("function")]
        content = parse_error_message(parse_error, names) if parse_error else self.no_tool_call
        self.append({"role": "user", "content": content, "_step": self.steps, "_nudge": True})

    # ------------------------------------------------------------ tools

    def execute_tools(self, calls: list[tuple[str, str, Any]], request: list[dict], reply: dict) -> None:
        """Run every tool call of the reply, append the results, and end the run on an accepted final call."""
        ended = False
        task_calls = 0
        for call_id, name, raw in calls:
            args: dict = {}
            try:
                args = parse_arguments(raw)
            except ValueError as exc:
                result = CallResult(
                    f"ERROR: could not parse the arguments of {name}: {exc}. Fix the JSON and call again.", True
                )
            else:
                task_calls += self.offer.is_task_call(name)
                exceeded = self.exceeded_call_limit(task_calls) if self.offer.is_task_call(name) else None
                if exceeded is not None:
                    result = CallResult(rate_limited_message(exceeded), True)
                    self.rate_limited += 1
                else:
                    result = self.execute_one(name, args, request, reply)
                    ended = ended or result.ends
            self.append_result(call_id, name, args, result)
        if ended:
            self.end("submitted", self.error)

    def exceeded_call_limit(self, task_calls: int) -> int | None:
        """The task's per-turn limit (``max_calls_per_turn``) when the ``task_calls``-th task call of this turn
        exceeds it, else ``None``."""
        limit = self.instance.max_calls_per_turn
        return limit if limit is not None and task_calls > limit else None

    def execute_one(self, name: str, args: dict, request: list[dict], reply: dict) -> CallResult:
        """Run one parsed call."""
        if name == self.offer.final_name:
            return self.final_call(args, request, reply)
        if self.offer.is_unoffered(name):
            self.unoffered_calls += 1
            offered = ", ".join(self.offer.names())
            return CallResult(f"ERROR: the tool {name} is not offered at this step (offered now: {offered}).", True)
        if name in self.offer.strategy_tool_names:
            return CallResult(*self.strategy_tool(name, args))
        try:
            result = self.instance.call(name, args)
        except Exception as exc:  # a task tool that raises on odd arguments: the model sees an error, the run goes on
            self.tool_exceptions += 1
            return CallResult(
                f"ERROR: {name} failed on these arguments ({type(exc).__name__}: {str(exc)[:200]}); check "
                "them against the tool's schema and call again.",
                True,
            )
        return CallResult(result.content, result.is_error, result.resource)

    def strategy_tool(self, name: str, args: dict) -> tuple[str, bool]:
        """Run a tool the strategy offers; an exception (not a ``ToolError``) is a ``strategy_error``."""
        try:
            return str(self.strategy.call(name, args)), False
        except ToolError as exc:
            return f"ERROR: {exc}", True
        except Exception as exc:
            self.end("strategy_error", f"strategy tool {name} raised: {type(exc).__name__}: {exc}")
            return f"ERROR: internal error in {name}", True

    def append_result(self, call_id: str, name: str, args: dict, result: CallResult) -> None:
        """Append a tool result to the history (with the private keys strategies read) and log it."""
        message = {
            "role": "tool",
            "tool_call_id": call_id,
            "content": result.content,
            "_step": self.steps,
            "_tool": name,
            "_args": args,
            "_error": result.is_error,
            "_resource": self.result_resource(result.resource, result.is_error),
        }
        self.append(message)
        self.log_result(message, name, args, result.is_error, result.resource)


def sendable_reply(message: dict) -> dict:
    """The model's reply as the history keeps it: an assistant message that can be sent back as it is.

    Lone surrogates in its calls' names and arguments are escaped (``escape_text``; its text is escaped by
    ``AgentLoop.append``, as every message's is).
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

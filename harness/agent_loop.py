"""The one agent loop: the step pipeline that the main agent and every sub-agent run.

A step: the strategy projects the append-only history (``prepare``), the harness validates the
projection and takes this step's tool schemas from the strategy (``order_tools``,
``expose_tools``), counts the request and checks the model's context window, sends it with the
strategy's ``server_options``, hands the edits the server reports to the strategy
(``observe_server_edits``), appends the reply to the history (harness/history.py), records the
call, and runs the reply's tool calls (harness/tool_runner.py): the task's own (at most the
task's ``max_calls_per_turn`` a turn; a tool that is not offered is refused), the strategy's,
and the final tool, which ends the run; each result is appended and logged before the next call
runs. A failure ends the run with an outcome (``OUTCOMES``) and its reason.

The history is append-only, and a strategy must not edit the messages it is given (its
projection is new messages). The loop checks it (``History.first_change``, harness/history.py
says what it catches) after every ``prepare``, after the step's strategy tools ran (when one
did) and after ``observe_server_edits`` (when the server reported edits): an edit made in place
ends the run as ``strategy_error`` naming the step, the hook and the message, e.g. ``strategy
mutated the history in place at step 7 (prepare): message 12 (tool) changed its content; prepare
must return new messages (copy before editing)``. An edit by another hook (``bind``,
``order_tools``, ``expose_tools``, ``server_options``) is caught by the next check. The check is one
C-level list comparison against the messages' frozen copies, about 0.25 us a message on the
reference machine (benchmarks/step_overhead.py prints it).

``AgentLoop`` is that pipeline, parameterised by the final tool and the kind of call its model
calls are recorded as; a subclass says where the rest of its records go (``record_step``,
``step_fields``, ``log_result``, the ``LogHooks``) and what its final tool does (``final_call``):
``harness.trial.Trial`` (the main agent: ``submit``, ``kind=agent``, a transcript and a trial
row) and ``harness.subagent.Subagent`` (a sub-agent: ``report``, ``kind=subagent``, a conclusion).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Any, Protocol

from harness.accounting import BudgetTracker, CallRecorder
from harness.contracts import FullStrategy, full_strategy, tool_name
from harness.conversation import InvalidConversation, iter_calls, validate_projection
from harness.history import History
from harness.models.base import Completion, ContextOverflowError, ModelError, request_options
from harness.request_meter import Prepared, RequestMeter
from harness.tokens import TokenCounter
from harness.tool_offer import ToolOffer
from harness.tool_runner import CallResult, ToolRunner
from harness.trial_context import TrialContext
from tasks.base import Grade, ToolResult

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
    withheld_tools: frozenset[str] = frozenset()
    """The strategy's tools it is not offered (a sub-agent's: ``delegate``)."""

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
        self.ctx, self.max_steps = ctx, max_steps
        self.history = History(history, counter)  # the messages, and their tokens
        self.offer = ToolOffer(final_tool)  # what tools a step offers
        self.meter = RequestMeter(counter, budget, self.ref)  # what a request counts, and the totals of them
        self.tool_runner = ToolRunner(instance, self.strategy, self.offer, self.final_call, self.end)
        self.outcome: str | None = None
        self.error: str | None = None
        self.steps = 0

    # ------------------------------------------------------------ what a subclass says

    @abstractmethod
    def record_step(self) -> int:
        """The step number its model calls and strategy events are recorded under."""

    @abstractmethod
    def step_fields(self, prepared: Prepared, calls: list[tuple[str, str, Any]]) -> dict:
        """The extra fields of this step's row in ``steps.jsonl``."""

    @abstractmethod
    def final_call(self, args: dict, request: list[dict], reply: dict) -> CallResult:
        """Run the final tool (``ends``: the run is over)."""

    @abstractmethod
    def log_result(self, message: dict) -> None:
        """Log an appended tool result (its ``_tool``, ``_args``, ``_error`` and ``_resource``) where this agent's
        records go."""

    def result_resource(self, resource: Any, is_error: bool) -> Any:
        """The ``_resource`` a tool result keeps in the history."""
        return resource

    def ref(self, message: dict) -> str:
        """The transcript's ref of ``message`` (none by default: only the main agent's messages are logged)."""
        return ""

    # ------------------------------------------------------------ the run

    def run_steps(self) -> None:
        """Step until the run ends or has made ``max_steps`` steps."""
        while self.outcome is None and self.steps < self.max_steps:
            self.step()

    def offer_tools(self) -> None:
        """Bind the strategy and offer the task's tools, the strategy's (less ``withheld_tools``) and the final
        tool; a strategy that cannot even start ends the run."""
        try:
            self.strategy.bind(self.ctx)
            strategy_tools = list(self.strategy.tools())
        except Exception as exc:
            self.end("strategy_error", f"{type(exc).__name__}: {exc}")
            strategy_tools = []
        if self.withheld_tools:
            strategy_tools = [t for t in strategy_tools if tool_name(t) not in self.withheld_tools]
        self.offer.open(self.instance.tools, strategy_tools)
        self.ctx.tools = self.offer.tools

    def step(self) -> None:
        """One model call: prepare, send, record, then run the reply's tool calls."""
        self.steps += 1
        self.ctx.step, self.ctx.events_this_step = self.record_step(), []
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
        reply = self.history.append_reply(completion.message, self.steps)
        self.log_reply(reply, completion)
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
            self.history.append_nudge(reply, self.steps, self.offer.tools, self.no_tool_call)
            return
        self.run_tools(calls, prepared.request, reply)

    def end(self, outcome: str, error: str | None = None) -> None:
        """End the run with ``outcome`` (and why)."""
        self.outcome, self.error = outcome, error

    # ------------------------------------------------------------ prepare

    def prepare(self) -> Prepared | None:
        """The strategy's projection, validated, counted and logged; ``None`` ends the run."""
        history = self.history.messages
        self.history.freeze_new()  # the messages appended to the list directly (the opening ones)
        try:
            request = self.strategy.prepare(list(history))
            if self.caught_mutation("prepare"):
                return None
            known = self.meter.known_prefix(request)
            validate_projection(request, history[0], allow_system_rewrite=self.strategy.rewrites_system, start=known)
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
        return not self.caught_mutation("observe_server_edits")

    def caught_mutation(self, hook: str) -> bool:
        """Whether the strategy's ``hook`` edited the history in place (``History.first_change``); if so the run
        ends with ``strategy_error`` saying where."""
        change = self.history.first_change()
        if change is None:
            return False
        advice = "prepare must return new messages" if hook == "prepare" else f"{hook} must not edit the messages"
        self.end(
            "strategy_error",
            f"strategy mutated the history in place at step {self.steps} ({hook}): {change}; {advice} "
            "(copy before editing)",
        )
        return True

    # ------------------------------------------------------------ tools

    def run_tools(self, calls: list[tuple[str, str, Any]], request: list[dict], reply: dict) -> None:
        """Run the reply's tool calls (``ToolRunner``), append and log each result before the next call runs, and
        end the run on an accepted final call."""
        ended, strategy_tools = False, []
        for call_id, name, args, result in self.tool_runner.run(calls, request, reply):
            resource = self.result_resource(result.resource, result.is_error)
            self.log_result(self.history.append_result(call_id, name, args, result, self.steps, resource))
            ended = ended or result.ends
            if name in self.offer.strategy_tool_names:
                strategy_tools.append(name)
        if strategy_tools and self.caught_mutation("strategy tool " + ", ".join(dict.fromkeys(strategy_tools))):
            return
        if ended:
            self.end("submitted", self.error)

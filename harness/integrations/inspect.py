"""Any ctxbench strategy as an inspect_ai ``CompactionStrategy`` (optional extra: ``pip install -e ".[inspect]"``).

    from inspect_ai.agent import react
    from inspect_ai.model import get_model
    from harness.integrations.inspect import CtxbenchCompaction, strategy_tools, use_ctxbench_tokens
    from strategies.headtail import HeadTail

    model = use_ctxbench_tokens(get_model("openai/gpt-4o-mini"))
    compaction = CtxbenchCompaction(HeadTail(), budget=25_000)
    agent = react(tools=[*my_tools, *strategy_tools(compaction)], model=model, compaction=compaction)

How the two harnesses meet (docs/inspect.md says the same for users):

- **History.** inspect calls ``compact()`` only when its estimate of the next request is above its
  threshold, and passes its compacted view plus the messages added since. The adapter keeps the
  full, append-only history itself (``MessageHistory``: new messages recognised by id) and gives
  the strategy what ctxbench's loop gives it: the whole history, every step it is consulted.
- **Messages.** ``harness.integrations.inspect_messages``: one fixed dict per inspect message and
  back, stable ids, ``_tool``/``_args``/``_error`` derived from inspect's messages.
- **Token counts, and which limit wins.** The strategy counts with ctxbench's counter (offline
  cl100k, 3 tokens a message, tool schemas as JSON, 3 to prime the reply) against ``budget``.
  inspect counts with its model's estimator (tiktoken ``o200k_base``, fetched from the network on
  first use, plus 10%) against ``threshold``. ``use_ctxbench_tokens(model)`` makes the model count
  with ctxbench's counter, so both count the same tokens and nothing is downloaded; with it and
  ``threshold = budget`` (the default) inspect consults the adapter exactly when ctxbench's loop
  would find the request over the budget. **ctxbench's budget decides what is kept; inspect's
  threshold decides when the strategy is consulted, and it is a hard ceiling**: when a projection
  is still above it (a ``soft`` or ``none`` strategy that cannot reach the budget), inspect raises
  its "Compaction insufficient" error and the sample ends in error, where ctxbench's loop would send
  the request and record the over-budget step. Give such strategies a ``threshold`` above the
  budget (their target stays ``budget``). With a real provider, inspect calibrates its trigger on the
  provider's reported input tokens, so the trigger follows the provider's tokenizer; what the
  strategy keeps still follows ctxbench's count.
- **Summaries.** ``ctx.summarize`` is synchronous and inspect's ``generate`` is async: for a strategy
  that summarizes (``calls_summarizer``, or ``threaded=True``) ``compact`` runs it in a worker thread
  (``anyio.to_thread``) and ``summarize`` sends the summary request through the inspect model on the
  event loop (``anyio.from_thread``); its text comes back. Other strategies run on the event loop's
  thread (a thread hop costs about 10 ms while inspect's loop is busy).
- **Strategy tools.** ``strategy_tools(compaction)`` turns the strategy's tools (offload's
  ``read_memory``, notes' ``write_note``/``read_notes``, isolate's ``delegate``) into inspect tools;
  a ctxbench ``ToolError`` becomes inspect's ``ToolError`` (an error result the model sees).
  ``delegate`` runs a sub-agent: an inspect ``react`` agent with ``subagent_tools`` and the same
  model (``CtxbenchCompaction(subagent_tools=...)``), managed by the strategy isolate hands over (a
  fresh copy of its base) at the sub-agent budget.
- **What equals ctxbench's loop.** Between ``compact()`` calls inspect sends its last view plus the new
  messages: strategies that change nothing while the request fits (headtail, clear_tool_results:
  tests/test_inspect_adapter.py) send what ctxbench's loop sends; one that triggers below its budget (summarize at 0.8)
  needs that trigger as ``threshold``; one that acts whatever the size (offload, notes' tail block,
  status_bar) acts only when consulted.
- **Samples.** inspect shares one agent between the samples and epochs of a task and runs several
  at once; each sample gets its own copy of the strategy, context and history (``Session``), found
  by a key in inspect's per-sample store. ``ctx.step`` counts the sample's ``compact()`` calls (not
  its model calls: inspect does not consult the adapter below the threshold).
- **Errors.** A projection that breaks the conversation (``harness.conversation.validate_projection``)
  raises ``StrategyProjectionError``, which ends the sample with the reason, as ``strategy_error`` ends
  a ctxbench trial.

Strategy events (``ctx.log``) are kept in ``compaction.events`` and logged to inspect's transcript as
info events. inspect's prefix rule applies: the system message and the sample's input are put back
in front when a projection lacks them (ctxbench's strategies keep them anyway).
"""

from __future__ import annotations

import copy
import logging
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import anyio
from inspect_ai.model import ChatMessage, ChatMessageUser, CompactionStrategy, Model
from inspect_ai.tool import ToolDef, ToolError as InspectToolError, ToolInfo, ToolParams

from harness.contracts import ToolError
from harness.conversation import InvalidConversation, validate_projection
from harness.integrations.inspect_messages import MessageHistory, from_dict, to_dicts, tool_dicts
from harness.summarizer import summary_request
from harness.tokens import REPLY_PRIMER, CountsTokens, TokenCounter

logger = logging.getLogger(__name__)

__all__ = ["CtxbenchCompaction", "StrategyProjectionError", "request_tokens", "strategy_tools", "use_ctxbench_tokens"]


class StrategyProjectionError(RuntimeError):
    """The strategy returned a projection no chat API accepts (ctxbench's ``strategy_error``)."""


class InspectStrategyContext(CountsTokens):
    """The ``StrategyContext`` (harness/contracts.py) of a strategy running inside inspect_ai."""

    def __init__(self, budget: int, store: Path, counter: TokenCounter, owner: "CtxbenchCompaction") -> None:
        self.budget = budget
        self.store = store
        self.counter = counter
        self.tools: list[dict] = []
        self.step = 0
        self.compactions = 0
        self.events: list[dict] = []
        self.model: Model | None = None
        self._owner = owner

    def summarize(self, messages: list[dict], instructions: str = "") -> str:
        """The summary of ``messages`` by the inspect model (runs the async ``generate`` on the event loop)."""
        request = [from_dict(m, f"ctxbench-summary-{i}") for i, m in enumerate(summary_request(messages, instructions))]
        self.log("summarizer_call", messages=len(messages))
        return _from_thread(self._owner.generate_text, self._model(), request)

    def run_subagent(self, task: str, max_steps: int = 60, strategy: Any = None, budget: int | None = None) -> str:
        """A sub-agent (inspect ``react``) with a fresh context on ``task``; its conclusion comes back."""
        conclusion = _from_thread(self._owner.run_subagent, self._model(), task, max_steps, strategy, budget)
        self.log("subagent", task=task[:200])
        return conclusion

    def _model(self) -> Model:
        """The model ``compact`` was last called for, else the active model of the sample."""
        if self.model is None:
            from inspect_ai.model import get_model

            self.model = get_model()
        return self.model

    def log(self, event: str, **data: Any) -> None:
        """Keep a strategy event (``compaction`` events are counted) and show it in inspect's transcript."""
        if event == "compaction":
            self.compactions += 1
        self.events.append({"step": self.step, "event": event, **data})
        try:
            from inspect_ai.log import transcript

            transcript().info({"ctxbench": event, **data}, source="ctxbench")
        except Exception:  # outside a running sample there is no transcript
            pass


def _from_thread(function: Any, *args: Any) -> Any:
    """Run an async function on the event loop from the strategy's worker thread."""
    try:
        return anyio.from_thread.run(function, *args)
    except RuntimeError as exc:
        if "event loop" in str(exc) or "worker thread" in str(exc):
            raise RuntimeError(
                "ctx.summarize / ctx.run_subagent need a worker thread of inspect's event loop: "
                "create CtxbenchCompaction(..., threaded=True)"
            ) from None
        raise


SESSION_KEY = "ctxbench_session"
CTXBENCH_TOKENS = "_ctxbench_tokens"  # set on a model by use_ctxbench_tokens


def sample_key() -> str:
    """A key for the running sample (and epoch), kept in inspect's per-sample store; one key outside samples."""
    from inspect_ai.util import store

    data = store()
    key = data.get(SESSION_KEY)
    if key is None:
        key = uuid.uuid4().hex[:12]
        data.set(SESSION_KEY, key)
    return str(key)


@dataclass
class Session:
    """One sample's strategy (a fresh copy), its context and the full history the adapter keeps for it."""

    key: str
    strategy: Any
    context: InspectStrategyContext
    history: MessageHistory = field(default_factory=MessageHistory)


class CtxbenchCompaction(CompactionStrategy):
    """A ctxbench strategy as an inspect_ai compaction strategy (see the module docstring).

    inspect shares one agent, and so one compaction strategy, between all samples and epochs of a
    task, running several at once; a ctxbench strategy keeps per-trial state. So the strategy given
    here is a prototype: each sample gets a deep copy of it, bound to its own context and history
    (``Session``, found by a key in inspect's per-sample store). Sessions are kept until the
    compaction object goes (inspect tells a compaction strategy nothing when a sample ends): an eval of
    many long samples holds all their histories; create the agent per eval, not per process.

    Parameters:
        strategy: a ctxbench strategy object (anything with ``prepare``), not yet bound.
        budget: ctxbench's token budget the strategy aims at (its ``ctx.budget``).
        threshold: inspect's trigger and hard ceiling, in tokens or a fraction of the model's
            window (default: ``budget``).
        store: the folder under which each sample's strategy may write (offload's memory), one
            sub-folder per sample; default a new temporary folder.
        subagent_tools: the tools a ``delegate`` sub-agent gets (isolate); without them ``delegate``
            answers with an error result.
        threaded: run ``prepare`` in a worker thread, so that ``ctx.summarize`` can await the
            model (default: when the strategy's code, or its base's, calls ``summarize(``). On the
            event loop's own thread a step costs the strategy's time; a thread hop costs up to two
            GIL switch intervals (about 10 ms measured) while inspect's loop is busy.
    """

    def __init__(
        self,
        strategy: Any,
        budget: int,
        threshold: int | float | None = None,
        store: str | Path | None = None,
        subagent_tools: list[Any] | None = None,
        threaded: bool | None = None,
    ) -> None:
        if not hasattr(strategy, "prepare"):
            raise ValueError("CtxbenchCompaction: strategy must have prepare(messages) -> messages")
        super().__init__(type="edit", threshold=budget if threshold is None else threshold, memory=False)
        self.strategy = strategy
        copy.deepcopy(strategy)  # fail now, not in the first sample, if it cannot be copied
        self.budget = int(budget)
        self.subagent_tools = list(subagent_tools or [])
        self.store = Path(store) if store is not None else Path(tempfile.mkdtemp(prefix="ctxbench-inspect-"))
        self.sessions: dict[str, Session] = {}
        self.threaded = calls_summarizer(strategy) if threaded is None else bool(threaded)

    def session(self) -> Session:
        """The running sample's session (created, with a fresh copy of the strategy, on first use)."""
        key = sample_key()
        found = self.sessions.get(key)
        if found is None:
            strategy = copy.deepcopy(self.strategy)
            context = InspectStrategyContext(self.budget, self.store / key, TokenCounter(), self)
            if hasattr(strategy, "bind"):
                strategy.bind(context)
            found = self.sessions[key] = Session(key, strategy, context)
        return found

    @property
    def events(self) -> list[dict]:
        """The strategy events (``ctx.log``) of every sample, in order, each with its ``sample`` key."""
        return [{"sample": key, **event} for key, session in self.sessions.items() for event in session.context.events]

    async def compact(
        self, model: Model, messages: list[ChatMessage], tools: list[ToolInfo]
    ) -> tuple[list[ChatMessage], ChatMessageUser | None]:
        """The strategy's projection of the full history (kept here), as inspect messages."""
        session = self.session()
        if session.context.model is None and not getattr(model, CTXBENCH_TOKENS, False):
            logger.warning(
                "CtxbenchCompaction: %s counts tokens with inspect's estimator, not ctxbench's: the threshold "
                "and the budget count different tokens (use_ctxbench_tokens(model) aligns them)",
                model,
            )
        session.context.model = model
        session.context.tools = tool_dicts(tools)
        session.context.step += 1
        session.history.absorb(messages)
        if self.threaded:
            projection = await anyio.to_thread.run_sync(self._prepare, session)
        else:
            projection = self._prepare(session)
        return session.history.to_inspect(projection), None

    @staticmethod
    def _prepare(session: Session) -> list[dict]:
        """``strategy.prepare`` on the full history, validated as ctxbench's loop validates it."""
        strategy, history = session.strategy, session.history.dicts
        projection = strategy.prepare(list(history))
        try:
            validate_projection(
                projection, history[0], allow_system_rewrite=bool(getattr(strategy, "rewrites_system", False))
            )
        except InvalidConversation as exc:
            raise StrategyProjectionError(f"{type(strategy).__name__}: invalid projection: {exc}") from None
        return projection

    async def generate_text(self, model: Model, request: list[ChatMessage]) -> str:
        """One summarizer call to the model the compaction runs for."""
        output = await model.generate(request)
        return output.completion

    async def run_subagent(
        self, model: Model, task: str, max_steps: int, strategy: Any = None, budget: int | None = None
    ) -> str:
        """A react sub-agent on ``task`` with ``subagent_tools``, managed by ``strategy`` when given."""
        from inspect_ai.agent import react, run
        from inspect_ai.util import message_limit

        if not self.subagent_tools:
            raise ToolError("delegate is not available: CtxbenchCompaction was given no subagent_tools")
        compaction = CtxbenchCompaction(strategy, budget or self.budget) if strategy is not None else None
        agent = react(tools=self.subagent_tools, model=model, compaction=compaction)
        state, _ = await run(agent, task, limits=[message_limit(2 * max_steps + 2)])
        return state.output.completion


def calls_summarizer(strategy: Any) -> bool:
    """Whether the strategy's classes, or its ``base``'s (wrapping strategies), call ``summarize(`` in their source."""
    import inspect as python_inspect

    seen: set[int] = set()
    while strategy is not None and id(strategy) not in seen:
        seen.add(id(strategy))
        for cls in type(strategy).__mro__:
            if cls.__module__ in ("builtins", "harness.contracts", "strategies.base", "abc", "typing"):
                continue
            try:
                if "summarize(" in python_inspect.getsource(cls):
                    return True
            except (OSError, TypeError):  # no source (built dynamically): assume it may
                return True
        strategy = getattr(strategy, "base", None)
    return False


def strategy_tools(compaction: CtxbenchCompaction) -> list[ToolDef]:
    """The strategy's extra tools as inspect tools (calls go to ``strategy.call`` in a worker thread)."""
    prototype = compaction.strategy
    schemas = list(prototype.tools()) if hasattr(prototype, "tools") else []
    return [_tool_def(compaction, schema["function"]) for schema in schemas]


def _tool_def(compaction: CtxbenchCompaction, function: dict) -> ToolDef:
    name = function["name"]

    async def execute(**arguments: Any) -> str:
        session = compaction.session()  # the running sample's strategy
        try:
            return await anyio.to_thread.run_sync(session.strategy.call, name, arguments)
        except ToolError as exc:
            raise InspectToolError(str(exc)) from None

    return ToolDef(execute, name=name, description=function.get("description", ""), parameters=_params(function))


def _params(function: dict) -> ToolParams:
    """The tool's JSON-schema parameters; a parameter without a description (inspect requires one) is named."""
    schema = copy.deepcopy(function.get("parameters") or {"type": "object", "properties": {}})
    for key, prop in (schema.get("properties") or {}).items():
        if isinstance(prop, dict) and not prop.get("description"):
            prop["description"] = key
    return ToolParams.model_validate(schema)


def request_tokens(messages: list[ChatMessage], tools: list[ToolInfo], counter: TokenCounter | None = None) -> int:
    """ctxbench's count of an inspect request: its messages, the tool schemas and the reply primer."""
    counter = counter or TokenCounter()
    return counter.messages(to_dicts(messages)) + counter.tools(tool_dicts(tools)) + REPLY_PRIMER


def use_ctxbench_tokens(model: Model, counter: TokenCounter | None = None) -> Model:
    """Make ``model`` (and its API) estimate tokens with ctxbench's offline counter, in place; returns it.

    inspect's default estimator loads tiktoken's ``o200k_base`` (a download on first use) and adds
    10%; after this call the compaction threshold counts exactly what ctxbench's budget counts
    (messages with ctxbench's framing; tool schemas plus the reply primer), and nothing is downloaded.
    """
    counter = counter or TokenCounter()

    async def count_tokens(input: str | list[ChatMessage], config: Any = None) -> int:
        return counter.text(input) if isinstance(input, str) else counter.messages(to_dicts(input))

    async def count_text_tokens(text: str) -> int:
        return counter.text(text)

    async def count_tool_tokens(tools: Sequence[ToolInfo]) -> int:
        return counter.tools(tool_dicts(list(tools))) + REPLY_PRIMER

    setattr(model, CTXBENCH_TOKENS, True)
    model.count_tokens = count_tokens  # type: ignore[method-assign]
    model.count_tool_tokens = count_tool_tokens  # type: ignore[method-assign]
    model.api.count_tokens = count_tokens  # type: ignore[method-assign]
    model.api.count_text_tokens = count_text_tokens  # type: ignore[method-assign]
    return model

"""The agent loop: one trial, from the task's prompts to ``submit`` or a limit.

The history is append-only. Before every model call the strategy projects it
(``prepare``), the harness validates the projection, counts it, checks the model's
context window, and sends it. Tool calls are executed by the task instance (or the
strategy, for tools it offers); the harness adds ``submit``, which grades and ends the
trial. Everything is logged to the trial's transcript and to ``steps.jsonl``.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.cache_sim import PROFILES, CacheProfile, PrefixCacheSimulator
from harness.hooks import CONTINUE_MESSAGE, PLAN_INSTRUCTION, Hooks, completion_gaps
from harness.conversation import (InvalidConversation, check_tool_order, iter_calls, parse_arguments, strip_private,
                                  validate_projection)
from harness.models.base import Completion, ContextOverflowError, ModelError, Usage, session_for
from harness.models.toolparse import parse_error_message
from harness.pricing import Pricing
from harness.records import RunWriter, Transcript
from harness.subagent import run_subagent, subagent_session
from harness.summarizer import summary_request
from harness.tokens import REPLY_PRIMER, TokenCounter
from strategies.base import ToolError

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
class CallTotals:
    """Token and cost totals of one kind of call (agent, summarizer, ...)."""

    calls: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    cached_sources: set = field(default_factory=set)
    sim_cached_tokens: int = 0
    cache_lost_tokens: int = 0
    cache_breaks: int = 0

    def add(self, usage: Usage, cost: float, sim_cached: int = 0, lost: int = 0) -> None:
        """Accumulate one call."""
        self.calls += 1
        self.sim_cached_tokens += sim_cached
        self.cache_lost_tokens += lost
        self.cache_breaks += bool(lost)
        self.input_tokens += usage.prompt_tokens or 0
        self.cached_tokens += usage.cached_tokens or 0
        self.output_tokens += usage.output_tokens or 0
        self.cost += cost
        self.cached_sources.add(usage.cached_source)


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
            self._transcript.event("message", ref=ref, message=message)
        self._by_id[id(message)] = (message, ref)
        return ref


class TrialContext:
    """The ``StrategyContext`` of one trial (see strategies/base.py)."""

    def __init__(self, budget: int, counter: TokenCounter, store: Path, transcript: Transcript,
                 summarizer: Any, on_summarizer_call) -> None:
        self.budget = budget
        self.store = store
        self.counter = counter
        self.tools: list[dict] = []
        self.step = 0
        self.compactions = 0
        self.events_this_step: list[str] = []
        self._transcript = transcript
        self._summarizer = summarizer
        self._on_summarizer_call = on_summarizer_call
        self.subagent_runner: Any = None  # set by run_trial: (task, max_steps) -> conclusion

    def count_tokens(self, messages: list[dict]) -> int:
        """Tokens of ``messages`` (memoized; tools and primer excluded)."""
        return self.counter.messages(messages)

    def count_message(self, message: dict) -> int:
        """Tokens of one message (memoized)."""
        return self.counter.message(message)

    def request_overhead(self) -> int:
        """Tokens of the tool schemas plus the reply primer."""
        return self.counter.tools(self.tools) + REPLY_PRIMER

    def summarize(self, messages: list[dict], instructions: str = "") -> str:
        """Call the summarizer model on ``messages``; billed to the trial as a summarizer call."""
        request = summary_request(messages, instructions)
        completion = self._summarizer.complete(request, [])
        self._on_summarizer_call(request, completion)
        return str(completion.message.get("content") or "")

    def run_subagent(self, task: str, max_steps: int = 60) -> str:
        """Run a sub-agent with a fresh context on ``task``; billed apart (``kind=subagent``)."""
        return self.subagent_runner(task, max_steps)

    def log(self, event: str, **data: Any) -> None:
        """Record a strategy event; ``compaction`` events are counted in the trial row."""
        if event == "compaction":
            self.compactions += 1
        self.events_this_step.append(event)
        self._transcript.event("strategy", step=self.step, name=event, data=data)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def run_trial(*, trial_id: str, trial_index: int, instance: Any, strategy: Any, model: Any, summarizer: Any,
              settings: TrialSettings, writer: RunWriter, text_cache: dict[str, int] | None = None) -> dict:
    """Run one trial and return its row (the caller appends it to ``trials.jsonl``)."""
    started = time.perf_counter()
    started_at = _now()
    counter = TokenCounter(text_cache)
    transcript = writer.transcript(trial_id)
    table = MessageTable(transcript)
    agent = session_for(model, instance)
    summarizer_session = agent if summarizer is None or summarizer is model else session_for(summarizer, instance)
    totals = {"agent": CallTotals(), "summarizer": CallTotals(), "subagent": CallTotals(), "stop_hook": CallTotals()}
    sims = {kind: PrefixCacheSimulator(settings.cache_profile, counter) for kind in totals}
    store = writer.run_dir / "stores" / trial_id
    row_base = {"trial_id": trial_id}

    def record_call(kind: str, step: int, request: list[dict], tools: list[dict], completion: Completion,
                    request_tokens: int, extra: dict | None = None, events: list[str] | None = None) -> None:
        usage = completion.usage
        sim = sims[kind].observe(request, tools)
        sims[kind].observe_reply(completion.message)
        if usage.prompt_tokens is None:
            usage.prompt_tokens = request_tokens
            usage.tokens_source = "tiktoken"
        if usage.output_tokens is None:
            usage.output_tokens = counter.message(completion.message)
        if usage.cached_tokens is None:  # not reported: the simulated figure is the cache figure
            usage.cached_tokens = min(sim.cached, usage.prompt_tokens)
            usage.cached_source = "simulated"
        cost = settings.pricing.cost(usage.prompt_tokens, usage.cached_tokens, usage.output_tokens)
        totals[kind].add(usage, cost, sim.cached, sim.lost)
        cache_break = None
        if sim.lost and kind == "agent":
            cache_break = "+".join(dict.fromkeys(events or [])) or "strategy rewrite"
        writer.step({
            **row_base, "step": step, "kind": kind, "request_tokens": request_tokens,
            "prompt_tokens": usage.prompt_tokens, "cached_tokens": usage.cached_tokens,
            "cached_source": usage.cached_source, "output_tokens": usage.output_tokens,
            "reasoning_tokens": usage.reasoning_tokens, "tokens_source": usage.tokens_source,
            "request_messages": len(request), "latency_s": round(completion.latency_s, 6), "cost": cost,
            "sim_cached_tokens": sim.cached, "cache_profile": settings.cache_profile.name,
            "cache_lost_tokens": sim.lost, "cache_break": cache_break, "pricing": settings.pricing.name,
            **(extra or {}),
        })

    def on_summarizer_call(request: list[dict], completion: Completion) -> None:
        tokens = counter.request(request, [])
        transcript.event("summarizer", step=ctx.step, request=[table.ref(m) for m in request],
                         reply=completion.message.get("content"))
        record_call("summarizer", ctx.step, request, [], completion, tokens)

    ctx = TrialContext(settings.budget, counter, store, transcript, summarizer_session, on_summarizer_call)
    sub_reads = {"reads": 0, "rereads": 0, "runs": 0}

    def run_sub(task: str, max_steps: int) -> str:
        sub_reads["runs"] += 1
        run_id = sub_reads["runs"]
        try:
            session = subagent_session(model, instance, task)
        except ModelError as exc:
            return f"ERROR: the sub-agent could not start: {exc}"
        seen: set[str] = set()
        transcript.event("subagent_start", step=ctx.step, subagent=run_id, task=task)

        def record(sub_step: int, request: list[dict], sub_tools: list[dict], completion: Completion, tokens: int) -> None:
            record_call("subagent", ctx.step, request, sub_tools, completion, tokens,
                        {"subagent": run_id, "substep": sub_step})

        def on_tool(name: str, args: dict, result: Any) -> None:
            resource = None if result.is_error else result.resource
            if resource is not None:
                sub_reads["reads"] += 1
                sub_reads["rereads"] += resource in seen
                seen.add(resource)
            tool_log.append({"step": ctx.step, "name": name, "args": args, "is_error": result.is_error,
                             "resource": resource, "subagent": run_id})
            transcript.event("tool", step=ctx.step, subagent=run_id, name=name, args=args, is_error=result.is_error,
                             resource=resource, content=result.content)

        conclusion = run_subagent(task=task, instance=instance, session=session, counter=counter, max_steps=max_steps,
                                  record=record, on_tool=on_tool)
        transcript.event("subagent_end", step=ctx.step, subagent=run_id, conclusion=conclusion)
        return conclusion

    ctx.subagent_runner = run_sub
    outcome, error, grade, answer = "step_limit", None, None, None
    history: list[dict] = [
        {"role": "system", "content": instance.system_prompt},
        {"role": "user", "content": instance.user_prompt},
    ]
    hooks = settings.hooks
    continues = 0
    if hooks.plan:
        history.append({"role": "user", "content": PLAN_INSTRUCTION, "_hook": "plan"})
        transcript.event("hook", step=0, name="plan")

    def judge(request: list[dict]) -> Completion:
        completion = agent.complete(request, [])
        record_call("stop_hook", ctx.step, request, [], completion, counter.request(request, []))
        return completion

    tools: list[dict] = list(instance.tools)
    strategy_tool_names: set[str] = set()
    tool_log: list[dict] = []
    seen_resources: set[str] = set()
    reads = rereads = 0
    peak_context = 0
    history_tokens = counter.messages(history)
    steps = 0
    try:
        if hasattr(strategy, "bind"):
            strategy.bind(ctx)
        extra_tools = list(strategy.tools()) if hasattr(strategy, "tools") else []
    except Exception as exc:  # a strategy that cannot even start
        extra_tools, outcome, error = [], "strategy_error", f"{type(exc).__name__}: {exc}"
    strategy_tool_names = {t["function"]["name"] for t in extra_tools}
    tools = tools + extra_tools + [submit_tool(instance.answer_schema)]
    ctx.tools = tools
    transcript.event("trial_start", trial_id=trial_id, instance=instance.id, family=instance.family,
                     seed=instance.seed, trial=trial_index, strategy=settings.strategy_name,
                     strategy_params=settings.strategy_params, budget=settings.budget, model=settings.model_name,
                     reference_agent=bool(getattr(model, "is_reference", False)), tools=tools, started_at=started_at)
    for message in history:
        table.ref(message)
    stripped_cache: dict[int, tuple[dict, dict]] = {}

    def stripped(message: dict) -> dict:
        """``strip_private`` memoized by identity, so a step does not copy the whole history."""
        entry = stripped_cache.get(id(message))
        if entry is None or entry[0] is not message:
            entry = (message, strip_private(message))
            stripped_cache[id(message)] = entry
        return entry[1]

    prev_request: list[dict] = []
    prev_message_tokens, prev_refs, prev_sent = 0, [], []
    rewrites_system = bool(getattr(strategy, "rewrites_system", False))  # deliberate experiments only
    order_tools = getattr(strategy, "order_tools", None)
    all_tools = tools
    while outcome != "strategy_error" and steps < settings.max_steps:
        steps += 1
        ctx.step = steps
        ctx.events_this_step = []
        try:
            request = strategy.prepare(list(history))
            # a request that extends the previous one (append-only strategies) is only checked,
            # counted and logged for its new messages; the list comparison runs in C
            known = len(prev_request) if prev_request and len(request) >= len(prev_request) \
                and request[:len(prev_request)] == prev_request else 0
            validate_projection(request, history[0], allow_system_rewrite=rewrites_system, start=known)
            if order_tools is not None:  # this step's tool order (the schemas are part of the cached prefix)
                tools = list(order_tools(list(all_tools)))
                check_tool_order(tools, all_tools)
        except InvalidConversation as exc:
            outcome, error = "strategy_error", f"invalid projection at step {steps}: {exc}"
            break
        except Exception as exc:
            outcome, error = "strategy_error", f"strategy raised at step {steps}: {type(exc).__name__}: {exc}"
            break
        tail = request[known:]
        message_tokens = (prev_message_tokens if known else 0) + counter.messages(tail)
        request_tokens = message_tokens + counter.tools(tools) + REPLY_PRIMER
        refs = (prev_refs if known else []) + [table.ref(m) for m in tail]
        sent = (prev_sent if known else []) + [stripped(m) for m in tail]
        prev_request, prev_message_tokens, prev_refs, prev_sent = request, message_tokens, refs, sent
        peak_context = max(peak_context, request_tokens)
        transcript.event("request", step=steps, refs=refs, tokens=request_tokens,
                         **({"tool_order": [t["function"]["name"] for t in tools]} if order_tools is not None else {}))
        if request_tokens > agent.context_window:
            outcome = "context_overflow"
            error = f"request of {request_tokens:,} tokens exceeds the {agent.context_window:,}-token context window"
            break
        try:
            completion = agent.complete(list(sent), tools)
        except ContextOverflowError as exc:
            outcome, error = "context_overflow", str(exc)
            break
        except ModelError as exc:
            outcome, error = "model_error", str(exc)
            break
        except Exception as exc:  # a backend bug must not kill the run
            outcome, error = "model_error", f"{type(exc).__name__}: {exc}"
            break
        reply = dict(completion.message)
        reply["role"] = "assistant"
        reply["_step"] = steps
        history.append(reply)
        history_tokens += counter.message(reply)
        transcript.event("reply", step=steps, ref=table.ref(reply), latency_s=round(completion.latency_s, 6))
        calls = list(iter_calls(reply))
        record_call("agent", steps, request, tools, completion, request_tokens, {
            "history_tokens": history_tokens, "tool_calls": [name for _, name, _ in calls],
            "strategy_events": list(ctx.events_this_step),
        }, events=list(ctx.events_this_step))
        if not calls:
            parse_error = reply.get("_parse_error")
            names = [t["function"]["name"] for t in tools if t.get("function")]
            content = parse_error_message(parse_error, names) if parse_error else NO_TOOL_CALL
            nudge = {"role": "user", "content": content, "_step": steps, "_nudge": True}
            history.append(nudge)
            history_tokens += counter.message(nudge)
            continue
        submitted = False
        for call_id, name, raw in calls:
            resource = None
            is_error = False
            args: dict = {}
            try:
                args = parse_arguments(raw)
            except ValueError as exc:
                content, is_error = f"ERROR: could not parse the arguments of {name}: {exc}. Fix the JSON and call again.", True
            else:
                gaps = None
                if name == "submit" and hooks.completion_check and continues < hooks.max_continues:
                    gaps = completion_gaps(instance, model, [*request, reply], args, judge)
                if name == "submit" and gaps:
                    continues += 1
                    content = CONTINUE_MESSAGE.format(gaps=gaps)
                    transcript.event("hook", step=steps, name="completion_check", accepted=False, gaps=gaps)
                    ctx.events_this_step.append("stop_hook")
                elif name == "submit":
                    answer = args
                    grade = instance.grade(args)
                    content = "Answer received. The task is over."
                    submitted = True
                elif name in strategy_tool_names:
                    try:
                        content = str(strategy.call(name, args))
                    except ToolError as exc:
                        content, is_error = f"ERROR: {exc}", True
                    except Exception as exc:
                        outcome, error = "strategy_error", f"strategy tool {name} raised: {type(exc).__name__}: {exc}"
                        content, is_error = f"ERROR: internal error in {name}", True
                else:
                    result = instance.call(name, args)
                    content, is_error, resource = result.content, result.is_error, result.resource
            if resource is not None and not is_error:
                reads += 1
                if resource in seen_resources:
                    rereads += 1
                seen_resources.add(resource)
            tool_log.append({"step": steps, "name": name, "args": args, "is_error": is_error, "resource": resource})
            message = {"role": "tool", "tool_call_id": call_id, "content": content, "_step": steps,
                       "_tool": name, "_args": args, "_error": is_error, "_resource": resource}
            history.append(message)
            history_tokens += counter.message(message)
            transcript.event("tool", step=steps, name=name, args=args, is_error=is_error, resource=resource,
                             ref=table.ref(message))
        if submitted:
            outcome = "submitted"
            break

    wall_s = time.perf_counter() - started
    agent_totals, summ_totals, sub_totals = totals["agent"], totals["summarizer"], totals["subagent"]
    cached_sources = sorted(agent_totals.cached_sources) or ["none"]
    row = {
        "trial_id": trial_id,
        "run": settings.run_name,
        "strategy": settings.strategy_name,
        "strategy_params": settings.strategy_params,
        "budget": settings.budget,
        "family": instance.family,
        "instance_id": instance.id,
        "seed": instance.seed,
        "trial": trial_index,
        "model": settings.model_name,
        "reference_agent": bool(getattr(model, "is_reference", False)),
        "outcome": outcome,
        "success": bool(outcome == "submitted" and grade is not None and grade.success),
        "score": float(grade.score) if (outcome == "submitted" and grade is not None) else 0.0,
        "steps": steps,
        "input_tokens": agent_totals.input_tokens,
        "cached_tokens": agent_totals.cached_tokens,
        "cached_source": "+".join(cached_sources),
        "output_tokens": agent_totals.output_tokens,
        "sim_cached_tokens": agent_totals.sim_cached_tokens,
        "cache_profile": settings.cache_profile.name,
        "cache_lost_tokens": agent_totals.cache_lost_tokens,
        "cache_breaks": agent_totals.cache_breaks,
        "summarizer_calls": summ_totals.calls,
        "summarizer_input_tokens": summ_totals.input_tokens,
        "summarizer_cached_tokens": summ_totals.cached_tokens,
        "summarizer_output_tokens": summ_totals.output_tokens,
        "summarizer_sim_cached_tokens": summ_totals.sim_cached_tokens,
        "hook_continues": continues,
        "stop_hook_calls": totals["stop_hook"].calls,
        "stop_hook_input_tokens": totals["stop_hook"].input_tokens,
        "subagent_runs": sub_reads["runs"],
        "subagent_calls": sub_totals.calls,
        "subagent_input_tokens": sub_totals.input_tokens,
        "subagent_cached_tokens": sub_totals.cached_tokens,
        "subagent_output_tokens": sub_totals.output_tokens,
        "subagent_cost": round(sub_totals.cost, 8),
        "subagent_reads": sub_reads["reads"],
        "subagent_rereads": sub_reads["rereads"],
        "cost": round(agent_totals.cost + summ_totals.cost + sub_totals.cost + totals["stop_hook"].cost, 8),
        "agent_cost": round(agent_totals.cost, 8),
        "summarizer_cost": round(summ_totals.cost, 8),
        "pricing": settings.pricing.name,
        "reads": reads,
        "rereads": rereads,
        "reread_rate": round(rereads / reads, 4) if reads else 0.0,
        "peak_context": peak_context,
        "final_history_tokens": history_tokens,
        "compactions": ctx.compactions,
        "rewrites_system": rewrites_system,
        "wall_s": round(wall_s, 4),
        "started_at": started_at,
        "error": error,
        "grade_detail": grade.detail if grade is not None else None,
    }
    row.update(instance.trial_metrics(tool_log))
    from harness.curves import trial_curve_fields  # curve_shape, thrashing (seed 000 §7.3)
    row.update(trial_curve_fields(transcript.request_tokens, settings.budget, row["reread_rate"]))
    transcript.event("trial_end", outcome=outcome, success=row["success"], score=row["score"], error=error,
                     answer=answer, steps=steps)
    transcript.commit()
    return row

"""``callback_search``: find the payment-callback handler and its call sites (seed 002 §2.7.6).

A package: ``world`` (the codebase, target, call sites and distractors), ``tools`` (prompts, tools and
their rendering; the instance, the Task contract's seam), ``grade`` and ``policy`` (the reference
agent: search, then verify; its sub-agent for ``isolate``). Answer: ``submit(file, function,
call_sites=[{"file", "function"}, ...])``. The family's rules are in tasks/README.md.
"""
from tasks.callback_search.grade import grade_answer, search_metrics
from tasks.callback_search.policy import (DEF_GREP, SCOPE_RULE, UNREAD, CallbackSearchPolicy, CallbackSubPolicy,
                                          _call_sites)
from tasks.callback_search.tools import CallbackSearchInstance
from tasks.callback_search.world import ALIASES, FACADE, CallbackSearch

__all__ = ["ALIASES", "DEF_GREP", "FACADE", "SCOPE_RULE", "UNREAD", "CallbackSearch", "CallbackSearchInstance",
           "CallbackSearchPolicy", "CallbackSubPolicy", "_call_sites", "grade_answer", "search_metrics"]

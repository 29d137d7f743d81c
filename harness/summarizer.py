"""The summarizer prompt (source 000 §7.3) and the request it builds.

Strategies call ``ctx.summarize(messages, instructions)``; the harness renders the
messages as text and asks the configured summarizer model with this prompt. The
reference agent recognizes the prompt by ``SUMMARY_MARKER`` and answers in the same
four-part template from what the rendered history shows.
"""

from __future__ import annotations

from harness.conversation import render_history

SUMMARY_MARKER = "You are the recorder of an agent's execution."
SUMMARY_HEADINGS = ("Key findings", "Tools used", "Failed attempts", "Progress and remaining")

SUMMARY_PROMPT = f"""{SUMMARY_MARKER} Compress the execution history below into a progress
summary that the same agent will use to continue its work. The summary has four parts,
each a list of one-line items: {", ".join(SUMMARY_HEADINGS[:-1])}, and {SUMMARY_HEADINGS[-1]}.
Keep only what is useful to continue; keep exact names, numbers, ids and dates; keep every
failed attempt with its error, so that it is not retried.

Example
[history]
[user]: Count last week's negative mentions of three brands
[tool_call] search_web {{"query": "brand A negative mentions last week"}}
[tool search_web]: about 12000 posts on Weibo, 12% negative
[assistant]: brand A done, next brand B

Output
Key findings:
- brand A: about 12000 mentions last week, 12% negative
Tools used:
- search_web
Failed attempts:
- none
Progress and remaining:
- brand A done; remaining: brand B, brand C, the summary table"""


def summary_request(messages: list[dict], instructions: str = "") -> list[dict]:
    """The summarizer request for ``messages`` (a previous summary inside them is absorbed)."""
    system = SUMMARY_PROMPT + (f"\n\nAdditional instructions: {instructions}" if instructions else "")
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": "[history]\n" + render_history(messages)},
    ]


def is_summary_request(messages: list[dict]) -> bool:
    """Whether a request is a summarizer request built by ``summary_request``."""
    return bool(messages) and str(messages[0].get("content", "")).startswith(SUMMARY_MARKER)

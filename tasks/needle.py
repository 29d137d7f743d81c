"""``needle``: one fact among retrieved documents, at a chosen position (source 003, Lost in the Middle).

Source 003 retells Liu et al. (2023): twenty documents in the prompt, the answer in one of them,
and accuracy against that document's place (first ~75%, middle ~50%, last ~70%: a U). This
family is that setup as a tool-using task. ``search_documents(query)`` returns ``documents``
documents in ONE result (a RAG top-K); document ``position`` (1 = first) holds the one line
that answers the question (a vault's access code). The other documents are filler in the same
style and name other vaults' codes, so an answer cannot be guessed from the shape of a line.
``doc_tokens`` sizes each document (in cl100k tokens, roughly), so the knobs place one fact
at a chosen position of a context of a chosen length.

Answer: ``submit(code="NNNN-NNNN")``. Grade: exact code (success and score alike).

The reference policy (``reference_agent/policies/needle.py``) searches once and answers from
what it sees. ``trial_metrics`` records the fact's document and its relative place in the
documents (``fact_position``: 0 = start, 1 = end).
"""

from __future__ import annotations

import random
import re

from tasks.base import FamilySpec, Grade, KnobError, TaskFamily, TaskInstance, ToolResult, tool_schema
from tasks.kit.grading import exact_grade

TOPICS = [
    "facility maintenance",
    "badge access",
    "courier schedules",
    "archive retention",
    "fire drills",
    "network closets",
    "visitor logs",
    "cold storage",
    "generator tests",
    "loading docks",
]
WORDS = (
    "the quarterly review notes that staff should confirm the schedule with the site lead before any change "
    "and record every exception in the shared log so that the next shift can follow up without delay while "
    "contractors sign in at the front desk and return their badges at the end of the day"
).split()
VAULTS = [
    "Amber",
    "Basalt",
    "Cobalt",
    "Dune",
    "Ember",
    "Fjord",
    "Granite",
    "Harbor",
    "Indigo",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Marble",
    "Nimbus",
    "Onyx",
    "Pewter",
    "Quartz",
    "Russet",
    "Slate",
    "Tundra",
    "Umber",
    "Vesper",
]
CODE = re.compile(r"access code of the (\w+) vault is (\d{4}-\d{4})")
QUESTION = re.compile(r"What is the access code of the (\w+) vault\?")
SEARCH_REPLY = "I will search the bulletins."  # the reference agent's search reply (``fact_place`` counts it)
LINE_CHARS = 96  # a filler line's length in characters
LINE_TOKENS = 20  # and about its length in cl100k tokens (doc_tokens / LINE_TOKENS lines make a document)


class Needle(TaskFamily):
    """Family generator. Knobs: ``documents`` (how many the search returns), ``doc_tokens`` (about how long
    each is), ``position`` (which document, 1-based, holds the answer) and ``positions`` (a list that
    overrides ``position``: seed ``s`` places the fact in document ``positions[s % len(positions)]``, so one
    run of ``len(positions) x k`` instances covers every position ``k`` times)."""

    name = "needle"

    def __init__(
        self, documents: int = 20, doc_tokens: int = 400, position: int = 10, positions: list[int] | None = None
    ) -> None:
        self.documents = self.check_knob("documents", documents, 1, 200)
        self.doc_tokens = self.check_knob("doc_tokens", doc_tokens, 50, 20_000)
        self.position = self.check_knob("position", position, 1, documents)
        if positions is not None and (not isinstance(positions, list) or not positions):
            raise KnobError(f"task knob positions={positions!r} must be a non-empty list of document numbers")
        self.positions = [self.check_knob("positions", p, 1, documents) for p in positions or []]

    def position_for(self, seed: int) -> int:
        """The document holding the fact for ``seed``."""
        return self.positions[seed % len(self.positions)] if self.positions else self.position

    def generate(self, seed: int) -> "NeedleInstance":
        """The documents for ``seed``: filler text, one vault code per document, the asked one at ``position``."""
        rng = random.Random(f"needle:{seed}")
        position = self.position_for(seed)
        vaults = rng.sample(VAULTS, min(len(VAULTS), self.documents + 1))
        target = vaults[0]
        codes = [f"{rng.randrange(10**4):04d}-{rng.randrange(10**4):04d}" for _ in range(self.documents)]
        docs = []
        for index in range(self.documents):
            vault = target if index + 1 == position else vaults[1 + index % (len(vaults) - 1)]
            docs.append(_document(rng, index + 1, vault, codes[index], self.doc_tokens))
        return NeedleInstance(self, seed, position, target, codes[position - 1], docs)


def _document(rng: random.Random, number: int, vault: str, code: str, tokens: int) -> str:
    """One document: a title line, filler lines, and the vault line in its middle (never its first line)."""
    lines = max(3, tokens // LINE_TOKENS)
    body = rng.choices(FILLER, k=lines)
    body[lines // 2] = f"Security note: the access code of the {vault} vault is {code}; rotate it after each audit."
    return f"[Document {number}] {rng.choice(TOPICS).title()} bulletin\n" + "\n".join(body)


def _filler_lines(count: int) -> list[str]:
    """``count`` distinct filler lines of about ``LINE_CHARS`` characters, the same on every run."""
    rng = random.Random("needle:filler")
    lines = []
    for _ in range(count):
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < LINE_CHARS:
            words.append(rng.choice(WORDS))
        lines.append(" ".join(words).capitalize() + ".")
    return lines


FILLER = _filler_lines(256)


class NeedleInstance(TaskInstance):
    """One generated set of documents with the asked vault's code at the family's position."""

    family = Needle.name

    def __init__(self, family: Needle, seed: int, position: int, vault: str, code: str, documents: list[str]) -> None:
        self.seed = seed
        self.id = f"needle-d{family.documents}x{family.doc_tokens}-p{position}-s{seed}"
        self.position, self.count = position, family.documents
        self.vault, self.code, self.documents = vault, code, documents
        self.system_prompt = (
            "You are a facilities assistant. You answer from the documents your search returns. "
            "When you have the answer, call submit."
        )
        self.user_prompt = (
            f"What is the access code of the {vault} vault? Search the bulletins once with "
            f"search_documents (it returns the {family.documents} most relevant documents), then submit "
            'the code as submit(code="NNNN-NNNN").'
        )
        self.tools = [
            tool_schema(
                "search_documents",
                "Search the facility bulletins; returns the top documents.",
                {"query": {"type": "string", "description": "what to search for"}},
            )
        ]
        self.answer_schema = {
            "type": "object",
            "required": ["code"],
            "properties": {"code": {"type": "string", "description": "the access code, NNNN-NNNN"}},
        }

    def call(self, name: str, args: dict) -> ToolResult:
        """``search_documents(query)``: every document, in rank order, as one result."""
        if name != "search_documents":
            return ToolResult(f"ERROR: unknown tool {name!r}; available: search_documents", is_error=True)
        if not isinstance(args.get("query"), str) or not args["query"].strip():
            return ToolResult("ERROR: query must be a non-empty string", is_error=True)
        header = f"Search results: {self.count} documents, most relevant first"
        return ToolResult(header + "\n" + "\n\n".join(self.documents), resource="search")

    def grade(self, answer: dict) -> Grade:
        """The exact code."""
        return exact_grade(answer, "code", self.code)

    def answer_key(self) -> dict:
        """The access code (what ``exact_grade`` compares with)."""
        return {"code": self.code}

    def trial_metrics(self, tool_log: list[dict]) -> dict:
        """Where the fact sat: its document, the document count and its relative place (0 = first, 1 = last)."""
        place = (self.position - 1) / (self.count - 1) if self.count > 1 else 0.5
        return {"fact_document": self.position, "documents": self.count, "fact_position": round(place, 4)}

    def fact_place(self) -> tuple[int, int]:
        """(characters before the fact's line, characters in all) of the request that answers: system prompt,
        task, the policy's search reply and the result. The attention model measures places in characters."""
        result = self.call("search_documents", {"query": "q"}).content
        head = len(self.system_prompt) + len(self.user_prompt) + len(SEARCH_REPLY)
        return head + result.index("Security note: the access code of the " + self.vault), head + len(result)

    def data_fingerprint(self) -> list:
        """The documents and the answer."""
        return [self.vault, self.code, self.documents]


FAMILY = FamilySpec(
    Needle.name,
    Needle,
    NeedleInstance,
    exact_grade,
    policy="reference_agent.policies.needle:NeedlePolicy",  # one search, then the answer from what is visible
)
"""The family's registration (``tasks.registry``)."""

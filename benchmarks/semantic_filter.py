"""Source 000 §7.3's semantic filtering demo: chunk a batch of raw search results, keep the chunks nearest the task.

The seed: 136,448 characters (37,312 tokens) of search results, chunked and embedded, top 3 chunks
by similarity kept: 304 tokens reach the context (99.2% saved), "the most semantically relevant
parts, not a head or tail cut". Everything here runs offline, so the "embedding" is a lexical
stand-in: TF-IDF vectors of the chunk's words (no model, no download), cosine similarity with the
query. A learned embedding ranks by meaning; this one ranks by shared rare words, which suffices
when the query names what it asks for (a person), and the table says which facts survived.

    python benchmarks/semantic_filter.py        # prints the demo's figures
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WORD = re.compile(r"[a-z0-9]+")


def count_text(text: str) -> int:
    """cl100k tokens of ``text`` (the harness's tokenizer)."""
    from harness.tokens import encoding

    return len(encoding().encode(text))


def chunk_text(text: str, size: int = 400) -> list[str]:
    """Chunks of at least ``size`` characters (about 100 tokens): consecutive paragraphs joined until that long."""
    chunks, current = [], ""
    for paragraph in (p.strip() for p in re.split(r"\n\s*\n", text)):
        if paragraph:
            current = f"{current}\n\n{paragraph}" if current else paragraph
        if len(current) >= size:
            chunks.append(current)
            current = ""
    return chunks + ([current] if current else [])


def _vectors(texts: list[str]) -> list[dict[str, float]]:
    """TF-IDF vectors (log-scaled term frequency, smoothed idf) of ``texts``, each normalised to length 1."""
    bags = [Counter(WORD.findall(t.lower())) for t in texts]
    df = Counter(w for bag in bags for w in bag)
    n = len(texts)
    out = []
    for bag in bags:
        vec = {w: (1 + math.log(c)) * math.log((1 + n) / (1 + df[w])) for w, c in bag.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        out.append({w: v / norm for w, v in vec.items()})
    return out


def top_chunks(chunks: list[str], query: str, k: int = 3) -> list[str]:
    """The ``k`` chunks most similar to ``query`` (cosine of TF-IDF vectors), in their original order."""
    vectors = _vectors(chunks + [query])
    q = vectors[-1]
    scores = [sum(v * q.get(w, 0.0) for w, v in vec.items()) for vec in vectors[:-1]]
    best = sorted(range(len(chunks)), key=lambda i: (-scores[i], i))[:k]
    return [chunks[i] for i in sorted(best)]


@dataclass(frozen=True)
class FilterDemo:
    """The figures of one run of the demo."""

    raw_chars: int
    raw_tokens: int
    chunks: int
    kept_tokens: int
    facts: int
    facts_kept: int
    facts_headtail: int
    query: str

    @property
    def saved(self) -> float:
        """Share of the raw tokens that did not reach the context."""
        return 1 - self.kept_tokens / self.raw_tokens


def search_batch(target_tokens: int = 37_312, seed: int = 0):
    """(raw text, person, the person's moves): people_tracker pages, the person's first, until ``target_tokens``."""
    from tasks.people_tracker import PeopleTracker

    instance = PeopleTracker(people=18, moves=3, roundups=4).generate(seed)
    person = instance.names[0]
    pages = sorted(instance.pages.values(), key=lambda p: (person not in p.names, p.url))
    parts, tokens = [], 0
    for page in pages:
        text = f'<page url="{page.url}">\n{page.body}\n</page>'
        cost = count_text(text)
        if tokens + cost > target_tokens and parts:
            break
        parts.append(text)
        tokens += cost
    return "\n\n".join(parts), person, [m for m in instance.moves if m.person == person]


@lru_cache(maxsize=None)
def run_demo(k: int = 3, seed: int = 0) -> FilterDemo:
    """Chunk the batch, keep the top ``k`` chunks for the question about the person's moves, count and check."""

    raw, person, moves = search_batch(seed=seed)
    query = f"When did {person} leave and join a new company, and which company did {person} join?"
    chunks = chunk_text(raw)
    kept = "\n\n".join(top_chunks(chunks, query, k))
    found = sum(1 for m in moves if _states(kept, person, m))
    cut = head_tail(raw, count_text(kept))
    return FilterDemo(
        len(raw),
        count_text(raw),
        len(chunks),
        count_text(kept),
        len(moves),
        found,
        sum(1 for m in moves if _states(cut, person, m)),
        query,
    )


def head_tail(text: str, tokens: int) -> str:
    """The first and the last ``tokens / 2`` tokens of ``text``: the blind cut the seed contrasts filtering with."""
    from harness.tokens import encoding

    ids = encoding().encode(text)
    half = tokens // 2
    return encoding().decode(ids[:half]) + "\n" + encoding().decode(ids[-half:])


def _states(text: str, person: str, move) -> bool:
    """Whether one sentence (line) of ``text`` gives the move whole: the person, the company joined, month and year."""
    from tasks.people_tracker.world import _when

    return any(person in line and move.to in line and _when(move.month) in line for line in text.splitlines())


if __name__ == "__main__":
    demo = run_demo()
    print(demo, f"saved {demo.saved:.1%}")

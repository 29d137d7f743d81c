"""Source 000 §7.3's semantic filtering demo on people_tracker pages.

Computed, no run: benchmarks/semantic_filter.py on seeds 0-2.
"""

from __future__ import annotations

from pathlib import Path

from .claims import claims, figure, judge, verdict_row, verdict_table
from .common import table

SEEDS = (0, 1, 2)
HEADER = [
    "",
    "raw results (characters / tokens)",
    "chunks",
    "tokens kept",
    "saved",
    "the person's moves stated whole in what is kept",
    "same tokens cut head + tail",
]


def runs() -> list:
    """The demo on seeds 0-2."""
    import semantic_filter as demo  # benchmarks/semantic_filter.py

    return [demo.run_demo(seed=seed) for seed in SEEDS]


def _published_row() -> list[str]:
    """The source's figures."""
    get = lambda claim_id: figure("semantic_filter", claim_id)  # noqa: E731
    return [
        "source 000 (published)",
        f"{get('raw_chars'):,} / {get('raw_tokens'):,}",
        "?",
        f"{get('kept_tokens')} (top 3)",
        f"{get('saving'):.1%}",
        '"the most relevant parts"',
        "-",
    ]


def semantic_filter(results: Path | None = None) -> str:
    """The demo's figures on three seeds beside the source's."""
    rows = [_published_row()]
    for seed, d in zip(SEEDS, runs(), strict=True):
        rows.append(
            [
                f"ours, seed {seed}",
                f"{d.raw_chars:,} / {d.raw_tokens:,}",
                str(d.chunks),
                f"{d.kept_tokens:,} (top 3)",
                f"{d.saved:.1%}",
                f"{d.facts_kept}/{d.facts}",
                f"{d.facts_headtail}/{d.facts}",
            ]
        )
    return table(HEADER, rows) + (
        "\n\nComputed, no agent: a `people_tracker` instance's pages (18 people), the asked person's pages first, up "
        "to ~37K tokens; chunks of about 100 tokens; the query asks for the first person's moves; a move counts when "
        'one line of the kept text gives person, company joined, month and year. The "embedding" is TF-IDF cosine '
        "(offline, no model), a lexical stand-in for the source's embeddings."
    )


def semantic_filter_verdict(results: Path | None = None) -> str:
    """The demo's saving and what it kept, against the source's."""
    found, demos = claims("semantic_filter"), runs()
    saved = min(d.saved for d in demos)
    kept, facts = sum(d.facts_kept for d in demos), sum(d.facts for d in demos)
    blind = sum(d.facts_headtail for d in demos)
    saving = (
        f"{min(d.raw_tokens for d in demos):,}-{max(d.raw_tokens for d in demos):,} -> "
        f"{min(d.kept_tokens for d in demos)}-{max(d.kept_tokens for d in demos)} tokens, at least {saved:.1%} saved"
    )
    reason = (
        "similarity finds the person's move sentences; the blind cut keeps page chrome. A move whose sentence is split "
        "over two chunks, or ranked below a profile's paragraph, is lost: three chunks are a small top-K"
        if kept < facts
        else "similarity finds every move sentence; the blind cut keeps page chrome"
    )
    rows = [
        verdict_row(
            found["saving"],
            saving,
            judge(
                found["saving"],
                saved,
                reason="three chunks of ~100 tokens out of ~37K is the same arithmetic; the batch and chunk size are "
                "chosen like the source's",
            ),
        ),
        verdict_row(
            found["relevant_part"],
            f"moves kept whole: {kept}/{facts} by similarity, {blind}/{facts} by a head + tail cut of the same size",
            judge(found["relevant_part"], kept / max(facts, 1), gate=kept > blind, reason=reason),
        ),
    ]
    return verdict_table(rows)

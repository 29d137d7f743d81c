"""Calibration as a ranking benchmark: does the reference agent rank strategies as a real LLM does?

    python benchmarks/calibration.py [--profile realistic] [--trials 3] [--family F] [--folder DIR]
                                     [--update docs/reference_agent.md]

Reads every recorded LLM run under the calibration folders, however many there are:
``calibration/`` and ``calibration/protocol-1/`` in this repository and ``shared/calibration/``
beside the checkout. **Only runs recorded under relay protocol 2 count in the targets** (the run's
``identity.json`` says ``model.relay_protocol: 2``: every request was read whole, proved by its nonce;
harness/models/relay.py). Older runs, whose model calls may have read only the start of a long
request, are listed apart as "unverified reading" and kept out of the targets. A run is a
folder with ``trials.jsonl``; its configuration comes from its ``.hydra/overrides.yaml`` when it
has one, else from its name ``FAMILY__STRATEGY__BUDGET__SIZE`` (``default``: the family's default
size, ``max_steps=40 model.context_window=131072``; ``smoke``: the smoke suite's knobs for the
family, ``max_steps=20 model.context_window=65536``), else from the shared README's table (the
first, older set). Each run is one cell; the reference agent replays each cell ``--trials`` times.

Per cell: the LLM's steps, input tokens and success beside the reference agent's means, with
ratios (reference / LLM). Per group (family and size): success agreement (cells where the
reference agent's majority outcome equals the LLM's) and Kendall's tau-b between the two rankings of
the group's strategies (success first, then input tokens, fewer is better; two strategies whose
input tokens differ by at most ``TIE_SHARE`` tie, since one LLM run per cell cannot order them), with
the strict tau (no ties) beside it.

Targets (read off the output, asserted by tests/test_calibration.py), over the protocol-2 runs:
success agrees in at least 90% of cells; steps and input tokens within 1.5x of the LLM's in every
cell; tau at least 0.8 in every group with three or more strategies. ``--rerecorded`` prints, for
each cell recorded under both protocols, the LLM's figures before (protocol 1) and after (protocol 2).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from _common import ROOT, compose, suite_knobs  # noqa: E402  (puts the repository on sys.path)

FOLDERS = (
    ROOT / "calibration",
    ROOT / "calibration" / "issue-34",  # the three families of issue 34, two instances each (its README)
    ROOT / "calibration" / "protocol-1",
    ROOT.parent / "shared" / "calibration",
)
CALIBRATION = FOLDERS[3]  # the shared folder (its README lists the older runs' overrides)
REPO_FOLDERS = FOLDERS[:3]  # what docs/reference_agent.md's block counts: it must not depend on shared/
VERIFIED_PROTOCOL = 2  # relay protocol from which a recording proves that each request was read whole
NAMED = re.compile(
    r"^(?P<family>[a-z_]+)__(?P<strategy>[a-z_]+)__(?P<budget>\w+?)__(?P<size>default|smoke)(?:__(?P<instance>seed\d+))?$"
)  # an instance other than seed 0 is named: __seed1
SIZE_OVERRIDES = {
    "default": ["max_steps=40", "model.context_window=131072"],
    "smoke": ["max_steps=20", "model.context_window=65536"],
}
NOT_OURS = ("model", "model.", "plots", "progress", "hydra", "trials")  # overrides that belong to the recording
TOLERANCE = 1.5
# Two strategies whose input tokens differ by at most this share tie: one recorded LLM run per cell cannot order
# them (the calibration LLM's own headtail and sliding_window runs differ by 5-7% on call_budget and
# failure_memory). Kendall's tau-b counts such a pair as tied; the strict tau (no ties) is printed beside it.
TIE_SHARE = 0.10
TAU_TARGET = 0.8
# recorded runs whose task has changed since (shown, not counted in the targets), with the reason
STALE = {
    "invoice_audit_none": "recorded before cursor pagination (issue 13): the LLM read pages 1-4 in one turn; "
    "now every agent needs one round per page"
}
AGREEMENT_TARGET = 0.9


@dataclass
class Cell:
    """One recorded LLM run: where it is, what it was, and how to replay it."""

    folder: Path
    family: str
    strategy: str
    budget: str
    size: str
    overrides: list[str]
    instance: str = ""  # "" for seed 0, else "seedN" (the folder name's suffix)
    llm: dict = field(default_factory=dict)
    ours: list[dict] = field(default_factory=list)
    protocol: int = 1

    @property
    def name(self) -> str:
        """The run folder's name."""
        return self.folder.name

    @property
    def verified(self) -> bool:
        """Whether the recording proves every request was read whole (relay protocol 2 or later)."""
        return self.protocol >= VERIFIED_PROTOCOL

    @property
    def counted(self) -> bool:
        """Whether the cell counts in the targets: read whole, and its task has not changed since."""
        return self.verified and self.name not in STALE

    @property
    def group(self) -> tuple[str, str]:
        """(family, size): the strategies of one group are ranked against each other (one instance: a size
        other than seed 0's carries its instance, ``default__seed1``)."""
        return self.family, f"{self.size}__{self.instance}" if self.instance else self.size


def recorded_overrides(folder: Path) -> list[str] | None:
    """The run's own overrides (``.hydra/overrides.yaml``) without the recording's model and output keys."""
    path = folder / ".hydra" / "overrides.yaml"
    if not path.exists():
        return None
    lines = [line[2:].strip() for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("- ")]
    return [o for o in lines if not o.split("=", 1)[0].startswith(NOT_OURS)]


def named_cell(folder: Path) -> Cell | None:
    """A run named ``FAMILY__STRATEGY__BUDGET__SIZE``."""
    match = NAMED.match(folder.name)
    if not match:
        return None
    family, strategy, budget, size, instance = match.group("family", "strategy", "budget", "size", "instance")
    overrides = recorded_overrides(folder)
    if overrides is None:
        knobs = suite_knobs("smoke", family) if size == "smoke" else []
        overrides = [
            f"task={family}",
            *knobs,
            f"strategy={strategy}",
            f"budget={budget}",
            "seed=0",
            "suite.instances=1",
            *SIZE_OVERRIDES[size],
        ]
    return Cell(folder, family, strategy, budget, size, overrides, instance or "")


def readme_cells(directory: Path) -> list[Cell]:
    """The older shared runs, listed in the README's table (common overrides plus the row's)."""
    readme = directory / "README.md"
    if not readme.exists():
        return []
    text = readme.read_text(encoding="utf-8")
    common = re.search(r"Common overrides: `([^`]*)`", text)
    base = common.group(1).split() if common else []
    cells, previous = [], []
    for line in text.splitlines():
        parts = [c.strip() for c in line.strip().strip("|").split("|")]
        if (
            len(parts) != 4
            or not parts[0].startswith("`")
            or not parts[1].startswith(("`task=", "same"))
            or not (directory / parts[0].strip("`")).is_dir()
        ):
            continue
        task = previous if parts[1] == "same" else parts[1].strip("`").split()
        previous = task
        strategy, budget = parts[2].strip("`"), parts[3].strip("`")
        family = next(o.split("=", 1)[1] for o in task if o.startswith("task="))
        overrides = (
            [o for o in base if not o.startswith("trials=")] + task + [f"strategy={strategy}", f"budget={budget}"]
        )
        cells.append(Cell(directory / parts[0].strip("`"), family, strategy, budget, "custom", overrides))
    return cells


def relay_protocol(folder: Path) -> int:
    """The relay protocol a run was recorded under (``identity.json``; 1 when it names none)."""
    path = folder / "identity.json"
    if not path.is_file():
        return 1
    model = json.loads(path.read_text(encoding="utf-8")).get("model") or {}
    value = model.get("relay_protocol", 1) if isinstance(model, dict) else 1
    return value if isinstance(value, int) else 1


def recorded(folder: Path) -> bool:
    """Whether ``folder`` holds a finished run (a trial row; a recording still under way has none)."""
    rows = folder / "trials.jsonl"
    return rows.is_file() and rows.stat().st_size > 0


def cells(folders: tuple[Path, ...] = FOLDERS, family: str | None = None) -> list[Cell]:
    """Every recorded run under ``folders`` (named ones, then the shared README's older ones)."""
    found: list[Cell] = []
    for directory in folders:
        if not directory.is_dir():
            continue
        named = [c for c in (named_cell(p) for p in sorted(directory.iterdir()) if recorded(p)) if c]
        found += named + [c for c in readme_cells(directory) if c.name not in {n.name for n in named}]
    for cell in found:
        cell.llm = json.loads((cell.folder / "trials.jsonl").read_text(encoding="utf-8").splitlines()[0])
        cell.protocol = relay_protocol(cell.folder)
    return [c for c in found if family is None or c.family == family]


def replay(cell: Cell, profile: str, trials: int, out: Path) -> list[dict]:
    """Run the reference agent ``trials`` times on the cell's configuration; its trial rows."""
    from harness.runner import execute

    cfg = compose(*cell.overrides, f"trials={trials}", f"model.profile={profile}", "plots=false", "progress=false")
    execute(cfg, out, echo=lambda _: None)
    return [json.loads(line) for line in (out / "trials.jsonl").read_text(encoding="utf-8").splitlines()]


def mean(rows: list[dict], key: str) -> float:
    """Mean of ``key`` over ``rows`` (success as a share)."""
    return sum(float(r[key]) for r in rows) / len(rows)


def ratio(cell: Cell, key: str) -> float:
    """The reference agent's mean over the LLM's figure."""
    return mean(cell.ours, key) / max(float(cell.llm[key]), 1.0)


def agrees(cell: Cell) -> bool:
    """Whether the reference agent's majority outcome is the LLM's."""
    return (mean(cell.ours, "success") >= 0.5) == bool(cell.llm["success"])


def within(cell: Cell) -> bool:
    """Steps and input tokens both within ``TOLERANCE`` of the LLM's."""
    return all(1 / TOLERANCE <= ratio(cell, key) <= TOLERANCE for key in ("steps", "input_tokens"))


def ranking(scores: dict[str, tuple[float, float]]) -> dict[str, int]:
    """Strategy -> rank (0 = best) by success (more first), then input tokens (fewer first)."""
    order = sorted(scores, key=lambda s: (-scores[s][0], scores[s][1]))
    return {strategy: index for index, strategy in enumerate(order)}


def kendall_tau(first: dict[str, int], second: dict[str, int]) -> float:
    """Kendall's tau (no ties: ranks are positions) between two rankings of the same items."""
    pairs = list(combinations(sorted(first), 2))
    if not pairs:
        return float("nan")
    score = sum(1 if (first[a] - first[b]) * (second[a] - second[b]) > 0 else -1 for a, b in pairs)
    return score / len(pairs)


def order(a: tuple[float, float], b: tuple[float, float], tie: float = TIE_SHARE) -> int:
    """+1 when (success, tokens) ``a`` ranks above ``b``, -1 below, 0 when tied (equal success, tokens
    within ``tie``)."""
    if a[0] != b[0]:
        return 1 if a[0] > b[0] else -1
    if abs(a[1] - b[1]) <= tie * max(a[1], b[1], 1.0):
        return 0
    return 1 if a[1] < b[1] else -1


def kendall_tau_b(
    first: dict[str, tuple[float, float]], second: dict[str, tuple[float, float]], tie: float = TIE_SHARE
) -> float:
    """Kendall's tau-b between two scorings of the same items, with near-equal token counts as ties."""
    pairs = list(combinations(sorted(first), 2))
    signs = [(order(first[a], first[b], tie), order(second[a], second[b], tie)) for a, b in pairs]
    untied_first = sum(1 for x, _ in signs if x)
    untied_second = sum(1 for _, y in signs if y)
    if not untied_first or not untied_second:
        return 1.0 if untied_first == untied_second else 0.0
    return sum(x * y for x, y in signs) / (untied_first * untied_second) ** 0.5


def groups(found: list[Cell]) -> dict[tuple[str, str], list[Cell]]:
    """Cells by (family, size), in the order met."""
    grouped: dict[tuple[str, str], list[Cell]] = {}
    for cell in found:
        grouped.setdefault(cell.group, []).append(cell)
    return grouped


def scores(members: list[Cell]) -> tuple[dict, dict]:
    """(LLM, reference agent): strategy -> (success, input tokens) of the group's cells."""
    label = lambda c: f"{c.strategy}@{c.budget}"  # noqa: E731
    return (
        {label(c): (float(c.llm["success"]), float(c.llm["input_tokens"])) for c in members},
        {label(c): (mean(c.ours, "success"), mean(c.ours, "input_tokens")) for c in members},
    )


def group_tau(members: list[Cell]) -> float:
    """Kendall's tau-b between the LLM's and the reference agent's rankings of the group's strategies (ties:
    equal success and input tokens within ``TIE_SHARE``)."""
    return kendall_tau_b(*scores(members))


def strict_tau(members: list[Cell]) -> float:
    """Kendall's tau between the two strict rankings (success first, then input tokens; no ties)."""
    llm, ours = scores(members)
    return kendall_tau(ranking(llm), ranking(ours))


def cell_note(cell: Cell) -> str:
    """Why a cell is not counted, as a suffix of its name ('' when it counts)."""
    if cell.name in STALE:
        return " (older task: not counted)"
    return ""


def cell_table(found: list[Cell]) -> str:
    """One row per cell: steps, input tokens (LLM, reference, ratio) and success."""
    head = ["run", "LLM steps", "ref steps", "ratio", "LLM input tok", "ref input tok", "ratio", "success (LLM vs ref)"]
    rows = []
    for c in found:
        rows.append(
            [
                c.name + cell_note(c),
                f"{c.llm['steps']}",
                f"{mean(c.ours, 'steps'):.1f}",
                f"{ratio(c, 'steps'):.2f}",
                f"{c.llm['input_tokens']:,}",
                f"{mean(c.ours, 'input_tokens'):,.0f}",
                f"{ratio(c, 'input_tokens'):.2f}",
                f"{'yes' if c.llm['success'] else 'no'} vs {mean(c.ours, 'success'):.0%}",
            ]
        )
    return markdown(head, rows)


def strategy_table(found: list[Cell]) -> str:
    """One row per (family, strategy) over its recorded instances: the LLM's successes and mean input tokens
    beside the reference agent's (success as the share of its trials)."""
    head = ["family", "strategy", "LLM success", "LLM input tokens", "ref success", "ref input tokens"]
    cells: dict[tuple[str, str], list[Cell]] = {}
    for cell in found:
        cells.setdefault((cell.family, cell.strategy), []).append(cell)
    rows = []
    for (family, strategy), members in sorted(cells.items()):
        ours = [row for c in members for row in c.ours]
        rows.append(
            [
                family,
                f"`{strategy}`" + (" (1M)" if members[0].budget == "1M" else f" ({members[0].budget})"),
                f"{sum(bool(c.llm['success']) for c in members)}/{len(members)}",
                f"{sum(c.llm['input_tokens'] for c in members) / len(members):,.0f}",
                f"{mean(ours, 'success'):.0%}",
                f"{mean(ours, 'input_tokens'):,.0f}",
            ]
        )
    return markdown(head, rows)


def group_table(found: list[Cell]) -> str:
    """One row per (family, size): strategies, success agreement, cells within 1.5x, Kendall's tau."""
    head = ["family", "size", "strategies", "success agrees", "within 1.5x", "Kendall tau-b", "strict tau"]
    rows = []
    for (family, size), members in groups([c for c in found if c.counted]).items():
        pair = len(members) >= 2
        tau, strict = (group_tau(members), strict_tau(members)) if pair else (float("nan"), float("nan"))
        rows.append(
            [
                family,
                size,
                str(len(members)),
                f"{sum(map(agrees, members))}/{len(members)}",
                f"{sum(map(within, members))}/{len(members)}",
                f"{tau:+.2f}" if pair else "-",
                f"{strict:+.2f}" if pair else "-",
            ]
        )
    return markdown(head, rows)


def verdict(found: list[Cell]) -> str:
    """The targets, each with its measured figure and met / not met, over the counted cells only."""
    stale = [c.name for c in found if c.verified and not c.counted]
    found = [c for c in found if c.counted]
    if not found:
        return "- no protocol-2 run found: no target can be judged"
    agreement = sum(map(agrees, found)) / len(found)
    inside = sum(map(within, found))
    taus = [group_tau(m) for m in groups(found).values() if len(m) >= 3]
    lowest = min(taus) if taus else float("nan")
    lines = [
        f"- success agrees in {agreement:.0%} of {len(found)} cells (target >= {AGREEMENT_TARGET:.0%}): "
        f"{'met' if agreement >= AGREEMENT_TARGET else 'NOT met'}",
        f"- steps and input tokens within {TOLERANCE}x in {inside} of {len(found)} cells (target: all): "
        f"{'met' if inside == len(found) else 'NOT met'}",
    ]
    lines += [f"- not counted: {name} ({STALE[name]})" for name in stale]
    if taus:
        lines.append(
            f"- lowest Kendall tau-b (ties: input tokens within {TIE_SHARE:.0%}) over the {len(taus)} groups "
            f"with 3+ strategies: {lowest:+.2f} (target >= {TAU_TARGET}): "
            f"{'met' if lowest >= TAU_TARGET else 'NOT met'}"
        )
    return "\n".join(lines)


def markdown(head: list[str], rows: list[list[str]]) -> str:
    """A markdown table."""
    return "\n".join(
        ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows]
    )


def calibrate(
    profile: str = "realistic", trials: int = 3, family: str | None = None, folders: tuple[Path, ...] = FOLDERS
) -> list[Cell]:
    """Every cell, replayed on the reference agent under ``profile``."""
    found = cells(folders, family)
    with tempfile.TemporaryDirectory() as tmp:
        for index, cell in enumerate(found):
            cell.ours = replay(cell, profile, trials, Path(tmp) / str(index))
    return found


def report(found: list[Cell], profile: str, trials: int) -> str:
    """The block: the protocol-2 cells, their groups and the verdict; then the unverified runs, apart."""
    verified = [c for c in found if c.verified]
    unverified = [c for c in found if not c.verified]
    text = (
        f"Reference agent (scripted, not an LLM), profile `{profile}`, {trials} trials per cell, beside "
        f"{len(verified)} recorded runs of a frontier-class LLM under relay protocol 2 (every request read "
        f"whole, proved by its nonce; ratios are reference / LLM):\n\n"
        f"{cell_table(verified)}\n\n{group_table(verified)}\n\n{verdict(verified)}"
    )
    if unverified:
        text += (
            f"\n\nUnverified reading, not counted: {len(unverified)} older runs recorded before protocol 2, "
            f"whose model calls may have read only the start of a long request:\n\n{cell_table(unverified)}"
        )
    return text


def rerecorded(found: list[Cell]) -> list[tuple[Cell, Cell]]:
    """(protocol-1 cell, protocol-2 cell) for every run name recorded under both."""
    after = {c.name: c for c in found if c.verified}
    return [(c, after[c.name]) for c in found if not c.verified and c.name in after]


def rerecorded_table(found: list[Cell]) -> str:
    """The LLM's steps, input tokens and success per cell before (protocol 1) and after (protocol 2)."""
    head = ["run", "steps before", "steps after", "input tok before", "input tok after", "success before", "after"]
    rows = [
        [
            old.name,
            f"{old.llm['steps']}",
            f"{new.llm['steps']}",
            f"{old.llm['input_tokens']:,}",
            f"{new.llm['input_tokens']:,}",
            "yes" if old.llm["success"] else f"no ({old.llm['outcome']})",
            "yes" if new.llm["success"] else f"no ({new.llm['outcome']})",
        ]
        for old, new in rerecorded(found)
    ]
    return markdown(head, rows)


def main(argv: list[str] | None = None) -> int:
    """Print the calibration block."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="realistic", choices=["realistic", "perfect"])
    parser.add_argument("--trials", type=int, default=3, help="reference-agent trials per cell")
    parser.add_argument("--family", default=None, help="only this family's cells")
    parser.add_argument("--rerecorded", action="store_true", help="the LLM's figures before and after re-recording")
    parser.add_argument(
        "--folder", type=Path, default=None, help="only the runs in this folder (e.g. calibration/issue-34)"
    )
    args = parser.parse_args(argv)
    folders = (args.folder,) if args.folder else FOLDERS
    if args.rerecorded:
        print(rerecorded_table(cells(folders, args.family)))
        return 0
    found = calibrate(args.profile, args.trials, args.family, folders)
    if not found:
        print("no calibration runs found under " + ", ".join(map(str, folders)), file=sys.stderr)
        return 2
    print(report(found, args.profile, args.trials))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

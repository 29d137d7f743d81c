"""``python -m harness import FILE... --format csv|jsonl|inspect-log [--map ...] [--experiment NAME]
[--where ...] [--out DIR]``.

Per-instance results from another harness become ctxbench trial rows, so that ``report`` and
``compare --fail-on-regression`` work on them. One run folder is written per (experiment,
configuration): ``DIR/<experiment>/<config>/`` with ``trials.jsonl`` and ``identity.json``
(default ``DIR``: ``results/imports``; default experiment: the file's name without suffix).

Rows: ``strategy`` = the configuration label, ``family`` = the experiment, ``instance_id``,
``trial`` (the mapped column; else the row's occurrence of that instance in that configuration,
from 0; inspect logs: the epoch minus 1), ``success`` and ``score`` from the outcome, ``cost``,
``total_input_tokens`` (= ``input_tokens``), ``output_tokens``, ``steps`` (turns). What the other
harness did not record is not invented: ``budget`` is 0, ``outcome`` is ``imported`` (inspect logs:
``submitted``, ``model_error`` on a sample error, ``step_limit`` on a limit), peak context, re-reads
and compactions are 0 and ``curve_shape`` is ``n/a``; every row has ``imported: true`` and its
source row (``source``, ``source_row``, ``source_values``).

``--experiment NAME`` names the experiment of every row, and wins over a column named
``experiment`` (which is then not read); ``--where COLUMN=VALUE`` (repeatable) imports only the
rows that hold the value (harness/import_mapping.py). The output says first, per file and one line
per field, which column (or flag, or default) each field came from, and how many rows ``--where`` kept.

Nothing is written unless every row imports: the first bad value is one line naming the row,
exit 2. No row that ``--where`` keeps is dropped: after writing, one line per configuration says
how many of its instances every other configuration of the experiment also has, and how many lack
a partner (``compare`` leaves those out and says how many). Existing run folders are not overwritten.
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from harness.curves import CURVE_RULES
from harness.errors import UsageError
from harness.identity import IDENTITY_FILE, slug
from harness.import_mapping import (
    MappingError,
    check_where,
    mapping_lines,
    matches,
    parse_map,
    parse_number,
    parse_outcome,
    parse_text,
    parse_where,
    resolve,
)
from harness.record_schema import stamped, trial_problem
from harness.records import TRIALS, dumps

FORMATS = ("csv", "jsonl", "inspect-log")
DEFAULT_OUT = Path("results") / "imports"


# ---------------------------------------------------------------- reading


def read_table(path: Path, fmt: str) -> tuple[list[str], Iterator[tuple[int, dict]]]:
    """The columns of a results file and its rows, numbered as a person would count them."""
    if not path.is_file():
        raise MappingError(f"{path} does not exist")
    if fmt == "csv":
        return _read_csv(path)
    if fmt == "jsonl":
        return _read_jsonl(path)
    try:
        from harness.integrations.inspect_log import (
            read_inspect_log,
        )  # inspect_ai, an optional extra: imported only here
    except ImportError as exc:
        raise MappingError(
            f'--format inspect-log needs the inspect extra ({exc}): pip install -e ".[inspect]"'
        ) from None
    return read_inspect_log(path)


def _read_csv(path: Path) -> tuple[list[str], Iterator[tuple[int, dict]]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        columns = list(reader.fieldnames or [])
    if not columns:
        raise MappingError(f"{path} has no header line")
    return columns, ((index + 2, row) for index, row in enumerate(rows))  # line 1 is the header


def _read_jsonl(path: Path) -> tuple[list[str], Iterator[tuple[int, dict]]]:
    rows: list[tuple[int, dict]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise MappingError(f"{path} line {number}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise MappingError(f"{path} line {number}: a JSON object is expected")
            rows.append((number, row))
    columns = list(dict.fromkeys(key for _, row in rows for key in row))
    return columns, iter(rows)


# ---------------------------------------------------------------- rows


@dataclass
class FileImport:
    """The trial rows of one results file, the ``field -> column`` mapping they were read with, and the row counts."""

    path: Path
    fields: dict[str, str]
    rows: list[dict]
    read: int
    """Rows in the file (before ``--where``)."""


def import_file(
    path: Path, fmt: str, mapping: dict[str, str], experiment: str | None, where: dict[str, set[str]] | None = None
) -> FileImport:
    """The rows of ``path`` that match ``where``, as ctxbench trial rows; a ``MappingError`` on the first bad one.

    ``experiment`` (``--experiment``) wins over a column named ``experiment``: that column is then not read."""
    where = where or {}
    columns, rows = read_table(path, fmt)
    fields = resolve(mapping, columns, str(path), fixed=("experiment",) if experiment else ())
    check_where(where, columns, str(path))
    source = list(rows)
    kept = [(number, raw) for number, raw in source if matches(raw, where)]
    if source and not kept:
        wanted = "; ".join(f"{c} in {sorted(v)}" for c, v in where.items())
        raise MappingError(f"no row of {path} matches --where ({wanted})")
    return FileImport(path, fields, trial_rows(path, fmt, fields, experiment, kept), len(source))


def trial_rows(
    path: Path, fmt: str, fields: dict[str, str], experiment: str | None, rows: list[tuple[int, dict]]
) -> list[dict]:
    """The numbered source ``rows`` of ``path`` as ctxbench trial rows; a ``MappingError`` on the first bad one."""
    occurrences: Counter = Counter()
    out = []
    for number, raw in rows:
        row = import_row(raw, fields, f"{path} row {number}", experiment or path.stem)
        if "trial" not in fields:
            key = (row["family"], row["strategy"], row["instance_id"])
            row["trial"] = occurrences[key]
            occurrences[key] += 1
        row.update(source=str(path), source_row=number, source_values=raw, source_format=fmt)
        out.append(row)
    if not out:
        raise MappingError(f"{path} holds no rows")
    return out


def import_row(raw: dict, fields: dict[str, str], where: str, default_experiment: str) -> dict:
    """One trial row from one source row (see the module docstring for what each column holds)."""
    value = lambda field: raw.get(fields[field])  # noqa: E731
    success, score = parse_outcome(value("outcome"), where)
    tokens = parse_number(value("tokens"), "tokens", where, integer=True) if "tokens" in fields else 0
    output = (
        parse_number(value("output_tokens"), "output_tokens", where, integer=True) if "output_tokens" in fields else 0
    )
    row: dict[str, Any] = {
        "strategy": parse_text(value("config"), "config", where),
        "strategy_class": "imported",
        "strategy_params": {},
        "budget": 0,
        "family": parse_text(value("experiment"), "experiment", where)
        if "experiment" in fields
        else default_experiment,
        "instance_id": parse_text(value("instance"), "instance", where),
        "seed": 0,
        "model": str(raw.get("_model") or "imported"),
        "reference_agent": False,
        "agent_profile": None,
        "outcome": str(raw.get("_outcome") or "imported"),
        "success": success,
        "score": score,
        "steps": parse_number(value("turns"), "turns", where, integer=True) if "turns" in fields else 0,
        "input_tokens": tokens,
        "cached_tokens": 0,
        "output_tokens": output,
        "total_input_tokens": tokens,
        "total_cached_tokens": 0,
        "total_output_tokens": output,
        "cost": parse_number(value("cost"), "cost", where) if "cost" in fields else 0.0,
        "reads": 0,
        "rereads": 0,
        "reread_rate": 0.0,
        "max_resource_reads": 0,
        "peak_context": 0,
        "compactions": 0,
        "over_budget_steps": 0,
        "max_budget_ratio": None,
        "curve_shape": "n/a",
        "thrashing": False,
        "curve_rules": CURVE_RULES,
        "error": raw.get("_error"),
        "imported": True,
    }
    if "trial" in fields:
        row["trial"] = parse_number(value("trial"), "trial", where, integer=True)
    return row


# ---------------------------------------------------------------- writing


def run_folders(rows: list[dict], out: Path) -> dict[Path, list[dict]]:
    """Rows grouped into their run folders, ``out/<experiment>/<config>``; distinct labels get distinct folders."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in rows:
        groups[(row["family"], row["strategy"])].append(row)
    folders: dict[Path, list[dict]] = {}
    for (experiment, config), group in sorted(groups.items()):
        folder = out / slug(experiment) / slug(config)
        if folder in folders:
            raise MappingError(
                f"configurations {config!r} and {folders[folder][0]['strategy']!r} share the folder name "
                f"{folder.name!r}; rename one"
            )
        folders[folder] = group
    return folders


def check_duplicates(folders: dict[Path, list[dict]]) -> None:
    """One configuration may hold an (instance, trial) once: a second one is a ``MappingError`` naming both rows."""
    for group in folders.values():
        seen: dict[tuple, dict] = {}
        for row in group:
            key = (row["instance_id"], row["trial"])
            if key in seen:
                first = seen[key]
                raise MappingError(
                    f"{row['strategy']!r} holds instance {row['instance_id']!r} trial {row['trial']} twice "
                    f"(rows {first['source_row']} and {row['source_row']} of {row['source']}); "
                    "map a trial column"
                )
            seen[key] = row


def imported_row(row: dict, trial_id: str, run: str) -> dict:
    """The trial row written for ``row``: its id, run and ``format_version`` (``harness.record_schema``)."""
    return stamped({**row, "trial_id": trial_id, "run": run})


def check_rows(folders: dict[Path, list[dict]]) -> None:
    """Every row as it will be written validates as a trial row; else a ``MappingError`` naming the source row."""
    for folder, group in folders.items():
        for row in group:
            why = trial_problem(imported_row(row, "imp-check", folder.name))
            if why:
                raise MappingError(f"{row['source']} row {row['source_row']}: not a valid trial row ({why})")


def write_runs(folders: dict[Path, list[dict]]) -> None:
    """``trials.jsonl`` and ``identity.json`` of every run folder (refuses folders that already hold trials)."""
    for folder in folders:
        if (folder / TRIALS).exists():
            raise MappingError(f"{folder} already holds imported trials; remove it or choose another --out")
    for folder, group in folders.items():
        folder.mkdir(parents=True, exist_ok=True)
        first = group[0]
        identity = {
            "strategy": {"name": first["strategy"]},
            "budget": 0,
            "model": {"name": first["model"]},
            "imported": {"experiment": first["family"], "format": first["source_format"]},
        }
        (folder / IDENTITY_FILE).write_text(json.dumps(identity, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        with (folder / TRIALS).open("w", encoding="utf-8") as handle:
            for index, row in enumerate(group):
                handle.write(dumps(imported_row(row, f"imp-{index:05d}", folder.name)) + "\n")


def pairing_lines(rows: list[dict]) -> list[str]:
    """Per experiment and configuration: trials, and how many lack a partner in some other configuration."""
    lines = []
    by_experiment: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for row in rows:
        by_experiment[row["family"]][row["strategy"]].add((row["instance_id"], row["trial"]))
    for experiment, configs in sorted(by_experiment.items()):
        if len(configs) == 1:
            ((config, keys),) = configs.items()
            lines.append(
                f"  {experiment} / {config}: {len(keys)} trials; the only configuration of {experiment!r}: "
                "nothing to pair with"
            )
            continue
        common = set.intersection(*configs.values())
        for config, keys in sorted(configs.items()):
            unpaired = len(keys - common)
            note = f"{unpaired} without a partner in every other configuration" if unpaired else "all paired"
            lines.append(
                f"  {experiment} / {config}: {len(keys)} trials, {len(common)} paired across all "
                f"{len(configs)} configurations, {note}"
            )
    return lines


def cmd_import(
    files: list[str],
    fmt: str,
    maps: Iterable[str] = (),
    experiment: str | None = None,
    out: str = str(DEFAULT_OUT),
    where: Iterable[str] = (),
) -> int:
    """``import FILE... --format F [--map ...] [--experiment NAME] [--where COLUMN=VALUE ...] [--out DIR]``:
    write the run folders, and say what was mapped, kept and written."""
    try:
        mapping = parse_map(maps)
        wanted = parse_where(where)
        imports = [import_file(Path(name), fmt, mapping, experiment, wanted) for name in files]
        rows = [row for imported in imports for row in imported.rows]
        folders = run_folders(rows, Path(out))
        check_duplicates(folders)
        check_rows(folders)
        write_runs(folders)
    except MappingError as exc:
        raise UsageError(str(exc)) from None
    for imported in imports:
        print("\n".join(mapping_lines(str(imported.path), imported.fields, mapping, experiment, imported.path.stem)))
        if wanted:
            print(
                f"  --where {' and '.join(f'{c} in {sorted(v)}' for c, v in wanted.items())}: "
                f"kept {len(imported.rows)} of {imported.read} rows"
            )
    print(f"imported {len(rows)} rows from {', '.join(files)} into {len(folders)} run folders under {out}:")
    for folder, group in folders.items():
        print(f"  {folder}  ({len(group)} trials)")
    print("pairing (compare pairs on instance and trial):")
    print("\n".join(pairing_lines(rows)))
    print(
        f"next: report {out}/<experiment>; compare {out}/<experiment>/<base> {out}/<experiment>/<candidate> "
        "--fail-on-regression"
    )
    return 0

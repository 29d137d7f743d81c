"""inspect_ai ``.eval`` / ``.json`` logs as rows for ``python -m harness import --format inspect-log``.

Read with inspect's own log API (``inspect_ai.log.read_eval_log``; the ``inspect`` extra). One row
per sample and epoch; the epochs of a sample become ctxbench trials (``trial`` = epoch - 1).
Columns (map others with ``--map``):

- ``experiment``: the task name; ``instance``: the sample id; ``trial``, ``epoch``;
- ``config``: the eval's ``metadata["config"]`` when set, else the log file's name without suffix
  (map another: ``--map config=model`` or ``config=eval.metadata.strategy``);
- ``outcome``: the value of the first scorer (``C``/``I``, numbers, booleans); ``score.<scorer>`` each;
- ``tokens``: input tokens over all models of the sample, cache reads and writes included (inspect's
  ``input_tokens`` excludes them); ``output_tokens``; ``cost``: the sum of ``total_cost`` (a column
  only when the log has costs); ``turns``: the sample's assistant messages;
- ``model``, ``metadata.<key>`` (sample metadata), ``eval.metadata.<key>``, ``task_args.<key>``.

The ctxbench ``outcome`` column reads ``submitted``, or ``model_error`` when the sample ended with an
error, or ``step_limit`` when it hit a limit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageAssistant

from harness.import_mapping import MappingError


def _scalars(prefix: str, data: dict | None) -> dict[str, Any]:
    return {f"{prefix}{k}": v for k, v in (data or {}).items() if isinstance(v, (str, int, float, bool)) or v is None}


def _first_value(value: Any) -> Any:
    return next(iter(value.values()), None) if isinstance(value, dict) else value


def sample_row(log: Any, sample: Any, config: str) -> dict:
    """The flat row of one sample and epoch."""
    usages = list((sample.model_usage or {}).values())
    costs = [u.total_cost for u in usages if u.total_cost is not None]
    scores = sample.scores or {}
    row: dict[str, Any] = {
        "experiment": log.eval.task,
        "instance": str(sample.id),
        "trial": sample.epoch - 1,
        "epoch": sample.epoch,
        "config": config,
        "model": log.eval.model,
        "outcome": _first_value(next(iter(scores.values())).value) if scores else None,
        **{f"score.{name}": _first_value(score.value) for name, score in scores.items()},
        "tokens": sum(
            u.input_tokens + (u.input_tokens_cache_read or 0) + (u.input_tokens_cache_write or 0) for u in usages
        ),
        "output_tokens": sum(u.output_tokens for u in usages),
        "turns": sum(isinstance(m, ChatMessageAssistant) for m in sample.messages),
        **_scalars("metadata.", sample.metadata),
        **_scalars("eval.metadata.", log.eval.metadata),
        **_scalars("task_args.", log.eval.task_args),
        "_model": log.eval.model,
        "_outcome": "model_error" if sample.error else ("step_limit" if sample.limit else "submitted"),
        "_error": sample.error.message if sample.error else None,
    }
    if costs:
        row["cost"] = sum(costs)
    return row


def read_inspect_log(path: Path) -> tuple[list[str], Iterator[tuple[int, dict]]]:
    """The columns and rows (numbered by sample, from 1) of one inspect log."""
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # a log inspect cannot read
        raise MappingError(f"{path}: not an inspect log inspect_ai can read ({type(exc).__name__}: {exc})") from None
    if not log.samples:
        raise MappingError(f"{path}: the log holds no samples (status {log.status})")
    config = str((log.eval.metadata or {}).get("config") or path.stem)
    rows = [sample_row(log, sample, config) for sample in log.samples]
    columns = [c for c in dict.fromkeys(k for row in rows for k in row) if not c.startswith("_")]
    return columns, ((index + 1, row) for index, row in enumerate(rows))

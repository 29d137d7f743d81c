"""The typed schema of every record: trial rows, step rows and transcript events, with their ``format_version``.

``FORMAT_VERSION`` (2) is written in every trial row (``trials.jsonl``), step row (``steps.jsonl``) and in
the ``trial_start`` event of every transcript, as inspect_ai's ``EvalLog.version``. A record without it is
the legacy format, version 1 (``LEGACY_VERSION``): the run folders written before the field existed
(calibration/, tests/fixtures/) read exactly as before. Version 2 adds no column and changes no meaning, so
a reader treats both alike; a record of a newer version than this harness knows does not validate (its
meaning may have changed), and neither does one that claims version 0 or less.

The models declare the columns readers rely on and their types (strict: ``"abc"`` is not a cost, ``True``
is not a token count; a number column takes an int or a float, ``None`` where a column is empty); every
other column passes through untouched (``extra="allow"``), because task metrics and strategy columns are
open-ended. Validation is a gate, not a conversion: a reader keeps the row's own dict, so what ``report``
sees is byte for byte what was written. ``problem`` says in a few words why a row does not validate (its
first error), for the one line that sets it aside. Pydantic v2 validates a 2,200-row sweep in tens of
milliseconds (tests/test_record_schema.py measures it against plain JSON decoding).
"""

from __future__ import annotations

from typing import Annotated, Any

from typing_extensions import Required, TypedDict

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

FORMAT_VERSION = 2  # written in every new trial row, step row and transcript trial_start event
LEGACY_VERSION = 1  # what a record without ``format_version`` is: the format before the field existed
VERSION_KEY = "format_version"

Number = float  # strict float: an int or a float, never a bool, a string or null (NaN never reads: records.py)
Text = str | None
Flag = bool


Version = Annotated[int, Field(ge=LEGACY_VERSION, le=FORMAT_VERSION)]  # a version this harness reads
Id = Annotated[str, Field(min_length=1)]
RECORD_CONFIG = ConfigDict(extra="allow", strict=True)


class _Record(TypedDict, total=False):
    """What every record shares: strict types, open columns, a format version this harness reads."""

    __pydantic_config__ = RECORD_CONFIG  # type: ignore[misc]

    format_version: Version


class TrialRecord(_Record, total=False):
    """One row of ``trials.jsonl``: a finished trial (columns: docs/analysis.md). Required: what ``report``
    groups and counts by (``trial_id``, ``family``, ``strategy``, ``budget``, ``outcome``, ``success``,
    ``input_tokens``); a row holding less is not a trial row and is never counted as done."""

    trial_id: Required[Id]
    family: Required[str]
    strategy: Required[str]
    budget: Required[float]
    outcome: Required[str]
    success: Required[bool]
    input_tokens: Required[float]
    run: Text
    strategy_class: Text
    strategy_params: dict | None
    instance_id: Text
    seed: Number
    trial: Number
    model: Text
    reference_agent: Flag
    agent_profile: Text
    score: Number
    steps: Number
    cached_tokens: Number
    cached_source: Text
    cache_write_tokens: Number
    output_tokens: Number
    sim_cached_tokens: Number
    cache_profile: Text
    cache_lost_tokens: Number
    cache_breaks: Number
    summarizer_calls: Number
    summarizer_input_tokens: Number
    summarizer_cached_tokens: Number
    summarizer_output_tokens: Number
    summarizer_sim_cached_tokens: Number
    summarizer_cost: Number
    hook_continues: Number
    stop_hook_calls: Number
    stop_hook_input_tokens: Number
    stop_hook_cached_tokens: Number
    stop_hook_output_tokens: Number
    stop_hook_cost: Number
    subagent_calls: Number
    subagent_input_tokens: Number
    subagent_cached_tokens: Number
    subagent_output_tokens: Number
    subagent_cost: Number
    total_input_tokens: Number
    total_cached_tokens: Number
    total_output_tokens: Number
    total_calls: Number
    cost: Number
    cost_uncached: Number
    from_cache_calls: Number
    agent_cost: Number
    pricing: Text
    price_source: Text
    reads: Number
    rereads: Number
    reread_rate: Number
    max_resource_reads: Number
    rate_limited_calls: Number
    peak_context: Number
    over_budget_steps: Number
    max_budget_ratio: Number | None  # None in imported rows: not measured
    final_history_tokens: Number
    compactions: Number
    rewrites_system: Flag
    tool_schema_tokens: Number
    tool_schema_tokens_saved: Number
    unoffered_calls: Number
    tool_exceptions: Number
    wall_s: Number
    started_at: Text
    error: Text
    grade_detail: Any
    curve_shape: Text
    curve_rules: Number
    thrashing: Flag


class StepRecord(_Record, total=False):
    """One row of ``steps.jsonl``: one model call of a trial (``harness.accounting.CallRecorder``)."""

    trial_id: Required[Id]
    step: Number
    kind: Text
    request_tokens: Number
    prompt_tokens: Number
    cached_tokens: Number
    cached_source: Text
    cache_write_tokens: Number
    output_tokens: Number
    reasoning_tokens: Number
    tokens_source: Text
    request_messages: Number
    latency_s: Number
    cost: Number
    from_cache: Flag
    cost_uncached: Number
    sim_cached_tokens: Number
    cache_profile: Text
    cache_lost_tokens: Number
    cache_break: Text
    pricing: Text
    history_tokens: Number
    over_budget: Flag
    budget_ratio: Number
    strategy_events: list | None
    tool_calls: list | None


Scalar = str | int | float | bool | None


class TranscriptEvent(_Record, total=False):
    """One line of a transcript (``harness.records.Transcript``): ``event`` names its kind; the
    ``trial_start`` event carries the transcript's ``format_version``. Typed: the fields readers
    index or count by (``view``, ``analysis``, the inspect export); the rest pass through."""

    event: Required[str]
    step: Number | None
    tokens: Number | None
    keep: int
    add: list[str]
    refs: list[str]
    ref: Text
    name: str
    message: dict
    data: dict | None  # a strategy event's payload
    tools: list[dict]  # trial_start: the tools offered
    resource: Scalar
    is_error: Scalar


_ADAPTERS: dict[type, TypeAdapter] = {}


def problem(schema: type, row: Any) -> str | None:
    """Why ``row`` is not a valid record of ``schema`` (``TrialRecord``, ...), in a few words (its first error);
    None when it is."""
    if not isinstance(row, dict):
        return f"not a JSON object ({type(row).__name__})"
    adapter = _ADAPTERS.get(schema) or _ADAPTERS.setdefault(schema, TypeAdapter(schema))
    try:
        adapter.validate_python(row)
    except ValidationError as exc:
        return _first_error(exc)
    return None


def _first_error(exc: ValidationError) -> str:
    """``field: message (got 'value')`` of the first error; ``no field, ...`` names every missing one."""
    errors = exc.errors(include_url=False)
    missing = [".".join(map(str, e["loc"])) for e in errors if e["type"] == "missing"]
    if missing:
        return f"no {', '.join(missing)}"
    first = errors[0]
    where = ".".join(map(str, first["loc"])) or "row"
    message = first["msg"].removeprefix("Value error, ")
    return f"{where}: {message} (got {_short(first.get('input'))})"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def trial_problem(row: Any) -> str | None:
    """Why ``row`` is not a trial row (``TrialRecord``); None when it is."""
    return problem(TrialRecord, row)


def step_problem(row: Any) -> str | None:
    """Why ``row`` is not a step row (``StepRecord``); None when it is."""
    return problem(StepRecord, row)


def event_problem(event: Any) -> str | None:
    """Why ``event`` is not a transcript event (``TranscriptEvent``); None when it is."""
    return problem(TranscriptEvent, event)


def stamped(row: dict) -> dict:
    """``row`` with this harness's ``format_version`` (a new dict; the row's own version wins)."""
    return row if VERSION_KEY in row else {**row, VERSION_KEY: FORMAT_VERSION}


def version_of(row: dict) -> int:
    """The format version of a record (``LEGACY_VERSION`` when it has none)."""
    return row.get(VERSION_KEY, LEGACY_VERSION)

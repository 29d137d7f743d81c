"""Property-based fuzzing of every task family's tools and grader (hypothesis; issue 22).

No tool argument and no ``submit`` answer may crash a family: a wrong-typed or absurd argument is
an error ``ToolResult`` (its content starts with ``ERROR``), an answer of any shape is a ``Grade``
(a failed one, with its reason in ``detail``). The harness would survive a raising tool or grader
(``harness/trial.py`` turns them into a tool error or a failed trial), but that is the last line of
defence, not the families' contract (``tasks/base.py``).

Every family of ``configs/task/*.yaml`` is built at a small size (``SMALL``) and the reference agent
plays one trial on it first: its calls and its answer are the valid arguments that the fuzzer
mutates, and the state they leave (an export created, a merchant called) lets later calls reach
deeper code. Tools are enumerated from each instance's declared ``tools``, so a new tool (or a new
family config, which needs an entry in ``SMALL``) is fuzzed without editing this file. Arguments
are schema-shaped values, the reference agent's valid ones with keys dropped, replaced or added,
and hostile values anywhere: wrong types, huge integers, 1e30, NaN and infinities (the loop's JSON
parser refuses NaN, but a family must not depend on that), empty, very long and digit-only Unicode
strings, lone surrogates, regexes that ``re`` cannot compile.

Deterministic profile: ``derandomize=True`` and a bounded number of examples (the file runs in
well under 30 s on one core).
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.records import dumps
from harness.runner import build
from reference_agent.policies import reference_policy
from tasks.base import Grade, TaskInstance, ToolResult

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs" / "task"
CONFIGS = {path.stem: yaml.safe_load(path.read_text()) for path in sorted(CONFIG_DIR.glob("*.yaml"))}
SMALL = {  # knobs of a small instance of each family (a few ms to generate and to play)
    "brand_report": dict(pages=3, posts_per_page=8, weeks=2),
    "call_budget": dict(merchants=3, noise=2),
    "callback_search": dict(files=24, functions_per_file=2),
    "code_review": dict(files=8, bugs=3),
    "failure_memory": dict(tickets=3, ticket_messages=2, rows=12, page_rows=6),
    "invoice_audit": dict(pages=4, invoices_per_page=5, duplicates=2, min_distance=1, max_distance=3),
    "late_question": dict(records=6, records_per_batch=3, remarks=1),
    "latest_value": dict(shipments=3, pages=4, messages_per_page=4, updates_per_page=2, retention=1, asked=4),
    "needle": dict(documents=4, doc_tokens=50, position=2),
    "one_shot_queue": dict(tickets=3, ticket_sentences=5, order_lines=3, order_events=3, policy_paragraphs=2),
    "people_tracker": dict(people=2, moves=2, roundups=1, noise=3),
}
TOOL_EXAMPLES = 120  # per (family, tool)
GRADE_EXAMPLES = 250  # per family
FUZZ = dict(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def small_instance(family: str) -> TaskInstance:
    """The seed-0 instance of ``family`` at its ``SMALL`` size (a family not in ``SMALL``: its config's size),
    built as the runner builds a family."""
    return build({**CONFIGS[family], **SMALL.get(family, {})}, f"task family {family}").generate(0)


def play_reference(instance: TaskInstance, max_steps: int = 200) -> tuple[list[tuple[str, dict]], dict, list[str]]:
    """One unmanaged trial of the reference agent on ``instance``: its task calls, its answer, the results' texts."""
    policy = reference_policy(instance)
    messages = [
        {"role": "system", "content": instance.system_prompt},
        {"role": "user", "content": instance.user_prompt},
    ]
    calls: list[tuple[str, dict]] = []
    texts = [instance.user_prompt]
    for step in range(max_steps):
        message = dict(policy.act(messages, instance.tools))
        tool_calls = [{**c, "id": f"c{step}-{i}"} for i, c in enumerate(message.get("tool_calls") or [])]
        for call in tool_calls:
            if call["function"]["name"] == "submit":
                return calls, json.loads(call["function"]["arguments"] or "{}"), texts
        if not tool_calls:
            break
        messages.append({**message, "tool_calls": tool_calls})
        for call in tool_calls:
            name, args = call["function"]["name"], json.loads(call["function"]["arguments"] or "{}")
            result = instance.call(name, args)
            calls.append((name, args))
            texts.append(result.content)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result.content})
    raise AssertionError(f"the reference agent did not submit on {instance.id}")


@lru_cache(maxsize=None)
def pool(family: str) -> tuple[str, ...]:
    """Plausible strings of ``family``: ids, paths, cursors, names seen in the prompt, the reference's calls and
    results."""
    calls, answer, texts = play_reference(small_instance(family))
    words: set[str] = set()
    for text in texts:
        words.update(w for w in re.findall(r"[\w./:@#%-]{2,60}", text))
    for value in [*(v for _, args in calls for v in args.values()), *answer.values()]:
        words.update(s for s in _strings(value) if len(s) <= 200)
    ordered = sorted(words)
    return tuple(ordered[:: max(1, len(ordered) // 500)])  # at most ~500, spread over the whole vocabulary


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


# ----------------------------------------------------------------------------- hostile values

NUMERIC_TEXT = [
    "-1",
    "0",
    "00",
    "3",
    " 3 ",
    "3.0",
    "3%",
    "²",
    "١٢",
    "12²",
    "1e30",
    "-1e30",
    "nan",
    "NaN",
    "inf",
    "-Infinity",
    "1e999999",
    "9" * 40 + ".5",
    "9" * 5_000,
    "1" * 4_400,
    "0x10",
    "1_000",
    "true",
    "null",
]
REGEX_TEXT = [
    "(",
    "(((",
    "*",
    "[z-a]",
    "\\",
    "(?L)a",
    "a{4294967296}",
    "(" * 1_200 + ")" * 1_200,
    "(?P<x>a)(?P<x>b)",
    "\\N{NOPE}",
    "[",
    "a{2,1}",
]
SIZE_TEXT = [
    "",
    " ",
    " \n ",
    "\ud800",
    "x\udfffy",
    "\udc80\ud800",
    "\x00",
    "x" * 100_000,
    "中文",
    "\U0001f600",
    "../../etc/passwd",
    "./",
    "%s%n",
    "{0}",
    "[]",
    "{}",
    "2026-Q9",
    "EXP-000000",
]
HUGE_INTS = [
    2**31,
    -(2**31),
    2**63,
    -(2**63),
    2**64 + 1,
    10**30,
    -(10**30),
    10**400,
    -(10**400),
    10**4_299,
]  # JSON: <= 4300 digits
ODD_FLOATS = [
    1e30,
    -1e30,
    1e308,
    -1e308,
    5e-324,
    -0.0,
    0.5,
    2.0,
    3.0,
    0.005,
    1e-30,
    float("nan"),
    float("inf"),
    -float("inf"),
]
CONTAINERS = [[], {}, [[]], [None], ["a", 1], {"a": 1}, {"": None}, [{"file": 1, "function": None}], {"\ud800": [1]}]
CATALOGUE = [None, True, False, 0, 1, -1, *HUGE_INTS, *ODD_FLOATS, *NUMERIC_TEXT, *REGEX_TEXT, *SIZE_TEXT, *CONTAINERS]
"""Every hostile value the sweeps put in every argument and answer field (the fuzzers draw from it too)."""

ODD_TEXT = st.text(
    st.sampled_from(
        [
            "a",
            "Z",
            "0",
            "9",
            " ",
            "\n",
            "\t",
            '"',
            "\\",
            "/",
            ".",
            "-",
            "%",
            "(",
            ")",
            "*",
            "{",
            "}",
            "[",
            "中",
            "²",
            "٣",
            "\u00a0",
            "\x00",
            "\ud800",
            "\udfff",
            "\U0001f600",
        ]
    ),
    max_size=12,
)
TEXT = st.one_of(
    st.sampled_from(NUMERIC_TEXT),
    st.sampled_from(REGEX_TEXT),
    st.sampled_from(SIZE_TEXT),
    ODD_TEXT,
    st.text(max_size=20),
)
INTS = st.one_of(st.integers(-1_000, 1_000), st.sampled_from(HUGE_INTS))
FLOATS = st.one_of(st.sampled_from(ODD_FLOATS), st.floats(allow_nan=True, allow_infinity=True))
LEAF = st.one_of(st.none(), st.booleans(), INTS, FLOATS, TEXT)
HOSTILE = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.one_of(TEXT, st.sampled_from(["file", "x"])), inner, max_size=3)
    ),
    max_leaves=6,
)
EXTRA_KEYS = st.sampled_from(["page", "cursor", "x", "", "\ud800", "id", "limit", "offset", "path", "query"])


def plausible(family: str) -> st.SearchStrategy[str]:
    """Strings of the family's own vocabulary (and small edits of them: spaces, case, a suffix)."""
    words = st.sampled_from(pool(family))
    return st.one_of(
        words,
        st.tuples(words, st.sampled_from(["  {} ", "{}X", "{}\ud800", "./{}", "{}0"])).map(lambda t: t[1].format(t[0])),
        words.map(str.lower),
        words.map(str.upper),
    )


def from_schema(schema: Any, family: str, depth: int = 0) -> st.SearchStrategy:
    """Values shaped by a JSON schema (each property optional), with a hostile value possible at every node."""
    schema = schema if isinstance(schema, dict) else {}
    kind = schema.get("type")
    if depth > 3:
        return LEAF
    if kind == "object":
        props = schema.get("properties") or {}
        shaped = st.fixed_dictionaries({}, optional={k: from_schema(v, family, depth + 1) for k, v in props.items()})
        extra = st.dictionaries(st.one_of(EXTRA_KEYS, plausible(family)), HOSTILE, max_size=2)
        if "additionalProperties" in schema:
            extra = st.dictionaries(
                st.one_of(plausible(family), TEXT),
                from_schema(schema["additionalProperties"], family, depth + 1),
                max_size=4,
            )
        typed = st.tuples(shaped, extra).map(lambda t: {**t[1], **t[0]})
    elif kind == "array":
        typed = st.lists(from_schema(schema.get("items"), family, depth + 1), max_size=4)
    elif kind == "string":
        typed = st.one_of(plausible(family), TEXT)
    elif kind == "integer":
        typed = st.one_of(INTS, st.sampled_from(["1", " 2 ", "3%", "50", "²"]))
    elif kind == "number":
        typed = st.one_of(FLOATS, INTS, TEXT)
    elif kind == "boolean":
        typed = st.booleans()
    else:
        typed = HOSTILE
    return st.one_of(typed, HOSTILE) if depth else typed


def mutated(valid: list[dict], family: str) -> st.SearchStrategy[dict]:
    """A valid argument dict (the reference agent's) with keys dropped, values replaced and keys added."""
    if not valid:
        return st.dictionaries(EXTRA_KEYS, HOSTILE, max_size=2)
    keys = sorted({k for args in valid for k in args}) or ["x"]
    value = st.one_of(HOSTILE, plausible(family))
    return st.tuples(
        st.sampled_from(valid),
        st.sets(st.sampled_from(keys)),
        st.dictionaries(st.sampled_from(keys), value, max_size=2),
        st.dictionaries(EXTRA_KEYS, value, max_size=1),
    ).map(lambda t: {**{k: v for k, v in t[0].items() if k not in t[1]}, **t[2], **t[3]})


def arguments(schema: dict, valid: list[dict], family: str) -> st.SearchStrategy[dict]:
    """Tool arguments or answers: schema-shaped, a mutated valid one, or wholly hostile keys and values."""
    hostile = st.dictionaries(
        st.one_of(
            st.sampled_from(sorted((schema.get("properties") or {}))) if schema.get("properties") else EXTRA_KEYS,
            EXTRA_KEYS,
        ),
        HOSTILE,
        max_size=3,
    )
    return st.one_of(from_schema(schema, family), mutated(valid, family), hostile, st.just({}))


def edits(value: Any) -> list[Any]:
    """Near misses of a valid value: padded, cased, suffixed, retyped, scaled."""
    if isinstance(value, str):
        return [
            f"  {value} ",
            value + "\ud800",
            value.upper(),
            value.lower(),
            value + "0",
            value[:-1],
            "./" + value,
            value * 200,
            [value],
            {"value": value},
        ]
    if isinstance(value, bool):
        return [not value, str(value).lower(), int(value)]
    if isinstance(value, int):
        return [value + 1, -value, str(value), f" {value} ", f"{value}%", float(value), value + 0.5, value * 10**30]
    if isinstance(value, float):
        return [value * 1e30, -value, str(value), f"{value:.1f}", int(value), value + 0.001, value * (1 + 1e-16)]
    return []


def paths(value: Any, prefix: tuple = (), width: int = 2) -> list[tuple]:
    """The path of every node under ``value`` (dict keys, the first ``width`` list items), parents first."""
    found = []
    children = (
        value.items() if isinstance(value, dict) else list(enumerate(value))[:width] if isinstance(value, list) else []
    )
    for key, child in children:
        found.append(prefix + (key,))
        found.extend(paths(child, prefix + (key,), width))
    return found


def replaced(value: Any, path: tuple, new: Any) -> Any:
    """A copy of ``value`` with the node at ``path`` replaced by ``new`` (``DROP``: removed)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = dict(value)
        if rest:
            out[head] = replaced(value[head], rest, new)
        elif new is DROP:
            out.pop(head, None)
        else:
            out[head] = new
        return out
    out = list(value)
    if rest:
        out[head] = replaced(value[head], rest, new)
    elif new is DROP:
        del out[head]
    else:
        out[head] = new
    return out


DROP = object()


def sweep(valid: dict, keys: list[str]) -> list[Any]:
    """``valid`` with every node (and each of ``keys``) set to every catalogue value and near miss, or dropped,
    every dict node with a hostile extra key, and the whole value replaced by each catalogue value."""
    variants: list[Any] = list(CATALOGUE)
    nodes = paths(valid) + [(k,) for k in keys if k not in valid]
    for path in nodes:
        current = _at(valid, path)
        for new in [DROP, *CATALOGUE, *edits(current)]:
            variants.append(replaced(valid, path, new))
    for path in [()] + [p for p in nodes if isinstance(_at(valid, p), dict)]:
        for key in ["\ud800", "", "²", "x" * 10_000]:
            variants.append(replaced(valid, path, {**_at(valid, path), key: 1}))
    return variants


def _at(value: Any, path: tuple) -> Any:
    for key in path:
        if isinstance(value, dict):
            value = value.get(key)
        elif isinstance(value, list) and isinstance(key, int) and key < len(value):
            value = value[key]
        else:
            return None
    return value


# ----------------------------------------------------------------------------- the contract


def check_result(result: Any, where: str) -> None:
    """What the loop records of a tool call: a ``ToolResult`` with text, a flag and a string resource, as JSON."""
    assert isinstance(result, ToolResult), f"{where} returned {type(result).__name__}, not a ToolResult"
    assert isinstance(result.content, str) and isinstance(result.is_error, bool), where
    assert result.resource is None or isinstance(result.resource, str), f"{where}: resource {result.resource!r}"
    dumps({"content": result.content, "resource": result.resource})
    if result.is_error:
        assert result.content.startswith("ERROR"), f"{where}: an error result must say ERROR: {result.content[:200]!r}"


def check_grade(grade: Any, where: str) -> None:
    """A ``Grade`` with a boolean verdict, a finite score in [0, 1] and a detail the trials writer can write."""
    assert isinstance(grade, Grade), f"{where} returned {type(grade).__name__}, not a Grade"
    assert isinstance(grade.success, bool), where
    assert isinstance(grade.score, (int, float)) and not isinstance(grade.score, bool), where
    assert math.isfinite(grade.score) and 0 <= grade.score <= 1, f"{where}: score {grade.score!r}"
    assert isinstance(grade.detail, dict), where
    dumps({"score": grade.score, "detail": grade.detail})


FAMILY_TOOLS = {family: [t["function"]["name"] for t in small_instance(family).tools] for family in sorted(CONFIGS)}
PAIRS = [(family, tool) for family, tools in FAMILY_TOOLS.items() for tool in tools]


def test_every_family_is_sized_and_declares_tools_to_fuzz():
    assert set(SMALL) == set(CONFIGS), "give every family of configs/task/ a small size in SMALL"
    assert len(CONFIGS) >= 8
    for family, tools in FAMILY_TOOLS.items():
        assert tools, f"{family} declares no tools: nothing would be fuzzed"
        assert {f for f, _ in PAIRS if f == family} == {family}
    assert len(PAIRS) == sum(len(t) for t in FAMILY_TOOLS.values()) >= 17


@pytest.mark.parametrize("family,tool", PAIRS)
def test_every_tool_answers_every_hostile_value_in_every_argument(family, tool):
    instance = small_instance(family)
    calls, _, _ = play_reference(instance)
    schema = next(t["function"]["parameters"] for t in instance.tools if t["function"]["name"] == tool)
    valid = list({json.dumps(a, sort_keys=True): a for name, a in calls if name == tool}.values())[:3] or [{}]
    log: list[dict] = []
    for base in valid:
        for args in sweep(base, sorted(schema.get("properties") or {})):
            if not isinstance(args, dict):
                continue  # the loop parses every call's arguments to a JSON object
            result = instance.call(tool, args)
            check_result(result, f"{family}.{tool}({args!r:.300})")
            log.append(
                {"step": 0, "name": tool, "args": args, "is_error": result.is_error, "resource": result.resource}
            )
    dumps({"metrics": instance.trial_metrics(log)})


@pytest.mark.parametrize("family", sorted(CONFIGS))
def test_every_grader_answers_every_hostile_value_in_every_field(family):
    instance = small_instance(family)
    _, answer, _ = play_reference(instance)
    for submitted in sweep(answer, sorted(instance.answer_schema.get("properties") or {})):
        check_grade(instance.grade(submitted), f"{family}.grade({submitted!r:.300})")


@pytest.mark.parametrize("family,tool", PAIRS)
def test_every_tool_answers_any_arguments_with_a_result(family, tool):
    instance = small_instance(family)
    calls, _, _ = play_reference(instance)  # the state a trial leaves: exports exist, merchants were called
    schema = next(t["function"]["parameters"] for t in instance.tools if t["function"]["name"] == tool)
    valid = [args for name, args in calls if name == tool]
    log: list[dict] = []

    @settings(max_examples=TOOL_EXAMPLES, **FUZZ)
    @given(args=arguments(schema, valid, family), name=st.sampled_from([tool] * 9 + ["no_such_tool"]))
    def answers(args: dict, name: str) -> None:
        result = instance.call(name, args)
        check_result(result, f"{family}.{name}({args!r:.300})")
        log.append(
            {"step": len(log), "name": name, "args": args, "is_error": result.is_error, "resource": result.resource}
        )
        dumps({"metrics": instance.trial_metrics(log[-30:])})

    answers()


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
@pytest.mark.parametrize("family", sorted(CONFIGS))
def test_every_grader_answers_any_submission_with_a_grade(family):
    instance = small_instance(family)
    _, answer, _ = play_reference(instance)
    reference = instance.grade(dict(answer))
    check_grade(reference, f"{family}.grade(reference)")
    assert reference.success, f"{family}: the reference answer must pass, so its mutations test the grader's paths"
    check = getattr(instance, "completion_check", None)

    @settings(max_examples=GRADE_EXAMPLES, **FUZZ)
    @given(submitted=st.one_of(arguments(instance.answer_schema, [answer], family), HOSTILE))
    def grades(submitted: Any) -> None:
        check_grade(instance.grade(submitted), f"{family}.grade({submitted!r:.300})")
        if callable(check):
            verdict = check([], submitted)
            assert verdict is None or isinstance(verdict, str)

    grades()


RAISED_BEFORE = [  # (family, tool, arguments) that raised before issue 22's fixes (the sweep finds each of them)
    ("failure_memory", "read_export", {"export_id": [], "page": 1}),  # TypeError: unhashable type: 'list'
    ("failure_memory", "read_export", {"export_id": "EXP-1", "page": "²"}),  # ValueError: int("²")
    ("failure_memory", "query_api", {"endpoint": "/v2/\ud800", "auth": "token"}),  # UnicodeEncodeError
    ("call_budget", "call_merchant", {"merchant": "M01", "offer": "9" * 5_000}),  # ValueError: over 4300 digits
    ("code_review", "grep", {"pattern": "a{4294967296}"}),  # OverflowError
    ("callback_search", "grep", {"pattern": "(" * 1_200 + ")" * 1_200}),  # RecursionError
]


@pytest.mark.parametrize("family,tool,args", RAISED_BEFORE)
def test_arguments_that_raised_before_are_tool_errors(family, tool, args):
    result = small_instance(family).call(tool, args)
    check_result(result, f"{family}.{tool}")
    assert result.is_error and len(result.content) < 6_000


@pytest.mark.parametrize(
    "family,field,value",
    [
        ("failure_memory", "first_total", 1e30),  # decimal.InvalidOperation
        ("failure_memory", "second_total", "9" * 5_000),  # decimal.InvalidOperation
        ("failure_memory", "second_total", "1e999999"),  # decimal.Overflow
        ("brand_report", "counts", "²"),  # ValueError: int("²")
        ("brand_report", "counts", "9" * 5_000),  # ValueError: over 4300 digits
        ("brand_report", "counts", 10**400),  # OverflowError: integer division result too large for a float
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 20 else f"{type(v).__name__}-{len(str(v))}",
)
def test_answers_that_raised_before_are_failed_grades(family, field, value):
    instance = small_instance(family)
    _, answer, _ = play_reference(instance)
    if field == "counts":  # every brand's count
        value = {brand: value for brand in answer["counts"]}
    grade = instance.grade({**answer, field: value})
    check_grade(grade, f"{family}.grade")
    assert not grade.success and grade.score < 1

"""``code_review``: find the planted bugs in a generated Python repository (seed 000 §7.3).

The repository has ``files`` modules (default 44, as in the seed's experiment): a few
shared helper modules under ``app/common/`` and domain modules under ``app/<domain>/``.
Each module is realistic: a docstring, imports, constants, several functions (some long)
and sometimes a class. ``bugs`` functions carry a planted bug, one kind each, cycling
through: a call to a shared helper with its arguments in the wrong order (only
confirmable by reading the helper's definition in ANOTHER file), off-by-one loop bound,
inverted comparison, mutable default argument, unclosed file, SQL built by string
formatting, division without a zero guard. Every kind has decoys that look like the bug
but are correct (slicing prefixes with ``range(len(x) + 1)``, ``expires_at > now`` in an
``is_valid`` check, a tuple default, ``try/finally: close()``, an f-string that only
interpolates a module constant table name, ``max(count, 1)``, keyword-argument calls in
any order).

Tools: ``list_files()``, ``read_file(path)`` (numbered lines), ``grep(pattern)`` (regex over
every file, at most ``GREP_LIMIT`` lines shown).

Answer: ``submit(findings=[{"file": path, "function": name}, ...])``, one entry per buggy
function. Grade: success = the exact set of (file, function); score = F1.
``trial_metrics`` adds ``files_read``, ``files_total`` and ``file_coverage``.

Reference policy (a competent reviewer that knows these bug patterns): lists the files,
reads them in listing order and writes one verdict per file in its reply
(``Reviewed PATH: clean`` or ``Reviewed PATH: bugs in f (kind)``), reciting
``Findings so far`` and ``Progress ... last reviewed: PATH``. To judge a file that calls a
shared helper positionally it needs the helper module's text in view: when that text is
not visible (cut or cleared) it reads the helper module again; its notes keep verdicts,
never helper signatures, so compaction costs re-reads. A file whose read is still visible
but whose text and verdict are gone is read again; anything that vanished without trace is
not (it moves on from the latest ``last reviewed``). When the listing is not in view it
lists again (the latest summary's ``remaining files`` stands in for it). Batching (profile
``realistic``): ``parallel_calls`` offers the next files of the listing and any helper module
a visible file needs, and nothing once it had to list again after a cut (tasks/README.md).

Reference summary (lossy, documented): keeps the findings, the last reviewed file, the
count and the remaining files; drops every file text and every per-file verdict, so the
helper definitions must be re-read after a summary.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

from tasks.base import Grade, TaskFamily, TaskInstance, ToolResult, tool_schema
from tasks.kit.limits import limit_sentence
from tasks.policy_kit import (REPORT_PREFIX, delegation_failed, failed_attempts, format_summary, make_call,
                              other_calls, rate_limit_note, reply, submit, texts, tool_texts, tools_used)
from tasks.repo_tools import grep_lines

GREP_LIMIT = 60
KINDS = ["wrong_arg_order", "off_by_one", "inverted_comparison", "mutable_default", "resource_leak",
         "sql_injection", "zero_division"]

# Shared helpers: module -> [(name, params, body lines)]
HELPERS: dict[str, list[tuple[str, list[str], list[str]]]] = {
    "app/common/money.py": [
        ("scale_amount", ["amount", "rate"], [
            '"""Convert ``amount`` with the exchange ``rate`` and round to cents."""',
            "if rate <= 0:",
            "    raise ValueError(f\"rate must be positive, got {rate!r}\")",
            "return (Decimal(str(amount)) * Decimal(str(rate))).quantize(CENT, rounding=ROUND_HALF_UP)"]),
        ("apply_discount", ["price", "percent"], [
            '"""Reduce ``price`` by ``percent`` (0-100); never below zero."""',
            "if not 0 <= percent <= 100:",
            "    raise ValueError(f\"percent out of range: {percent!r}\")",
            "reduced = Decimal(str(price)) * (Decimal(100) - Decimal(str(percent))) / Decimal(100)",
            "return max(reduced.quantize(CENT, rounding=ROUND_HALF_UP), Decimal(0))"]),
        ("split_total", ["total", "parts"], [
            '"""Split ``total`` into ``parts`` shares that add up exactly (the last share takes the rest)."""',
            "if parts < 1:",
            "    raise ValueError(\"parts must be at least 1\")",
            "share = (Decimal(str(total)) / parts).quantize(CENT, rounding=ROUND_DOWN)",
            "shares = [share] * (parts - 1)",
            "shares.append(Decimal(str(total)) - share * (parts - 1))",
            "return shares"]),
    ],
    "app/common/dates.py": [
        ("days_between", ["start", "end"], [
            '"""Whole days from ``start`` to ``end`` (negative when ``end`` is earlier)."""',
            "if isinstance(start, datetime):",
            "    start = start.date()",
            "if isinstance(end, datetime):",
            "    end = end.date()",
            "return (end - start).days"]),
        ("shift_date", ["day", "offset"], [
            '"""Move ``day`` by ``offset`` business days, skipping weekends."""',
            "step = 1 if offset >= 0 else -1",
            "remaining = abs(offset)",
            "while remaining:",
            "    day = day + timedelta(days=step)",
            "    if day.weekday() < 5:",
            "        remaining -= 1",
            "return day"]),
        ("clamp_window", ["low", "value", "high"], [
            '"""Clamp ``value`` into the closed window ``low``..``high``."""',
            "if low > high:",
            "    raise ValueError(\"empty window\")",
            "return min(max(value, low), high)"]),
    ],
    "app/common/text.py": [
        ("pad_label", ["label", "width"], [
            '"""Left-justify ``label`` to ``width`` characters, cutting with an ellipsis if longer."""',
            "label = str(label)",
            "if len(label) > width:",
            "    return label[: max(width - 1, 0)] + ELLIPSIS",
            "return label.ljust(width)"]),
        ("truncate_text", ["text", "limit"], [
            '"""Cut ``text`` to at most ``limit`` characters at a word boundary."""',
            "if len(text) <= limit:",
            "    return text",
            "cut = text[: max(limit - 1, 0)].rsplit(\" \", 1)[0]  # one character is left for the ellipsis",
            "return cut.rstrip(\",.;:\") + ELLIPSIS"]),
        ("join_fields", ["fields", "sep"], [
            '"""Join non-empty ``fields`` with ``sep``, escaping separators inside fields."""',
            "cleaned = [str(f).replace(sep, \"\\\\\" + sep) for f in fields if f not in (None, \"\")]",
            "return sep.join(cleaned)"]),
    ],
}
COMMON_HEADERS = {
    "app/common/money.py": ['"""Money helpers shared by every service: rounding, exchange, discounts.',
                            "", "All amounts are ``Decimal``; floats are converted through ``str`` to avoid",
                            'binary rounding surprises."""', "from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal", "",
                            'CENT = Decimal("0.01")'],
    "app/common/dates.py": ['"""Date helpers: business-day arithmetic and windows.', "",
                            'Naive dates are interpreted in UTC. Keep this module free of I/O."""',
                            "from datetime import datetime, timedelta", "", "WEEKEND = (5, 6)"],
    "app/common/text.py": ['"""Text helpers for reports, CSV exports and log lines."""', "", 'ELLIPSIS = "\\u2026"',
                           "MAX_LABEL = 48"],
}
DOMAINS = {
    "billing": ["invoice", "charge", "refund"], "orders": ["order", "basket", "line"],
    "inventory": ["stock", "bin", "sku"], "users": ["user", "profile", "team"],
    "shipping": ["parcel", "route", "carrier"], "reports": ["report", "metric", "chart"],
    "auth": ["token", "session", "grant"], "notifications": ["alert", "digest", "webhook"],
    "analytics": ["event", "funnel", "cohort"], "search": ["query", "index", "facet"],
    "payments": ["payment", "payout", "mandate"], "catalog": ["product", "variant", "bundle"],
    "support": ["ticket", "reply", "macro"], "pricing": ["quote", "tier", "coupon"],
    "scheduling": ["slot", "booking", "shift"], "audit": ["entry", "trail", "snapshot"],
}
MODULES = ["service", "handlers", "repository", "validators", "tasks", "exporters", "models", "api", "cache", "jobs"]
FIELDS = ["id", "owner_id", "status", "created_at", "updated_at", "currency", "region", "priority", "source",
          "external_ref", "notes", "quantity", "label", "version", "channel", "tenant_id"]
MAX_FILES = len(HELPERS) + len(DOMAINS) * len(MODULES)

HEADER = re.compile(r"^=== (\S+\.py) · (\d+) lines", re.M)
LISTING_HEADER = "Repository listing"
LISTING_LINE = re.compile(r"^  (app/\S+\.py)\s", re.M)
NUMBERED = re.compile(r"^ *(\d+)  ?(.*)$")
VERDICT = re.compile(r"Reviewed (\S+\.py): (clean|bugs in [^\n]*)")
FINDINGS = re.compile(r"Findings so far: ([^\n]*)")
NOTED_BUG = re.compile(r"(\w+) \((\w+)\)")  # "bugs in parse_row (off_by_one), ..." of a verdict note
FINDING_ITEM = re.compile(r"(app/\S+\.py)::(\w+)(?: \((\w+)\))?")
LAST_REVIEWED = re.compile(r"last reviewed: (\S+\.py)")
REMAINING = re.compile(r"remaining files: ([^\n]*)")
# delegation (strategy ``isolate``): the sub-task names its files; the report names the files reviewed and the bugs
SUBTASK_FILES = re.compile(r"^Files to review \((\d+)\): ([^\n]*)$", re.M)
REPORT_REVIEWED = re.compile(r"Sub-agent report: reviewed \d+ files: ([^\n]*)")
REPORT_BUGS = re.compile(r"^Bugs found: ([^\n]*)$", re.M)
SCOPE = re.compile(r"Out of scope: files under ((?:app/\w+/(?:, )?)+) belong to other teams")
REPO_NAME = re.compile(r"Review the Python repository (.+?) \(\d+ files")


@dataclass(frozen=True)
class Bug:
    """One planted bug."""

    file: str
    function: str
    kind: str


class CodeReview(TaskFamily):
    """Family generator. Knobs: ``files`` (modules in the repository), ``bugs`` (planted bugs),
    ``max_calls_per_turn`` (the code host's documented limit on concurrent tool calls per turn),
    ``other_teams`` (domains the prompt puts out of scope, each with one planted bug that must not be reported)."""

    name = "code_review"

    def __init__(self, files: int = 44, bugs: int = 6, max_calls_per_turn: int = 4, other_teams: int = 1) -> None:
        self.files = self.check_knob("files", files, len(HELPERS) + 2, MAX_FILES)
        self.bugs = self.check_knob("bugs", bugs, 1, files - len(HELPERS) - other_teams)
        self.other_teams = self.check_knob("other_teams", other_teams, 0, 3)
        self.max_calls_per_turn = self.check_knob("max_calls_per_turn", max_calls_per_turn, 1, 64)

    def generate(self, seed: int) -> "CodeReviewInstance":
        """Generate the repository for ``seed``."""
        rng = random.Random(f"code_review:{seed}")
        combos = [f"app/{d}/{m}.py" for d in DOMAINS for m in MODULES]
        domain_paths = sorted(rng.sample(combos, self.files - len(HELPERS)))
        excluded = self._other_teams(rng, domain_paths)
        in_scope = [p for p in domain_paths if not p.startswith(excluded)]
        bug_paths = rng.sample(in_scope, self.bugs)
        bug_paths += [rng.choice([p for p in domain_paths if p.startswith(prefix)]) for prefix in excluded]
        others = KINDS[1:]
        rng.shuffle(others)
        kinds = [KINDS[0]] + others
        planned = {path: kinds[i % len(kinds)] for i, path in enumerate(bug_paths)}
        files: dict[str, str] = {}
        for path in HELPERS:
            files[path] = _helper_module(path)
        bugs: list[Bug] = []
        for path in domain_paths:
            text, bug = _domain_module(rng, path, planned.get(path))
            files[path] = text
            if bug:
                bugs.append(Bug(path, bug, planned[path]))
        answer = [b for b in bugs if not b.file.startswith(excluded)]
        return CodeReviewInstance(self, seed, dict(sorted(files.items())), answer, excluded,
                                  [b for b in bugs if b.file.startswith(excluded)])

    def _other_teams(self, rng: random.Random, domain_paths: list[str]) -> tuple[str, ...]:
        """The folders (``app/<domain>/``) of ``other_teams`` domains, leaving room for the in-scope bugs."""
        domains = sorted({p.split("/")[1] for p in domain_paths})
        rng.shuffle(domains)
        chosen: list[str] = []
        for domain in domains:
            if len(chosen) == self.other_teams:
                break
            prefixes = tuple(f"app/{d}/" for d in [*chosen, domain])
            if sum(not p.startswith(prefixes) for p in domain_paths) >= self.bugs:
                chosen.append(domain)
        return tuple(sorted(f"app/{d}/" for d in chosen))


def _helper_module(path: str) -> str:
    lines = list(COMMON_HEADERS[path]) + ["", "__all__ = [" + ", ".join(f'"{h[0]}"' for h in HELPERS[path]) + "]", ""]
    for name, params, body in HELPERS[path]:
        lines += ["", f"def {name}({', '.join(params)}):"] + ["    " + b for b in body] + [""]
    return "\n".join(lines).rstrip() + "\n"


# --- function templates: each returns (name, lines) ------------------------------------------------------------

def _t_off_by_one(rng, noun, variant):
    if variant == "bug":
        name = f"total_{noun}_quantity"
        return name, [f"def {name}(items):", f'    """Sum the quantity of every {noun} in ``items``."""',
                      "    if not items:", "        return 0", "    total = 0",
                      "    for i in range(len(items) + 1):", "        total += items[i].quantity", "    return total"]
    if variant == "decoy":
        name = f"{noun}_path_prefixes"
        return name, [f"def {name}(parts):",
                      f'    """Every prefix of ``parts``, the empty one included (breadcrumbs for the {noun} page)."""',
                      "    prefixes = []", "    # range(len(parts) + 1) is intended: the full path is a prefix too",
                      "    for n in range(len(parts) + 1):", "        prefixes.append(tuple(parts[:n]))", "    return prefixes"]
    # clean: skipping row 0 is right here, and the docstring, the argument and the types all say why
    # (raw csv.reader rows, header first); an expert reading it in context must agree it is correct
    name = f"total_{noun}_quantity"
    return name, [f"def {name}(rows):",
                  f'    """Sum the quantity column of ``rows``: the raw rows of a {noun} CSV export as'
                  f' ``csv.reader`` returns them (lists of strings), header row first; column 2 is the quantity."""',
                  "    total = 0", "    for i in range(1, len(rows)):  # rows[0] is the header row, not a record",
                  "        total += int(rows[i][2])", "    return total"]


def _t_inverted(rng, noun, variant):
    if variant == "bug":
        name = f"is_{noun}_expired"
        return name, [f"def {name}({noun}, now):", f'    """Return True when the {noun} has expired at ``now``."""',
                      f"    if {noun} is None:", "        return True", f"    return {noun}.expires_at > now"]
    if variant == "decoy":
        name = f"is_{noun}_valid"
        return name, [f"def {name}({noun}, now):", f'    """Return True while the {noun} is still valid at ``now``."""',
                      f"    if {noun} is None:", "        return False", f"    return {noun}.expires_at > now"]
    name = f"is_{noun}_expired"
    return name, [f"def {name}({noun}, now):", f'    """Return True when the {noun} has expired at ``now``."""',
                  f"    if {noun} is None:", "        return True", f"    return now >= {noun}.expires_at"]


def _t_mutable(rng, noun, variant):
    name = f"collect_{noun}_tags"
    if variant == "bug":
        return name, [f"def {name}({noun}, seen=[]):", f'    """Collect the tags of ``{noun}`` into ``seen`` and return it."""',
                      f"    for tag in getattr({noun}, \"tags\", ()):", "        if tag not in seen:",
                      "            seen.append(tag)", "    return seen"]
    if variant == "decoy":
        name = f"format_{noun}_row"
        return name, [f"def {name}({noun}, columns=(\"id\", \"status\", \"updated_at\")):",
                      f'    """The ``columns`` of ``{noun}`` joined with commas, for a debug log line."""',
                      f"    return \",\".join(str(getattr({noun}, c, \"\")) for c in columns)"]
    return name, [f"def {name}({noun}, seen=None):", f'    """Collect the tags of ``{noun}`` into ``seen`` and return it."""',
                  "    if seen is None:", "        seen = []", f"    for tag in getattr({noun}, \"tags\", ()):",
                  "        if tag not in seen:", "            seen.append(tag)", "    return seen"]


def _t_leak(rng, noun, variant):
    name = f"load_{noun}_fixture"
    head = [f"def {name}(path):", f'    """Read the {noun} fixture at ``path`` and return its records."""']
    if variant == "bug":
        return name, head + ["    fh = open(path, encoding=\"utf-8\")", "    data = json.load(fh)",
                             f"    log.debug(\"loaded %d {noun} records\", len(data.get(\"records\", [])))",
                             "    return data.get(\"records\", [])"]
    if variant == "decoy":
        return name, head + ["    fh = open(path, encoding=\"utf-8\")", "    try:", "        data = json.load(fh)",
                             "    finally:", "        fh.close()", "    return data.get(\"records\", [])"]
    return name, head + ["    with open(path, encoding=\"utf-8\") as fh:", "        data = json.load(fh)",
                         "    return data.get(\"records\", [])"]


def _t_sql(rng, noun, variant):
    name = f"find_{noun}s_by_owner"
    head = [f"def {name}(conn, owner_id):", f'    """Fetch every {noun} owned by ``owner_id``, newest first."""',
            "    cursor = conn.cursor()"]
    if variant == "bug":
        return name, head + ["    cursor.execute(f\"SELECT * FROM {TABLE} WHERE owner_id = {owner_id} ORDER BY created_at DESC\")",
                             "    return cursor.fetchall()"]
    if variant == "decoy":
        return name, head + ["    # the table name is a module constant, never user input",
                             "    cursor.execute(f\"SELECT * FROM {TABLE} WHERE owner_id = ? ORDER BY created_at DESC\", (owner_id,))",
                             "    return cursor.fetchall()"]
    return name, head + ["    cursor.execute(\"SELECT * FROM \" + TABLE + \" WHERE owner_id = ? ORDER BY created_at DESC\", (owner_id,))",
                         "    return cursor.fetchall()"]


def _t_div(rng, noun, variant):
    name = f"average_{noun}_value"
    head = [f"def {name}(records):", f'    """Mean ``value`` of the {noun} ``records`` (0 when there are none)."""',
            "    total = sum(r.value for r in records)", "    count = len(records)"]
    if variant == "bug":
        return name, head + ["    return total / count"]
    if variant == "decoy":
        return name, head + ["    return total / max(count, 1)"]
    return name, head + ["    if count == 0:", "        return 0.0", "    return total / count"]


def _t_call(rng, noun, variant, helper):
    module, (hname, params, _) = helper
    name = f"{rng.choice(['prepare', 'compute', 'derive', 'resolve'])}_{noun}_{hname.split('_')[-1]}"
    if variant == "bug":
        args = ", ".join([params[1], params[0]] + params[2:])
    elif variant == "decoy":
        args = ", ".join(f"{p}={p}" for p in reversed(params))
    else:
        args = ", ".join(params)
    return name, [f"def {name}({', '.join(params)}, dry_run=False):",
                  f'    """Apply ``{hname}`` to the {noun} figures and return the result; ``dry_run`` also logs the call."""',
                  "    if dry_run:", f"        log.info(\"dry run: {hname} for {noun}\")",
                  f"    result = {hname}({args})", f"    log.debug(\"{hname} -> %r\", result)", "    return result"]


BUG_TEMPLATES = {"off_by_one": _t_off_by_one, "inverted_comparison": _t_inverted, "mutable_default": _t_mutable,
                 "resource_leak": _t_leak, "sql_injection": _t_sql, "zero_division": _t_div}


def _g_validate(rng, noun, domain):
    name = f"validate_{noun}_payload"
    fields = rng.sample(FIELDS, rng.randint(6, 10))
    lines = [f"def {name}(payload):", f'    """Validate an incoming {noun} payload and return a list of problems.',
             "", "    The API layer rejects the request when the list is not empty; messages are shown",
             '    to the caller verbatim, so keep them short and specific."""', "    problems = []",
             "    if not isinstance(payload, dict):", "        return [\"payload must be an object\"]"]
    for f in fields:
        lines += [f"    if \"{f}\" not in payload:", f"        problems.append(\"missing field: {f}\")"]
        if f in ("quantity", "version", "priority"):
            lines += [f"    elif not isinstance(payload[\"{f}\"], int) or payload[\"{f}\"] < 0:",
                      f"        problems.append(\"{f} must be a non-negative integer\")"]
        elif f in ("status",):
            lines += ["    elif payload[\"status\"] not in STATUSES:", "        problems.append(f\"unknown status {payload['status']!r}\")"]
    lines += ["    if len(problems) > MAX_PROBLEMS:", "        problems = problems[:MAX_PROBLEMS] + [\"...more problems omitted\"]",
              "    return problems"]
    return name, lines


def _g_serialize(rng, noun, domain):
    name = f"serialize_{noun}"
    fields = rng.sample(FIELDS, rng.randint(5, 9))
    lines = [f"def {name}({noun}, include_private=False):", f'    """Turn a {noun} into the JSON-safe dict the {domain} API returns."""',
             "    data = {"]
    lines += [f"        \"{f}\": getattr({noun}, \"{f}\", None)," for f in fields]
    lines += ["    }", "    for key, value in list(data.items()):", "        if isinstance(value, datetime):",
              "            data[key] = value.isoformat()", "    if not include_private:", "        data.pop(\"notes\", None)",
              "    return data"]
    return name, lines


def _g_summary(rng, noun, domain):
    name = f"summarize_{noun}_batch"
    return name, [f"def {name}(batch):", f'    """Count the {noun}s of ``batch`` per status, for the nightly {domain} digest."""',
                  "    counts = {status: 0 for status in STATUSES}", "    skipped = 0", "    for item in batch:",
                  "        status = getattr(item, \"status\", None)", "        if status not in counts:", "            skipped += 1",
                  "            continue", "        counts[status] += 1", "    if skipped:",
                  f"        log.warning(\"%d {noun}s with an unknown status were skipped\", skipped)",
                  "    return counts"]


def _g_retry(rng, noun, domain):
    name = f"sync_{noun}_with_retry"
    return name, [f"def {name}(client, {noun}_id, attempts=3):",
                  f'    """Push one {noun} to the upstream system, retrying transient failures."""',
                  "    delay = RETRY_DELAY", "    last_error = None", "    for attempt in range(1, attempts + 1):",
                  "        try:", f"            return client.push(\"{domain}\", {noun}_id)",
                  "        except TimeoutError as exc:", "            last_error = exc",
                  f"            log.warning(\"sync of {noun} %s failed (attempt %d/%d)\", {noun}_id, attempt, attempts)",
                  "            time.sleep(delay)", "            delay *= 2",
                  f"    raise RuntimeError(f\"could not sync {noun} {{{noun}_id}}\") from last_error"]


def _g_parse(rng, noun, domain):
    name = f"parse_{noun}_csv"
    return name, [f"def {name}(text):", f'    """Parse the {noun} CSV export (header row first) into dicts."""',
                  "    lines = [line for line in text.splitlines() if line.strip()]", "    if not lines:", "        return []",
                  "    header = [h.strip() for h in lines[0].split(\",\")]", "    rows = []", "    for line in lines[1:]:",
                  "        values = [v.strip() for v in line.split(\",\")]", "        if len(values) != len(header):",
                  f"            log.debug(\"skipping malformed {noun} row: %s\", line)", "            continue",
                  "        rows.append(dict(zip(header, values)))", "    return rows"]


def _g_class(rng, noun, domain):
    cls = noun.capitalize() + "Record"
    fields = rng.sample(FIELDS, 4)
    lines = [f"class {cls}:", f'    """In-memory view of one {noun} row."""', "",
             f"    def __init__(self, {', '.join(fields)}):"]
    lines += [f"        self.{f} = {f}" for f in fields]
    lines += ["", "    def __repr__(self):", f"        return f\"{cls}({fields[0]}={{self.{fields[0]}!r}})\"", "",
              "    def to_dict(self):", "        return {" + ", ".join(f"\"{f}\": self.{f}" for f in fields) + "}"]
    return cls, lines


GENERIC = [_g_validate, _g_serialize, _g_summary, _g_retry, _g_parse, _g_class]


def _domain_module(rng: random.Random, path: str, bug_kind: str | None) -> tuple[str, str | None]:
    domain, module = path.split("/")[1], path.split("/")[2][:-3]
    nouns = DOMAINS[domain]
    noun = rng.choice(nouns)
    helper_modules = rng.sample(sorted(HELPERS), rng.choice([0, 1, 1, 2]))
    if bug_kind == "wrong_arg_order" and not helper_modules:
        helper_modules = [rng.choice(sorted(HELPERS))]
    blocks: list[tuple[str, list[str]]] = []
    bug_function = None
    # helper callers (one per imported module)
    used: dict[str, list[str]] = {}
    for i, hm in enumerate(helper_modules):
        helper = rng.choice(HELPERS[hm])
        variant = "bug" if (bug_kind == "wrong_arg_order" and i == 0) else rng.choice(["clean", "clean", "decoy"])
        fname, lines = _t_call(rng, noun, variant, (hm, helper))
        if variant == "bug":
            bug_function = fname
        used.setdefault(hm, []).append(helper[0])
        blocks.append((fname, lines))
    kinds = rng.sample(sorted(BUG_TEMPLATES), rng.randint(2, 3))
    if bug_kind in BUG_TEMPLATES and bug_kind not in kinds:
        kinds[0] = bug_kind
    for kind in kinds:
        variant = "bug" if kind == bug_kind else rng.choice(["clean", "decoy"])
        fname, lines = BUG_TEMPLATES[kind](rng, noun, variant)
        if variant == "bug":
            bug_function = fname
        blocks.append((fname, lines))
    for gen in rng.sample(GENERIC, rng.randint(3, 5)):
        blocks.append(gen(rng, noun, domain))
    rng.shuffle(blocks)
    table = f"{domain}_{noun}s"
    lines = [f'"""{domain.capitalize()} {module}: {noun} {rng.choice(["operations", "helpers", "workflows", "plumbing"])}.',
             "", f"Owned by the {domain} team. {rng.choice(['See docs/' + domain + '.md for the data model.', 'Keep functions pure where possible; I/O goes through the repository layer.', 'Everything here is called from the HTTP handlers and the nightly jobs.'])}",
             '"""', "import json", "import logging", "import time", "from datetime import datetime", ""]
    for hm in helper_modules:
        lines.append(f"from {hm[:-3].replace('/', '.')} import {', '.join(sorted(set(used[hm])))}")
    lines += ["", "log = logging.getLogger(__name__)", "", f"TABLE = \"{table}\"",
              "STATUSES = (\"draft\", \"active\", \"suspended\", \"closed\")", f"MAX_PROBLEMS = {rng.randint(5, 20)}",
              f"RETRY_DELAY = {rng.choice([0.5, 1.0, 2.0])}",
              f"# TODO({rng.choice(['ops', 'sre', 'data'])}): move {rng.choice(['RETRY_DELAY', 'MAX_PROBLEMS'])} to settings once the config service lands", ""]
    for _, block in blocks:
        lines += [""] + block + [""]
    return "\n".join(lines).rstrip() + "\n", bug_function


def _scope_sentence(out_of_scope: tuple[str, ...]) -> str:
    """The prompt's scope rule (empty when every file is in scope); the policy reads it back with ``SCOPE``."""
    if not out_of_scope:
        return ""
    folders = ", ".join(out_of_scope)
    return (f"Out of scope: files under {folders} belong to other teams; do not review them and do not report "
            "their bugs. ")


class CodeReviewInstance(TaskInstance):
    """One generated repository."""

    family = CodeReview.name

    def __init__(self, family: CodeReview, seed: int, files: dict[str, str], bugs: list[Bug],
                 out_of_scope: tuple[str, ...] = (), other_bugs: list[Bug] | None = None) -> None:
        self.seed = seed
        self.id = f"code_review-f{family.files}-s{seed}"
        self.files = files
        self.bugs = bugs
        self.out_of_scope = out_of_scope
        self.other_bugs = other_bugs or []
        self.max_calls_per_turn = family.max_calls_per_turn
        self.repo = f"acme-platform @ {random.Random(seed).randrange(16**7):07x}"
        self.system_prompt = (
            "You are a senior code reviewer. You work only through the tools you are given. Review carefully: "
            "a missed bug reaches production, a false report wastes the owning team's time. "
            "When you are done, call submit."
        )
        self.user_prompt = (
            f"Review the Python repository {self.repo} ({len(files)} files; list_files, read_file, grep). "
            "Find every function with a real bug: wrong argument order in calls to helpers defined in other "
            "modules, off-by-one loop bounds, inverted comparisons, mutable default arguments, files opened and "
            "never closed, SQL built by string formatting from arguments, divisions without a zero guard. Some "
            "code only looks suspicious; report real bugs only. " + _scope_sentence(self.out_of_scope)
            + "Submit every buggy function once with "
            "submit(findings=[{\"file\": path, \"function\": name}, ...]). "
            + limit_sentence(self.max_calls_per_turn, "tool calls (one file per read_file)")
        )
        self.tools = [
            tool_schema("list_files", "List every file of the repository with its size.", {}),
            tool_schema("read_file", "Read one file, with line numbers.",
                        {"path": {"type": "string", "description": "a path from list_files"}}),
            tool_schema("grep", f"Search every file with a Python regular expression (at most {GREP_LIMIT} matching lines).",
                        {"pattern": {"type": "string", "description": "a Python regular expression"}}),
        ]
        self.answer_schema = {
            "type": "object",
            "properties": {"findings": {"type": "array", "description": "one entry per buggy function", "items": {
                "type": "object", "properties": {"file": {"type": "string"}, "function": {"type": "string"}},
                "required": ["file", "function"]}}},
            "required": ["findings"],
        }

    def listing(self) -> str:
        """The ``list_files`` output."""
        lines = [f"{LISTING_HEADER} · {self.repo} · {len(self.files)} files"]
        for path, text in self.files.items():
            lines.append(f"  {path:<34} {len(text.encode()) / 1024:5.1f} KB  {text.count(chr(10)):4d} lines")
        lines.append("Hint: read_file(path) opens a file; grep(pattern) searches every file.")
        return "\n".join(lines)

    def call(self, name: str, args: dict) -> ToolResult:
        """``list_files()``, ``read_file(path)``, ``grep(pattern)``."""
        if name == "list_files":
            return ToolResult(self.listing(), resource="listing")
        if name == "read_file":
            path = args.get("path")
            if not isinstance(path, str) or not path.strip():
                return ToolResult("ERROR: read_file needs a path (a string from list_files)", is_error=True)
            path = path.strip().lstrip("./")
            if path not in self.files:
                return ToolResult(f"ERROR: no such file {path!r}; call list_files to see the {len(self.files)} paths",
                                  is_error=True)
            text = self.files[path]
            body = [f"{n:4d}  {line}" for n, line in enumerate(text.splitlines(), 1)]
            head = f"=== {path} · {len(body)} lines · {len(text.encode()) / 1024:.1f} KB ==="
            return ToolResult("\n".join([head] + body), resource=f"file:{path}")
        if name == "grep":
            found = grep_lines(self.files, args)
            if isinstance(found, ToolResult):
                return found
            pattern, hits = found
            shown = hits[:GREP_LIMIT]
            if len(hits) > GREP_LIMIT:
                shown.append(f"... {len(hits) - GREP_LIMIT} more matching lines not shown; narrow the pattern")
            return ToolResult(f"grep {pattern!r}: {len(hits)} matching lines\n" + "\n".join(shown or ["(no matches)"]),
                              resource=f"grep:{pattern}")
        return ToolResult(f"ERROR: unknown tool {name!r}; available: list_files, read_file, grep", is_error=True)

    def grade(self, answer: dict) -> Grade:
        """Exact set of (file, function) for success; F1 for the score."""
        raw = answer.get("findings") if isinstance(answer, dict) else None
        given: set[tuple[str, str]] = set()
        if isinstance(raw, list):
            for item in raw:
                if isinstance(item, dict) and isinstance(item.get("file"), str) and isinstance(item.get("function"), str):
                    given.add((item["file"].strip().lstrip("./"), item["function"].strip()))
        truth = {(b.file, b.function) for b in self.bugs}
        hits = len(given & truth)
        precision = hits / len(given) if given else 0.0
        recall = hits / len(truth) if truth else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return Grade(given == truth, round(f1, 4), {
            "expected": len(truth), "given": len(given), "correct": hits,
            "missed": sorted(f"{f}::{fn}" for f, fn in truth - given),
            "wrong": sorted(f"{f}::{fn}" for f, fn in given - truth)})

    def completion_check(self, messages: list[dict], answer: dict) -> str | None:
        """Stop-hook check (seed 000 §7.4): every file in the visible listing needs a visible review.

        It judges what the agent can show for its work in the request it submitted from,
        like a checker reading the same context would, so after compaction it may send the
        agent back to files it did review (the seed's hook-induced re-reads).
        """
        listed: list[str] = []
        for text in tool_texts(messages):
            if text.startswith(LISTING_HEADER):
                listed = LISTING_LINE.findall(text)
        reviewed = {path for text in texts(messages) for path, _ in VERDICT.findall(text)}
        missing = [path for path in listed if path not in reviewed and not path.startswith(self.out_of_scope)]
        if not missing:
            return None
        return f"{len(missing)} listed files have no visible review: {', '.join(missing)}"

    def trial_metrics(self, tool_log: list[dict]) -> dict:
        """File coverage: distinct in-scope files read / in-scope files (sub-agents' reads included).

        With sub-agents (strategy ``isolate``) also ``files_read_summed``: distinct files read per
        context (the main agent and each sub-agent), summed, as seed 000 §7.3 reports isolation.
        """
        read = {e["resource"] for e in tool_log
                if e.get("name") == "read_file" and not e.get("is_error") and e.get("resource")}
        per_context: dict = {}
        for e in tool_log:
            if e.get("name") == "read_file" and not e.get("is_error") and e.get("resource"):
                per_context.setdefault(e.get("subagent"), set()).add(e["resource"])
        in_scope = {f"file:{p}" for p in self.files if not p.startswith(self.out_of_scope)}
        metrics = {"files_read": len(read), "files_total": len(self.files), "files_in_scope": len(in_scope),
                   "file_coverage": round(len(read & in_scope) / len(in_scope), 4)}
        if any(key is not None for key in per_context):
            # seed 000 §7.3 counts isolation's coverage summed over the contexts (48 of 44 there)
            metrics["files_read_summed"] = sum(len(files) for files in per_context.values())
        return metrics

    def reference_policy(self) -> "ReviewPolicy":
        """The careful reviewer."""
        return ReviewPolicy()

    def data_fingerprint(self) -> list:
        """Every file and the planted bugs."""
        return [self.files, [vars(b) for b in self.bugs], list(self.out_of_scope), [vars(b) for b in self.other_bugs]]


# --- reference policy ------------------------------------------------------------------------------------------

UNREAD = "    # (line not read)"  # stands for a numbered line missing from what the agent attended to


def _numbered_lines(text: str) -> dict[int, str]:
    """Line number -> code of a ``read_file`` result (the lines the agent has in view)."""
    lines: dict[int, str] = {}
    for line in text.splitlines()[1:]:
        match = NUMBERED.match(line)
        if match:
            lines[int(match.group(1))] = match.group(2)
    return lines


def _source(lines: dict[int, str], total: int) -> str:
    """The file's text from its numbered lines; a number it did not read becomes ``UNREAD`` (a gap it can see)."""
    return "\n".join(lines.get(number, UNREAD) for number in range(1, total + 1))


def _functions(source: str) -> list[tuple[str, str]]:
    """Top-level functions as (name, text)."""
    found: list[tuple[str, str]] = []
    current: list[str] | None = None
    name = ""
    for line in source.splitlines():
        if line and not line[0].isspace():
            if current is not None:
                found.append((name, "\n".join(current)))
                current = None
            match = re.match(r"def (\w+)\(", line)
            if match:
                name, current = match.group(1), [line]
                continue
        if current is not None:
            current.append(line)
    if current is not None:
        found.append((name, "\n".join(current)))
    return found


def helper_imports(source: str) -> dict[str, list[str]]:
    """Shared-helper module path -> imported names."""
    found: dict[str, list[str]] = {}
    for module, names in re.findall(r"^from (app\.common\.\w+) import ([\w, ]+)$", source, re.M):
        found[module.replace(".", "/") + ".py"] = [n.strip() for n in names.split(",")]
    return found


def helper_signatures(source: str) -> dict[str, list[str]]:
    """Function name -> parameter names, from a helper module's text."""
    return {name: [p.strip() for p in params.split(",") if p.strip()]
            for name, params in re.findall(r"^def (\w+)\(([^)]*)\):", source, re.M)}


def detect(source: str, signatures: dict[str, list[str]]) -> list[tuple[str, str]]:
    """The planted bug patterns a competent reviewer spots: (function, kind)."""
    bugs = []
    for name, body in _functions(source):
        kind = None
        header = body.splitlines()[0]
        loop = re.search(r"for (\w+) in range\(len\((\w+)\) \+ 1\):", body)
        if loop and re.search(rf"\b{loop.group(2)}\[{loop.group(1)}\]", body):
            kind = "off_by_one"
        elif (("has expired" in body or re.match(r"def is_\w+_expired\(", header))
              and re.search(r"\.expires_at > now|now < \w+\.expires_at", body)):  # the name or the docstring says so
            kind = "inverted_comparison"
        elif re.search(r"=\s*(\[\]|\{\}|set\(\))\s*[,)]", header):
            kind = "mutable_default"
        elif any(f"{v}.close()" not in body and "with open" not in body
                 for v in re.findall(r"(\w+) = open\(", body)):
            kind = "resource_leak"
        elif any(not var.isupper() for q in re.findall(r'execute\(f"([^"]*)"', body) for var in re.findall(r"\{(\w+)", q)) \
                or re.search(r'execute\("[^"]*"\.format\(', body):
            kind = "sql_injection"
        else:
            for num, den in re.findall(r"return (\w+) / (\w+)\s*$", body, re.M):
                if not den.isdigit() and not re.search(rf"if {den} == 0|if not {den}\b", body):
                    kind = "zero_division"
            for helper, args in re.findall(r"\b(\w+)\(([\w ,]*)\)", body):
                params = signatures.get(helper)
                positional = [a.strip() for a in args.split(",") if a.strip()]
                if params and positional and "=" not in args and sorted(positional) == sorted(params) and positional != params:
                    kind = "wrong_arg_order"
        if kind:
            bugs.append((name, kind))
    return bugs


RELISTED = "The file listing is not in view"  # its note when it lists again (the listing was cut)


def _relisted(messages: list[dict]) -> bool:
    """Whether a visible reply of its own lists the files again after work began (the listing was cut).

    The first listing's note says the same, but it comes right after the task; a re-listing
    follows earlier replies, a strategy's note or a summary.
    """
    task = next((i for i, m in enumerate(messages) if m.get("role") == "user"), len(messages))
    return any(m.get("role") == "assistant" and RELISTED in str(m.get("content") or "")
               for m in messages[task + 2:])


class ReviewPolicy:
    """Reference policy for ``code_review`` (see the module docstring).

    With the ``isolate`` strategy (``delegate`` on offer) it lists the files, then hands them
    to sub-agents in consecutive chunks of at most ``chunk`` files in listing order (44 files:
    6 sub-agents of 7-8 files). Eight files of about 1k tokens each keep a sub-agent's own,
    unmanaged context near 10k tokens at its last step while the main context gains only one
    short task and one short report per chunk. Each sub-task is self-contained: the file
    list, the bug kinds, and the instruction to read a shared helper module (whichever chunk
    it belongs to) before judging a positional call to it; so a sub-agent re-reads helper
    modules it needs, which the summed file coverage shows. The main agent merges the
    visible reports (files reviewed, ``Bugs found``) and submits; a chunk whose report is no
    longer visible is delegated again. A delegate result that is not a report (the
    sub-agent failed) ends delegation: the main agent then reviews the rest itself.
    """

    chunk = 8

    def _state(self, tool_outputs: list[str], notes: list[str]):
        seen: dict[str, tuple[int, dict[int, str]]] = {}  # every visible copy of a file, merged line by line
        order: list[str] = []
        for text in tool_outputs:
            header = HEADER.match(text)
            if header:
                total, lines = seen.get(header.group(1), (int(header.group(2)), {}))
                seen[header.group(1)] = (total, {**lines, **_numbered_lines(text)})
            elif text.startswith(LISTING_HEADER):
                order = LISTING_LINE.findall(text)
        contents = {path: _source(lines, total) for path, (total, lines) in seen.items()}
        verdicts: dict[str, str] = {}
        findings: dict[tuple[str, str], str] = {}
        last: list[str] = []
        remaining: list[str] | None = None
        total = None
        for text in notes:
            for path, verdict in VERDICT.findall(text):
                verdicts[path] = verdict
                last.append(path)
            for line in FINDINGS.findall(text):
                for path, func, kind in FINDING_ITEM.findall(line):
                    findings[(path, func)] = kind
            last += LAST_REVIEWED.findall(text)
            for line in REMAINING.findall(text):
                remaining = [p.strip() for p in line.split(",") if p.strip().endswith(".py")]
            match = re.search(r"\((\d+) files; list_files", text) or re.search(r"of (\d+) files", text)
            if match:
                total = int(match.group(1))
            for line in REPORT_REVIEWED.findall(text):  # a sub-agent's report: its files count as reviewed
                for path in (p.strip() for p in line.split(",")):
                    if path.endswith(".py"):
                        verdicts.setdefault(path, "reported by a sub-agent")
                        last.append(path)
            for line in REPORT_BUGS.findall(text):
                for path, func, kind in FINDING_ITEM.findall(line):
                    findings[(path, func)] = kind
        excluded = tuple(p for text in notes for m in [SCOPE.search(text)] if m for p in m.group(1).split(", "))
        order = [p for p in order if not p.startswith(excluded)]  # the task's scope, while it is in view
        offset = 0
        if not order and remaining is not None:
            order = remaining
            offset = max((total or len(order)) - len(order), 0)
        return contents, order, verdicts, findings, last, total, offset

    @staticmethod
    def _notes(messages: list[dict]) -> list[str]:
        """The agent's own notes plus the visible sub-agent reports (``delegate`` results)."""
        return texts(messages) + [t for t in tool_texts(messages) if t.startswith(REPORT_PREFIX)]

    def delegate_plan(self, messages: list[dict]) -> str | None:
        """The next chunk of files for a sub-agent; None to act normally (list first, or merge and submit)."""
        _, order, verdicts, _, _, _, offset = self._state(tool_texts(messages), self._notes(messages))
        if not order or offset:
            return None
        if delegation_failed(messages):
            return None  # a sub-agent failed: review the rest in this context
        count = -(-len(order) // self.chunk)
        size, extra = divmod(len(order), count)
        start = 0
        for index in range(count):
            files = order[start:start + size + (index < extra)]
            start += len(files)
            pending = [p for p in files if p not in verdicts]
            if pending:
                break
        else:
            return None
        repo = next((m.group(1) for t in texts(messages, ("user",)) for m in [REPO_NAME.search(t)] if m), None)
        where = f"the Python repository {repo}" if repo else "the Python repository"
        return (f"Review some files of {where} with read_file (grep searches every file).\n"
                f"Files to review ({len(pending)}): {', '.join(pending)}\n"
                "Find every function in these files with a real bug of these kinds: wrong argument order in a "
                "positional call to a shared helper defined in another module (read that helper's module, e.g. under "
                "app/common/, to check its parameter order, even when it is not in your list), off-by-one loop bounds, "
                "inverted comparisons, mutable default arguments, files opened and never closed, SQL built by string "
                "formatting from arguments, divisions without a zero guard. Some code only looks suspicious; report "
                "real bugs only. Report the files you reviewed and each bug as file::function (kind).")

    def subagent_policy(self, task: str) -> "ReviewSubPolicy":
        """The policy of a sub-agent given ``task`` (it reads the task from its own context)."""
        return ReviewSubPolicy()

    def _judge(self, path: str, contents: dict[str, str]) -> tuple[list[tuple[str, str]] | None, str | None]:
        """Bugs of ``path``, or the file to read first: a helper module it needs that is not visible (or whose
        definition of a called helper it did not read), or ``path`` itself when a function it would report
        has a line it did not read (a careful reviewer looks again before reporting)."""
        source = contents[path]
        signatures: dict[str, list[str]] = {}
        for module, names in helper_imports(source).items():
            called = [n for n in names if re.search(rf"\b{n}\((?![^)]*=)", source)]
            if not called:
                continue
            if module not in contents:
                return None, module
            found = helper_signatures(contents[module])
            if any(name not in found for name in called):
                return None, module
            signatures.update(found)
        bugs = detect(source, signatures)
        unclear = {name for name, body in _functions(source) if UNREAD in body}
        if any(name in unclear for name, _ in bugs):
            return None, path
        return bugs, None

    @staticmethod
    def _why(path: str, needed: str) -> str:
        """The note that says why it reads ``needed`` before judging ``path``."""
        if needed == path:
            return f"Part of {path} did not read clearly; reading it again before I report on it."
        return f"To check the helper calls in {path} I need the definitions in {needed}; reading it."

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """List, read the next file (or a helper module it needs), judge, or submit."""
        contents, order, verdicts, findings, last, total, offset = self._state(tool_texts(messages), self._notes(messages))
        if not order:
            return reply(RELISTED + "; listing the repository.", make_call("list_files"))
        position = {p: i for i, p in enumerate(order)}
        frontier = max((position[p] for p in last if p in position), default=-1)
        notes: list[str] = [line for line in [rate_limit_note(messages)] if line]  # rejected calls are issued again
        sent_back = self._sent_back(messages, verdicts)
        if sent_back:
            for path in sent_back:
                if path not in contents:
                    return reply(f"The completion check sent me back to {len(sent_back)} files; re-reading {path}.",
                                 make_call("read_file", path=path))
                bugs, needed = self._judge(path, contents)
                if needed is not None:
                    return reply(f"Re-checking {path} needs {needed}; reading it.", make_call("read_file", path=needed))
                for func, kind in bugs:
                    findings[(path, func)] = kind
                notes.append(f"Reviewed {path}: " + ("bugs in " + ", ".join(f"{f} ({k})" for f, k in bugs) if bugs else "clean"))
        index = frontier + 1
        action = None
        while index < len(order):
            path = order[index]
            if path in verdicts and path not in contents:
                index += 1
                continue
            if path not in contents:
                action = make_call("read_file", path=path)
                break
            bugs, needed = self._judge(path, contents)
            if needed is not None:
                notes.append(self._why(path, needed))
                action = make_call("read_file", path=needed)
                break
            for func, kind in bugs:
                findings[(path, func)] = kind
            verdict = "bugs in " + ", ".join(f"{f} ({k})" for f, k in bugs) if bugs else "clean"
            notes.append(f"Reviewed {path}: {verdict}")
            frontier = index
            index += 1
        count = offset + frontier + 1
        total_text = total or offset + len(order)
        last_text = order[frontier] if frontier >= 0 else (last[-1] if last else "none")
        notes.append("Findings so far: " + (", ".join(f"{p}::{f} ({k})" for (p, f), k in sorted(findings.items())) or "none"))
        notes.append(f"Progress: last reviewed: {last_text} ({count} of {total_text} files)")
        if action is not None:
            return reply("\n".join(notes), action)
        answer = [{"file": p, "function": f} for p, f in sorted(findings)]
        return submit("\n".join(notes) + "\nEvery file reviewed; submitting the findings.", findings=answer)

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The other reads whose paths are known now, in the order ``act`` would issue them.

        Files the completion check sent it back to, then every file of the visible listing
        after the last reviewed one that is not in view (and not already judged), and any
        shared helper module a visible file needs to be judged. Nothing before the listing
        is visible (what to read depends on it).
        """
        contents, order, verdicts, _, last, _, _ = self._state(tool_texts(messages), self._notes(messages))
        if not order or _relisted(messages):
            return []  # no listing yet, or its own note shows the listing was cut: one read per turn
        position = {p: i for i, p in enumerate(order)}
        frontier = max((position[p] for p in last if p in position), default=-1)
        paths = self._sent_back(messages, verdicts)
        paths += [p for p in order[frontier + 1:] if not (p in verdicts and p not in contents)]
        return other_calls((make_call("read_file", path=p) for p in self._reads(paths, contents)), first)

    def _reads(self, paths: list[str], contents: dict[str, str]) -> list[str]:
        """What judging ``paths`` needs read: each one not in view, or the helper module a visible one needs."""
        reads: list[str] = []
        for path in paths:
            needed = path if path not in contents else self._judge(path, contents)[1]
            if needed is not None and needed not in reads:
                reads.append(needed)
        return reads

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The findings noted so far plus those of the visible files it can judge now; None before any review."""
        contents, order, verdicts, findings, _, _, _ = self._state(tool_texts(messages), self._notes(messages))
        judged = False
        for path in [p for p in order if p in contents]:
            bugs, needed = self._judge(path, contents)
            if needed is None:
                judged = True
                findings.update({(path, func): kind for func, kind in bugs})
        if not (judged or verdicts or findings):
            return None
        return {"findings": [{"file": p, "function": f} for p, f in sorted(findings)]}

    @staticmethod
    def _sent_back(messages: list[dict], verdicts: dict[str, str]) -> list[str]:
        """Files the latest visible stop-hook refusal named that still have no visible review."""
        named: list[str] = []
        for text in tool_texts(messages):
            if text.startswith("[stop hook]") and "no visible review:" in text:
                named = re.findall(r"app/\S+?\.py", text.split("no visible review:", 1)[1])
        return [p for p in named if p not in verdicts]

    def summarize(self, history_text: str) -> str:
        """Keep findings, the last reviewed file and the remaining files; drop file texts and verdicts."""
        blocks = ["[" + b for b in history_text.split("\n[")]
        outputs = [b.split("]: ", 1)[1] for b in blocks if b.startswith("[tool ") and "]: " in b]
        contents, order, verdicts, findings, last, total, _ = self._state(outputs, [history_text])
        position = {p: i for i, p in enumerate(order)}
        frontier = max((position[p] for p in last if p in position), default=-1)
        last_path = order[frontier] if frontier >= 0 else (last[-1] if last else "none")
        items = ", ".join(f"{p}::{f} ({k})" for (p, f), k in sorted(findings.items())) or "none"
        progress = [f"last reviewed: {last_path}"]
        if order:
            progress.append("remaining files: " + (", ".join(order[frontier + 1:]) or "none"))
        else:
            progress.append("file listing not seen yet")
        return format_summary([f"Findings so far: {items}"], tools_used(history_text), failed_attempts(history_text),
                              progress)


class ReviewSubPolicy(ReviewPolicy):
    """A sub-agent reviewing the files its task names (``Files to review (N): ...``), then reporting.

    It reads its files in order, reads a shared helper module when a positional call needs
    its signature (the module's text must be visible, as for the main policy), writes one
    verdict per file, and ends with ``report``: the files reviewed and ``Bugs found``.
    """

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Read the next file (or a helper module it needs), judge, or report."""
        files = self._task_files(messages)
        if files is None:
            return reply("I cannot tell which files to review.", make_call("report", conclusion="no file list given"))
        contents = self._state(tool_texts(messages), [])[0]
        noted = {path: verdict for text in texts(messages, ("assistant",)) for path, verdict in VERDICT.findall(text)}
        notes: list[str] = [line for line in [rate_limit_note(messages)] if line]  # every verdict so far, restated
        findings: list[str] = []  # in each reply (a cut loses no review); rejected calls are issued again
        for path in files:
            if path in noted and path not in contents:  # reviewed earlier; its text is gone, its verdict is not
                notes.append(f"Reviewed {path}: {noted[path]}")
                findings += [f"{path}::{f} ({k})" for f, k in NOTED_BUG.findall(noted[path])]
                continue
            if path not in contents:
                return reply("\n".join(notes), make_call("read_file", path=path))
            bugs, needed = self._judge(path, contents)
            if needed is not None:
                notes.append(self._why(path, needed))
                return reply("\n".join(notes), make_call("read_file", path=needed))
            findings += [f"{path}::{f} ({k})" for f, k in bugs]
            notes.append(f"Reviewed {path}: " + ("bugs in " + ", ".join(f"{f} ({k})" for f, k in bugs) if bugs else "clean"))
        helpers = sorted(p for p in contents if p not in files)
        conclusion = (f"{REPORT_PREFIX}: reviewed {len(files)} files: {', '.join(files)}\n"
                      f"Bugs found: {', '.join(findings) or 'none'}\n"
                      f"Helper modules also read: {', '.join(helpers) or 'none'}")
        return reply("\n".join(notes), make_call("report", conclusion=conclusion))

    def _task_files(self, messages: list[dict]) -> list[str] | None:
        """The files the task names (``Files to review (N): ...``), or None when the task is not visible."""
        task = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
        match = SUBTASK_FILES.search(task)
        return [p.strip() for p in match.group(2).split(",") if p.strip().endswith(".py")] if match else None

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The other reads its files need now: each file not in view and not yet judged, or a helper module."""
        files = self._task_files(messages)
        if not files:
            return []
        contents = self._state(tool_texts(messages), [])[0]
        noted = {path for text in texts(messages, ("assistant",)) for path, _ in VERDICT.findall(text)}
        paths = [p for p in files if not (p in noted and p not in contents)]
        return other_calls((make_call("read_file", path=p) for p in self._reads(paths, contents)), first)

    def early_answer(self, messages: list[dict]) -> dict | None:
        """None: a sub-agent reports its files; it never submits the task's answer."""
        return None

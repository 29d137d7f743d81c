"""``code_review`` generation: the repository, its planted bugs and their decoys (source 000 §7.3).

The repository has ``files`` modules (default 44, as in the seed's experiment): a few
shared helper modules under ``app/common/`` and domain modules under ``app/<domain>/``.
Each module is realistic: a docstring, imports, constants, several functions (some long)
and sometimes a class. ``bugs`` functions carry a planted bug, one kind each, cycling
through: a call to a shared helper with its arguments in the wrong order (only
confirmable by reading the helper's definition in ANOTHER file), off-by-one loop bound,
inverted comparison, mutable default argument, unclosed file, SQL built by string
formatting, division without a zero guard. Every kind has decoys and clean variants that
look like the bug but are correct in their own context (docstring, argument names and
types agree; the rule of each template is in tasks/README.md and tested by running it).
``other_teams`` domains are out of scope (the prompt says so once); each holds one more
planted bug that the answer must not include.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


KINDS = [
    "wrong_arg_order",
    "off_by_one",
    "inverted_comparison",
    "mutable_default",
    "resource_leak",
    "sql_injection",
    "zero_division",
]

# Shared helpers: module -> [(name, params, body lines)]
HELPERS: dict[str, list[tuple[str, list[str], list[str]]]] = {
    "app/common/money.py": [
        (
            "scale_amount",
            ["amount", "rate"],
            [
                '"""Convert ``amount`` with the exchange ``rate`` and round to cents."""',
                "if rate <= 0:",
                '    raise ValueError(f"rate must be positive, got {rate!r}")',
                "return (Decimal(str(amount)) * Decimal(str(rate))).quantize(CENT, rounding=ROUND_HALF_UP)",
            ],
        ),
        (
            "apply_discount",
            ["price", "percent"],
            [
                '"""Reduce ``price`` by ``percent`` (0-100); never below zero."""',
                "if not 0 <= percent <= 100:",
                '    raise ValueError(f"percent out of range: {percent!r}")',
                "reduced = Decimal(str(price)) * (Decimal(100) - Decimal(str(percent))) / Decimal(100)",
                "return max(reduced.quantize(CENT, rounding=ROUND_HALF_UP), Decimal(0))",
            ],
        ),
        (
            "split_total",
            ["total", "parts"],
            [
                '"""Split ``total`` into ``parts`` shares that add up exactly (the last share takes the rest)."""',
                "if parts < 1:",
                '    raise ValueError("parts must be at least 1")',
                "share = (Decimal(str(total)) / parts).quantize(CENT, rounding=ROUND_DOWN)",
                "shares = [share] * (parts - 1)",
                "shares.append(Decimal(str(total)) - share * (parts - 1))",
                "return shares",
            ],
        ),
    ],
    "app/common/dates.py": [
        (
            "days_between",
            ["start", "end"],
            [
                '"""Whole days from ``start`` to ``end`` (negative when ``end`` is earlier)."""',
                "if isinstance(start, datetime):",
                "    start = start.date()",
                "if isinstance(end, datetime):",
                "    end = end.date()",
                "return (end - start).days",
            ],
        ),
        (
            "shift_date",
            ["day", "offset"],
            [
                '"""Move ``day`` by ``offset`` business days, skipping weekends."""',
                "step = 1 if offset >= 0 else -1",
                "remaining = abs(offset)",
                "while remaining:",
                "    day = day + timedelta(days=step)",
                "    if day.weekday() < 5:",
                "        remaining -= 1",
                "return day",
            ],
        ),
        (
            "clamp_window",
            ["low", "value", "high"],
            [
                '"""Clamp ``value`` into the closed window ``low``..``high``."""',
                "if low > high:",
                '    raise ValueError("empty window")',
                "return min(max(value, low), high)",
            ],
        ),
    ],
    "app/common/text.py": [
        (
            "pad_label",
            ["label", "width"],
            [
                '"""Left-justify ``label`` to ``width`` characters, cutting with an ellipsis if longer."""',
                "label = str(label)",
                "if len(label) > width:",
                "    return label[: max(width - 1, 0)] + ELLIPSIS",
                "return label.ljust(width)",
            ],
        ),
        (
            "truncate_text",
            ["text", "limit"],
            [
                '"""Cut ``text`` to at most ``limit`` characters at a word boundary."""',
                "if len(text) <= limit:",
                "    return text",
                'cut = text[: max(limit - 1, 0)].rsplit(" ", 1)[0]  # one character is left for the ellipsis',
                'return cut.rstrip(",.;:") + ELLIPSIS',
            ],
        ),
        (
            "join_fields",
            ["fields", "sep"],
            [
                '"""Join non-empty ``fields`` with ``sep``, escaping separators inside fields."""',
                'cleaned = [str(f).replace(sep, "\\\\" + sep) for f in fields if f not in (None, "")]',
                "return sep.join(cleaned)",
            ],
        ),
    ],
}
COMMON_HEADERS = {
    "app/common/money.py": [
        '"""Money helpers shared by every service: rounding, exchange, discounts.',
        "",
        "All amounts are ``Decimal``; floats are converted through ``str`` to avoid",
        'binary rounding surprises."""',
        "from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal",
        "",
        'CENT = Decimal("0.01")',
    ],
    "app/common/dates.py": [
        '"""Date helpers: business-day arithmetic and windows.',
        "",
        'Naive dates are interpreted in UTC. Keep this module free of I/O."""',
        "from datetime import datetime, timedelta",
        "",
        "WEEKEND = (5, 6)",
    ],
    "app/common/text.py": [
        '"""Text helpers for reports, CSV exports and log lines."""',
        "",
        'ELLIPSIS = "\\u2026"',
        "MAX_LABEL = 48",
    ],
}
DOMAINS = {
    "billing": ["invoice", "charge", "refund"],
    "orders": ["order", "basket", "line"],
    "inventory": ["stock", "bin", "sku"],
    "users": ["user", "profile", "team"],
    "shipping": ["parcel", "route", "carrier"],
    "reports": ["report", "metric", "chart"],
    "auth": ["token", "session", "grant"],
    "notifications": ["alert", "digest", "webhook"],
    "analytics": ["event", "funnel", "cohort"],
    "search": ["query", "index", "facet"],
    "payments": ["payment", "payout", "mandate"],
    "catalog": ["product", "variant", "bundle"],
    "support": ["ticket", "reply", "macro"],
    "pricing": ["quote", "tier", "coupon"],
    "scheduling": ["slot", "booking", "shift"],
    "audit": ["entry", "trail", "snapshot"],
}
MODULES = ["service", "handlers", "repository", "validators", "tasks", "exporters", "models", "api", "cache", "jobs"]
FIELDS = [
    "id",
    "owner_id",
    "status",
    "created_at",
    "updated_at",
    "currency",
    "region",
    "priority",
    "source",
    "external_ref",
    "notes",
    "quantity",
    "label",
    "version",
    "channel",
    "tenant_id",
]
MAX_FILES = len(HELPERS) + len(DOMAINS) * len(MODULES)


@dataclass(frozen=True)
class Bug:
    """One planted bug."""

    file: str
    function: str
    kind: str


@dataclass(frozen=True)
class Repository:
    """A generated repository: its files (by path), the planted bugs in scope, the out-of-scope folders
    (``app/<domain>/``) and the planted bugs in them (which the answer must not include)."""

    files: dict[str, str]
    bugs: list[Bug]
    out_of_scope: tuple[str, ...]
    other_bugs: list[Bug]


def generate_repository(seed: int, files: int, bugs: int, other_teams: int) -> Repository:
    """The repository for ``seed``: ``files`` modules, ``bugs`` planted bugs in scope, ``other_teams`` domains
    out of scope with one planted bug each (knobs already validated by the family)."""
    rng = random.Random(f"code_review:{seed}")
    combos = [f"app/{d}/{m}.py" for d in DOMAINS for m in MODULES]
    domain_paths = sorted(rng.sample(combos, files - len(HELPERS)))
    excluded = _other_teams(rng, domain_paths, other_teams, bugs)
    in_scope = [p for p in domain_paths if not p.startswith(excluded)]
    bug_paths = rng.sample(in_scope, bugs)
    bug_paths += [rng.choice([p for p in domain_paths if p.startswith(prefix)]) for prefix in excluded]
    others = KINDS[1:]
    rng.shuffle(others)
    kinds = [KINDS[0]] + others
    planned = {path: kinds[i % len(kinds)] for i, path in enumerate(bug_paths)}
    texts: dict[str, str] = {}
    for path in HELPERS:
        texts[path] = _helper_module(path)
    planted: list[Bug] = []
    for path in domain_paths:
        text, bug = _domain_module(rng, path, planned.get(path))
        texts[path] = text
        if bug:
            planted.append(Bug(path, bug, planned[path]))
    answer = [b for b in planted if not b.file.startswith(excluded)]
    return Repository(
        dict(sorted(texts.items())), answer, excluded, [b for b in planted if b.file.startswith(excluded)]
    )


def _other_teams(rng: random.Random, domain_paths: list[str], other_teams: int, bugs: int) -> tuple[str, ...]:
    """The folders (``app/<domain>/``) of ``other_teams`` domains, leaving room for the ``bugs`` in-scope bugs."""
    domains = sorted({p.split("/")[1] for p in domain_paths})
    rng.shuffle(domains)
    chosen: list[str] = []
    for domain in domains:
        if len(chosen) == other_teams:
            break
        prefixes = tuple(f"app/{d}/" for d in [*chosen, domain])
        if sum(not p.startswith(prefixes) for p in domain_paths) >= bugs:
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
        return name, [
            f"def {name}(items):",
            f'    """Sum the quantity of every {noun} in ``items``."""',
            "    if not items:",
            "        return 0",
            "    total = 0",
            "    for i in range(len(items) + 1):",
            "        total += items[i].quantity",
            "    return total",
        ]
    if variant == "decoy":
        name = f"{noun}_path_prefixes"
        return name, [
            f"def {name}(parts):",
            f'    """Every prefix of ``parts``, the empty one included (breadcrumbs for the {noun} page)."""',
            "    prefixes = []",
            "    # range(len(parts) + 1) is intended: the full path is a prefix too",
            "    for n in range(len(parts) + 1):",
            "        prefixes.append(tuple(parts[:n]))",
            "    return prefixes",
        ]
    # clean: skipping row 0 is right here, and the docstring, the argument and the types all say why
    # (raw csv.reader rows, header first); an expert reading it in context must agree it is correct
    name = f"total_{noun}_quantity"
    return name, [
        f"def {name}(rows):",
        f'    """Sum the quantity column of ``rows``: the raw rows of a {noun} CSV export as'
        f' ``csv.reader`` returns them (lists of strings), header row first; column 2 is the quantity."""',
        "    total = 0",
        "    for i in range(1, len(rows)):  # rows[0] is the header row, not a record",
        "        total += int(rows[i][2])",
        "    return total",
    ]


def _t_inverted(rng, noun, variant):
    if variant == "bug":
        name = f"is_{noun}_expired"
        return name, [
            f"def {name}({noun}, now):",
            f'    """Return True when the {noun} has expired at ``now``."""',
            f"    if {noun} is None:",
            "        return True",
            f"    return {noun}.expires_at > now",
        ]
    if variant == "decoy":
        name = f"is_{noun}_valid"
        return name, [
            f"def {name}({noun}, now):",
            f'    """Return True while the {noun} is still valid at ``now``."""',
            f"    if {noun} is None:",
            "        return False",
            f"    return {noun}.expires_at > now",
        ]
    name = f"is_{noun}_expired"
    return name, [
        f"def {name}({noun}, now):",
        f'    """Return True when the {noun} has expired at ``now``."""',
        f"    if {noun} is None:",
        "        return True",
        f"    return now >= {noun}.expires_at",
    ]


def _t_mutable(rng, noun, variant):
    name = f"collect_{noun}_tags"
    if variant == "bug":
        return name, [
            f"def {name}({noun}, seen=[]):",
            f'    """Collect the tags of ``{noun}`` into ``seen`` and return it."""',
            f'    for tag in getattr({noun}, "tags", ()):',
            "        if tag not in seen:",
            "            seen.append(tag)",
            "    return seen",
        ]
    if variant == "decoy":
        name = f"format_{noun}_row"
        return name, [
            f'def {name}({noun}, columns=("id", "status", "updated_at")):',
            f'    """The ``columns`` of ``{noun}`` joined with commas, for a debug log line."""',
            f'    return ",".join(str(getattr({noun}, c, "")) for c in columns)',
        ]
    return name, [
        f"def {name}({noun}, seen=None):",
        f'    """Collect the tags of ``{noun}`` into ``seen`` and return it."""',
        "    if seen is None:",
        "        seen = []",
        f'    for tag in getattr({noun}, "tags", ()):',
        "        if tag not in seen:",
        "            seen.append(tag)",
        "    return seen",
    ]


def _t_leak(rng, noun, variant):
    name = f"load_{noun}_fixture"
    head = [f"def {name}(path):", f'    """Read the {noun} fixture at ``path`` and return its records."""']
    if variant == "bug":
        return name, head + [
            '    fh = open(path, encoding="utf-8")',
            "    data = json.load(fh)",
            f'    log.debug("loaded %d {noun} records", len(data.get("records", [])))',
            '    return data.get("records", [])',
        ]
    if variant == "decoy":
        return name, head + [
            '    fh = open(path, encoding="utf-8")',
            "    try:",
            "        data = json.load(fh)",
            "    finally:",
            "        fh.close()",
            '    return data.get("records", [])',
        ]
    return name, head + [
        '    with open(path, encoding="utf-8") as fh:',
        "        data = json.load(fh)",
        '    return data.get("records", [])',
    ]


def _t_sql(rng, noun, variant):
    name = f"find_{noun}s_by_owner"
    head = [
        f"def {name}(conn, owner_id):",
        f'    """Fetch every {noun} owned by ``owner_id``, newest first."""',
        "    cursor = conn.cursor()",
    ]
    if variant == "bug":
        return name, head + [
            '    cursor.execute(f"SELECT * FROM {TABLE} WHERE owner_id = {owner_id} ORDER BY created_at DESC")',
            "    return cursor.fetchall()",
        ]
    if variant == "decoy":
        return name, head + [
            "    # the table name is a module constant, never user input",
            '    cursor.execute(f"SELECT * FROM {TABLE} WHERE owner_id = ? ORDER BY created_at DESC", (owner_id,))',
            "    return cursor.fetchall()",
        ]
    return name, head + [
        '    cursor.execute("SELECT * FROM " + TABLE + " WHERE owner_id = ? ORDER BY created_at DESC", (owner_id,))',
        "    return cursor.fetchall()",
    ]


def _t_div(rng, noun, variant):
    name = f"average_{noun}_value"
    head = [
        f"def {name}(records):",
        f'    """Mean ``value`` of the {noun} ``records`` (0 when there are none)."""',
        "    total = sum(r.value for r in records)",
        "    count = len(records)",
    ]
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
    return name, [
        f"def {name}({', '.join(params)}, dry_run=False):",
        f'    """Apply ``{hname}`` to the {noun} figures and return the result; ``dry_run`` also logs the call."""',
        "    if dry_run:",
        f'        log.info("dry run: {hname} for {noun}")',
        f"    result = {hname}({args})",
        f'    log.debug("{hname} -> %r", result)',
        "    return result",
    ]


BUG_TEMPLATES = {
    "off_by_one": _t_off_by_one,
    "inverted_comparison": _t_inverted,
    "mutable_default": _t_mutable,
    "resource_leak": _t_leak,
    "sql_injection": _t_sql,
    "zero_division": _t_div,
}


def _g_validate(rng, noun, domain):
    name = f"validate_{noun}_payload"
    fields = rng.sample(FIELDS, rng.randint(6, 10))
    lines = [
        f"def {name}(payload):",
        f'    """Validate an incoming {noun} payload and return a list of problems.',
        "",
        "    The API layer rejects the request when the list is not empty; messages are shown",
        '    to the caller verbatim, so keep them short and specific."""',
        "    problems = []",
        "    if not isinstance(payload, dict):",
        '        return ["payload must be an object"]',
    ]
    for f in fields:
        lines += [f'    if "{f}" not in payload:', f'        problems.append("missing field: {f}")']
        if f in ("quantity", "version", "priority"):
            lines += [
                f'    elif not isinstance(payload["{f}"], int) or payload["{f}"] < 0:',
                f'        problems.append("{f} must be a non-negative integer")',
            ]
        elif f in ("status",):
            lines += [
                '    elif payload["status"] not in STATUSES:',
                "        problems.append(f\"unknown status {payload['status']!r}\")",
            ]
    lines += [
        "    if len(problems) > MAX_PROBLEMS:",
        '        problems = problems[:MAX_PROBLEMS] + ["...more problems omitted"]',
        "    return problems",
    ]
    return name, lines


def _g_serialize(rng, noun, domain):
    name = f"serialize_{noun}"
    fields = rng.sample(FIELDS, rng.randint(5, 9))
    lines = [
        f"def {name}({noun}, include_private=False):",
        f'    """Turn a {noun} into the JSON-safe dict the {domain} API returns."""',
        "    data = {",
    ]
    lines += [f'        "{f}": getattr({noun}, "{f}", None),' for f in fields]
    lines += [
        "    }",
        "    for key, value in list(data.items()):",
        "        if isinstance(value, datetime):",
        "            data[key] = value.isoformat()",
        "    if not include_private:",
        '        data.pop("notes", None)',
        "    return data",
    ]
    return name, lines


def _g_summary(rng, noun, domain):
    name = f"summarize_{noun}_batch"
    return name, [
        f"def {name}(batch):",
        f'    """Count the {noun}s of ``batch`` per status, for the nightly {domain} digest."""',
        "    counts = {status: 0 for status in STATUSES}",
        "    skipped = 0",
        "    for item in batch:",
        '        status = getattr(item, "status", None)',
        "        if status not in counts:",
        "            skipped += 1",
        "            continue",
        "        counts[status] += 1",
        "    if skipped:",
        f'        log.warning("%d {noun}s with an unknown status were skipped", skipped)',
        "    return counts",
    ]


def _g_retry(rng, noun, domain):
    name = f"sync_{noun}_with_retry"
    return name, [
        f"def {name}(client, {noun}_id, attempts=3):",
        f'    """Push one {noun} to the upstream system, retrying transient failures."""',
        "    delay = RETRY_DELAY",
        "    last_error = None",
        "    for attempt in range(1, attempts + 1):",
        "        try:",
        f'            return client.push("{domain}", {noun}_id)',
        "        except TimeoutError as exc:",
        "            last_error = exc",
        f'            log.warning("sync of {noun} %s failed (attempt %d/%d)", {noun}_id, attempt, attempts)',
        "            time.sleep(delay)",
        "            delay *= 2",
        f'    raise RuntimeError(f"could not sync {noun} {{{noun}_id}}") from last_error',
    ]


def _g_parse(rng, noun, domain):
    name = f"parse_{noun}_csv"
    return name, [
        f"def {name}(text):",
        f'    """Parse the {noun} CSV export (header row first) into dicts."""',
        "    lines = [line for line in text.splitlines() if line.strip()]",
        "    if not lines:",
        "        return []",
        '    header = [h.strip() for h in lines[0].split(",")]',
        "    rows = []",
        "    for line in lines[1:]:",
        '        values = [v.strip() for v in line.split(",")]',
        "        if len(values) != len(header):",
        f'            log.debug("skipping malformed {noun} row: %s", line)',
        "            continue",
        "        rows.append(dict(zip(header, values)))",
        "    return rows",
    ]


def _g_class(rng, noun, domain):
    cls = noun.capitalize() + "Record"
    fields = rng.sample(FIELDS, 4)
    lines = [
        f"class {cls}:",
        f'    """In-memory view of one {noun} row."""',
        "",
        f"    def __init__(self, {', '.join(fields)}):",
    ]
    lines += [f"        self.{f} = {f}" for f in fields]
    lines += [
        "",
        "    def __repr__(self):",
        f'        return f"{cls}({fields[0]}={{self.{fields[0]}!r}})"',
        "",
        "    def to_dict(self):",
        "        return {" + ", ".join(f'"{f}": self.{f}' for f in fields) + "}",
    ]
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
    ownership = [
        "See docs/" + domain + ".md for the data model.",
        "Keep functions pure where possible; I/O goes through the repository layer.",
        "Everything here is called from the HTTP handlers and the nightly jobs.",
    ]
    lines = [
        f'"""{domain.capitalize()} {module}: {noun} {rng.choice(["operations", "helpers", "workflows", "plumbing"])}.',
        "",
        f"Owned by the {domain} team. {rng.choice(ownership)}",
        '"""',
        "import json",
        "import logging",
        "import time",
        "from datetime import datetime",
        "",
    ]
    for hm in helper_modules:
        lines.append(f"from {hm[:-3].replace('/', '.')} import {', '.join(sorted(set(used[hm])))}")
    lines += [
        "",
        "log = logging.getLogger(__name__)",
        "",
        f'TABLE = "{table}"',
        'STATUSES = ("draft", "active", "suspended", "closed")',
        f"MAX_PROBLEMS = {rng.randint(5, 20)}",
        f"RETRY_DELAY = {rng.choice([0.5, 1.0, 2.0])}",
        (
            f"# TODO({rng.choice(['ops', 'sre', 'data'])}): move {rng.choice(['RETRY_DELAY', 'MAX_PROBLEMS'])} "
            "to settings once the config service lands"
        ),
        "",
    ]
    for _, block in blocks:
        lines += [""] + block + [""]
    return "\n".join(lines).rstrip() + "\n", bug_function

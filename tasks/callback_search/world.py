"""``callback_search`` generation: the codebase, the target, its call sites and the distractors (source 002 §2.7.6).

A generated Python codebase of ``files`` files (packages ``src/payment``, ``src/orders``,
``src/notify``, ``src/users``, ``src/inventory``, ``src/shipping``, ``src/api``,
``src/common``, ``src/reporting``, plus ``tests/`` and ``docs/``). The target is the one function
that handles the payment gateway's callback. Distractors (each unambiguously not the answer under
the prompt's rules, tested in tests/test_callback_search.py): a ``handle_callback`` in
``src/notify`` (SMS delivery callbacks) with a caller of its own, a deprecated payment callback
handler that nothing calls, other services' ``*callback*`` functions, the endpoints that pass the
event on (call sites, not the handler), comments and log strings that mention the target without
calling it, and tests and docs that call or name it. One call site calls the alias under which the
facade module ``FACADE`` re-exports the target, one calls it as a module attribute. ``extra_call_sites``
(0 by default) plants that many more call sites, one in each of as many generated modules, in the same three
styles (the size knob of the verify phase: each is one more file to read).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

PACKAGES = {
    "payment": [
        "gateway",
        "refunds",
        "ledger",
        "fees",
        "currency",
        "tokens",
        "settlement",
        "fraud",
        "payouts",
        "invoices",
    ],
    "orders": ["cart", "checkout", "pricing", "reconcile", "returns", "history", "discounts", "state"],
    "notify": ["handlers", "sms", "email", "push", "templates", "preferences"],
    "users": ["accounts", "sessions", "profiles", "permissions", "addresses"],
    "inventory": ["stock", "warehouses", "reservations", "suppliers", "audit"],
    "shipping": ["carriers", "labels", "tracking", "zones", "rates"],
    "api": ["routes", "webhooks", "middleware", "serializers", "health"],
    "common": ["hooks", "retry", "config", "clock", "money", "db"],
    "reporting": ["daily", "exports", "metrics", "dashboards"],
}
VERBS = [
    "load",
    "save",
    "validate",
    "compute",
    "build",
    "sync",
    "apply",
    "format",
    "parse",
    "fetch",
    "update",
    "resolve",
    "normalize",
    "schedule",
    "cancel",
    "merge",
    "archive",
    "refresh",
    "estimate",
    "check",
]
NOUNS = {
    "payment": ["charge", "refund", "ledger_entry", "fee", "payout", "token", "settlement", "risk_score"],
    "orders": ["order", "cart", "line_items", "discount", "return_request", "order_state"],
    "notify": ["message", "template", "recipient", "delivery_report", "preferences"],
    "users": ["user", "session", "profile", "role", "address"],
    "inventory": ["stock_level", "reservation", "supplier", "warehouse", "sku"],
    "shipping": ["shipment", "label", "tracking_event", "zone", "rate"],
    "api": ["request", "response", "route", "payload", "signature"],
    "common": ["config", "retry_policy", "timestamp", "amount", "connection"],
    "reporting": ["report", "metric", "dashboard", "export_row"],
}
BODY = [
    '    if {a} is None:\n        raise ValueError("{f}: {a} is required")',
    '    logger.debug("{f} %s", {a})',
    (
        "    result = {{}}\n"
        '    for key, value in sorted(getattr({a}, "items", dict)().items()):\n'
        "        result[key] = value"
    ),
    ('    with db.transaction() as tx:\n        tx.execute("SELECT id, status FROM {p}_{n} WHERE id = %s", ({a}.id,))'),
    '    deadline = clock.now() + timedelta(seconds=config.get("{p}.timeout", 30))',
    (
        '    total = Decimal("0")\n'
        '    for line in getattr({a}, "lines", []):\n'
        "        total += money.round(line.amount * line.quantity)"
    ),
    "    if not retry.should_retry({a}, attempts=3):\n        return None",
    '    metrics.increment("{p}.{f}.calls")',
    (
        "    # TODO(ops): remove the fallback once the migration of {p} is done\n"
        '    fallback = config.get("{p}.fallback", False)'
    ),
    '    payload = {{"id": getattr({a}, "id", None), "kind": "{n}", "source": "{p}"}}',
]
CALLBACK_DISTRACTORS = [
    ("common", "hooks", "register_callback", "Register a callback to run after a hook fires (generic plumbing)."),
    (
        "shipping",
        "carriers",
        "on_carrier_callback",
        "Handle a carrier's tracking callback (label printed, parcel scanned).",
    ),
    ("users", "sessions", "oauth_callback", "Finish the OAuth login flow when the identity provider redirects back."),
    ("inventory", "suppliers", "supplier_callback_url", "Build the callback URL that suppliers post stock updates to."),
    ("reporting", "exports", "export_done_callback", "Called by the export worker when a report file is ready."),
]
TARGET_NAMES = ["handle_payment_callback", "process_gateway_callback", "on_payment_callback"]
ALIASES = ["apply_gateway_event", "dispatch_payment_event", "on_gateway_event"]  # the facade's name for the target
FACADE = "src/payment/events.py"  # re-exports the target under an alias (``payment.events``)
TARGET_FILES = ["callbacks", "gateway_events", "webhook_handlers"]
CALLER_SPECS = [
    ("api", "webhooks", "payment_gateway_webhook", "request"),
    ("payment", "retry", "replay_failed_callbacks", "events"),
    ("orders", "reconcile", "reconcile_pending_payments", "batch"),
    ("payment", "settlement", "settle_from_gateway_event", "event"),
    ("api", "routes", "debug_replay_callback", "request"),
]
# extra call sites (``extra_call_sites``): VERB_NOUN_SUFFIX in a generated module (never "callback" in the name,
# so the definitions grep does not list them as candidates)
EXTRA_SUFFIXES = ["from_gateway", "on_payment_event", "after_gateway_event", "for_settled_payment"]
EXTRA_ARGS = ["event", "events", "batch", "payload", "request"]
POOL_SUFFIXES = ("", "_v2", "_utils", "_service", "_models", "_tasks")  # generated module names: PACKAGES x these


def extra_room(files: int) -> int:
    """The most ``extra_call_sites`` a codebase of ``files`` files always has room for: the generated modules
    (at most the pool's size, beside the three planted modules outside it) less the at most 14 planted ones and
    the one with the mention."""
    n_src = files - 3 - max(2, files // 12)
    pool = len(POOL_SUFFIXES) * sum(len(ms) for ms in PACKAGES.values())
    return max(0, min(n_src, pool + 3) - 15)


@dataclass(frozen=True)
class Codebase:
    """A generated codebase: every file (by path), the target handler and its call sites (the answer)."""

    files: dict[str, str]
    target_path: str
    target_name: str
    sites: list[dict]


def generate_codebase(seed: int, files: int, functions_per_file: int, extra_call_sites: int = 0) -> Codebase:
    """The codebase for ``seed``: source modules with the target, its decoys and its call sites, tests, docs
    (knobs already validated by the family; ``extra_call_sites`` at most ``extra_room(files)``)."""
    rng = random.Random(f"callback_search:{seed}")
    target_name = rng.choice(TARGET_NAMES)
    target_path = f"src/payment/{rng.choice(TARGET_FILES)}.py"
    legacy_name, legacy_path = target_name + "_v1", "src/payment/legacy_gateway.py"
    n_docs, n_tests = 3, max(2, files // 12)
    paths, planted, callers = _module_paths(rng, target_path, legacy_path, files - n_docs - n_tests)
    modules = {path: _module_functions(rng, path, functions_per_file) for path in paths}
    _plant_callbacks(rng, modules, target_name, target_path, legacy_name, legacy_path)
    module = target_path[4:-3].replace("/", ".")
    alias = rng.choice(ALIASES)
    imports, sites = _plant_call_sites(rng, modules, callers, module, target_name, alias)
    _plant_mention(rng, modules, [p for p in paths if p not in planted], target_name)
    if extra_call_sites:  # drawn after everything else, so that 0 leaves the default instances as they were
        free = [p for p in paths if p not in planted and not any("def audit_gateway_events(" in f for f in modules[p])]
        for index, path in enumerate(sorted(rng.sample(free, extra_call_sites))):
            sites.append(_plant_extra_call_site(rng, modules, imports, path, index, module, target_name, alias))
    texts = {path: _render_module(path, modules[path], imports.get(path, [])) for path in paths}
    texts.update(_test_files(rng, n_tests, module, target_name, legacy_name))
    texts.update(_doc_files(target_name, target_path, legacy_name, legacy_path))
    return Codebase(
        dict(sorted(texts.items())),
        target_path,
        target_name,
        sorted(sites, key=lambda s: (s["file"], s["function"])),
    )


def _module_paths(
    rng: random.Random, target_path: str, legacy_path: str, n_src: int
) -> tuple[list[str], list[str], list[tuple]]:
    """Source module paths (the planted ones first, then generated names), the planted ones, and the callers."""
    planted = [target_path, legacy_path, FACADE, "src/notify/handlers.py", "src/notify/sms.py"]
    planted += [f"src/{p}/{m}.py" for p, m, *_ in CALLBACK_DISTRACTORS]
    callers = rng.sample(CALLER_SPECS, rng.randint(2, 4))
    planted += [f"src/{p}/{m}.py" for p, m, *_ in callers]
    paths: list[str] = list(dict.fromkeys(planted))
    pool = [f"src/{p}/{m}{suffix}.py" for suffix in POOL_SUFFIXES for p, ms in PACKAGES.items() for m in ms]
    rng.shuffle(pool)
    for path in pool:
        if len(paths) >= n_src:
            break
        if path not in paths:
            paths.append(path)
    return paths, planted, callers


def _module_functions(rng: random.Random, path: str, count: int) -> list[str]:
    """The ``count`` ordinary generated functions of one module."""
    package = path.split("/")[1]
    return [_function(rng, package, f"{rng.choice(VERBS)}_{rng.choice(NOUNS[package])}") for _ in range(count)]


def _insert(rng: random.Random, modules: dict[str, list[str]], path: str, text: str) -> None:
    """Insert a function at a random place of a module."""
    funcs = modules[path]
    funcs.insert(rng.randrange(len(funcs) + 1), text)


def _plant_callbacks(
    rng: random.Random,
    modules: dict[str, list[str]],
    target_name: str,
    target_path: str,
    legacy_name: str,
    legacy_path: str,
) -> None:
    """The target callback, its deprecated twin, the notify callback and the named distractors."""
    _insert(rng, modules, target_path, _target_function(target_name))
    _insert(rng, modules, legacy_path, _legacy_function(legacy_name, target_name, target_path))
    _insert(rng, modules, "src/notify/handlers.py", _notify_handler())
    _insert(rng, modules, "src/notify/sms.py", _notify_caller())
    for p, m, name, doc in CALLBACK_DISTRACTORS:
        _insert(
            rng,
            modules,
            f"src/{p}/{m}.py",
            f'def {name}(*args, **kwargs):\n    """{doc}"""\n    '
            f'hooks.fire("{name}", *args, **kwargs)\n    return True\n',
        )


def _plant_call_sites(
    rng: random.Random, modules: dict[str, list[str]], callers: list[tuple], module: str, target_name: str, alias: str
) -> tuple[dict[str, list[str]], list[dict]]:
    """The call sites (the answer): plain, aliased and module-qualified calls; their imports and sites.

    The first caller calls an alias that the facade module ``FACADE`` re-exports (``from <target module>
    import <target> as <alias>``): its own file never names the target, so only the use grep's hit in
    the facade (or a note of it) says that the alias is the target; a grep for the alias finds the caller.
    """
    imports: dict[str, list[str]] = {FACADE: [f"from {module} import {target_name} as {alias}"]}
    sites = []
    for index, (p, m, func, arg) in enumerate(callers):
        path = f"src/{p}/{m}.py"
        style = "alias" if index == 0 else "attribute" if index % 2 else "direct"
        call = _import_call(imports, path, style, module, target_name, alias, arg)
        _insert(rng, modules, path, _caller_function(func, arg, call))
        sites.append({"file": path, "function": func})
    return imports, sites


def _plant_extra_call_site(
    rng: random.Random,
    modules: dict[str, list[str]],
    imports: dict[str, list[str]],
    path: str,
    index: int,
    module: str,
    target_name: str,
    alias: str,
) -> dict:
    """One more call site (``extra_call_sites``) in the generated module ``path``: through the facade's alias,
    as a module attribute or directly (by turns, ``index``); its import and the site."""
    service = path.split("/")[1]
    func = f"{rng.choice(VERBS)}_{rng.choice(NOUNS[service])}_{rng.choice(EXTRA_SUFFIXES)}"
    arg = rng.choice(EXTRA_ARGS)
    style = ("alias", "attribute", "direct")[index % 3]
    call = _import_call(imports, path, style, module, target_name, alias, arg)
    _insert(rng, modules, path, _caller_function(func, arg, call))
    return {"file": path, "function": func}


def _import_call(
    imports: dict[str, list[str]], path: str, style: str, module: str, target_name: str, alias: str, arg: str
) -> str:
    """The call of the target from ``path`` in one of the three styles of a call site (through the facade's alias,
    as a module attribute, directly), with the import it needs added to ``imports``."""
    package, leaf = module.rsplit(".", 1)
    facade = FACADE[4:-3].replace("/", ".")
    line, call = {
        "alias": (f"from {facade} import {alias}", f"{alias}({arg})"),
        "attribute": (f"from {package} import {leaf}", f"{leaf}.{target_name}({arg})"),
        "direct": (f"from {module} import {target_name}", f"{target_name}({arg})"),
    }[style]
    imports.setdefault(path, []).append(line)
    return call


def _plant_mention(rng: random.Random, modules: dict[str, list[str]], others: list[str], target_name: str) -> None:
    """Mentions of the target that are not calls (a comment, a log string) in some other source file."""
    _insert(
        rng,
        modules,
        rng.choice(others),
        (
            f'def audit_gateway_events(events):\n    """Count gateway events; the webhook calls '
            f'{target_name} for them, not this."""\n    # NOTE: never call {target_name}() from '
            f'here: it is not idempotent\n    logger.info("audit: %d events (see {target_name})", '
            "len(events))\n    return len(events)\n"
        ),
    )


def _render_module(path: str, functions: list[str], imports: list[str]) -> str:
    """One source module: its header, its imports, its functions."""
    package = path.split("/")[1]
    header = [
        f'"""{package}.{path.rsplit("/", 1)[1][:-3]}: generated module of the Shoply backend."""',
        "from __future__ import annotations",
        "",
        "import logging",
        "from datetime import timedelta",
        "from decimal import Decimal",
        "",
        "from common import clock, config, db, hooks, metrics, money, retry",
    ]
    header += imports
    header += ["", "logger = logging.getLogger(__name__)", "", ""]
    return "\n".join(header) + "\n\n".join(functions)


def _test_files(rng: random.Random, n_tests: int, module: str, target_name: str, legacy_name: str) -> dict[str, str]:
    """The test files: the payment callback tests (which call the target but are not call sites), then filler."""
    files = {}
    for i in range(n_tests):
        name = (
            "tests/payment/test_callbacks.py"
            if i == 0
            else f"tests/{rng.choice(list(PACKAGES))}/test_{rng.choice(VERBS)}_{i}.py"
        )
        body = [f"from {module} import {target_name}", f"from payment.legacy_gateway import {legacy_name}", "", ""]
        if i == 0:
            body += [
                f"def test_{target_name}_marks_order_paid(fake_gateway):",
                f"    assert {target_name}(fake_gateway.event('paid'))['status'] == 'paid'",
                "",
                "",
                f"def test_{legacy_name}_still_parses_old_payloads(fake_gateway):",
                f"    assert {legacy_name}(fake_gateway.legacy_event())",
                "",
            ]
        else:
            body = [
                f"def test_{rng.choice(VERBS)}_{j}():\n    assert {rng.randint(1, 9)} + {j} > 0\n" for j in range(6)
            ]
        files[name] = "\n".join(body)
    return files


def _doc_files(target_name: str, target_path: str, legacy_name: str, legacy_path: str) -> dict[str, str]:
    """The three docs: one names the target (and its deprecated twin), two are background."""
    return {
        "docs/payment.md": (
            f"# Payments\n\nThe gateway posts to `/webhooks/payment`; `{target_name}` in `{target_path}` handles the "
            f"callback. The old `{legacy_name}` in `{legacy_path}` is deprecated.\n\nSee also the notify callbacks "
            "(`handle_callback`) for SMS delivery reports.\n"
        ),
        "docs/architecture.md": "# Architecture\n\n"
        + "\n".join(f"- `src/{p}/`: {', '.join(ms)}" for p, ms in PACKAGES.items())
        + "\n\nCallbacks are registered with `register_callback`.\n",
        "docs/runbook.md": (
            "# Runbook\n\nIf payment callbacks fail, check the gateway signature secret and "
            "replay with the retry job.\n"
        ),
    }


def _function(rng: random.Random, package: str, name: str) -> str:
    arg = rng.choice(["item", "obj", "record", "ctx", "entity"])
    lines = [
        f"def {name}({arg}, *, strict: bool = False):",
        f'    """{name.replace("_", " ").capitalize()} for the {package} service.',
        "",
        f"    Called from the {package} workers; see docs/architecture.md.",
        '    """',
    ]
    for template in rng.sample(BODY, rng.randint(3, 6)):
        lines.append(template.format(a=arg, f=name, p=package, n=name.split("_", 1)[1]))
    lines.append(
        f"    return {rng.choice([arg, 'None', 'True', 'payload if strict else None'])}"
        if "payload" in lines[-1]
        else f"    return {rng.choice([arg, 'None', 'True'])}"
    )
    return "\n".join(lines) + "\n"


def _target_function(name: str) -> str:
    return (
        f"def {name}(event, *, replay: bool = False):\n"
        '    """Handle the payment gateway\'s asynchronous callback (payment completed, failed or refunded).\n\n'
        "    Verifies the gateway signature, updates the order and the ledger, and acknowledges the event.\n"
        '    """\n'
        "    if not tokens.verify_signature(event):\n"
        '        raise PermissionError("bad gateway signature")\n'
        '    order = db.orders.get(event["order_id"])\n'
        '    status = {"succeeded": "paid", "failed": "payment_failed", "refunded": "refunded"}[event["type"]]\n'
        '    ledger.post(order, event["amount"], status)\n'
        '    metrics.increment("payment.callback", tags={"replay": replay})\n'
        '    return {"order": order.id, "status": status}\n'
    )


def _legacy_function(name: str, target: str, target_path: str) -> str:
    return (
        f"def {name}(payload):\n"
        f'    """DEPRECATED since 3.2: the old payment gateway callback handler (XML payloads).\n\n'
        f"    Replaced by {target} in {target_path}. Nothing calls this any more; kept for the migration tests.\n"
        '    """\n'
        "    event = xml_to_event(payload)\n"
        '    logger.warning("legacy callback used")\n'
        "    return event\n"
    )


def _notify_handler() -> str:
    return (
        "def handle_callback(report):\n"
        '    """Handle the SMS provider\'s delivery callback (delivered, failed, expired)."""\n'
        '    status = report.get("status", "unknown")\n'
        '    metrics.increment(f"notify.sms.{status}")\n'
        "    return status\n"
    )


def _notify_caller() -> str:
    return (
        "def receive_delivery_report(request):\n"
        '    """Endpoint the SMS provider posts delivery reports to."""\n'
        "    from notify.handlers import handle_callback\n"
        "    return handle_callback(request.json())\n"
    )


def _caller_function(name: str, arg: str, call: str) -> str:
    return (
        f"def {name}({arg}):\n"
        f'    """{name.replace("_", " ").capitalize()}: passes the event on to the payment callback handler."""\n'
        f'    logger.info("{name} start")\n'
        f"    result = {call}\n"
        '    metrics.increment("callbacks.dispatched")\n'
        "    return result\n"
    )

"""``callback_search``: find the payment-callback handler and its call sites (seed 002 §2.7.6).

A generated Python codebase of ``files`` files (packages ``src/payment``, ``src/orders``,
``src/notify``, ``src/users``, ``src/inventory``, ``src/shipping``, ``src/api``,
``src/common``, ``src/reporting``, plus ``tests/`` and ``docs/``). Tools: ``list_files()``,
``read_file(path)`` (numbered lines) and ``grep(pattern)`` (a Python regex; a bad regex is a
tool error; output capped at ``grep_cap`` lines with a note).

The target is the one function that handles the payment gateway's callback. Distractors: a
``handle_callback`` in ``src/notify`` (SMS delivery callbacks) with callers of its own, a
deprecated payment callback handler that nothing calls, other ``*callback*`` functions,
comments and log strings that mention the target without calling it, and tests and docs that
call or mention it. One call site may call it through an import alias.

Answer: ``submit(file, function, call_sites=[{"file", "function"}, ...])``: the call sites are
the functions under ``src/`` that call the target (tests and docs do not count).
Grade: success = the right file and function and the exact call-site set; score = 0.4 for the
target plus 0.6 x F1 of the call sites (call sites count only with the right target).

Reference policy, in two separate phases (the scenario for an isolating sub-agent):

* search: ``list_files``, then ``grep(r"def \\w*callback\\w*\\(")``; read every candidate file
  under ``src/``; a candidate whose docstring speaks of the payment gateway and is not
  deprecated is the target (note ``TARGET: path:function``);
* verify: ``grep(r"\\bNAME\\b")``; read every ``src/`` file in the hits (except the target's
  own definition line); a call site is a non-comment, non-docstring line that calls the name
  (or its import alias), attributed to the enclosing ``def`` (note ``Verified path: ...``);
* submit.

It notes each result and restates its working set in every reply (search: ``Candidates:``
and ``Candidates checked:``; verify: ``TARGET:``, ``To verify:``, ``Verified so far:``,
``Call sites so far:``), so the newest reply carries it across a cut. It re-reads a file
whose call is visible but whose content and note are gone, and re-runs a grep whose output
and restated result are gone. ``list_files`` is only its first move (nothing of the search
visible yet): nothing reads the listing, so a lost listing is not fetched again. Summaries
keep the target and the confirmed call sites but not the list of files already checked
(they are checked again).
"""
from __future__ import annotations

import random
import re
from typing import Iterable

from harness.conversation import parse_arguments
from tasks.base import Grade, TaskFamily, TaskInstance, ToolResult, tool_schema
from tasks.kit.limits import limit_sentence
from tasks.policy_kit import (REPORT_PREFIX, deferred_args, exchanges, format_summary, is_rate_limited, latest_results,
                              make_call, rate_limited_notes, real_failures, reply, submit, tools_used)
from tasks.kit.repo import grep_lines

PACKAGES = {
    "payment": ["gateway", "refunds", "ledger", "fees", "currency", "tokens", "settlement", "fraud", "payouts", "invoices"],
    "orders": ["cart", "checkout", "pricing", "reconcile", "returns", "history", "discounts", "state"],
    "notify": ["handlers", "sms", "email", "push", "templates", "preferences"],
    "users": ["accounts", "sessions", "profiles", "permissions", "addresses"],
    "inventory": ["stock", "warehouses", "reservations", "suppliers", "audit"],
    "shipping": ["carriers", "labels", "tracking", "zones", "rates"],
    "api": ["routes", "webhooks", "middleware", "serializers", "health"],
    "common": ["hooks", "retry", "config", "clock", "money", "db"],
    "reporting": ["daily", "exports", "metrics", "dashboards"],
}
VERBS = ["load", "save", "validate", "compute", "build", "sync", "apply", "format", "parse", "fetch", "update",
         "resolve", "normalize", "schedule", "cancel", "merge", "archive", "refresh", "estimate", "check"]
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
    "    if {a} is None:\n        raise ValueError(\"{f}: {a} is required\")",
    "    logger.debug(\"{f} %s\", {a})",
    "    result = {{}}\n    for key, value in sorted(getattr({a}, \"items\", dict)().items()):\n        result[key] = value",
    "    with db.transaction() as tx:\n        tx.execute(\"SELECT id, status FROM {p}_{n} WHERE id = %s\", ({a}.id,))",
    "    deadline = clock.now() + timedelta(seconds=config.get(\"{p}.timeout\", 30))",
    "    total = Decimal(\"0\")\n    for line in getattr({a}, \"lines\", []):\n        total += money.round(line.amount * line.quantity)",
    "    if not retry.should_retry({a}, attempts=3):\n        return None",
    "    metrics.increment(\"{p}.{f}.calls\")",
    "    # TODO(ops): remove the fallback once the migration of {p} is done\n    fallback = config.get(\"{p}.fallback\", False)",
    "    payload = {{\"id\": getattr({a}, \"id\", None), \"kind\": \"{n}\", \"source\": \"{p}\"}}",
]
CALLBACK_DISTRACTORS = [
    ("common", "hooks", "register_callback", "Register a callback to run after a hook fires (generic plumbing)."),
    ("shipping", "carriers", "on_carrier_callback", "Handle a carrier's tracking callback (label printed, parcel scanned)."),
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

DEF = re.compile(r"^\s*def (\w+)\(", re.M)
NUMBERED = re.compile(r"^\s*(\d+)  (.*)$")
FILE_HEADER = re.compile(r"^=== (\S+) \((\d+) lines\) ===")
GREP_LINE = re.compile(r"^(\S+?):(\d+): (.*)$", re.M)
GREP_HEADER = re.compile(r"^grep (.+?) · (\d+) matches", re.M)
TARGET_NOTE = re.compile(r"TARGET: (src/\S+\.py):(\w+)")
ALIAS_NOTE = re.compile(r"Alias: (src/\S+\.py) re-exports (\w+) as (\w+)")  # noted once, after the use grep
FOUND_NOTE = re.compile(r"Handler found: (src/\S+\.py):(\w+)")  # search phase: judged, more candidates to check
CANDIDATES_NOTE = re.compile(r"Candidates: ([^\n]*)")
CHECKED_NOTE = re.compile(r"Checked (src/\S+\.py)")
VERIFY_NOTE = re.compile(r"Verified (src/\S+\.py): ([^\n]*)")
TO_VERIFY_NOTE = re.compile(r"To verify: ([^\n]*)")
CHECKED_LIST = re.compile(r"Candidates checked: ([^\n]*)")  # restated every reply of the search phase
VERIFIED_LIST = re.compile(r"Verified so far: ([^\n]*)")  # restated every reply of the verify phase
SITES = re.compile(r"Call sites so far: ([^\n]*)")
SITE = re.compile(r"(src/\S+\.py):(\w+)")
DEF_GREP = r"def \w*callback\w*\("
SCOPE_RULE = re.compile(r"application code under src/")  # the task's scope rule (prompt and sub-task both say it)
# delegation (strategy ``isolate``): one sub-agent does the whole search; its report is parsed
REPORT_TARGET = re.compile(r"^Sub-agent report: the payment-callback handler is (src/\S+\.py):(\w+)", re.M)
REPORT_SITES = re.compile(r"^Call sites \(\d+\): ([^\n]*)", re.M)
SUBTASK = (
    "Find the function in this Python codebase (the Shoply backend; tools list_files, read_file, grep) that handles "
    "the payment gateway's callbacks: the handler that runs when the gateway reports a payment as completed, failed "
    "or refunded. Other callbacks (SMS delivery, carriers, OAuth, hooks) and deprecated handlers do not count. Then "
    "find every call site of it in the application code under src/: a call site is the function whose body calls it, "
    "possibly through an import alias or a module attribute; tests, docs, comments and log strings do not count. "
    "Confirm both by reading the code. Report the handler as file:function and every call site as file:function."
)


class CallbackSearch(TaskFamily):
    """Family generator. Knobs: ``files`` (files in the codebase), ``functions_per_file``
    (generated functions per module), ``grep_cap`` (lines a grep shows) and ``max_calls_per_turn``
    (the code host's documented limit on concurrent tool calls per turn)."""

    name = "callback_search"

    def __init__(self, files: int = 120, functions_per_file: int = 26, grep_cap: int = 60,
                 max_calls_per_turn: int = 2) -> None:
        self.files = self.check_knob("files", files, 20, 2000)
        self.functions_per_file = self.check_knob("functions_per_file", functions_per_file, 2, 100)
        self.grep_cap = self.check_knob("grep_cap", grep_cap, 5, 1000)
        self.max_calls_per_turn = self.check_knob("max_calls_per_turn", max_calls_per_turn, 1, 64)

    def generate(self, seed: int) -> "CallbackSearchInstance":
        """The codebase for ``seed``: source modules with the target, its decoys and its call sites, tests, docs."""
        rng = random.Random(f"callback_search:{seed}")
        target_name = rng.choice(TARGET_NAMES)
        target_path = f"src/payment/{rng.choice(TARGET_FILES)}.py"
        legacy_name, legacy_path = target_name + "_v1", "src/payment/legacy_gateway.py"
        n_docs, n_tests = 3, max(2, self.files // 12)
        paths, planted, callers = self._module_paths(rng, target_path, legacy_path, self.files - n_docs - n_tests)
        modules = {path: self._module_functions(rng, path) for path in paths}
        _plant_callbacks(rng, modules, target_name, target_path, legacy_name, legacy_path)
        module = target_path[4:-3].replace("/", ".")
        imports, sites = _plant_call_sites(rng, modules, callers, module, target_name, rng.choice(ALIASES))
        _plant_mention(rng, modules, [p for p in paths if p not in planted], target_name)
        files = {path: _render_module(path, modules[path], imports.get(path, [])) for path in paths}
        files.update(_test_files(rng, n_tests, module, target_name, legacy_name))
        files.update(_doc_files(target_name, target_path, legacy_name, legacy_path))
        return CallbackSearchInstance(self, seed, dict(sorted(files.items())), target_path, target_name,
                                      sorted(sites, key=lambda s: (s["file"], s["function"])))

    @staticmethod
    def _module_paths(rng: random.Random, target_path: str, legacy_path: str,
                      n_src: int) -> tuple[list[str], list[str], list[tuple]]:
        """Source module paths (the planted ones first, then generated names), the planted ones, and the callers."""
        planted = [target_path, legacy_path, FACADE, "src/notify/handlers.py", "src/notify/sms.py"]
        planted += [f"src/{p}/{m}.py" for p, m, *_ in CALLBACK_DISTRACTORS]
        callers = rng.sample(CALLER_SPECS, rng.randint(2, 4))
        planted += [f"src/{p}/{m}.py" for p, m, *_ in callers]
        paths: list[str] = list(dict.fromkeys(planted))
        pool = [f"src/{p}/{m}{suffix}.py" for suffix in ("", "_v2", "_utils", "_service", "_models", "_tasks")
                for p, ms in PACKAGES.items() for m in ms]
        rng.shuffle(pool)
        for path in pool:
            if len(paths) >= n_src:
                break
            if path not in paths:
                paths.append(path)
        return paths, planted, callers

    def _module_functions(self, rng: random.Random, path: str) -> list[str]:
        """The ordinary generated functions of one module."""
        package = path.split("/")[1]
        return [_function(rng, package, f"{rng.choice(VERBS)}_{rng.choice(NOUNS[package])}")
                for _ in range(self.functions_per_file)]


def _insert(rng: random.Random, modules: dict[str, list[str]], path: str, text: str) -> None:
    """Insert a function at a random place of a module."""
    funcs = modules[path]
    funcs.insert(rng.randrange(len(funcs) + 1), text)


def _plant_callbacks(rng: random.Random, modules: dict[str, list[str]], target_name: str, target_path: str,
                     legacy_name: str, legacy_path: str) -> None:
    """The target callback, its deprecated twin, the notify callback and the named distractors."""
    _insert(rng, modules, target_path, _target_function(target_name))
    _insert(rng, modules, legacy_path, _legacy_function(legacy_name, target_name, target_path))
    _insert(rng, modules, "src/notify/handlers.py", _notify_handler())
    _insert(rng, modules, "src/notify/sms.py", _notify_caller())
    for p, m, name, doc in CALLBACK_DISTRACTORS:
        _insert(rng, modules, f"src/{p}/{m}.py", f"def {name}(*args, **kwargs):\n    \"\"\"{doc}\"\"\"\n    "
                f"hooks.fire(\"{name}\", *args, **kwargs)\n    return True\n")


def _plant_call_sites(rng: random.Random, modules: dict[str, list[str]], callers: list[tuple], module: str,
                      target_name: str, alias: str) -> tuple[dict[str, list[str]], list[dict]]:
    """The call sites (the answer): plain, aliased and module-qualified calls; their imports and sites.

    The first caller calls an alias that the facade module ``FACADE`` re-exports (``from <target module>
    import <target> as <alias>``): its own file never names the target, so only the use grep's hit in
    the facade (or a note of it) says that the alias is the target; a grep for the alias finds the caller.
    """
    imports: dict[str, list[str]] = {FACADE: [f"from {module} import {target_name} as {alias}"]}
    sites = []
    package, leaf = module.rsplit(".", 1)
    facade = FACADE[4:-3].replace("/", ".")
    for index, (p, m, func, arg) in enumerate(callers):
        path = f"src/{p}/{m}.py"
        if index == 0:
            imports.setdefault(path, []).append(f"from {facade} import {alias}")
            call = f"{alias}({arg})"
        elif index % 2:
            imports.setdefault(path, []).append(f"from {package} import {leaf}")
            call = f"{leaf}.{target_name}({arg})"
        else:
            imports.setdefault(path, []).append(f"from {module} import {target_name}")
            call = f"{target_name}({arg})"
        _insert(rng, modules, path, _caller_function(func, arg, call))
        sites.append({"file": path, "function": func})
    return imports, sites


def _plant_mention(rng: random.Random, modules: dict[str, list[str]], others: list[str], target_name: str) -> None:
    """Mentions of the target that are not calls (a comment, a log string) in some other source file."""
    _insert(rng, modules, rng.choice(others), (
        f"def audit_gateway_events(events):\n    \"\"\"Count gateway events; the webhook calls "
        f"{target_name} for them, not this.\"\"\"\n    # NOTE: never call {target_name}() from "
        f"here: it is not idempotent\n    logger.info(\"audit: %d events (see {target_name})\", "
        "len(events))\n    return len(events)\n"))


def _render_module(path: str, functions: list[str], imports: list[str]) -> str:
    """One source module: its header, its imports, its functions."""
    package = path.split("/")[1]
    header = [f'"""{package}.{path.rsplit("/", 1)[1][:-3]}: generated module of the Shoply backend."""',
              "from __future__ import annotations", "", "import logging",
              "from datetime import timedelta", "from decimal import Decimal", "",
              "from common import clock, config, db, hooks, metrics, money, retry"]
    header += imports
    header += ["", "logger = logging.getLogger(__name__)", "", ""]
    return "\n".join(header) + "\n\n".join(functions)


def _test_files(rng: random.Random, n_tests: int, module: str, target_name: str, legacy_name: str) -> dict[str, str]:
    """The test files: the payment callback tests (which call the target but are not call sites), then filler."""
    files = {}
    for i in range(n_tests):
        name = ("tests/payment/test_callbacks.py" if i == 0
                else f"tests/{rng.choice(list(PACKAGES))}/test_{rng.choice(VERBS)}_{i}.py")
        body = [f"from {module} import {target_name}", f"from payment.legacy_gateway import {legacy_name}", "", ""]
        if i == 0:
            body += [f"def test_{target_name}_marks_order_paid(fake_gateway):",
                     f"    assert {target_name}(fake_gateway.event('paid'))['status'] == 'paid'", "", "",
                     f"def test_{legacy_name}_still_parses_old_payloads(fake_gateway):",
                     f"    assert {legacy_name}(fake_gateway.legacy_event())", ""]
        else:
            body = [f"def test_{rng.choice(VERBS)}_{j}():\n    assert {rng.randint(1, 9)} + {j} > 0\n" for j in range(6)]
        files[name] = "\n".join(body)
    return files


def _doc_files(target_name: str, target_path: str, legacy_name: str, legacy_path: str) -> dict[str, str]:
    """The three docs: one names the target (and its deprecated twin), two are background."""
    return {
        "docs/payment.md": (
            f"# Payments\n\nThe gateway posts to `/webhooks/payment`; `{target_name}` in `{target_path}` handles the "
            f"callback. The old `{legacy_name}` in `{legacy_path}` is deprecated.\n\nSee also the notify callbacks "
            "(`handle_callback`) for SMS delivery reports.\n"),
        "docs/architecture.md": "# Architecture\n\n" + "\n".join(
            f"- `src/{p}/`: {', '.join(ms)}" for p, ms in PACKAGES.items()) + "\n\nCallbacks are registered with `register_callback`.\n",
        "docs/runbook.md": ("# Runbook\n\nIf payment callbacks fail, check the gateway signature secret and "
                            "replay with the retry job.\n"),
    }


def _function(rng: random.Random, package: str, name: str) -> str:
    arg = rng.choice(["item", "obj", "record", "ctx", "entity"])
    lines = [f"def {name}({arg}, *, strict: bool = False):",
             f'    """{name.replace("_", " ").capitalize()} for the {package} service.',
             "", f"    Called from the {package} workers; see docs/architecture.md.", '    """']
    for template in rng.sample(BODY, rng.randint(3, 6)):
        lines.append(template.format(a=arg, f=name, p=package, n=name.split("_", 1)[1]))
    lines.append(f"    return {rng.choice([arg, 'None', 'True', 'payload if strict else None'])}" if "payload" in lines[-1]
                 else f"    return {rng.choice([arg, 'None', 'True'])}")
    return "\n".join(lines) + "\n"


def _target_function(name: str) -> str:
    return (f"def {name}(event, *, replay: bool = False):\n"
            '    """Handle the payment gateway\'s asynchronous callback (payment completed, failed or refunded).\n\n'
            "    Verifies the gateway signature, updates the order and the ledger, and acknowledges the event.\n"
            '    """\n'
            "    if not tokens.verify_signature(event):\n"
            "        raise PermissionError(\"bad gateway signature\")\n"
            "    order = db.orders.get(event[\"order_id\"])\n"
            "    status = {\"succeeded\": \"paid\", \"failed\": \"payment_failed\", \"refunded\": \"refunded\"}[event[\"type\"]]\n"
            "    ledger.post(order, event[\"amount\"], status)\n"
            "    metrics.increment(\"payment.callback\", tags={\"replay\": replay})\n"
            "    return {\"order\": order.id, \"status\": status}\n")


def _legacy_function(name: str, target: str, target_path: str) -> str:
    return (f"def {name}(payload):\n"
            f'    """DEPRECATED since 3.2: the old payment gateway callback handler (XML payloads).\n\n'
            f"    Replaced by {target} in {target_path}. Nothing calls this any more; kept for the migration tests.\n"
            '    """\n'
            "    event = xml_to_event(payload)\n"
            "    logger.warning(\"legacy callback used\")\n"
            "    return event\n")


def _notify_handler() -> str:
    return ("def handle_callback(report):\n"
            '    """Handle the SMS provider\'s delivery callback (delivered, failed, expired)."""\n'
            "    status = report.get(\"status\", \"unknown\")\n"
            "    metrics.increment(f\"notify.sms.{status}\")\n"
            "    return status\n")


def _notify_caller() -> str:
    return ("def receive_delivery_report(request):\n"
            '    """Endpoint the SMS provider posts delivery reports to."""\n'
            "    from notify.handlers import handle_callback\n"
            "    return handle_callback(request.json())\n")


def _caller_function(name: str, arg: str, call: str) -> str:
    return (f"def {name}({arg}):\n"
            f'    """{name.replace("_", " ").capitalize()}: passes the event on to the payment callback handler."""\n'
            f"    logger.info(\"{name} start\")\n"
            f"    result = {call}\n"
            "    metrics.increment(\"callbacks.dispatched\")\n"
            "    return result\n")


class CallbackSearchInstance(TaskInstance):
    """One generated codebase."""

    family = CallbackSearch.name

    def __init__(self, family: CallbackSearch, seed: int, files: dict[str, str], target_path: str,
                 target_name: str, sites: list[dict]) -> None:
        self.seed = seed
        self.id = f"callback_search-f{family.files}-s{seed}"
        self.files = files
        self.grep_cap = family.grep_cap
        self.max_calls_per_turn = family.max_calls_per_turn
        self.target = {"file": target_path, "function": target_name}
        self.sites = sites
        self.system_prompt = (
            "You are a software engineer exploring an unfamiliar Python codebase (the Shoply backend) through "
            "the tools you are given: list_files, read_file and grep. Be precise: confirm what you report by "
            "reading the code. When you are done, call submit."
        )
        self.user_prompt = (
            "Find the function that handles the payment gateway's callbacks: the handler that runs when the "
            "gateway reports a payment as completed, failed or refunded (a deprecated handler that nothing calls "
            "any more, the callbacks of other services and the endpoints that only pass the event on do not "
            "count). Then find every call site of it in the application code under src/ (tests and docs do not "
            "count). A call site is a function whose body calls it: directly, through an import alias or as a "
            "module attribute; mentions in comments, log strings and docstrings are not calls. "
            "Submit submit(file=\"src/...py\", function=\"name\", call_sites=[{\"file\": \"src/...py\", "
            "\"function\": \"name\"}, ...]). "
            + limit_sentence(self.max_calls_per_turn, "tool calls (one file per read_file)")
        )
        self.tools = [
            tool_schema("list_files", "List every file of the repository.", {}, []),
            tool_schema("read_file", "Read a file, with line numbers.", {"path": {"type": "string"}}),
            tool_schema("grep", "Search every file for a Python regular expression; prints path:line: text.",
                        {"pattern": {"type": "string"}}),
        ]
        self.answer_schema = {
            "type": "object",
            "properties": {
                "file": {"type": "string"}, "function": {"type": "string"},
                "call_sites": {"type": "array", "items": {"type": "object", "properties": {
                    "file": {"type": "string"}, "function": {"type": "string"}}, "required": ["file", "function"]}},
            },
            "required": ["file", "function", "call_sites"],
        }

    def call(self, name: str, args: dict) -> ToolResult:
        """``list_files()``, ``read_file(path)``, ``grep(pattern)``."""
        if name == "list_files":
            lines = [f"{path}  ({len(text.splitlines())} lines)" for path, text in self.files.items()]
            return ToolResult(f"{len(self.files)} files:\n" + "\n".join(lines), resource="list_files")
        if name == "read_file":
            path = args.get("path")
            if isinstance(path, str):
                path = path.strip().lstrip("./")
            if not isinstance(path, str) or path not in self.files:
                return ToolResult(f"ERROR: no such file {args.get('path')!r}; use list_files to see the paths",
                                  is_error=True)
            lines = self.files[path].splitlines()
            body = "\n".join(f"{i:5d}  {line}" for i, line in enumerate(lines, start=1))
            return ToolResult(f"=== {path} ({len(lines)} lines) ===\n{body}", resource=f"file:{path}")
        if name == "grep":
            found = grep_lines(self.files, args)
            if isinstance(found, ToolResult):
                return found
            pattern, hits = found
            shown = hits[: self.grep_cap]
            text = f"grep {pattern} · {len(hits)} matches\n" + "\n".join(shown)
            if len(hits) > len(shown):
                text += f"\n... {len(hits) - len(shown)} more matches not shown; narrow the pattern"
            return ToolResult(text, resource=f"grep:{pattern}")
        return ToolResult(f"ERROR: unknown tool {name!r}; available: list_files, read_file, grep", is_error=True)

    def grade(self, answer: dict) -> Grade:
        """Right target and exact call-site set for success; 0.4 target + 0.6 call-site F1 for the score."""
        answer = answer if isinstance(answer, dict) else {}
        target_ok = (str(answer.get("file", "")).strip() == self.target["file"]
                     and str(answer.get("function", "")).strip() == self.target["function"])
        raw = answer.get("call_sites")
        given = set()
        if isinstance(raw, list):
            for site in raw:
                if isinstance(site, dict):
                    given.add((str(site.get("file", "")).strip(), str(site.get("function", "")).strip()))
        truth = {(s["file"], s["function"]) for s in self.sites}
        hits = len(given & truth) if target_ok else 0
        precision = hits / len(given) if given else 0.0
        recall = hits / len(truth) if truth else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        score = 0.4 * target_ok + 0.6 * f1
        return Grade(target_ok and given == truth, round(score, 4), {
            "target_ok": target_ok, "expected": self.target, "expected_sites": self.sites,
            "missed": sorted(map(list, truth - given)), "wrong": sorted(map(list, given - truth))})

    def trial_metrics(self, tool_log: list[dict]) -> dict:
        """``files_read`` (distinct files read) and ``greps``."""
        read = {e["resource"] for e in tool_log if e["name"] == "read_file" and not e["is_error"]}
        return {"files_read": len(read), "greps": sum(1 for e in tool_log if e["name"] == "grep")}

    def reference_policy(self) -> "CallbackSearchPolicy":
        """Search phase, verify phase, submit."""
        return CallbackSearchPolicy()

    def data_fingerprint(self) -> list:
        """Every file and the answer."""
        return [self.files, self.target, self.sites]


def _again(path: str, called: set, limited: set) -> str:
    """Why a file is read again: its last read was rate limited (not done), or its content and note are out of view."""
    if path in limited:
        return " (rate limited before, reading it now)"
    return " (out of view, reading it again)" if path in called else ""


def _paths(listing: str) -> list[str]:
    """The paths of a restated list (``a.py, b.py`` or ``none``)."""
    return [p for p in listing.split(", ") if p and p != "none"]


UNREAD = "    # (line not read)"  # stands for a numbered line missing from what the agent attended to


def _file_contents(text: str) -> tuple[str, list[str]] | None:
    """(path, lines) of a ``read_file`` result; a line number the agent did not attend to is ``UNREAD``."""
    header = FILE_HEADER.match(text)
    if not header:
        return None
    numbered: dict[int, str] = {}
    for raw in text.splitlines()[1:]:
        m = NUMBERED.match(raw)
        if m:
            numbered[int(m.group(1))] = m.group(2)
    return header.group(1), [numbered.get(n, UNREAD) for n in range(1, int(header.group(2)) + 1)]


def _merge(old: list[str] | None, new: list[str]) -> list[str]:
    """Two visible copies of one file, line by line: a line read in either copy is read."""
    if old is None or len(old) != len(new):
        return new
    return [b if b != UNREAD else a for a, b in zip(old, new)]


def _unclear(lines: list[str], numbers: Iterable[int]) -> bool:
    """Whether a line the greps pointed at (1-based ``numbers``), or the docstring after a def among them, is unread."""
    for number in numbers:
        span = lines[number - 1: number + 5] if lines[number - 1].lstrip().startswith("def ") else lines[number - 1: number]
        if any(line == UNREAD for line in span):
            return True
    return False


def _enclosing_unclear(lines: list[str], name: str, aliases: Iterable[str]) -> bool:
    """Whether an unread line lies between a call of ``name`` (or an alias) and the ``def`` it is attributed to."""
    call = re.compile(r"(?<![\w])(?:\w+\.)?(" + "|".join(map(re.escape, sorted({name, *aliases}))) + r")\(")
    last_def = 0
    for index, line in enumerate(lines):
        if re.match(r"^def \w+\(", line):
            last_def = index
        elif call.search(line) and not line.lstrip().startswith(("from ", "import ")):
            if any(row == UNREAD for row in lines[last_def:index]):
                return True
    return False


def _functions(lines: list[str]) -> list[tuple[str, str]]:
    """(name, docstring) of every def in a file."""
    found = []
    for i, line in enumerate(lines):
        m = re.match(r"^def (\w+)\(", line)
        if m:
            doc = []
            for follow in lines[i + 1: i + 6]:
                doc.append(follow.strip())
                if follow.strip().endswith('"""') and len(doc) > 1 or follow.strip().count('"""') == 2:
                    break
            found.append((m.group(1), " ".join(doc)))
    return found


def _call_sites(lines: list[str], name: str, aliases: Iterable[str] = ()) -> list[str]:
    """Functions whose body calls ``name`` (or an import alias of it), skipping comments and docstrings.

    ``aliases``: alias names already known (the use grep shows ``import NAME as ALIAS`` lines),
    so a file whose own import line the agent did not attend to still counts its aliased call.

    A ``def`` line ends any docstring (none spans a definition), so a docstring quote line the
    agent did not attend to (profile ``realistic``) confuses one function, not the rest of the file.
    """
    names = {name, *aliases}
    for line in lines:
        m = re.search(rf"import {name} as (\w+)", line)
        if m:
            names.add(m.group(1))
    call = re.compile(r"(?<![\w])(?:\w+\.)?(" + "|".join(map(re.escape, sorted(names))) + r")\(")
    sites: list[str] = []
    current = None
    in_doc = False
    for line in lines:
        stripped = line.strip()
        d = re.match(r"^def (\w+)\(", line)
        if d:
            current, in_doc = d.group(1), False
            continue
        if stripped.count('"""') == 1:
            in_doc = not in_doc
            continue
        if in_doc or stripped.startswith("#") or stripped.count('"""') == 2:
            continue
        code = re.sub(r"\"[^\"]*\"|'[^']*'", "", line.split("#", 1)[0])
        if current and call.search(code) and not code.lstrip().startswith(("def ", "from ", "import ")):
            if current not in sites:
                sites.append(current)
    return sites


class CallbackSearchPolicy:
    """Reference policy for ``callback_search`` (see the module docstring).

    With the ``isolate`` strategy (``delegate`` on offer) it does what seed 002 §2.7.6
    describes: it delegates the whole search (``SUBTASK``, self-contained) to ONE sub-agent
    and submits the sub-agent's conclusion, read from the visible ``delegate`` result; the
    main context gains two messages. A delegate result that is not a report (the sub-agent
    failed) makes it search itself.
    """

    def delegate_plan(self, messages: list[dict]) -> str | None:
        """The search as one sub-task, unless a delegation is already visible (then act: submit)."""
        if any(e.name == "delegate" for e in exchanges(messages)):
            return None
        return SUBTASK

    def subagent_policy(self, task: str) -> "CallbackSubPolicy":
        """The policy of the sub-agent (it reads its task from its own context)."""
        return CallbackSubPolicy()

    def _knowledge(self, messages: list[dict]) -> dict:
        k: dict = {"listed": False, "def_grep": None, "candidates": None, "checked": {}, "target": None,
                   "use_grep": None, "to_verify": None, "verified": {}, "sites": set(), "lines": {},
                   "found": None, "aliases": set(), "pointed": {}, "unclear": set(),
                   "scope": "", "use_hits": None, "alias_hits": {}}
        for message in messages:
            role, text = message.get("role"), str(message.get("content") or "")
            if role == "tool":
                self._read_tool(text, k)
            elif role in ("user", "assistant"):
                self._read_text(text, k)
        return k

    def _read_tool(self, text: str, k: dict) -> None:
        if text.startswith(REPORT_PREFIX):  # a sub-agent's conclusion (strategy isolate)
            k["reported"] = True
            target = REPORT_TARGET.search(text)
            if target:
                k["target"] = (target.group(1), target.group(2))
                sites = REPORT_SITES.search(text)
                k["sites"] |= set(SITE.findall(sites.group(1))) if sites else set()
            return
        if re.match(r"\d+ files:\n", text):
            k["listed"] = True
        grep = GREP_HEADER.match(text)
        if grep:
            hits = [(p, int(n), line) for p, n, line in GREP_LINE.findall(text)]
            if grep.group(1) == DEF_GREP:
                k["candidates"] = sorted({p for p, _, _ in hits if p.startswith("src/")})
                for p, n, _ in hits:
                    k["pointed"].setdefault(p, set()).add(n)
            elif k["target"] and grep.group(1) == rf"\b{k['target'][1]}\b":
                tpath, tname = k["target"]
                k["use_hits"] = sorted({p for p, _, line in hits if p.startswith(k["scope"])
                                        and not (p == tpath and line.startswith(f"def {tname}("))})
                k["aliases"] |= {m.group(1) for _, _, line in hits
                                 for m in [re.search(rf"import {tname} as (\w+)", line)] if m}
                for p, n, _ in hits:
                    k["pointed"].setdefault(p, set()).add(n)
            elif grep.group(1) in {rf"\b{alias}\b" for alias in k["aliases"]}:
                alias = grep.group(1)[2:-2]
                k["alias_hits"][alias] = sorted({p for p, _, _ in hits if p.startswith(k["scope"])})
                for p, n, _ in hits:
                    k["pointed"].setdefault(p, set()).add(n)
        parsed = _file_contents(text)
        if parsed:
            path, lines = parsed
            lines = k["lines"][path] = _merge(k["lines"].get(path), lines)
            if self._unclear_file(path, lines, k):
                k["unclear"].add(path)  # read again before it is noted (a careful reader looks again)
                return
            k["unclear"].discard(path)
            k["checked"][path] = _functions(lines)
            if k["target"]:
                k["verified"][path] = _call_sites(lines, k["target"][1], k["aliases"])

    @staticmethod
    def _unclear_file(path: str, lines: list[str], k: dict) -> bool:
        """Whether a line it must judge is unread: a line a grep pointed at (a callback ``def`` and its
        docstring, a use of the target), or a line between a call and the ``def`` it belongs to."""
        if _unclear(lines, k["pointed"].get(path, ())):
            return True
        return bool(k["target"]) and _enclosing_unclear(lines, k["target"][1], k["aliases"])

    def _read_text(self, text: str, k: dict) -> None:
        if SCOPE_RULE.search(text):
            k["scope"] = "src/"  # the task's rule, read while it is in view: tests and docs do not count
        if "files:" in text and "Listed the repository" in text:
            k["listed"] = True
        for line in text.splitlines():
            line = line.removeprefix("- ")  # a line of a notes block (strategy notes) reads as the note itself
            if line.startswith("Listed the repository"):
                k["listed"] = True
            m = CANDIDATES_NOTE.match(line)
            if m:
                k["candidates"] = [c for c in m.group(1).split(", ") if c and c != "none"]
            m = CHECKED_NOTE.match(line)
            if m:
                k["checked"].setdefault(m.group(1), [])
            m = TARGET_NOTE.search(line)
            if m:
                k["target"] = (m.group(1), m.group(2))
            m = FOUND_NOTE.match(line)
            if m:
                k["found"] = (m.group(1), m.group(2))
            m = ALIAS_NOTE.match(line)
            if m:
                k["aliases"].add(m.group(3))
            m = TO_VERIFY_NOTE.match(line)
            if m:
                k["to_verify"] = [c for c in m.group(1).split(", ") if c and c != "none"]
            m = CHECKED_LIST.match(line)
            if m:
                for path in _paths(m.group(1)):
                    k["checked"].setdefault(path, [])
            m = VERIFIED_LIST.match(line)
            if m:
                for path in _paths(m.group(1)):
                    k["verified"].setdefault(path, [])
            m = VERIFY_NOTE.match(line)
            if m:
                k["verified"][m.group(1)] = [f for _, f in SITE.findall(m.group(2))]
            m = SITES.search(line)
            if m:
                k["sites"] |= set(SITE.findall(m.group(1)))

    @staticmethod
    def _judge(functions: list[tuple[str, str]]) -> str | None:
        for name, doc in functions:
            low = doc.lower()
            if "callback" in name and "payment gateway" in low and "deprecated" not in low:
                return name
        return None

    def _resolved(self, messages: list[dict]) -> dict:
        """What the visible messages establish, with the conclusions drawn from it: the target judged from
        the checked candidates, the files to verify that are still in view, and the call sites so far."""
        k = self._knowledge(messages)
        if k.get("reported"):
            return k
        if k["target"] is None:
            self._settle_target(k)
        if k["to_verify"] is None and k["use_hits"] is not None and not self._pending_aliases(k):
            k["to_verify"] = sorted(set(k["use_hits"]).union(*k["alias_hits"].values()))
        if k["target"]:  # files still in view need no second read
            for path in k["to_verify"] or []:
                if path not in k["verified"] and path in k["lines"] and not self._unclear_file(path, k["lines"][path], k):
                    k["verified"][path] = _call_sites(k["lines"][path], k["target"][1], k["aliases"])
        for path, funcs in k["verified"].items():
            k["sites"] |= {(path, f) for f in funcs}
        return k

    @staticmethod
    def _pending_aliases(k: dict) -> list[str]:
        """Aliases of the target known now whose uses it has not searched for yet (their grep is not in view)."""
        return [alias for alias in sorted(k["aliases"]) if alias not in k["alias_hits"]]

    def _settle_target(self, k: dict) -> None:
        """Judge the visible candidates (``found``); the target is settled once every candidate is checked.

        A careful searcher checks every definition the grep found before it trusts one: the
        deprecated twin and the other callbacks look alike until their docstrings are read.
        """
        for path in k["candidates"] or []:
            name = self._judge(k["checked"].get(path, []))
            if name and k["found"] is None:
                k["found"] = (path, name)
        if k["found"] and k["candidates"] is not None and all(p in k["checked"] for p in k["candidates"]):
            k["target"] = k["found"]

    @staticmethod
    def _reads_due(k: dict) -> list[str]:
        """The files the current phase still has to read, in order: unchecked candidates (search) or
        unverified files of the use grep (verify); empty when the phase needs a grep first or is done."""
        if k.get("reported"):
            return []
        if k["target"] is None:
            return [p for p in k["candidates"] or [] if p not in k["checked"]]
        if k["to_verify"] is None:
            return []
        done_files = set(k["verified"]) | {p for p, _ in k["sites"]}
        return [p for p in k["to_verify"] if p not in done_files]

    def parallel_calls(self, messages: list[dict], tools: list[dict], first: dict) -> list[dict]:
        """The calls independent of ``first`` whose arguments the visible messages already give (profile
        ``realistic`` batches them into one turn): with the listing, the definitions grep; with a read, the
        other files the phase still has to read (every candidate, or every file of the use grep). A grep
        depends on what the reads will show, so it is never batched with them."""
        function = first.get("function") or {}
        name = function.get("name")
        if name not in ("list_files", "read_file"):
            return []
        k = self._resolved(messages)
        if k.get("reported"):
            return []
        if name == "list_files":
            return [make_call("grep", pattern=DEF_GREP)] if k["candidates"] is None else []
        path = parse_arguments(function.get("arguments") or "{}").get("path")
        return [make_call("read_file", path=p) for p in self._reads_due(k) if p != path]

    def early_answer(self, messages: list[dict]) -> dict | None:
        """The answer it would submit now: the target and the call sites confirmed so far (None: no target yet)."""
        k = self._resolved(messages)
        if k["target"] is None:
            return None
        return {"file": k["target"][0], "function": k["target"][1],
                "call_sites": [{"file": p, "function": f} for p, f in sorted(k["sites"])]}

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Search phase, then verify phase, then submit."""
        k = self._resolved(messages)
        if k.get("reported"):  # a sub-agent did the search: submit its conclusion
            if k["target"] is None:
                return submit("The sub-agent found no payment-gateway callback handler; submitting nothing.",
                              file="", function="", call_sites=[])
            path, name = k["target"]
            sites = [{"file": p, "function": f} for p, f in sorted(k["sites"])]
            return submit(f"The sub-agent found {path}:{name} with {len(sites)} call sites; submitting its conclusion.",
                          file=path, function=name, call_sites=sites)
        note = self._note(messages, k)
        called = {e.args.get("path") for e in exchanges(messages) if e.name == "read_file"}
        limited = deferred_args(messages, "read_file", "path")
        # search phase
        if k["target"] is None:
            if self._first_move(messages, k):  # the listing orients; nothing reads it, so it is never re-run
                return reply(note + "\nSearch phase: listing the repository.", make_call("list_files"))
            if k["candidates"] is None:
                return reply(note + "\nSearch phase: looking for callback definitions.", make_call("grep", pattern=DEF_GREP))
            for path in self._reads_due(k):
                return reply(note + f"\nSearch phase: reading candidate {path}{_again(path, called, limited)}.",
                             make_call("read_file", path=path))
            return submit(note + "\nNo payment-gateway callback handler found; submitting nothing.",
                          file="", function="", call_sites=[])
        # verify phase
        path, name = k["target"]
        if k["to_verify"] is None and k["use_hits"] is None:
            return reply(note + f"\nVerify phase: searching for uses of {name}.", make_call("grep", pattern=rf"\b{name}\b"))
        for alias in self._pending_aliases(k) if k["to_verify"] is None else []:
            return reply(note + f"\nVerify phase: searching for uses of its alias {alias}.",
                         make_call("grep", pattern=rf"\b{alias}\b"))
        for candidate in self._reads_due(k):
            return reply(note + f"\nVerify phase: reading {candidate}{_again(candidate, called, limited)}.",
                         make_call("read_file", path=candidate))
        sites = [{"file": p, "function": f} for p, f in sorted(k["sites"])]
        return submit(note + "\nVerification done; submitting.", file=path, function=name, call_sites=sites)

    @staticmethod
    def _first_move(messages: list[dict], k: dict) -> bool:
        """Whether nothing of the search is visible yet: no exchange of its tools, no candidate, no checked file."""
        searched = any(e.name in ("list_files", "grep", "read_file") and not is_rate_limited(e.result)
                       for e in exchanges(messages))  # a rate-limited call was not done
        return not searched and k["candidates"] is None and not k["checked"] and not k["listed"]

    def _note(self, messages: list[dict], k: dict) -> str:
        """Notes on the newest results, then the restated state of the phase (so that it survives cuts)."""
        lines = []
        for text in latest_results(messages):  # the newest results, even with a status bar or notes after them
            if re.match(r"\d+ files:\n", text):
                lines.append("Listed the repository.")
            if k["target"] and text.startswith(f"grep \\b{k['target'][1]}\\b "):
                name = k["target"][1]
                lines += [f"Alias: {p} re-exports {name} as {m.group(1)}; its uses are call sites too."
                          for p, _, line in GREP_LINE.findall(text) for m in [re.search(rf"import {name} as (\w+)", line)] if m]
            parsed = _file_contents(text)
            if parsed:
                path = parsed[0]
                if path in k["unclear"]:
                    lines.append(f"Part of {path} did not read clearly; I will read it again.")
                elif k["target"] and path in (k["to_verify"] or []):
                    found = k["verified"].get(path, [])
                    lines.append(f"Verified {path}: " + (", ".join(f"{path}:{f}" for f in found) or "no call (mention only)"))
                else:
                    names = [n for n, _ in k["checked"].get(path, []) if "callback" in n]
                    lines.append(f"Checked {path}: callback functions {', '.join(names) or 'none'}")
        lines += rate_limited_notes(messages)
        return "\n".join(lines + self._recitation(k))

    @staticmethod
    def _recitation(k: dict) -> list[str]:
        """The phase's working set, restated in every reply: the candidates and which are checked (search),
        the target, the files to verify and which are verified, the call sites so far (verify)."""
        if k["target"] is None:
            if k["candidates"] is None:
                return []
            checked = [p for p in k["candidates"] if p in k["checked"]]
            found = [f"Handler found: {k['found'][0]}:{k['found'][1]}"] if k["found"] else []
            return ["Candidates: " + (", ".join(k["candidates"]) or "none"),
                    "Candidates checked: " + (", ".join(checked) or "none"), *found]
        lines = [f"TARGET: {k['target'][0]}:{k['target'][1]}"]
        if k["to_verify"] is not None:
            verified = [p for p in k["to_verify"] if p in k["verified"]]
            lines += ["To verify: " + (", ".join(k["to_verify"]) or "none"),
                      "Verified so far: " + (", ".join(verified) or "none")]
        lines.append("Call sites so far: " + (", ".join(f"{p}:{f}" for p, f in sorted(k["sites"])) or "none"))
        return lines

    def summarize(self, history_text: str) -> str:
        """Target and confirmed call sites; not which files were already checked."""
        k: dict = {"listed": False, "def_grep": None, "candidates": None, "checked": {}, "target": None,
                   "use_grep": None, "to_verify": None, "verified": {}, "sites": set(), "lines": {},
                   "found": None, "aliases": set(), "pointed": {}, "unclear": set(),
                   "scope": "", "use_hits": None, "alias_hits": {}}
        for block in history_text.split("\n["):
            if block.startswith("tool ") and "]: " in block:
                self._read_tool(block.split("]: ", 1)[1], k)
            else:
                self._read_text(block.split("]: ", 1)[-1], k)
        for path, funcs in k["verified"].items():
            k["sites"] |= {(path, f) for f in funcs}
        findings = []
        if k["target"] is None:
            self._settle_target(k)
        if k["target"] is None and k["found"]:
            findings.append(f"Handler found: {k['found'][0]}:{k['found'][1]}")
        if k["target"]:
            findings.append(f"TARGET: {k['target'][0]}:{k['target'][1]}")
            findings.append("Call sites so far: " + (", ".join(f"{p}:{f}" for p, f in sorted(k["sites"])) or "none"))
        else:
            findings.append("target not identified yet")
        progress = ["search phase done" if k["target"] else "search phase in progress",
                    f"files checked: {len(k['checked']) + len(k['verified'])}"]
        return format_summary(findings, tools_used(history_text), real_failures(history_text), progress)


class CallbackSubPolicy(CallbackSearchPolicy):
    """The sub-agent: the same search and verify phases on its fresh context; it reports instead of submitting.

    It batches like the main policy (``parallel_calls`` is inherited) but never submits early:
    a sub-agent ends with ``report``, which only its ``act`` writes.
    """

    def early_answer(self, messages: list[dict]) -> dict | None:
        """None: a sub-agent cannot submit (an early ``submit`` would be an unknown tool to it)."""
        return None

    def act(self, messages: list[dict], tools: list[dict]) -> dict:
        """Search, verify, then ``report`` what it would have submitted."""
        message = super().act(messages, tools)
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            if function.get("name") != "submit":
                continue
            answer = parse_arguments(function.get("arguments") or "{}")
            if answer.get("file") and answer.get("function"):
                sites = [f"{s['file']}:{s['function']}" for s in answer.get("call_sites") or []]
                conclusion = (f"{REPORT_PREFIX}: the payment-callback handler is {answer['file']}:{answer['function']}\n"
                              f"Call sites ({len(sites)}): {', '.join(sites) or 'none'}")
            else:
                conclusion = f"{REPORT_PREFIX}: no payment-callback handler found"
            return reply(message.get("content") or "", make_call("report", conclusion=conclusion))
        return message

import ast
import hashlib
import json
import re

import pytest

from reference_agent.policies import reference_policy
from reference_agent.policies.callback_search import DEF_GREP
from reference_agent.policy_kit import make_call, reply
from tasks.base import KnobError
from tasks.callback_search import CallbackSearch
from tests.family_helpers import run_reference, unmanaged_requests

SMOKE = dict(files=24, functions_per_file=2)


@pytest.mark.parametrize("knobs,seeds", [(SMOKE, [0, 1, 2, 3]), ({}, [0, 1])])
def test_reference_agent_succeeds_unmanaged(tmp_path, knobs, seeds):
    for seed in seeds:
        instance = CallbackSearch(**knobs).generate(seed)
        row = run_reference(tmp_path / str(seed), instance)
        assert row["outcome"] == "submitted" and row["success"] and row["score"] == 1.0, row["grade_detail"]
        assert row["rereads"] == 0, "files still in view are not read again"


def test_generation_identical_per_seed_and_differs_across_seeds():
    family = CallbackSearch(**SMOKE)
    assert family.generate(1).fingerprint() == family.generate(1).fingerprint()
    assert family.generate(1).fingerprint() != family.generate(2).fingerprint()


def test_codebase_shape_and_distractors():
    instance = CallbackSearch().generate(0)
    assert len(instance.files) == 120
    assert any(p.startswith("tests/") for p in instance.files) and any(p.startswith("docs/") for p in instance.files)
    name = instance.target["function"]
    assert f"def {name}(" in instance.files[instance.target["file"]]
    assert "def handle_callback(" in instance.files["src/notify/handlers.py"]
    assert f"def {name}_v1(" in instance.files["src/payment/legacy_gateway.py"]
    assert not any(
        f"{name}_v1(" in text
        for path, text in instance.files.items()
        if path.startswith("src/") and path != "src/payment/legacy_gateway.py"
    ), "nothing in src calls it"
    assert 2 <= len(instance.sites) <= 4


def test_empty_and_wrong_answers_fail():
    instance = CallbackSearch(**SMOKE).generate(0)
    right = {**instance.target, "call_sites": instance.sites}
    assert instance.grade(right).success
    assert not instance.grade({}).success and instance.grade({}).score == 0
    wrong_target = {"file": "src/notify/handlers.py", "function": "handle_callback", "call_sites": instance.sites}
    assert not instance.grade(wrong_target).success and instance.grade(wrong_target).score == 0
    missing = instance.grade({**instance.target, "call_sites": instance.sites[:-1]})
    assert not missing.success and 0.4 < missing.score < 1


@pytest.mark.parametrize(
    "name,args",
    [
        ("read_file", {"path": "src/nope.py"}),
        ("read_file", {}),
        ("grep", {"pattern": "("}),
        ("grep", {"pattern": ""}),
        ("grep", {}),
        ("nope", {}),
    ],
)
def test_bad_arguments_are_tool_errors(name, args):
    instance = CallbackSearch(**SMOKE).generate(0)
    result = instance.call(name, args)
    assert result.is_error and result.content.startswith("ERROR")


def test_reads_have_resources_and_grep_is_capped():
    instance = CallbackSearch(grep_cap=10).generate(0)
    listing = instance.call("list_files", {})
    assert listing.resource == "list_files" and "docs/payment.md" in listing.content
    read = instance.call("read_file", {"path": instance.target["file"]})
    assert read.resource == f"file:{instance.target['file']}" and "    1  " in read.content
    grep = instance.call("grep", {"pattern": "def "})
    assert "more matches not shown; narrow the pattern" in grep.content
    assert len(grep.content.splitlines()) == 12


@pytest.mark.parametrize(
    "knobs",
    [
        dict(files=5),
        dict(functions_per_file=1),
        dict(grep_cap=0),
        dict(extra_call_sites=-1),
        dict(files=20, extra_call_sites=1),  # no generated module is free at 20 files
    ],
)
def test_knobs_out_of_range(knobs):
    with pytest.raises(KnobError):
        CallbackSearch(**knobs)


def _head(instance):
    return [{"role": "system", "content": instance.system_prompt}, {"role": "user", "content": instance.user_prompt}]


def _names(action):
    return [c["function"]["name"] for c in action.get("tool_calls") or []]


def test_restated_candidates_survive_a_cut_and_the_listing_is_not_rerun():
    """The listing and the grep are cut; the candidates and which are checked survive in a notes block
    (or the latest reply): the policy reads the next unchecked candidate, without listing or grepping again."""
    instance = CallbackSearch(**SMOKE).generate(0)
    policy = reference_policy(instance)
    grep = instance.call("grep", {"pattern": DEF_GREP}).content
    candidates = sorted({line.split(":", 1)[0] for line in grep.splitlines()[1:] if line.startswith("src/")})
    assert len(candidates) >= 2
    notes = {
        "role": "user",
        "content": "[notes] Your notes so far (written with write_note):\n"
        f"- Candidates: {', '.join(candidates)}\n- Candidates checked: {candidates[0]}",
    }
    action = policy.act([*_head(instance), notes], instance.tools)
    assert _names(action) == ["read_file"] and json.loads(action["tool_calls"][0]["function"]["arguments"]) == {
        "path": candidates[1]
    }


def test_every_reply_restates_the_working_set():
    """Each reply holds the whole ledger (reference_agent/kit/ledger.py): the task's rules (its scope among them), and
    in the search phase the candidates and which are checked; in the verify phase the target, the files to verify
    and which are verified, and the call sites."""
    instance = CallbackSearch(**SMOKE).generate(0)
    policy = reference_policy(instance)
    replies = [policy.act(messages, instance.tools)["content"] for messages in unmanaged_requests(instance)]
    searching = [r for r in replies if "Search phase: reading candidate" in r]
    verifying = [r for r in replies if "Verify phase: reading" in r]
    assert searching and verifying
    for replies_of_phase, heads in (
        (searching, ("Candidates: ", "Candidates checked: ")),
        (verifying, ("TARGET: ", "To verify: ", "Verified so far: ", "Call sites so far: ")),
    ):
        for text in replies_of_phase:
            starts = [line.removeprefix("- ").split(": ", 1)[0] + ": " for line in text.splitlines()]
            assert all(head in starts for head in heads), text
            assert "application code under src/ (tests and docs do not count)" in text, "the scope is restated"


def test_a_lost_listing_is_not_rerun():
    """A read of the search is visible but neither the listing nor any note: grep again, do not list again."""
    instance = CallbackSearch(**SMOKE).generate(0)
    policy = reference_policy(instance)
    path = sorted(instance.files)[0]
    read = instance.call("read_file", {"path": path}).content
    messages = [
        *_head(instance),
        reply("", {**make_call("read_file", path=path), "id": "c1"}),
        {"role": "tool", "tool_call_id": "c1", "content": read},
    ]
    assert _names(policy.act(messages, instance.tools)) == ["grep"]


def _round(instance, action: dict, tag: str) -> list[dict]:
    """The grep reply ``action`` with ids on its calls, then their results."""
    calls = [{**call, "id": f"{tag}-{i}"} for i, call in enumerate(action["tool_calls"])]
    results = [
        {
            "role": "tool",
            "tool_call_id": c["id"],
            "content": instance.call("grep", json.loads(c["function"]["arguments"])).content,
        }
        for c in calls
    ]
    return [{**action, "tool_calls": calls}, *results]


def test_a_search_cut_whole_is_run_again_once_before_submitting():
    """headtail at 3K cut the rounds of the use grep and of the alias grep; the calibration LLM ran each again
    before submitting (its reply: "the earlier rounds with my alias grep were cut"). With only the last round
    (and its ledger) in view the policy does too, one search a turn, and no search a third time."""
    instance = CallbackSearch(**SMOKE).generate(0)
    policy = reference_policy(instance)
    final = list(unmanaged_requests(instance))[-1]
    assert _names(policy.act(final, instance.tools)) == ["submit"], "with the greps in view it submits"
    last = max(i for i, m in enumerate(final) if m["role"] == "assistant")
    cut = [*_head(instance), *final[last:]]
    name, patterns = instance.target["function"], []
    for tag in ("r1", "r2"):
        action = policy.act(cut, instance.tools)
        assert _names(action) == ["grep"] and "Final check" in action["content"]
        patterns.append(json.loads(action["tool_calls"][0]["function"]["arguments"])["pattern"])
        cut = [*_head(instance), *_round(instance, action, tag)]  # each re-run round alone in view
    assert patterns[0] == rf"\b{name}\b" and patterns[1] != patterns[0]
    assert _names(policy.act(cut, instance.tools)) == ["submit"], "a search its ledger says was run again is not rerun"


@pytest.mark.parametrize("budget", [8_000, 25_000])
def test_notes_over_headtail_find_and_verify_without_thrashing(tmp_path, budget):
    from strategies.headtail import HeadTail
    from strategies.notes import Notes
    from tests.family_helpers import run

    row, instance = run(
        tmp_path, CallbackSearch(), seed=0, strategy=Notes(base=HeadTail()), budget=budget, max_steps=60
    )
    assert row["outcome"] == "submitted" and row["success"], row["grade_detail"]
    # every candidate is checked before the target is settled, so a caller that also defines a *callback*
    # function (retry's replay_failed_callbacks) or the deprecated twin is read in both phases; nothing else twice
    grep = instance.call("grep", {"pattern": rf"\b{instance.target['function']}\b"}).content
    both = {line.split(":", 1)[0] for line in grep.splitlines()[1:]} & set(_candidates(instance))
    assert row["rereads"] <= len(both - {instance.target["file"]}), "only files of both phases are read twice"


# --- batching (profile realistic): parallel_calls, multi-result rounds, rate limits ---------------------------


def _paths_of(calls):
    return [json.loads(c["function"]["arguments"])["path"] for c in calls if c["function"]["name"] == "read_file"]


def _candidates(instance):
    grep = instance.call("grep", {"pattern": DEF_GREP}).content
    return sorted({line.split(":", 1)[0] for line in grep.splitlines()[1:] if line.startswith("src/")})


def test_parallel_calls_are_the_known_independent_calls_of_each_phase():
    """List: + the definitions grep. Search: the most likely candidate (the payment one, not a versioned twin),
    batched with the grep for its name (the search and the read are independent). Once its docstring confirms
    the handler, no other candidate is read. A grep alone: nothing."""
    from tests.batch_helpers import answer_round, start

    instance = CallbackSearch(**SMOKE).generate(0)
    policy = reference_policy(instance)
    messages = start(instance)
    first = policy.act(messages, instance.tools)
    assert _names(first) == ["list_files"]
    more = policy.parallel_calls(messages, instance.tools, first["tool_calls"][0])
    assert [c["function"] for c in more] == [make_call("grep", pattern=DEF_GREP)["function"]]
    assert policy.parallel_calls(messages, instance.tools, more[0]) == [], "a grep is not batched with anything"
    messages = answer_round(instance, messages, first, [first["tool_calls"][0], *more])
    action = policy.act(messages, instance.tools)
    assert _paths_of(action["tool_calls"]) == [instance.target["file"]], "the payment candidate first"
    others = policy.parallel_calls(messages, instance.tools, action["tool_calls"][0])
    name = instance.target["function"]
    assert [json.loads(c["function"]["arguments"]) for c in others] == [{"pattern": rf"\b{name}\b"}]
    messages = answer_round(instance, messages, action, [action["tool_calls"][0], *others], step=1)
    action = policy.act(messages, instance.tools)
    assert "TARGET: " in action["content"] and not set(_paths_of(action["tool_calls"])) & set(_candidates(instance)[1:])


def _alias(instance):
    from tasks.callback_search import FACADE

    return re.search(r" as (\w+)$", instance.files[FACADE], re.M).group(1)


def test_verify_phase_greps_the_alias_then_batches_the_unverified_files_only():
    """After the use grep (which shows the facade's ``import TARGET as ALIAS``) comes a grep for the alias;
    then, in one batch, every unverified src file in which a line of either grep calls it (a mention in a
    comment or a string is judged from the grep line, as the LLM did, and not read)."""
    from reference_agent.policies.callback_search import _calls
    from tests.batch_helpers import batched_run

    instance = CallbackSearch(**SMOKE).generate(0)
    policy = reference_policy(instance)
    requests, _ = batched_run(instance, policy)
    name, alias = instance.target["function"], _alias(instance)
    use = f"grep \\b{name}\\b"
    after_use = next(r for r in requests if any(str(m.get("content", "")).startswith(use) for m in r))
    action = policy.act(after_use, instance.tools)
    assert f"Alias: src/payment/events.py re-exports {name} as {alias}" in action["content"]
    assert [json.loads(c["function"]["arguments"]) for c in action["tool_calls"]] == [{"pattern": rf"\b{alias}\b"}]
    after_grep = next(r for r in requests if str(r[-1].get("content", "")).startswith(f"grep \\b{alias}\\b"))
    action = policy.act(after_grep, instance.tools)
    batch = [*action["tool_calls"], *policy.parallel_calls(after_grep, instance.tools, action["tool_calls"][0])]
    in_view = {
        str(m["content"]).split(" ", 2)[1]
        for m in after_grep
        if m["role"] == "tool" and str(m["content"]).startswith("=== ")
    }
    calling = {
        line.split(":", 1)[0]
        for m in after_grep
        if m["role"] == "tool" and str(m["content"]).startswith((use, f"grep \\b{alias}\\b"))
        for line in str(m["content"]).splitlines()[1:]
        if _calls(line.split(": ", 1)[-1], {name, alias})
    }
    expected = {p for p in calling if p.startswith("src/")} - in_view - {instance.target["file"]}
    assert expected and set(_paths_of(batch)) == expected


def test_a_batched_run_succeeds_in_seven_rounds_at_most_and_notes_every_result():
    """list+grep, the likely candidate with its use grep, the alias grep, the calling files, submit (one more
    where the candidate's file calls it too): every reply after a round of several results notes each of them."""
    from tests.batch_helpers import batched_run

    for seed in range(4):
        instance = CallbackSearch(**SMOKE).generate(seed)
        requests, final = batched_run(instance, reference_policy(instance))
        answer = json.loads(final["tool_calls"][0]["function"]["arguments"])
        assert instance.grade(answer).success and len(requests) <= 7, (seed, len(requests))
        for messages in requests[1:]:
            last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
            reads = [m for m in messages[last + 1 :] if str(m.get("content", "")).startswith("=== ")]
            text = reference_policy(instance).act(messages, instance.tools)["content"]
            for read in reads:
                assert f" {read['content'].split(' ', 2)[1]}: " in text, "each result of the round is noted"


def test_rate_limited_calls_are_reissued_not_taken_as_done():
    from tasks.base import RATE_LIMITED
    from tests.batch_helpers import answer_round, batched_run, start

    instance = CallbackSearch(**SMOKE).generate(0)
    policy = reference_policy(instance)
    messages = start(instance)
    first = policy.act(messages, instance.tools)
    messages = answer_round(instance, messages, first, [first["tool_calls"][0], make_call("grep", pattern=DEF_GREP)])
    action = policy.act(messages, instance.tools)
    batch = [action["tool_calls"][0], *policy.parallel_calls(messages, instance.tools, action["tool_calls"][0])]
    assert len(batch) == 2
    messages = answer_round(instance, messages, action, batch, limit=1, step=1)  # the use grep is rate limited
    assert sum(str(m["content"]).startswith(RATE_LIMITED) for m in messages) == 1
    action = policy.act(messages, instance.tools)
    name = instance.target["function"]
    assert "TARGET: " in action["content"]
    assert [json.loads(c["function"]["arguments"]) for c in action["tool_calls"]] == [{"pattern": rf"\b{name}\b"}]
    pattern = json.dumps({"pattern": rf"\b{name}\b"})
    assert f"Not done (rate limited): grep {pattern}" in action["content"]
    summary = policy.summarize("[tool read_file]: " + RATE_LIMITED + ": at most 2 calls per turn")
    assert "rate limited" not in summary, "a deferred call is not a failed attempt"
    requests, final = batched_run(instance, reference_policy(instance), limit=1)
    assert instance.grade(json.loads(final["tool_calls"][0]["function"]["arguments"])).success


def test_a_rate_limited_first_round_is_still_the_first_move():
    """Nothing of the search was done: the listing (and the grep) are issued again."""
    from tests.batch_helpers import answer_round, start

    instance = CallbackSearch(**SMOKE).generate(0)
    policy = reference_policy(instance)
    messages = start(instance)
    first = policy.act(messages, instance.tools)
    messages = answer_round(
        instance, messages, first, [first["tool_calls"][0], make_call("grep", pattern=DEF_GREP)], limit=0
    )
    assert _names(policy.act(messages, instance.tools)) == ["list_files"]


def test_early_answer_and_sub_agent_hooks():
    from reference_agent.policies.callback_search import CallbackSubPolicy
    from tests.batch_helpers import batched_run, start

    instance = CallbackSearch(**SMOKE).generate(0)
    policy = reference_policy(instance)
    assert policy.early_answer(start(instance)) is None, "no target in view: nothing to submit"
    requests, final = batched_run(instance, policy)
    assert policy.early_answer(requests[-1]) == json.loads(final["tool_calls"][0]["function"]["arguments"])
    sub = CallbackSubPolicy()
    assert sub.early_answer(requests[-1]) is None, "a sub-agent reports; it cannot submit"
    report = sub.act(requests[-1], instance.tools)["tool_calls"][0]
    assert report["function"]["name"] == "report" and sub.parallel_calls(requests[-1], instance.tools, report) == []


def test_realistic_smoke_run_takes_few_steps(tmp_path):
    """Profile realistic at smoke size: the five dependent rounds (list+grep, candidates, use grep, alias grep,
    files to verify) and the submit, each read round split by the task's limit of 2 calls per turn (a turn that
    sends more has 2 done and the rest rate limited): at most 4 + ceil(candidates / 2) + ceil(to_verify / 2)
    steps, fewer steps and tokens than perfect's one call per step."""
    from tests.batch_helpers import profiled_row

    for seed in range(3):
        instance = CallbackSearch(**SMOKE).generate(seed)
        perfect = profiled_row(tmp_path, instance, profile="perfect")
        candidates = len(_candidates(instance))
        grep = instance.call("grep", {"pattern": rf"\b{instance.target['function']}\b"}).content
        grep += instance.call("grep", {"pattern": rf"\b{_alias(instance)}\b"}).content
        to_verify = len({line.split(":", 1)[0] for line in grep.splitlines()[1:] if line.startswith("src/")})
        bound = 4 + -(-candidates // 2) + -(-to_verify // 2)
        for trial in range(2):
            row = profiled_row(tmp_path, CallbackSearch(**SMOKE).generate(seed), trial=trial)
            assert row["outcome"] == "submitted" and row["steps"] <= bound, (seed, trial, row["steps"], bound)
            assert row["steps"] < perfect["steps"] and row["input_tokens"] < perfect["input_tokens"]


def test_an_unattended_docstring_quote_confuses_one_function_not_the_file():
    """Profile realistic may hide a line of a file (attention): a hidden closing quote of an earlier docstring
    must not turn the rest of the file into docstring and hide the call site."""
    from reference_agent.policies.callback_search import _call_sites

    instance = CallbackSearch().generate(0)
    site = instance.sites[0]
    lines = instance.files[site["file"]].splitlines()
    call_def = lines.index(next(line for line in lines if line.startswith(f"def {site['function']}(")))
    closing = max(i for i, line in enumerate(lines[:call_def]) if line.strip() == '"""')
    target, aliases = instance.target["function"], {_alias(instance)}
    assert site["function"] in _call_sites(lines, target, aliases)
    assert site["function"] in _call_sites(lines[:closing] + lines[closing + 1 :], target, aliases)


# --- issue 13 §3: the prompt's rules hold for every distractor, checked by code over many seeds --------------


def _module_of(path):
    return path[4:-3].replace("/", ".")


def _defs(instance):
    """(path, function node) of every top-level function under src/."""
    import ast

    for path, text in instance.files.items():
        if path.startswith("src/") and path.endswith(".py"):
            for node in ast.parse(text).body:
                if isinstance(node, ast.FunctionDef):
                    yield path, node


def _facade_aliases(instance):
    """Alias -> module of every src module that re-exports the target under another name."""
    import ast

    target_module, name = _module_of(instance.target["file"]), instance.target["function"]
    return {
        a.asname: _module_of(p)
        for p, t in instance.files.items()
        if p.startswith("src/") and " as " in t
        for node in ast.parse(t).body
        if isinstance(node, ast.ImportFrom) and node.module == target_module
        for a in node.names
        if a.name == name and a.asname
    }


def _names_bound_to_target(instance, tree, facade_aliases):
    """Names and module names under which a file can call the target (from its imports, facade aliases included)."""
    import ast

    target_module, name = _module_of(instance.target["file"]), instance.target["function"]
    package, leaf = target_module.rsplit(".", 1)
    direct, modules = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                bound = alias.asname or alias.name
                if node.module == target_module and alias.name == name:
                    direct.add(bound)
                elif alias.name in facade_aliases and node.module == facade_aliases[alias.name]:
                    direct.add(bound)
                elif node.module == package and alias.name == leaf:
                    modules.add(bound)
    return direct, modules


def _calling_functions(instance):
    """(path, function) of every src function whose body calls the target, resolved from imports and calls."""
    import ast

    facade_aliases, found = _facade_aliases(instance), set()
    for path, text in instance.files.items():
        if not (path.startswith("src/") and path.endswith(".py")):
            continue
        tree = ast.parse(text)
        direct, modules = _names_bound_to_target(instance, tree, facade_aliases)
        for function in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
            for node in ast.walk(function):
                f = node.func if isinstance(node, ast.Call) else None
                if (isinstance(f, ast.Name) and f.id in direct) or (
                    isinstance(f, ast.Attribute)
                    and f.attr == instance.target["function"]
                    and isinstance(f.value, ast.Name)
                    and f.value.id in modules
                ):
                    found.add((path, function.name))
    return found


SEEDS = range(20)
RULES = dict(files=40, functions_per_file=4)  # the rules do not depend on size; every distractor is planted


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_the_call_sites_are_exactly_the_src_functions_that_call_the_target():
    """Rule: a call site is a function under src/ whose body calls the target, directly, through an import
    alias (the facade's re-export) or as a module attribute. Resolved from the code's imports and calls (ast),
    it is the graded set; mentions in comments, log strings and docstrings (``audit_gateway_events``) are not."""
    for seed in SEEDS:
        instance = CallbackSearch(**RULES).generate(seed)
        calling = _calling_functions(instance)
        assert calling == {(s["file"], s["function"]) for s in instance.sites}, seed
        assert any(
            instance.target["function"] in ast.get_docstring(f) or ""
            for p, f in _defs(instance)
            if f.name == "audit_gateway_events"
        ), "the mention is planted"
        assert not any(f.name == "audit_gateway_events" for p, f in _defs(instance) if (p, f.name) in calling), (
            "a mention is never a call"
        )
        alias_caller = instance.sites[0] if instance.sites else None
        assert any(instance.target["function"] not in instance.files[s["file"]] for s in instance.sites), (
            "one call site calls the facade's alias: its file never names the target"
        )
        assert alias_caller is not None


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_exactly_one_function_is_the_payment_gateway_callback_handler():
    """Rule: the target is the one src function documented as handling the payment gateway's callback that is
    neither deprecated (its twin says DEPRECATED and nothing under src/ calls it) nor an endpoint that passes
    the event on; every other *callback* definition documents another service's callback."""
    for seed in SEEDS:
        instance = CallbackSearch(**RULES).generate(seed)
        handlers = []
        for path, f in _defs(instance):
            doc = (ast.get_docstring(f) or "").lower()
            if (
                "payment gateway" in doc
                and "callback" in doc
                and "deprecated" not in doc
                and "passes the event on" not in doc
            ):
                handlers.append((path, f.name))
            if "callback" in f.name and (path, f.name) != (instance.target["file"], instance.target["function"]):
                assert "payment gateway" not in doc or "deprecated" in doc or "passes the event on" in doc, (
                    seed,
                    f.name,
                )
        assert handlers == [(instance.target["file"], instance.target["function"])], (seed, handlers)
        legacy = instance.target["function"] + "_v1"
        assert not any(
            re.search(rf"\b{legacy}\(", t)
            for p, t in instance.files.items()
            if p.startswith("src/") and p != "src/payment/legacy_gateway.py"
        ), "nothing in src calls it"


def test_tests_and_docs_call_or_name_the_target_but_are_outside_the_scope_rule():
    """Rule: tests and docs do not count (the prompt says so): they call or name the target, and no call site
    is outside src/; the notify ``handle_callback`` has its own caller, which never calls the target."""
    for seed in SEEDS:
        instance = CallbackSearch(**RULES).generate(seed)
        name = instance.target["function"]
        assert re.search(rf"\b{name}\(", instance.files["tests/payment/test_callbacks.py"])
        assert name in instance.files["docs/payment.md"]
        assert all(s["file"].startswith("src/") for s in instance.sites)
        assert "handle_callback(" in instance.files["src/notify/sms.py"]
        assert "tests and docs do not count" in instance.user_prompt and "import alias" in instance.user_prompt


def test_without_the_task_statement_the_agent_counts_test_callers():
    """The scope rule is stated once, in the task: the use grep's test files are verified only when it is lost."""
    instance = CallbackSearch(**SMOKE).generate(0)
    policy = reference_policy(instance)
    grep = instance.call("grep", {"pattern": rf"\b{instance.target['function']}\b"}).content
    target = f"TARGET: {instance.target['file']}:{instance.target['function']}"
    with_task = policy._knowledge(
        [
            {"role": "user", "content": instance.user_prompt},
            {"role": "assistant", "content": target},
            {"role": "tool", "content": grep},
        ]
    )
    without = policy._knowledge([{"role": "assistant", "content": target}, {"role": "tool", "content": grep}])
    assert all(p.startswith("src/") for p in with_task["use_hits"])
    assert "tests/payment/test_callbacks.py" in without["use_hits"]


def test_summary_keeps_the_target_the_alias_and_the_call_sites():
    """The reference summary is lossy about which files were checked, not about the alias (a summary that kept
    the target but not the alias would lose the aliased call site)."""
    instance = CallbackSearch(**SMOKE).generate(0)
    policy = reference_policy(instance)
    name = instance.target["function"]
    grep = instance.call("grep", {"pattern": rf"\b{name}\b"}).content
    history = (
        f"[user]: {instance.user_prompt}\n[assistant]: TARGET: {instance.target['file']}:{name}\n[tool grep]: {grep}"
    )
    summary = policy.summarize(history)
    assert f"re-exports {name} as {_alias(instance)}" in summary and f"TARGET: {instance.target['file']}" in summary


def _digest(instance) -> str:
    return hashlib.sha256(json.dumps(instance.data_fingerprint(), sort_keys=True).encode()).hexdigest()


def test_extra_call_sites_default_leaves_the_instances_as_they_were():
    """``extra_call_sites`` (long size) draws after everything else: at 0 the default and smoke codebases are
    byte-identical to those generated before the knob existed (digests taken then)."""
    assert _digest(CallbackSearch().generate(0)).startswith("6622103520a5c29e")
    assert _digest(CallbackSearch(**SMOKE).generate(0)).startswith("ef885a40ec8a4665")
    assert CallbackSearch(extra_call_sites=0).generate(3).fingerprint() == CallbackSearch().generate(3).fingerprint()


def test_extra_call_sites_are_calls_in_modules_of_their_own_and_the_reference_agent_finds_them(tmp_path):
    family = CallbackSearch(files=60, functions_per_file=4, extra_call_sites=9)
    instance = family.generate(0)
    planted = {"payment_gateway_webhook", "replay_failed_callbacks", "reconcile_pending_payments"}
    planted |= {"settle_from_gateway_event", "debug_replay_callback"}
    extra = [s for s in instance.sites if s["function"] not in planted]
    assert len(extra) == 9 and len({s["file"] for s in instance.sites}) == len(instance.sites)
    name = instance.target["function"]
    for site in extra:
        assert "callback" not in site["function"], "the definitions grep must not list it as a candidate"
        text = instance.files[site["file"]]
        body = text.split(f"def {site['function']}(", 1)[1].split("\ndef ", 1)[0]
        assert re.search(rf"result = (\w+\.)?({name}|\w+_event)\(", body), body
    assert sum(f"import {name} as " in t for t in instance.files.values()) == 1, "one facade alias"
    row = run_reference(tmp_path, instance)
    assert row["success"] and row["score"] == 1.0, row["grade_detail"]
    assert family.generate(0).fingerprint() == instance.fingerprint()

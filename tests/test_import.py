"""``python -m harness import``: other harnesses' per-instance results as ctxbench run folders.

The worked example of docs/importing.md (examples/imported_study/study.csv: 500 instances, three
strategies, synthetic) goes through ``import``, ``report`` and ``compare --fail-on-regression``;
bad mappings and values are one line and exit 2 with nothing written; unpaired rows are counted,
written and reported, never dropped.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

from harness.records import read_jsonl
from tests.test_cli import harness as cli_harness

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "examples" / "imported_study"
STUDY_MAP = ["--map", "config=strategy,instance=instance_id,outcome=resolved,cost=cost_usd,tokens=input_tokens"]


def harness(*args, cwd):
    """``python -m harness ARGS`` from this checkout (tests/test_cli.py), paths given as they are."""
    return cli_harness(*map(str, args), cwd=cwd)


def write_csv(path: Path, rows: list[dict]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_study_csv_is_what_its_script_writes():
    sys.path.insert(0, str(STUDY))
    try:
        import make_study
    finally:
        sys.path.remove(str(STUDY))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=make_study.FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(make_study.rows())
    text = (STUDY / "study.csv").read_text(encoding="utf-8")
    assert buffer.getvalue() == text
    assert len(text.encode()) < 200_000
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 1500 and len({r["instance_id"] for r in rows}) == 500
    assert {r["strategy"] for r in rows} == {"raw_agent", "observation_masking", "llm_summary"}


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("imports")
    result = harness(
        "import", STUDY / "study.csv", "--format", "csv", "--map", STUDY / "mapping.yaml", "--out", out, cwd=out
    )
    assert result.returncode == 0, result.stderr
    return out, result.stdout


def test_import_writes_one_run_folder_per_configuration(imported):
    out, stdout = imported
    runs = sorted(p.parent.name for p in out.rglob("trials.jsonl"))
    assert runs == ["llm_summary", "observation_masking", "raw_agent"]
    rows = read_jsonl(out / "study" / "raw_agent" / "trials.jsonl")
    assert len(rows) == 500
    source = {r["instance_id"]: r for r in csv.DictReader((STUDY / "study.csv").open()) if r["strategy"] == "raw_agent"}
    for row in rows:
        original = source[row["instance_id"]]
        assert row["success"] == (original["resolved"] == "true")
        assert row["cost"] == pytest.approx(float(original["cost_usd"]))
        assert row["total_input_tokens"] == int(original["input_tokens"])
        assert row["imported"] is True and row["source_values"] == original and row["trial"] == 0
    assert "500 paired across all 3 configurations, all paired" in stdout


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_compare_gives_paired_difference_and_cost_ratio_with_intervals(imported):
    out, _ = imported
    result = harness(
        "compare", out / "study" / "raw_agent", out / "study" / "observation_masking", "--fail-on-regression", cwd=out
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "500 pairs: successes base 272, candidate 280 (base-only 19, candidate-only 27;" in result.stdout
    assert "success diff (candidate - base) +0.016 [" in result.stdout and "cost x0.476 [" in result.stdout
    worse = harness(
        "compare", out / "study" / "llm_summary", out / "study" / "raw_agent", "--fail-on-regression", cwd=out
    )
    assert worse.returncode == 1 and "REGRESSION: input tokens x1.89" in worse.stdout


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_report_works_on_imported_runs(imported):
    out, _ = imported
    result = harness("report", out / "study", cwd=out)
    assert result.returncode == 0, result.stderr
    assert "observation_masking@0" in result.stdout and "280/500" in result.stdout
    assert "WARNING" not in result.stderr  # imported instance ids are not mistaken for task sizes
    assert "| n/a |" in (out / "study" / "summary.md").read_text()  # no budget: "held budget" is not claimed


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_command_line_map_equals_yaml_map(imported, tmp_path):
    out, _ = imported
    result = harness("import", STUDY / "study.csv", "--format", "csv", *STUDY_MAP, "--out", tmp_path, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    strip = lambda rows: [{k: v for k, v in r.items() if k != "source"} for r in rows]  # noqa: E731
    for name in ("raw_agent", "llm_summary"):
        assert strip(read_jsonl(tmp_path / "study" / name / "trials.jsonl")) == strip(
            read_jsonl(out / "study" / name / "trials.jsonl")
        )


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--map", "succes=resolved"], "unknown field 'succes' in --map (fields: config, instance, outcome"),
        (["--map", "outcome=solved"], "column 'solved' (mapped to outcome) is not in"),
        (["--map", "config=strategy"], "no column for 'instance' in"),
        (["--map", "config"], "--map 'config': write FIELD=COLUMN"),
    ],
)
def test_bad_mapping_is_one_line_and_exit_2(args, needle, tmp_path):
    result = harness("import", STUDY / "study.csv", "--format", "csv", *args, "--out", tmp_path / "out", cwd=tmp_path)
    assert result.returncode == 2
    assert needle in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_bad_value_names_its_row_and_writes_nothing(tmp_path):
    rows = [
        {"config": "a", "instance": "i1", "outcome": "1", "cost": "0.5"},
        {"config": "a", "instance": "i2", "outcome": "maybe", "cost": "0.5"},
    ]
    path = write_csv(tmp_path / "r.csv", rows)
    result = harness("import", path, "--format", "csv", "--out", tmp_path / "out", cwd=tmp_path)
    assert result.returncode == 2 and "row 3: outcome 'maybe' is not a success or a failure" in result.stderr
    assert not (tmp_path / "out").exists()
    rows[1]["outcome"], rows[1]["cost"] = "0", ""
    write_csv(path, rows)
    result = harness("import", path, "--format", "csv", "--out", tmp_path / "out", cwd=tmp_path)
    assert result.returncode == 2 and "row 3: cost '' is not a non-negative number" in result.stderr


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_unpaired_rows_are_counted_written_and_reported(tmp_path):
    rows = [
        {"exp": "e", "config": c, "instance": f"i{n}", "outcome": str(int(n % 3 == 0)), "cost": "1.0"}
        for c in ("base", "cand")
        for n in range(12)
        if not (c == "cand" and n < 2)
    ]
    rows.append({"exp": "e", "config": "cand", "instance": "extra", "outcome": "1", "cost": "1.0"})
    path = write_csv(tmp_path / "r.csv", rows)
    result = harness(
        "import", path, "--format", "csv", "--map", "experiment=exp", "--out", tmp_path / "o", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "e / base: 12 trials, 10 paired across all 2 configurations, 2 without a partner" in result.stdout
    assert "e / cand: 11 trials, 10 paired across all 2 configurations, 1 without a partner" in result.stdout
    assert len(read_jsonl(tmp_path / "o" / "e" / "base" / "trials.jsonl")) == 12  # nothing dropped
    compare = harness("compare", tmp_path / "o" / "e" / "base", tmp_path / "o" / "e" / "cand", cwd=tmp_path)
    assert compare.returncode == 0 and "10 pairs" in compare.stdout
    assert "3 trials without a partner were left out" in compare.stdout


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_repeated_rows_are_trials_and_a_trial_column_must_be_unique(tmp_path):
    rows = [{"config": "a", "instance": "i1", "outcome": o, "trial": t} for o, t in (("pass", 0), ("fail", 1))]
    path = write_csv(tmp_path / "r.csv", rows)
    ok = harness("import", path, "--format", "csv", "--map", "trial=trial", "--out", tmp_path / "o1", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert [r["trial"] for r in read_jsonl(tmp_path / "o1" / "r" / "a" / "trials.jsonl")] == [0, 1]
    assert "r / a: 2 trials; the only configuration of 'r': nothing to pair with" in ok.stdout
    rows[1]["trial"] = 0
    write_csv(path, rows)
    dup = harness("import", path, "--format", "csv", "--map", "trial=trial", "--out", tmp_path / "o2", cwd=tmp_path)
    assert dup.returncode == 2 and "holds instance 'i1' trial 0 twice (rows 2 and 3" in dup.stderr
    write_csv(path, [{k: v for k, v in r.items() if k != "trial"} for r in rows])  # no trial column: occurrences
    plain = harness("import", path, "--format", "csv", "--out", tmp_path / "o3", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert [r["trial"] for r in read_jsonl(tmp_path / "o3" / "r" / "a" / "trials.jsonl")] == [0, 1]
    again = harness("import", path, "--format", "csv", "--out", tmp_path / "o3", cwd=tmp_path)
    assert again.returncode == 2 and "already holds imported trials" in again.stderr


def test_jsonl_format(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"label": c, "task_id": n, "ok": n % 2 == 0, "usd": 0.1, "calls": 7})
            for c in ("x", "y")
            for n in range(4)
        )
        + "\n",
        encoding="utf-8",
    )
    result = harness(
        "import",
        path,
        "--format",
        "jsonl",
        "--map",
        "config=label,instance=task_id,outcome=ok,cost=usd,turns=calls",
        "--experiment",
        "demo",
        "--out",
        tmp_path / "o",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    rows = read_jsonl(tmp_path / "o" / "demo" / "x" / "trials.jsonl")
    assert [(r["instance_id"], r["success"], r["steps"]) for r in rows] == [
        ("0", True, 7),
        ("1", False, 7),
        ("2", True, 7),
        ("3", False, 7),
    ]


# --------------------------------------------------------- a table of many configurations (The Complexity Trap's shape)

CT_MODELS = ("qwen-coder-big", "gemini-flash")
CT_STRATEGIES = {"Raw Agent": "baseline_raw", "Observation Masking": "baseline_N_1_M_10", "LLM-Summary": "summaries"}


def ct_shaped_csv(path: Path, instances: int = 20) -> Path:
    """Rows shaped like The Complexity Trap's per-instance CSV: one ``experiment`` per (model, strategy)."""
    rows = [
        {
            "experiment": f"local-{model}-{tag}.0-verified-{instances}",
            "strategy": strategy,
            "instance_id": f"repo__repo-{n}",
            "cost": f"{0.1 + n / 100:.3f}",
            "turn_count": str(10 + n),
            "outcome": str(int((n + i) % 3 != 0)),
        }
        for model in CT_MODELS
        for i, (strategy, tag) in enumerate(CT_STRATEGIES.items())
        for n in range(instances)
    ]
    return write_csv(path, rows)


CT_MAP = ["--map", "config=strategy,instance=instance_id,turns=turn_count"]


def test_an_automatically_mapped_experiment_column_is_said(tmp_path):
    path = ct_shaped_csv(tmp_path / "ct.csv")
    result = harness("import", path, "--format", "csv", *CT_MAP, "--out", tmp_path / "o", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "  experiment    <- column 'experiment' (same name)" in result.stdout
    assert result.stdout.count("nothing to pair with") == 6  # six experiments of one configuration each


def test_an_explicit_experiment_wins_over_the_column(tmp_path):
    path = ct_shaped_csv(tmp_path / "ct.csv")
    result = harness(
        "import", path, "--format", "csv", *CT_MAP, "--experiment", "ct", "--out", tmp_path / "o", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "  experiment    = 'ct' (--experiment)" in result.stdout
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["ct"]
    rows = read_jsonl(tmp_path / "o" / "ct" / "Raw_Agent" / "trials.jsonl")
    assert {r["family"] for r in rows} == {"ct"} and len(rows) == 40  # both models' rows: filter with --where


def test_experiment_flag_and_experiment_mapping_together_is_one_line(tmp_path):
    path = ct_shaped_csv(tmp_path / "ct.csv")
    result = harness(
        "import",
        path,
        "--format",
        "csv",
        "--map",
        "experiment=experiment",
        *CT_MAP,
        "--experiment",
        "ct",
        "--out",
        tmp_path / "o",
        cwd=tmp_path,
    )
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "--experiment and --map experiment=experiment both set the experiment: give one" in result.stderr
    assert not (tmp_path / "o").exists()


def test_every_field_has_a_mapping_line(tmp_path):
    path = ct_shaped_csv(tmp_path / "ct.csv")
    result = harness("import", path, "--format", "csv", *CT_MAP, "--out", tmp_path / "o", cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert lines[0] == f"mapping of {path}:"
    assert "  config        <- column 'strategy' (--map)" in lines
    assert "  outcome       <- column 'outcome' (same name)" in lines
    assert "  turns         <- column 'turn_count' (--map)" in lines
    assert (
        "  trial         = the row's occurrence of its instance in its configuration, from 0 (no trial column)" in lines
    )
    assert "  0 in every row (no column): tokens, output_tokens" in lines


@pytest.mark.slow  # over 1 s (benchmarks/speed_targets.py): the default tier stays under 3 minutes on 2 cores
def test_where_keeps_the_pair_of_one_model_and_compare_pairs_it(tmp_path):
    path = ct_shaped_csv(tmp_path / "ct.csv")
    raw, masked = (f"local-qwen-coder-big-{tag}.0-verified-20" for tag in ("baseline_raw", "baseline_N_1_M_10"))
    result = harness(
        "import",
        path,
        "--format",
        "csv",
        *CT_MAP,
        "--where",
        f"experiment={raw}",
        "--where",
        f"experiment={masked}",
        "--experiment",
        "ct",
        "--out",
        tmp_path / "o",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert f"  --where experiment in {sorted([raw, masked])}: kept 40 of 120 rows" in result.stdout
    assert "ct / Raw Agent: 20 trials, 20 paired across all 2 configurations, all paired" in result.stdout
    compare = harness(
        "compare",
        tmp_path / "o" / "ct" / "Raw_Agent",
        tmp_path / "o" / "ct" / "Observation_Masking",
        "--json",
        cwd=tmp_path,
    )
    assert compare.returncode == 0, compare.stderr
    stratum = json.loads(compare.stdout)["strata"][0]
    assert stratum["pairs"] == 20 and (stratum["base_successes"], stratum["cand_successes"]) == (13, 14)


def test_where_on_two_columns_must_match_both(tmp_path):
    path = ct_shaped_csv(tmp_path / "ct.csv")
    result = harness(
        "import",
        path,
        "--format",
        "csv",
        *CT_MAP,
        "--where",
        "strategy=Raw Agent",
        "--where",
        "instance_id=repo__repo-3",
        "--out",
        tmp_path / "o",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "kept 2 of 120 rows" in result.stdout  # one per model


@pytest.mark.parametrize(
    "where,needle",
    [
        ("model=qwen", "--where column 'model' is not in"),
        ("strategy=Nothing", "no row of"),
        ("strategy", "--where 'strategy': write COLUMN=VALUE"),
    ],
)
def test_a_bad_where_is_one_line_and_writes_nothing(tmp_path, where, needle):
    path = ct_shaped_csv(tmp_path / "ct.csv")
    result = harness(
        "import", path, "--format", "csv", *CT_MAP, "--where", where, "--out", tmp_path / "o", cwd=tmp_path
    )
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1 and needle in result.stderr
    assert not (tmp_path / "o").exists()

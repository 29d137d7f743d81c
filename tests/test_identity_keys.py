"""The run-time keys (what changes how a run is carried out, never what a trial is) are one list,
harness/identity.py's RUN_TIME_KEYS, which the runner, the main config and every preset use."""

from __future__ import annotations

import re

import pytest

from harness.config import CONFIG_DIR, compose
from harness.identity import NOT_CONFIG, RUN_TIME_KEYS, folder_name_exclusions
from harness.runner import NOT_IDENTITY

PRESETS = sorted(p.stem for p in (CONFIG_DIR / "experiment").glob("*.yaml"))


def test_every_copy_is_the_one_list():
    assert NOT_IDENTITY == RUN_TIME_KEYS and set(RUN_TIME_KEYS) <= set(NOT_CONFIG)
    for path in [CONFIG_DIR / "config.yaml", *(CONFIG_DIR / "experiment").glob("*.yaml")]:
        for line in path.read_text().splitlines():
            if "exclude_keys:" in line:
                assert re.search(r"exclude_keys: \$\{ctxbench_exclude_keys:[a-z_]*\}", line), (path.name, line)


@pytest.mark.parametrize("preset", [None, *PRESETS[:3]])
def test_a_job_folder_name_leaves_out_every_run_time_key(preset):
    run_time = [
        f"{key}={value}"
        for key, value in [
            ("trials", 1),
            ("workers", 2),
            ("progress", "false"),
            ("plots", "false"),
            ("latency_s", 0),
            ("max_cost", 5),
            ("cache_responses", "true"),
            ("response_cache", "x.sqlite"),
        ]
    ]
    assert len(run_time) == len(RUN_TIME_KEYS)
    cfg = compose([*([f"experiment={preset}"] if preset else []), "budget=8k", *run_time])
    assert cfg.hydra.job.override_dirname == "budget=8k"
    assert folder_name_exclusions("experiment")[0] == "experiment"

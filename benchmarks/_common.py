"""Shared helpers for the benchmark scripts: composing configs and running them."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def compose(*overrides: str, hydra_config: bool = False):
    """The run config for ``overrides``, composed without starting a Hydra job (``hydra_config``: keep ``hydra``)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from harness.config import CONFIG_DIR, register_resolvers

    register_resolvers()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return hydra_compose(config_name="config", overrides=list(overrides), return_hydra_config=hydra_config)


def suite_knobs(suite: str, family: str) -> list[str]:
    """The ``task.KNOB=VALUE`` overrides that size ``family`` alone (``task=NAME``) as ``suite`` sizes it (a null
    knob as Hydra's ``null``, not ``None``)."""
    knobs = compose(f"suite={suite}").suite.families[family]
    return [f"task.{key}={'null' if value is None else value}" for key, value in knobs.items() if key != "_target_"]


def timed_run(*overrides: str) -> tuple[float, list[dict]]:
    """Run a config into a temporary folder; return (seconds, rows)."""
    from harness.runner import execute

    cfg = compose(*overrides, "progress=false")
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        rows = execute(cfg, Path(tmp) / "run", echo=lambda _: None)
        return time.perf_counter() - start, rows

"""Running the presets' sweeps in this process (the configs and folder names of ``python -m harness run -m``)."""

from __future__ import annotations

from pathlib import Path

from _common import compose  # composes a run config without a Hydra job

from .doc_blocks import block_names
from .quickstart import QUICKSTART, RUNS
from .registry import source_of

PRESETS = (
    "review44",
    "invoice_layers",
    "compression_six",
    "status_bar",
    "cache_pitfalls",
    "strategy_zoo",
    "attention_model",
    "lost_in_middle",
    "context_growth",
    "three_versions",
    "review44_budget",
)


def sweep_points(name: str) -> list[list[str]]:
    """The override lists of every job of preset ``name`` (cartesian over its sweeper params)."""
    from omegaconf import OmegaConf

    from harness.config import sweep_values

    cfg = compose(f"experiment={name}", hydra_config=True)
    params = OmegaConf.to_container(cfg.hydra.sweeper.params) or {}
    points: list[list[str]] = [[]]
    for key, value in params.items():
        points = [p + [f"{key}={v}"] for p in points for v in sweep_values(str(value))]
    return points


def job_folder(point: list[str]) -> str:
    """The folder name of one job of a sweep (as ``run -m`` names it)."""
    return ",".join(sorted(point)).replace("/", "_").replace("=", "-").replace(",", "_")


def run_preset(name: str, results: Path) -> None:
    """Run every job of preset ``name`` into ``results/NAME/<job>`` (the folder names of ``run -m``)."""
    from omegaconf import open_dict

    from harness.runner import execute

    for point in sweep_points(name):
        cfg = compose(f"experiment={name}", *point, "progress=false", "plots=false")
        with open_dict(cfg):
            cfg.pop("hydra", None)
        execute(cfg, results / name / job_folder(point), echo=lambda _: None)


def run_quickstart(results: Path) -> list[str]:
    """Run the README's main job (``run strategy=headtail budget=25k``) into ``results/quickstart``; its lines."""
    from harness.config import config_dict
    from harness.identity import folder_name
    from harness.runner import execute

    cfg = compose(*QUICKSTART, "progress=false", "plots=false")  # plots are not part of the identity or the output
    lines: list[str] = []
    execute(cfg, results / "quickstart", echo=lines.append)
    text = "\n".join(lines).replace(str(results / "quickstart"), f"{RUNS}/{folder_name(config_dict(cfg))}")
    (results / "quickstart.txt").write_text(text)
    return text.splitlines()


def run_all(results: Path) -> None:
    """Run every preset and the README's main job into ``results``."""
    for name in PRESETS:
        run_preset(name, results)
    run_quickstart(results)


def run_for(path: Path, results: Path, only: set[str] | None = None) -> None:
    """Run what the generated blocks of ``path`` (or those in ``only``) need (their presets, the main job)."""
    names = [n for n in block_names(path) if only is None or n in only]
    for name in dict.fromkeys(source_of(n) for n in names):
        if name in PRESETS:
            run_preset(name, results)
        elif name == "quickstart":
            run_quickstart(results)

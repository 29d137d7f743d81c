"""``python -m harness run ... --dry-run``: what a run or sweep would do and roughly cost, without running it.

For each planned configuration it prints the trial count, the folder it would write, and an
ESTIMATE of input, cached and output tokens and USD cost under the chosen pricing profile. The
estimate comes from the reference agent (``model=scripted``, the configured profile if the run is
the reference agent, else ``realistic``): it runs one trial per task instance of the same
suite/task/strategy/budget/seeds into a temporary folder outside the results tree, and scales the
mean per-trial figures by the planned trial count. The reference agent batches like a capable LLM
but is not one: a real model's figures will differ. Nothing is written under ``results/``.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf

from harness.config import (
    CONFIG_DIR,
    compose,
    config_dict,
    container_dict,
    input_line,
    job_dirname,
    plain_overrides,
    sweep_values,
)
from harness.identity import folder_name
from harness.trial import run_trial
from harness.pricing import price_line
from harness.records import RunWriter
from harness.runner import (
    _node,
    build,
    build_model,
    check_server_side,
    check_tasks,
    max_cost_from,
    plan,
    settings_from,
)

REFERENCE_MODEL = "scripted"
DRY_RUN = "--dry-run"


@dataclass
class Estimate:
    """Token and cost figures of a configuration's planned trials (mean per trial x trial count)."""

    trials: int
    input_tokens: float = 0.0
    cached_tokens: float = 0.0
    output_tokens: float = 0.0
    cost: float = 0.0

    def __add__(self, other: "Estimate") -> "Estimate":
        return Estimate(
            self.trials + other.trials,
            self.input_tokens + other.input_tokens,
            self.cached_tokens + other.cached_tokens,
            self.output_tokens + other.output_tokens,
            self.cost + other.cost,
        )

    def line(self) -> str:
        """``estimate: input 12,345 tok (cached 6,000), output 789 tok, cost $0.0123``."""
        return (
            f"estimate: input {self.input_tokens:,.0f} tok (cached {self.cached_tokens:,.0f}), "
            f"output {self.output_tokens:,.0f} tok, cost ${self.cost:.4f}"
        )


def scaled(rows: list[dict], trials: int) -> Estimate:
    """The mean per-trial figures of ``rows`` (all model calls of a trial) times ``trials``."""
    n = max(len(rows), 1)
    mean = lambda key: sum(float(r.get(key) or 0) for r in rows) / n  # noqa: E731
    return Estimate(
        trials,
        mean("total_input_tokens") * trials,
        mean("total_cached_tokens") * trials,
        mean("total_output_tokens") * trials,
        mean("cost") * trials,
    )


# ---------------------------------------------------------------- the planned jobs


def sweep_params(cfg: DictConfig, sweeps: dict[str, list[str]]) -> dict[str, list[str]]:
    """The swept keys and values: an experiment preset's ``hydra.sweeper.params``, then the command line's."""
    preset = OmegaConf.select(cfg, "hydra.sweeper.params") or {}
    params = {str(k): sweep_values(str(v)) for k, v in preset.items()}
    params.update({k: v for k, v in sweeps.items() if v})
    return params


def planned_jobs(
    args: list[str], cfg: DictConfig, sweeps: dict[str, list[str]], multirun: bool
) -> list[tuple[list[str], DictConfig]]:
    """Each job of the run or sweep: its swept overrides and its composed config (Hydra's cartesian order)."""
    if not multirun:
        return [([], cfg)]
    params = sweep_params(cfg, sweeps)
    plain = plain_overrides(args)
    combos = itertools.product(*[[f"{k}={v}" for v in values] for k, values in params.items()])
    return [(list(combo), compose(plain + list(combo))) for combo in combos]


def override_dirname(job_cfg: DictConfig, overrides: list[str]) -> str:
    """Hydra's ``hydra.job.override_dirname`` of a job with ``overrides`` (sorted, excluded keys left out)."""
    conf = OmegaConf.select(job_cfg, "hydra.job.config.override_dirname") or {}
    exclude = set(conf.get("exclude_keys") or [])
    lines = sorted(
        input_line(o) for o in OverridesParser.create().parse_overrides(overrides) if o.key_or_group not in exclude
    )
    return str(conf.get("item_sep", ",")).join(lines).replace("=", str(conf.get("kv_sep", "=")))


def job_folder(job_cfg: DictConfig, sweep_dir: Path | None, overrides: Sequence[str] = ()) -> str:
    """The folder the job would write (the run's, or the sweep's subfolder), as far as it can be told now."""
    if sweep_dir is None:
        try:
            return str(job_cfg.hydra.run.dir)
        except Exception:  # an interpolation only Hydra's runtime resolves
            return f"results/runs/{folder_name(config_dict(job_cfg))}"
    subdir = container_dict(job_cfg.hydra.sweep, resolve=False).get("subdir")
    if subdir == "${ctxbench_run:}":
        return str(sweep_dir / folder_name(config_dict(job_cfg)))
    if subdir == "${ctxbench_dirname:${hydra.job.override_dirname}}":  # the experiment presets' fixed names
        name = override_dirname(job_cfg, list(overrides)) or "defaults"
        return str(sweep_dir / job_dirname(name))
    return f"{sweep_dir}/<{subdir}>"


# ---------------------------------------------------------------- the reference agent's token profile


def is_reference(cfg: DictConfig) -> bool:
    """True when the configured model is the reference agent (no API is called)."""
    target = str(OmegaConf.select(cfg, "model._target_") or "")
    return target.startswith("reference_agent.scripted")


def reference_config(cfg: DictConfig, cache_profile: str) -> DictConfig:
    """``cfg`` with the reference agent as model (and summarizer), one trial per instance, no faults or latency.

    The pricing, cache profile, suite, task, strategy, budget, hooks and seed stay the configured ones.
    """
    data = config_dict(cfg)
    if not is_reference(cfg):
        data["model"] = OmegaConf.to_container(OmegaConf.load(CONFIG_DIR / "model" / f"{REFERENCE_MODEL}.yaml"))
        data["summarizer"] = None
    data.update(
        trials=1, faults=None, latency_s=0, progress=False, workers=1, max_cost=None, cache_profile=cache_profile
    )
    return OmegaConf.create(data)


def reference_rows(ref_cfg: DictConfig, pricing: Any = None) -> list[dict]:
    """Run the reference agent on every planned instance once, in a temporary folder; its trial rows.

    ``pricing`` (the configured run's, e.g. ``auto`` for its model) prices the calls; ``None``: ``ref_cfg``'s.
    """
    with tempfile.TemporaryDirectory(prefix="ctxbench-dry-run-") as tmp:
        settings, strategy_spec, model_spec = settings_from(ref_cfg, Path(tmp))
        if pricing is not None:
            settings = replace(settings, pricing=pricing)
        jobs, _ = plan(ref_cfg)
        model = build_model(model_spec)
        summarizer = build_model(_node(ref_cfg.summarizer), "summarizer") if ref_cfg.get("summarizer") else None
        writer = RunWriter(Path(tmp))
        try:
            return [
                run_trial(
                    trial_id=job.trial_id,
                    trial_index=job.trial_index,
                    instance=job.take_instance(),
                    strategy=build(strategy_spec, "strategy"),
                    model=model,
                    summarizer=summarizer,
                    settings=settings,
                    writer=writer,
                )
                for job in jobs
            ]
        finally:
            writer.close()


def estimate(job_cfg: DictConfig) -> tuple[int, Estimate, Any]:
    """The job's planned trial count, its estimate, and its trial settings (pricing, cache profile)."""
    settings, strategy_spec, model_spec = settings_from(job_cfg, Path("dry-run"))
    jobs, _ = plan(job_cfg)
    strategy = build(strategy_spec, "strategy")  # bad parameters: one line, as a real run says it
    model = build_model(model_spec)
    check_server_side(strategy, model, settings.strategy_name)  # refused as a real run refuses
    check_tasks([model], jobs)  # model=scripted on a family without a reference policy: refused as a real run
    max_cost_from(job_cfg)
    rows = reference_rows(reference_config(job_cfg, settings.cache_profile.name), settings.pricing)
    return len(jobs), scaled(rows, len(jobs)), settings


# ---------------------------------------------------------------- the printout


def pricing_line(pricing: Any) -> str:
    """``pricing: auto [genai-prices 0.2.3 openai/gpt-4.1-mini] (USD per 1M tokens: input 0.40, ...)``."""
    return price_line(pricing)


def key_lines(cfg: DictConfig) -> list[str]:
    """One line per API key variable the configured models need that is not set (a real run stops at it)."""
    lines = []
    for node in ("model", "summarizer"):
        spec = OmegaConf.select(cfg, node)
        env = OmegaConf.select(cfg, f"{node}.api_key_env") if spec is not None else None
        if env and not os.environ.get(str(env)):
            lines.append(
                f"api key: {env} is not set (model {OmegaConf.select(cfg, f'{node}.name')}): a real run "
                f"would stop before its first call; export {env}=... first"
            )
    return lines


def note_lines(cfg: DictConfig, pricing_name: str) -> list[str]:
    """What the estimate is (and is not)."""
    profile = OmegaConf.select(cfg, "model.profile") if is_reference(cfg) else None
    if is_reference(cfg):
        return [
            f"note: model {cfg.model.get('name', REFERENCE_MODEL)} is the reference agent (profile {profile}), "
            "not an LLM: the run is free (no API is called);",
            f"      the figures are its own token profile, priced as if with pricing {pricing_name}.",
        ]
    return [
        f"note: ESTIMATE from the reference agent (model={REFERENCE_MODEL}, profile realistic) on the same tasks, "
        f"priced with pricing {pricing_name};",
        "      it batches like a capable LLM but is not one: the configured model's tokens and cost will differ.",
    ]


def dry_run(
    args: list[str], cfg: DictConfig, sweeps: dict[str, list[str]], sweep_dir: Path | None, echo: Any = print
) -> int:
    """Print the plan and the estimate of ``python -m harness run ARGS``; write nothing; return 0."""
    jobs = planned_jobs(args, cfg, sweeps, sweep_dir is not None)
    estimates = [estimate(job_cfg) for _, job_cfg in jobs]  # a config error: one line before any output
    echo("dry run: nothing is run or written")
    if sweep_dir is not None:
        echo(f"sweep: {len(jobs)} jobs -> {sweep_dir}")
    total, pricing = None, None
    plain = plain_overrides(args)
    for i, ((overrides, job_cfg), (n, est, settings)) in enumerate(zip(jobs, estimates, strict=False), 1):
        pricing = settings.pricing
        label = " ".join(overrides) or "(no swept keys)"
        head = f"job {i}/{len(jobs)}: {label}" if sweep_dir is not None else "run"
        echo(f"{head} -> {job_folder(job_cfg, sweep_dir, plain + overrides)}")
        echo(f"  {settings.strategy_name}@{job_cfg.budget} model {settings.model_name}: {n} trials; {est.line()}")
        total = est if total is None else total + est
    if total is not None and len(jobs) > 1:
        echo(f"total: {total.trials} trials; {total.line()}")
    for line in dict.fromkeys(pricing_line(settings.pricing) for _, _, settings in estimates):
        echo(line)
    if pricing is not None:
        for line in note_lines(jobs[0][1], pricing.name):
            echo(line)
    for line in dict.fromkeys(line for _, job_cfg in jobs for line in key_lines(job_cfg)):
        echo(line)
    return 0

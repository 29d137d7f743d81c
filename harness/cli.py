"""Command line: ``python -m harness {run,list} ...``.

Hydra parses ``key=value`` only, so the subcommand is taken off ``sys.argv`` before Hydra
sees the rest. ``run`` validates group names and budgets first, so that a typo gives one
clear line, exit code 2, and no output folder.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"
GROUPS = ("strategy", "task", "suite", "model", "summarizer", "pricing", "faults", "experiment")
USAGE = """usage: python -m harness COMMAND [ARGS]

commands:
  run [key=value ...]   run trials (Hydra overrides; -m for a sweep), e.g. strategy=headtail budget=25k
  list                  strategies, task families, suites, models, pricing profiles and experiment presets
  report RUN... [--out DIR]            summary.md, summary.csv and plots of runs or sweeps
  compare BASE CAND [--fail-on-regression] [--tolerance 0.10]   paired comparison, regression gate
"""


class UsageError(ValueError):
    """Bad command-line input: one line, exit code 2."""


def options(group: str) -> list[str]:
    """The config names available in a group (``configs/<group>/*.yaml``)."""
    return sorted(p.stem for p in (CONFIG_DIR / group).glob("*.yaml"))


def _sweep_values(value: str) -> list[str]:
    value = value.strip()
    for wrapper in ("choice(", "glob("):
        if value.startswith(wrapper) and value.endswith(")"):
            value = value[len(wrapper) : -1]
    return [v.strip().strip("'\"") for v in value.split(",") if v.strip()]


def validate_overrides(args: list[str]) -> None:
    """Check group names and budgets in the overrides; raise ``UsageError`` with the valid values."""
    from harness.budget import BudgetError, parse_budget

    for arg in args:
        if arg.startswith("-") or "=" not in arg:
            continue
        key, value = arg.split("=", 1)
        key = key.lstrip("+~")
        if key in GROUPS or (key.startswith("variant/") and (CONFIG_DIR / key).is_dir()):
            valid = options(key)  # variant/<preset>: the non-cartesian variants of an experiment preset
            for name in _sweep_values(value):
                if name in ("null", "none") and key in ("task", "experiment", "summarizer", "faults"):
                    continue
                if name not in valid:
                    raise UsageError(f"unknown {key} {name!r} (valid: {', '.join(valid)})")
        elif key == "budget":
            for budget in _sweep_values(value):
                try:
                    parse_budget(budget)
                except BudgetError as exc:
                    raise UsageError(str(exc)) from None


def fail(message: str) -> None:
    """Print one error line and exit with code 2."""
    print(f"ctxbench: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def cmd_list() -> int:
    """Print what can be named on the command line."""
    from omegaconf import OmegaConf

    def describe(group: str, name: str) -> str:
        path = CONFIG_DIR / group / f"{name}.yaml"
        first = next((line[1:].strip() for line in path.read_text().splitlines() if line.startswith("#") and "@package" not in line), "")
        return f"  {name:<22} {first}"

    sections = [("strategies", "strategy"), ("task families", "task"), ("suites", "suite"),
                ("models", "model"), ("summarizers", "summarizer"), ("pricing profiles", "pricing"), ("fault injection", "faults"), ("experiments", "experiment")]
    for title, group in sections:
        names = options(group)
        if not names:
            continue
        print(f"{title} ({group}=NAME):")
        for name in names:
            print(describe(group, name))
        print()
    del OmegaConf
    return 0


def _register_resolvers() -> None:
    from omegaconf import OmegaConf

    if not OmegaConf.has_resolver("ctxbench_dirname"):
        OmegaConf.register_new_resolver(
            "ctxbench_dirname", lambda name: (name or "defaults").replace("/", "_").replace("=", "-").replace(",", "_")
        )


def cmd_run(args: list[str]) -> int:
    """Validate, then hand the overrides to Hydra."""
    validate_overrides(args)
    import hydra
    from hydra.core.hydra_config import HydraConfig

    _register_resolvers()

    @hydra.main(config_path=str(CONFIG_DIR), config_name="config", version_base="1.3")
    def job(cfg) -> None:
        from harness.runner import ConfigError, execute

        run_dir = Path(HydraConfig.get().runtime.output_dir)
        existed_with_trials = (run_dir / "trials.jsonl").exists()
        try:
            execute(cfg, run_dir)
        except ConfigError as exc:
            if not existed_with_trials:
                _remove_empty_run_dir(run_dir)
            fail(str(exc))

    sys.argv = [sys.argv[0], *args]
    job()
    return 0


def _remove_empty_run_dir(run_dir: Path) -> None:
    """Remove a run folder that holds nothing but Hydra's own files."""
    if not run_dir.exists():
        return
    leftovers = [p for p in run_dir.iterdir() if p.name not in (".hydra",) and not p.name.endswith(".log")]
    if not leftovers:
        shutil.rmtree(run_dir, ignore_errors=True)
        parent, stop = run_dir.parent, Path.cwd().resolve()
        while parent.resolve() != stop and stop in parent.resolve().parents and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m harness``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    command, rest = argv[0], argv[1:]
    try:
        if command == "run":
            return cmd_run(rest)
        if command == "list":
            return cmd_list()
        from harness import commands  # report / compare and later commands register here

        handler = commands.COMMANDS.get(command)
        if handler is None:
            raise UsageError(f"unknown command {command!r} (valid: run, list, {', '.join(sorted(commands.COMMANDS))})")
        return handler(rest)
    except UsageError as exc:
        fail(str(exc))
    return 0

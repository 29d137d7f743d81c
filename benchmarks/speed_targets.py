"""Issue 23's whole-command targets, timed for one checkout: print a table of figures (asserts nothing).

    .venv/bin/python benchmarks/speed_targets.py                    # this checkout
    .venv/bin/python benchmarks/speed_targets.py --repo /tmp/before # another (a git worktree of an older commit)
    .venv/bin/python benchmarks/speed_targets.py --only noop,workers --suite   # --suite: also the README's test command

Figures (wall seconds unless said; each command run by this interpreter with ``PYTHONPATH=REPO``):
- ``main job``: ``python -m harness run`` with the defaults (70 trials), ``workers=1``;
- ``workers=2``: the same into a new folder with ``workers=2``, and its speed-up over ``workers=1``
  (target: at least 1.7x with the reference agent);
- ``no-op rerun``: the main job run again on its finished folder, median of 3 (target: under 3 s);
- ``sweep, 1 job at a time`` / ``joblib n_jobs=2``: a 2-job sweep (``strategy=none,headtail``,
  ``suite.instances=2``) with Hydra's basic launcher and with ``hydra/launcher=joblib``
  (target: joblib faster than one job at a time);
- ``start-up``: ``python -m harness list`` and a run refused for bad input (``run budget=lots``,
  exit 2), median of 5 each: what every command pays before it does anything (pandas and numpy
  load on first use, harness/lazy.py);
- with ``--suite``: the README's test command (``python -m pytest``) in REPO, its wall time and
  CPU-seconds (target: at most 180 s on an idle 2-core machine).
Takes about 2-3 minutes without ``--suite`` (measured), plus the suite's own time with it. Read the
figures from an idle machine: a loaded one stretches every wall time, the speed-ups most.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUIET = ["progress=false", "plots=false"]
SWEEP = ["-m", "strategy=none,headtail", "suite.instances=2", *QUIET]


def timed(command: list[str], repo: Path, cwd: Path, check: bool = True) -> tuple[float, float]:
    """Run ``command`` with ``PYTHONPATH=repo`` in ``cwd``: (wall seconds, CPU seconds of it and its children);
    ``check``: a non-zero exit raises."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        command,
        cwd=cwd,
        check=check,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(repo)},
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def harness(repo: Path, cwd: Path, *args: str, check: bool = True) -> tuple[float, float]:
    """``python -m harness ARGS`` of ``repo``, timed."""
    return timed([sys.executable, "-m", "harness", *args], repo, cwd, check)


def startup(repo: Path, cwd: Path) -> list[tuple[str, str]]:
    """Median wall and CPU seconds of ``list`` and of a run refused for bad input, 5 times each."""
    rows = []
    for what, args in (("start-up: list", ["list"]), ("start-up: run budget=lots (exit 2)", ["run", "budget=lots"])):
        runs = [harness(repo, cwd, *args, check=False) for _ in range(5)]
        wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        rows.append((what, f"{wall:.2f} s ({cpu:.2f} CPU-s, median of 5)"))
    return rows


def measure(repo: Path, only: set[str], suite: bool) -> list[tuple[str, str]]:
    """The figures of ``repo`` as (what, value) lines."""
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="ctxbench-speed-") as tmp:
        work = Path(tmp)
        if "startup" in only:
            rows.extend(startup(repo, work))
        if only & {"workers", "noop"}:
            one, cpu = harness(repo, work, "run", *QUIET, f"hydra.run.dir={work / 'w1'}")
            rows.append(("main job, workers=1", f"{one:.1f} s ({cpu:.1f} CPU-s)"))
            if "workers" in only:
                two, cpu = harness(repo, work, "run", *QUIET, "workers=2", f"hydra.run.dir={work / 'w2'}")
                rows.append(("main job, workers=2", f"{two:.1f} s ({cpu:.1f} CPU-s); speed-up {one / two:.2f}x"))
            if "noop" in only:
                runs = [harness(repo, work, "run", *QUIET, f"hydra.run.dir={work / 'w1'}")[0] for _ in range(3)]
                rows.append(("no-op rerun of the main job", f"{statistics.median(runs):.2f} s (median of 3)"))
        if "launcher" in only:
            basic, _ = harness(repo, work, "run", *SWEEP, f"hydra.sweep.dir={work / 's1'}")
            joblib, _ = harness(
                repo,
                work,
                "run",
                *SWEEP,
                "hydra/launcher=joblib",
                "hydra.launcher.n_jobs=2",
                f"hydra.sweep.dir={work / 's2'}",
            )
            rows.append(("2-job sweep, 1 job at a time", f"{basic:.1f} s"))
            rows.append(("2-job sweep, joblib n_jobs=2", f"{joblib:.1f} s; speed-up {basic / joblib:.2f}x"))
    if suite:
        wall, cpu = timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], repo, repo)
        rows.append(("README's test command", f"{wall:.0f} s ({cpu:.0f} CPU-s)"))
    return rows


def main() -> None:
    """Parse the options, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=ROOT, help="the checkout to time (default: this one)")
    parser.add_argument(
        "--only", default="startup,workers,noop,launcher", help="figures: startup, workers, noop, launcher"
    )
    parser.add_argument("--suite", action="store_true", help="also time the README's test command in REPO")
    args = parser.parse_args()
    rows = measure(args.repo.resolve(), set(args.only.split(",")), args.suite)
    print(f"repo: {args.repo} (load average {os.getloadavg()[0]:.1f} at the end)")
    width = max(len(what) for what, _ in rows)
    for what, value in rows:
        print(f"  {what:<{width}}  {value}")


if __name__ == "__main__":
    main()

"""``workers=N``: trials in parallel, in threads for models that wait on a network, in processes for CPU-bound ones.

A model declares which it is with the class attribute ``cpu_bound`` (the scripted reference agent
does: its policy is Python, and threads would share one core through the GIL). Network backends
do not, and keep threads: they wait on I/O, share their rate limits (``Throttled``) and their
response cache, and cost no start-up.

Processes are forked workers (a fork of the parent, which has built the model, the task families
and everything else, so nothing is imported or composed again). A worker runs one trial into a
``CollectingWriter``: it writes the trial's transcript itself, and hands its step rows back with the
trial row, so the parent stays the only writer of ``steps.jsonl`` and ``trials.jsonl`` and commits
each trial as it does with threads (steps, then the fsynced trial row). The records are the same
whatever the number and kind of workers (the runner sorts them into plan order at the end).
Workers ignore Ctrl-C: the parent stops starting trials, the ones in flight finish unrecorded (they
run again on resume), as with threads. The parent's run-folder lock covers them; they close their
copies of it and die with the parent, so after ``kill -9`` a rerun finds the folder free.

``workers`` is capped at the trials the run has to run (``capped_workers``; the runner prints the one line
``workers=1000 capped at 7: the run has 7 trials to run``): a worker beyond them would be a thread or a
forked process with nothing to do.
"""

from __future__ import annotations

import multiprocessing
import signal
from concurrent.futures import FIRST_COMPLETED, Executor, ProcessPoolExecutor, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable, Sequence

from harness.models.base import innermost
from harness.records import Transcript, TRANSCRIPTS
from harness.run_lock import close_inherited_locks

Commit = Callable[[dict, list[dict]], None]
RunOne = Callable[[Any, Any], dict]


class CollectingWriter:
    """The writer of one trial in a worker process: its transcript goes to the run folder, its steps to a list."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self.steps: list[dict] = []

    def transcript(self, trial_id: str) -> Transcript:
        """The trial's transcript, in the run folder (as ``RunWriter.transcript``)."""
        return Transcript(self.run_dir / TRANSCRIPTS, trial_id)

    def step(self, row: dict) -> None:
        """Keep a step row for the parent to write."""
        self.steps.append(row)


def uses_processes(model: Any, workers: int, shared_state: bool) -> bool:
    """Whether ``workers`` trials of ``model`` run in processes: a CPU-bound model, more than one worker,
    ``fork`` available, and no state the trials must share in one process (``shared_state``: a response
    cache's database connection)."""
    return (
        workers > 1
        and bool(getattr(innermost(model), "cpu_bound", False))
        and not shared_state
        and "fork" in multiprocessing.get_all_start_methods()
    )


def capped_workers(workers: int, trials: int) -> tuple[int, str | None]:
    """``workers`` capped at the ``trials`` to run (a worker more than there are trials would only start, and with
    processes fork, for nothing), at least one; and the line that says so when the cap applies, else None."""
    if 0 < trials < workers:
        return trials, f"workers={workers} capped at {trials}: the run has {trials} trial{'s' * (trials != 1)} to run"
    return max(1, workers), None


_FORKED: dict[str, Any] = {}  # what a forked worker inherits: the jobs and how to run one


def _start_worker() -> None:
    """A forked worker: Ctrl-C is the parent's to handle, the parent's lock is not the worker's to keep, and
    the worker dies with its parent (``kill -9`` of the run leaves no worker behind)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    close_inherited_locks()
    die_with_parent()


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (``PR_SET_PDEATHSIG``); a no-op elsewhere."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _run_forked(index: int) -> tuple[dict, list[dict]]:
    """In a worker: run job ``index`` of the inherited plan; its row and its step rows."""
    writer = CollectingWriter(_FORKED["run_dir"])
    row = _FORKED["one"](_FORKED["jobs"][index], writer)
    return row, writer.steps


def run_jobs(
    pending: Sequence[Any],
    one: RunOne,
    commit: Commit,
    workers: int,
    stop: Callable[[], bool],
    writer: Any,
    processes: bool = False,
) -> int:
    """Run ``pending`` (``workers`` at a time), committing each row with its steps; start no job once ``stop()``.

    ``one(job, writer)`` runs one trial and returns its row; ``commit(row, steps)`` records it (``steps``
    is empty when the trial wrote them through ``writer`` itself: one worker, or threads). Returns how
    many jobs were started (``len(pending)`` unless ``stop`` ended the run early); trials in flight
    when ``stop()`` turns true still finish and are recorded.
    """
    if workers == 1:
        started = 0
        for job in pending:
            if stop():
                break
            started += 1
            commit(one(job, writer), [])
        return started
    if processes:
        _FORKED.update(one=one, jobs=list(pending), run_dir=writer.run_dir)
        pool: Executor = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("fork"), initializer=_start_worker
        )
        submit = lambda index: pool.submit(_run_forked, index)  # noqa: E731
    else:
        pool = ThreadPoolExecutor(max_workers=workers)
        submit = lambda index: pool.submit(lambda: (one(pending[index], writer), []))  # noqa: E731
    try:
        with pool:
            return _drive(len(pending), submit, commit, workers, stop)
    finally:
        _FORKED.clear()


def _drive(total: int, submit: Callable[[int], Any], commit: Commit, workers: int, stop: Callable[[], bool]) -> int:
    """Keep ``workers`` jobs in flight until all ``total`` are done or ``stop()``; commit each as it finishes."""
    started = 0
    in_flight: set = set()
    try:
        while True:
            while len(in_flight) < workers and not stop() and started < total:
                in_flight.add(submit(started))
                started += 1
            if not in_flight:
                return started
            finished, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in finished:
                commit(*future.result())
    except BaseException:  # Ctrl-C or a crash: start no further trial
        for future in in_flight:
            future.cancel()
        raise

"""The instrumented runs of one diagnosis (its re-run, its fix trials): each runs once, and
the trials that will be asked for next run ahead, concurrently, on the machine's cores.

The trials themselves stay sequential (:mod:`tutor.diagnosis.reasoning` decides, in order,
which fix to try next and when to stop); they only say which trials they will run whatever
the ones before show, in their order (:meth:`TrialRuns.ahead`). A run is deterministic
(seeded, one thread), so a trial run ahead gives exactly the result it would have given when
its turn came: concurrency changes when a result is ready, never what it is. Runs that turn
out not to be needed are stopped.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, NamedTuple

from tutor.sandbox.models import Limits, RunBudget, RunResult

if TYPE_CHECKING:
    from tutor.sandbox.runner import Runner, RunOptions


def cores() -> int:
    """The CPUs this process may run on: how many runs go at once."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


class Trial(NamedTuple):
    """A program to run instrumented, and how much of its training (None: all of it)."""

    code: str
    budget: RunBudget | None = None


def instrumented(runner: Runner, trial: Trial, device: str, limits: Limits,
                 cancel: threading.Event | None = None) -> RunResult:
    """The instrumented run of ``trial``. A run whose budget cut its training and that then
    did not end ok runs again whole: what the code after a shorter training did (an assert
    on the accuracy it reached) is not what the program does."""
    options: RunOptions = {"device": device, "limits": limits, "instrument": True}
    if cancel is not None:
        options["cancel"] = cancel
    if trial.budget is None:
        return runner.run(trial.code, **options)
    budgeted: RunOptions = {**options, "budget": trial.budget}
    result = runner.run(trial.code, **budgeted)
    if result.outcome == "ok" or result.evidence is None or result.evidence.cut is None or (
            cancel is not None and cancel.is_set()):
        return result
    return runner.run(trial.code, **options)


class TrialRuns:
    """Instrumented runs of one diagnosis: :meth:`result` runs a trial (once), :meth:`ahead`
    starts the next ones, up to ``workers`` runs in flight."""

    def __init__(self, runner: Runner, device: str, limits: Limits, workers: int) -> None:
        self.runner, self.device, self.limits = runner, device, limits
        self.workers = max(1, workers)
        # one thread more than runs ahead: a program asked for that was not foreseen (a
        # follow-up fix) starts at once instead of queueing behind them
        self._pool = ThreadPoolExecutor(max_workers=self.workers + 1,
                                        thread_name_prefix="fix-trial")
        self._runs: dict[Trial, tuple[Future[RunResult], threading.Event]] = {}
        self._waiting: list[Trial] = []
        self._asked: set[Trial] = set()
        self._lock = threading.RLock()  # a run done at once calls back under it

    def ahead(self, trials: Sequence[Trial]) -> None:
        """The trials the diagnosis will run next whatever the trials before show (unless
        its budget of trials ends first), in its order: they start as workers come free. A
        run in flight that is not among them, nor was asked for, is stopped. (Trials it runs
        only if one before fails are not run ahead: on the dev and test programs, 21 of 159
        were asked for.)"""
        with self._lock:
            self._waiting = [t for t in dict.fromkeys(trials) if t not in self._runs]
            wanted = {*trials, *self._asked}
            for trial, (future, cancel) in list(self._runs.items()):
                if trial not in wanted and not future.done():  # run ahead for nothing
                    cancel.set()
                    del self._runs[trial]
            self._fill()

    def result(self, trial: Trial) -> RunResult:
        """The run of ``trial``: its result when it ran ahead, else it runs now."""
        with self._lock:
            self._asked.add(trial)
            if trial in self._waiting:
                self._waiting.remove(trial)
            if trial not in self._runs:
                self._start(trial)
            future = self._runs[trial][0]
        try:
            return future.result()
        finally:
            with self._lock:
                self._fill()

    def close(self) -> None:
        """Stop the runs nobody asked for yet; wait for none of them."""
        with self._lock:
            self._waiting.clear()
            for future, cancel in self._runs.values():
                if not future.done():
                    cancel.set()
                    future.cancel()
        self._pool.shutdown(wait=False)

    def _in_flight(self) -> int:
        return sum(1 for future, _ in self._runs.values() if not future.done())

    def _fill(self) -> None:
        while self._waiting and self._in_flight() < self.workers:
            self._start(self._waiting.pop(0))

    def _start(self, trial: Trial) -> None:
        cancel = threading.Event()
        future = self._pool.submit(instrumented, self.runner, trial, self.device, self.limits,
                                   cancel)
        future.add_done_callback(lambda _: self._refill())
        self._runs[trial] = (future, cancel)

    def _refill(self) -> None:
        with self._lock:
            self._fill()

"""The instrumented runs of one diagnosis's fix trials: each program runs once, and the runs
the trials will ask for next run ahead, concurrently, on the machine's cores.

The trials themselves stay sequential (:mod:`tutor.diagnosis.reasoning` decides, in order,
which fix to try next and when to stop); they only say which programs they may need, in the
order they would need them (:meth:`TrialRuns.ahead`). A run is deterministic (seeded, one
thread), so a program run ahead gives exactly the result it would have given when its turn
came: concurrency changes when a result is ready, never what it is. Runs that turn out not to
be needed are stopped when the diagnosis ends (:meth:`TrialRuns.close`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from tutor.sandbox.models import Limits, RunResult

if TYPE_CHECKING:
    from tutor.sandbox.runner import Runner


def cores() -> int:
    """The CPUs this process may run on: how many runs go at once."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def _idle_cores() -> float:
    """Cores no process wants now, by the load average (which counts our own runs)."""
    try:
        return cores() - os.getloadavg()[0]
    except OSError:
        return 0.0


class TrialRuns:
    """Instrumented runs by program text: :meth:`result` runs a program (once), :meth:`ahead`
    starts the next ones, up to ``workers`` runs in flight."""

    def __init__(self, runner: Runner, device: str, limits: Limits, workers: int) -> None:
        self.runner, self.device, self.limits = runner, device, limits
        self.workers = max(1, workers)
        # one thread more than runs ahead: a program asked for that was not foreseen (a
        # follow-up fix) starts at once instead of queueing behind them
        self._pool = ThreadPoolExecutor(max_workers=self.workers + 1,
                                        thread_name_prefix="fix-trial")
        self._runs: dict[str, tuple[Future[RunResult], threading.Event]] = {}
        self._waiting: list[str] = []
        self._maybe: list[str] = []
        self._lock = threading.RLock()  # a run done at once calls back under it
        self.started = 0
        """Programs sent to the sandbox (each at most once)."""

    def ahead(self, certain: Sequence[str], maybe: Sequence[str] = ()) -> None:
        """The programs the trials will need next (``certain``: unless a budget ends them
        first), then those they may need (``maybe``: only if an earlier trial fails), the
        likeliest first. Certain ones start as workers come free; a maybe only while a core
        is idle, so that a run nobody may need does not slow one that is."""
        with self._lock:
            self._waiting = [c for c in dict.fromkeys(certain) if c not in self._runs]
            self._maybe = [c for c in dict.fromkeys(maybe)
                           if c not in self._runs and c not in self._waiting]
            self._fill()

    def result(self, code: str) -> RunResult:
        """The run of ``code``: its result when it ran ahead, else it runs now."""
        with self._lock:
            for queue in (self._waiting, self._maybe):
                if code in queue:
                    queue.remove(code)
            if code not in self._runs:
                self._start(code)
            future = self._runs[code][0]
        try:
            return future.result()
        finally:
            with self._lock:
                self._fill()

    def close(self) -> None:
        """Stop the runs nobody asked for yet; wait for none of them."""
        with self._lock:
            self._waiting.clear()
            self._maybe.clear()
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
        while self._maybe and self._in_flight() < min(self.workers, _idle_cores()):
            self._start(self._maybe.pop(0))

    def _start(self, code: str) -> None:
        cancel = threading.Event()
        future = self._pool.submit(self.runner.run, code, device=self.device,
                                   limits=self.limits, instrument=True, cancel=cancel)
        future.add_done_callback(lambda _: self._refill())
        self._runs[code] = (future, cancel)
        self.started += 1

    def _refill(self) -> None:
        with self._lock:
            self._fill()

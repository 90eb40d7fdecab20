"""Looking at live processes through /proc (no psutil): what a run left behind."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence


def _stat(pid: str) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None


def alive(pid: int) -> bool:
    fields = _stat(str(pid))
    return fields is not None and fields[0] != b"Z"


def children(pid: int) -> list[int]:
    """Live children of ``pid`` (empty where the kernel does not list them)."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                found += [int(child) for child in handle.read().split()]
    except OSError:
        return []
    return [child for child in found if alive(child)]


def in_session_or_group(leader: int) -> list[int]:
    """Live (non-zombie) processes whose session or process group is ``leader``'s."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat(entry)
        if fields is None or fields[0] == b"Z":
            continue
        pgrp, session = int(fields[2]), int(fields[3])
        if leader in (pgrp, session):
            found.append(int(entry))
    return found


def boot_ticks() -> float:
    """Now, in the clock ticks since boot that /proc/PID/stat gives start times in."""
    with open("/proc/uptime") as handle:
        return float(handle.read().split()[0]) * os.sysconf("SC_CLK_TCK")


RUN_NAMESPACE = ("open('/proc/1/stat').read().rsplit(')', 1)[1].split()[19]")
"""An expression a confined run prints after its ``pid:[inode]`` link: the start time of its
namespace's PID 1, which tells the run's namespace from a later one given the same inode."""


def _pids_in(namespace: str) -> Iterator[str]:
    """The /proc entries of processes whose PID namespace link is ``namespace``."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/ns/pid") == namespace:
                yield entry
        except OSError:
            continue


def _init_started(entries: list[str]) -> int | None:
    """The start time (boot ticks) of the live PID 1 among a namespace's ``entries``, None
    without one."""
    for entry in entries:
        try:
            with open(f"/proc/{entry}/status", "rb") as handle:
                nspid = next(line for line in handle if line.startswith(b"NSpid:"))
        except (OSError, StopIteration):
            continue
        fields = _stat(entry)
        if nspid.split()[-1] == b"1" and fields is not None:
            return int(fields[19])
    return None


def in_namespace(namespace: str, started_before: float | None = None,
                 init_started: int | None = None) -> list[int]:
    """Live processes whose PID namespace is ``namespace`` (a ``pid:[inode]`` link).

    The kernel reuses a dead namespace's inode for a new one (the next run's standby, or
    another worker's). ``init_started`` (the run's PID 1 start time, :data:`RUN_NAMESPACE`)
    tells them apart exactly: once the run's PID 1 is reaped the kernel has killed every
    process it started, so a namespace whose PID 1 started at another time holds nothing of
    the run. ``started_before`` (boot ticks) keeps only processes started before then, for
    callers that lack it."""
    entries = list(_pids_in(namespace))
    if init_started is not None and _init_started(entries) not in (init_started, None):
        return []
    found = []
    for entry in entries:
        fields = _stat(entry)
        if fields is None or fields[0] == b"Z":
            continue
        if started_before is not None and int(fields[19]) >= started_before:
            continue  # field 22 of stat: its start time
        if _another_workers(int(entry)):
            continue
        found.append(int(entry))
    return found


_WORKER = b"PYTEST_XDIST_WORKER="


def _another_workers(pid: int) -> bool:
    """Whether ``pid`` descends from another pytest-xdist worker: that worker's runs may be
    given the PID-namespace inode a run of ours freed (the reuse ``started_before`` guards
    against within one process). An orphan (reparented to init or a subreaper) is counted."""
    ours = os.environ.get("PYTEST_XDIST_WORKER", "").encode()
    while pid > 1:
        if pid == os.getpid():
            return False
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                worker = next((v[len(_WORKER):] for v in handle.read().split(b"\0")
                               if v.startswith(_WORKER)), None)
        except OSError:
            worker = None
        if worker is not None and worker != ours:
            return True
        fields = _stat(str(pid))
        if fields is None:
            return False
        pid = int(fields[1])
    return False


def run_left_behind(namespace: str, init_started: int | None = None,
                    patience_s: float = 10.0) -> list[int]:
    """Processes of a finished confined run (its PID namespace, and the start time of its
    PID 1 where the run printed it) still alive after ``patience_s``; call it as soon as the
    run has returned."""
    ended = boot_ticks()
    return _remaining(lambda: in_namespace(namespace, ended, init_started), patience_s)


def _remaining(find: Callable[[], list[int]], patience_s: float) -> list[int]:
    """What ``find`` still lists after ``patience_s`` (killing is async), sorted."""
    deadline = time.monotonic() + patience_s
    while True:
        remaining = find()
        if not remaining or time.monotonic() > deadline:
            return sorted(set(remaining))
        time.sleep(0.05)


def left_behind(run_pid: int, others: Sequence[int] = (), patience_s: float = 10.0) -> list[int]:
    """Processes of a finished run (its session or group, and ``others``) still alive after
    ``patience_s``."""
    return _remaining(lambda: in_session_or_group(run_pid) + [p for p in others if alive(p)],
                      patience_s)


def still_alive(pids: Sequence[int], patience_s: float = 10.0) -> list[int]:
    """Those of ``pids`` still alive after ``patience_s``."""
    return _remaining(lambda: [p for p in pids if alive(p)], patience_s)

"""The warm server: imports torch once, then forks one process per run.

Started by :class:`tutor.sandbox.runner.Sandbox` as ``python -m tutor.sandbox.server FD``
where FD is its end of a SOCK_SEQPACKET socket pair. Never initialises CUDA (children do).

Per request the parent sends a small JSON message with five descriptors: a control socket
(the server answers on it with the run's pid, later its wait status) and the four pipes of
the run. A standby child, forked before the request arrived, receives the pipes and runs
the job; the server then forks the next standby. The server is a child subreaper, so
processes a run leaves behind are reparented to it and killed; as root every run has its own
uid, and any process still holding a finished run's uid is killed too.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import selectors
import signal
import socket
import sys
import time
from dataclasses import dataclass, field

PR_SET_CHILD_SUBREAPER = 36
SWEEP_SECONDS = 1.0
SWEEP_ROUNDS = 5
"""How many ticks a finished run's uid is watched for stragglers."""


@dataclass
class _Standby:
    pid: int
    handoff: socket.socket


@dataclass
class _State:
    sock: socket.socket
    standby: _Standby | None = None
    runs: dict[int, socket.socket] = field(default_factory=dict)
    """run pid → control socket to report its wait status on."""
    finished_uids: dict[int, int] = field(default_factory=dict)
    """uid of a finished run → sweeps left."""


def _become_subreaper() -> None:
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _fork_standby(state: _State) -> _Standby:
    parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    own_tasks = None
    if os.geteuid() != 0:
        from tutor.sandbox.child import count_own_tasks

        own_tasks = count_own_tasks(os.getuid())
    pid = os.fork()
    if pid == 0:  # the standby child
        status = 70
        try:
            os.setsid()
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
                signal.signal(sig, signal.SIG_DFL)
            keep = child_end.fileno()
            os.closerange(3, keep)
            os.closerange(keep + 1, 1 << 20)
            _, fds, _, _ = socket.recv_fds(child_end, 1024, 8)
            os.close(keep)
            if len(fds) != 4:
                os._exit(status)
            from tutor.sandbox.child import serve

            serve(fds, own_tasks)
        except BaseException:
            from tutor.sandbox.child import print_failure

            print_failure()
        finally:
            os._exit(status)
    child_end.close()
    return _Standby(pid=pid, handoff=parent_end)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def _sweep(state: _State) -> None:
    """Kill stragglers: orphans reparented to us, and processes of finished runs' uids."""
    me = os.getpid()
    known = set(state.runs)
    if state.standby is not None:
        known.add(state.standby.pid)
    watched = set(state.finished_uids)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        if pid in known or pid == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                ppid = int(handle.read().rsplit(b")", 1)[1].split()[1])
            owned = watched and os.stat(f"/proc/{entry}").st_uid in watched
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me or owned:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    for uid in list(state.finished_uids):
        state.finished_uids[uid] -= 1
        if state.finished_uids[uid] <= 0:
            del state.finished_uids[uid]


def _reap(state: _State) -> bool:
    """Collect exited children; report runs' statuses. True when a run finished."""
    finished = False
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        _kill_group(pid)
        control = state.runs.pop(pid, None)
        if control is not None:
            finished = True
            with contextlib.suppress(OSError):
                control.send(json.dumps({"status": status}).encode())
            control.close()
            if os.geteuid() == 0:
                from tutor.sandbox.child import UID_BASE

                state.finished_uids[UID_BASE + pid] = SWEEP_ROUNDS
        elif state.standby is not None and pid == state.standby.pid:
            state.standby.handoff.close()
            state.standby = None
    return finished


def _dispatch(state: _State) -> bool:
    """Hand one request to the standby. False when the parent has gone."""
    try:
        message, fds, _, _ = socket.recv_fds(state.sock, 4096, 8)
    except OSError:
        return False
    if not message and not fds:
        return False
    if len(fds) != 5:
        for fd in fds:
            os.close(fd)
        return True
    control = socket.socket(fileno=fds[0])
    if state.standby is None:
        state.standby = _fork_standby(state)
    standby, state.standby = state.standby, None
    try:
        socket.send_fds(standby.handoff, [b"go"], fds[1:])
        state.runs[standby.pid] = control
        control.send(json.dumps({"pid": standby.pid}).encode())
    except OSError:
        control.close()
        _kill_group(standby.pid)
    finally:
        standby.handoff.close()
        for fd in fds[1:]:
            os.close(fd)
    return True


def _shutdown(state: _State) -> None:
    for pid in list(state.runs):
        _kill_group(pid)
    if state.standby is not None:
        _kill_group(state.standby.pid)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.01)


def _warm_up() -> str:
    """Import what runs need, without touching CUDA (no backward: it may probe devices)."""
    import random

    import numpy
    import numpy.random  # lazily imported by numpy 2: 20 ms a run if left to the child
    import torch

    # backward(gradient=...) imports sympy through torch's symbolic shapes: seconds a run.
    import torch.fx.experimental.symbolic_shapes

    import tutor.sandbox.child
    import tutor.sandbox.snapshots  # noqa: F401

    numpy.random.seed(0)
    random.seed(0)
    torch.manual_seed(0)  # CUDA seeding stays queued: nothing is initialised here
    probe = torch.ones(2, requires_grad=True) * 2
    repr(probe)
    repr(torch.tensor([1.5, float("nan")]))
    # Children must not touch (and so copy) the server's heap: freeze it out of the gc.
    gc.collect()
    gc.freeze()
    return torch.__version__


def main(argv: list[str]) -> int:
    sock = socket.socket(fileno=int(argv[1]))
    os.setpgid(0, 0)  # our own group: a Ctrl-C in the terminal is the parent's to handle
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _become_subreaper()
    try:
        version = _warm_up()
    except BaseException as exc:
        with contextlib.suppress(OSError):
            sock.send(json.dumps({"fatal": f"{type(exc).__name__}: {exc}"}).encode())
        return 1
    state = _State(sock=sock)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    state.standby = _fork_standby(state)
    sock.send(json.dumps({"ready": version, "pid": os.getpid()}).encode())
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ, "request")
    selector.register(wake_r, selectors.EVENT_READ, "signal")
    next_sweep = time.monotonic() + SWEEP_SECONDS
    try:
        while True:
            timeout = max(0.0, next_sweep - time.monotonic())
            for key, _ in selector.select(timeout):
                if key.data == "signal":
                    with contextlib.suppress(OSError):
                        while os.read(wake_r, 512):
                            pass
                elif not _dispatch(state):
                    return 0
            if _reap(state):
                _sweep(state)
            if state.standby is None:
                state.standby = _fork_standby(state)
            if time.monotonic() >= next_sweep:
                _sweep(state)
                next_sweep = time.monotonic() + SWEEP_SECONDS
    finally:
        _shutdown(state)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

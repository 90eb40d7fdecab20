"""The sandbox server: a manager that talks to the parent, and a warm fork template.

Started by :class:`tutor.sandbox.runner.Sandbox` as ``python -m tutor.sandbox.server FD``
where FD is its end of a SOCK_SEQPACKET socket pair. Never initialises CUDA (children do).

Two processes. The *manager* (this module's :func:`main`, light: no torch) forks the *fork
template* (:func:`_template_main`), which imports torch once and then only forks: it never
does anything else between two forks. That matters because a fork copies the page tables
of every page the template has, and the template's heap is backed by 2 MB pages after
warm-up (one entry each instead of 512), until the template writes to one while a child
shares it: the kernel then splits it for good. A server that also handled requests,
reports and sweeps wrote all over its heap between two forks (~40 huge pages split, ~240
copy-on-write faults a run); the template's loop touches a handful.

Per request the parent sends the manager a small message with five descriptors: a control
socket (the manager answers on it with the run's pid, later its wait status) and the four
pipes of the run. A standby, forked by the template before the request arrived and already
prepared (see :func:`tutor.sandbox.child.prepare`), receives the pipes over its own hand-off
socket and runs the job; the manager then asks the template for the next standby. The
template reaps its children and tells the manager their wait statuses.

Confinement (:mod:`tutor.sandbox.confine`): before it forks the template, the manager enters
new namespaces and a minimal root, so the template imports torch there and every run
inherits it; the template forks each standby as PID 1 of a new PID namespace, so nothing a
run starts outlives it. A standby tells the manager its pid as the parent sees it with its
first message (SCM_CREDENTIALS translates it). Where the kernel gives no namespaces, runs
are only limited, and the manager falls back on sweeping: it is a child subreaper, so
processes a run leaves behind are reparented to it and killed, and as root any process
still holding a finished run's uid is killed too.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import select
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, NoReturn

PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
SWEEP_SECONDS = 1.0
SWEEP_AFTER_RUN_S = 0.05
"""A finished run's stragglers are swept this soon after it is reaped: late enough that a
burst of runs shares one check, soon enough that nothing a run left behind outlives it
noticeably. The check looks for strays among our children first (see :func:`_strays`)."""
MADV_COLLAPSE = 25
HUGE_PAGE = 2 << 20
SWEEP_ROUNDS = 5
"""How many ticks a finished run's uid is watched for stragglers."""


class _TemplateGone(Exception):
    """The fork template died (a run may kill its parent): the manager ends too, leaving
    runs in flight alone, and the parent starts a new server."""


@dataclass
class _Standby:
    pid: int
    """As the parent sees it (the manager's PID namespace)."""
    handoff: socket.socket


@dataclass
class _State:
    sock: socket.socket | None
    """Requests from the parent."""
    template: socket.socket | None = None
    """To the fork template: fork requests (with the standby's end of its hand-off socket);
    from it: the pids it forked and the wait statuses of its children."""
    template_pid: int = 0
    standby: _Standby | None = None
    forking: socket.socket | None = None
    """Our end of the hand-off socket of a standby asked for, until its pid comes back."""
    template_cpu_ns: int = 0
    runs: dict[int, int] = field(default_factory=dict)
    """run pid → descriptor of the control socket to report its wait status on."""
    finished_uids: dict[int, int] = field(default_factory=dict)
    """uid of a finished run → sweeps left (unconfined only)."""
    confined: bool = False
    """Runs live in PID namespaces of their own: nothing to sweep."""
    outer_pids: dict[int, int] = field(default_factory=dict)
    """pid in the template's PID namespace → pid in ours, for standbys and runs."""
    uids: dict[int, int] = field(default_factory=dict)
    """run pid → its uid (as root)."""


def _become_subreaper() -> None:
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


_LIBC_FORK: Any
try:
    _LIBC_FORK = ctypes.PyDLL(None, use_errno=True).fork
    """The C library's fork, called with the GIL held: see :func:`_fork`."""
    _LIBC_FORK.restype = ctypes.c_int
except (AttributeError, OSError, TypeError):  # no C library to call it in
    _LIBC_FORK = None


def _fork() -> int:
    """``os.fork()`` without CPython's after-fork work in the child: ~1–2 ms of CPU a run.

    ``os.fork()`` reinitialises the interpreter's locks in the child and runs every
    ``register_at_fork`` hook (threading's, logging's, random's, torch's): ~300
    copy-on-write faults on the server's pages before a standby runs a line. None of it is
    needed while the server is one Python thread, which holds no lock when it forks: each
    lock is then in the state the child expects, and a run seeds its generators and sets
    torch's threads itself. glibc's fork handlers (OpenMP's, OpenBLAS's, torch's) still
    run. With any other Python thread alive, the plain ``os.fork()``.
    """
    if _LIBC_FORK is None or threading.active_count() > 1:
        return os.fork()
    pid = _LIBC_FORK()
    if pid < 0:
        raise OSError(ctypes.get_errno(), "fork failed")
    return pid


def _become_standby(handoff_fd: int, standby: Any) -> NoReturn:
    """In a child of the template: say who we are, prepare, await the job, run it.

    ``standby``: the :class:`tutor.sandbox.child.Standby` the template filled in.
    """
    status = 70
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        os.closerange(3, handoff_fd)
        os.closerange(handoff_fd + 1, 1 << 20)
        handoff = socket.socket(fileno=handoff_fd)
        handoff.send(b"h")  # the manager reads our pid, as it sees it, off this message
        from tutor.sandbox.child import mark, prepare, serve

        unprepared: Exception | None = None
        marks: list[tuple[str, int, int]] = []
        try:
            prepare(lambda wait: bool(select.select([handoff], [], [], wait)[0]), marks,
                    standby)
        except Exception as exc:  # told on the run's stderr: a dying standby would loop
            unprepared = exc
        _, fds, _, _ = socket.recv_fds(handoff, 1024, 8)
        mark(marks, "go")
        handoff.close()
        if len(fds) != 4:
            os._exit(status)
        if unprepared is not None:
            os.dup2(fds[1], 2)
            raise unprepared
        serve(fds, standby, marks)
    except BaseException:
        from tutor.sandbox.child import print_failure

        print_failure()
    finally:
        os._exit(status)


_LIBC_KILLPG: Any
try:
    _LIBC_KILLPG = ctypes.CDLL(None).killpg
except (AttributeError, OSError, TypeError):
    _LIBC_KILLPG = None


def _kill_group(pid: int) -> None:
    """SIGKILL to a run's process group, which is usually gone by then: the C library's
    killpg where there is one, as ``os.killpg`` would raise (and build an exception) for
    almost every finished run."""
    if _LIBC_KILLPG is not None:
        _LIBC_KILLPG(pid, signal.SIGKILL)
        return
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def _tell(fd: int, message: bytes) -> None:
    """One message on a run's control socket (SOCK_SEQPACKET: a write is one message)."""
    with contextlib.suppress(OSError):  # the parent may be gone; the run is over anyway
        os.write(fd, message)


def _known(state: _State) -> set[int]:
    """Our processes that a sweep must spare: runs in flight, the standby, the template."""
    known = set(state.runs)
    if state.standby is not None:
        known.add(state.standby.pid)
    if state.template_pid:
        known.add(state.template_pid)
    return known


def _strays(state: _State) -> bool:
    """Whether the manager has a child other than the fork template (or, after the
    template died, a run in flight).

    We are the runs' subreaper: whatever a finished run left alive was reparented to us
    when its parent died, so no stray child means no straggler of a finished run, and an
    after-run sweep can skip the /proc scan (~1.5 ms of CPU each). The periodic sweep scans
    anyway (a run's uid might be running something spawned outside our tree). True where
    the kernel does not list children.
    """
    known = _known(state)
    try:
        for task in os.listdir("/proc/self/task"):
            fd = os.open(f"/proc/self/task/{task}/children", os.O_RDONLY)
            try:
                children = os.read(fd, 1 << 16).split()
            finally:
                os.close(fd)
            if any(int(pid) not in known for pid in children):
                return True
    except (OSError, ValueError):
        return True
    return False


def _sweep(state: _State) -> None:
    """Kill stragglers: orphans reparented to us, and processes of finished runs' uids."""
    me = os.getpid()
    known = _known(state)
    watched = set(state.finished_uids)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        if pid in known or pid == me:
            continue
        try:
            fd = os.open(f"/proc/{entry}/stat", os.O_RDONLY)  # raw: 3 syscalls, not 7
            try:
                ppid = int(os.read(fd, 4096).rsplit(b")", 1)[1].split()[1])
            finally:
                os.close(fd)
            # The directory, not the stat file: a run that changed uid is not dumpable,
            # so its files read as root's; the directory keeps the real owner.
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


def _finished(state: _State, pid: int, status: int, cpu_ns: int, minflt: int,
              reaped_ns: int) -> bool:
    """A child of the template (or an orphaned run of ours) was reaped. True for a run.
    ``pid``: as the template sees it."""
    pid = state.outer_pids.pop(pid, pid)
    _kill_group(pid)
    control = state.runs.pop(pid, None)
    uid = state.uids.pop(pid, None)
    if control is not None:
        _tell(control, b'{"status": %d, "reaped_ns": %d, "cpu_ns": %d, "minflt": %d}'
              % (status, reaped_ns, cpu_ns, minflt))
        os.close(control)
        if uid is not None and not state.confined:
            state.finished_uids[uid] = SWEEP_ROUNDS
        return True
    if state.standby is not None and pid == state.standby.pid:
        state.standby.handoff.close()
        state.standby = None
    return False


def _from_template(state: _State, *, until_forked: bool = False) -> bool:
    """Read what the template said: pids it forked, statuses of its children. True when a
    run finished. ``until_forked``: wait for the pid of the standby asked for."""
    assert state.template is not None
    finished = False
    while True:
        if not until_forked or state.forking is None:
            ready, _, _ = select.select([state.template], [], [], 0)
            if not ready:
                return finished
        message = state.template.recv(256)
        if not message:
            raise _TemplateGone()
        kind, fields = message[:1], [int(field) for field in message[1:].split()]
        if kind == b"F" and state.forking is not None:
            outer = _standby_pid(state.forking)
            if outer is None:  # it died before its first word: reaped and reported later
                outer = fields[0]
            state.outer_pids[fields[0]] = outer
            if fields[2] >= 0:
                state.uids[outer] = fields[2]
            state.standby = _Standby(pid=outer, handoff=state.forking)
            state.template_cpu_ns, state.forking = fields[1], None
        elif kind == b"S":
            finished |= _finished(state, *fields)


def _standby_pid(handoff: socket.socket) -> int | None:
    """The pid of the standby at the other end of ``handoff``, as we see it, from the
    credentials the kernel attached to its first message; None if it died first."""
    try:
        message, ancillary, _, _ = handoff.recvmsg(16, socket.CMSG_SPACE(12))
    except OSError:
        return None
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and message:
            return int.from_bytes(data[:4], sys.byteorder, signed=True)
    return None


def _ask_for_standby(state: _State) -> None:
    """Ask the template for the next standby; its pid comes back later."""
    if state.standby is not None or state.forking is not None:
        return
    assert state.template is not None
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    try:
        socket.send_fds(state.template, [b"f"], [theirs.fileno()])
    except OSError:
        ours.close()
        raise _TemplateGone() from None
    finally:
        theirs.close()
    state.forking = ours


def _reap_own(state: _State) -> bool:
    """Collect our own children: strays adopted as subreaper, the template, and runs that
    the template left when it died. True when a run finished."""
    finished = False
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        if pid == state.template_pid:
            state.template_pid = 0
            raise _TemplateGone()
        cpu_ns = round((usage.ru_utime + usage.ru_stime) * 1e9)
        finished |= _finished(state, pid, status, cpu_ns, usage.ru_minflt,
                              time.perf_counter_ns())
    return finished


def _dispatch(state: _State) -> bool:
    """Hand one request to the standby. False when the parent has gone."""
    assert state.sock is not None
    try:
        message, fds, _, _ = socket.recv_fds(state.sock, 4096, 8)
    except OSError:
        return False
    received_ns = time.perf_counter_ns()
    if not message and not fds:
        return False
    if len(fds) != 5:
        for fd in fds:
            os.close(fd)
        return True
    control = fds[0]
    try:
        if state.standby is None:
            _ask_for_standby(state)
            _from_template(state, until_forked=True)
    except _TemplateGone:
        for fd in fds:
            os.close(fd)
        raise
    assert state.standby is not None
    standby, state.standby = state.standby, None
    try:
        socket.send_fds(standby.handoff, [b"go"], fds[1:])
        handed_ns = time.perf_counter_ns()
        state.runs[standby.pid] = control
        os.write(control, b'{"pid": %d, "received_ns": %d, "handed_ns": %d, "cpu_ns": %d}'
                 % (standby.pid, received_ns, handed_ns,
                    time.process_time_ns() + state.template_cpu_ns))
    except OSError:
        state.runs.pop(standby.pid, None)
        os.close(control)
        _kill_group(standby.pid)
    finally:
        standby.handoff.close()
        for fd in fds[1:]:
            os.close(fd)
    return True


def _shutdown(state: _State, *, runs_too: bool = True) -> None:
    """Kill what we started. ``runs_too=False`` (the template died): runs in flight are
    left to finish, as with any server that dies; their parent watches them."""
    for pid, control in list(state.runs.items()):
        if runs_too:
            _kill_group(pid)
        os.close(control)
    state.runs.clear()
    if state.standby is not None:
        _kill_group(state.standby.pid)
    if state.template_pid:
        with contextlib.suppress(OSError):
            os.kill(state.template_pid, signal.SIGKILL)
    if state.template is not None:
        state.template.close()
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.01)


def _warm_up(proc_fd: int, few_runs: bool = False) -> str:
    """Import what runs need and warm their paths, without touching a GPU driver."""
    import random

    import numpy
    import numpy.random  # lazily imported by numpy 2: 20 ms a run if left to the child
    import torch

    if not few_runs:
        # backward(gradient=...) imports sympy through torch's symbolic shapes: seconds a run.
        import torch.fx.experimental.symbolic_shapes
        _import_dynamo()

    import tutor.sandbox.snapshots  # noqa: F401
    from tutor.sandbox import child

    if not few_runs:
        # The diagnosis's recorder: each instrumented run (the re-run of a failed run, every
        # fix trial) paid 15-25 ms importing it; a run that is not instrumented never uses it
        from tutor.sandbox import evidence  # noqa: F401

    # One thread for every run, set here once (before any operation could start a pool):
    # each standby inherits it instead of paying ~0.8 ms to set it again.
    torch.set_num_threads(1)
    numpy.random.seed(0)
    random.seed(0)
    torch.manual_seed(0)  # CUDA seeding stays queued: nothing is initialised here
    probe = torch.ones(2, requires_grad=True) * 2
    repr(probe)
    repr(torch.tensor([1.5, float("nan")]))
    if not few_runs:
        # The standbys' rehearsal, once here: every run forked after it finds torch's lazy
        # autograd setup done and these code paths warm (bench_grade, 3 rounds in turns:
        # 92 against 83 submissions/s; ~2 ms less CPU a run). Where a backward would ask a
        # GPU driver for its devices the rehearsal leaves it out, as a standby's does.
        with contextlib.suppress(Exception):  # only ever a head start, as in a standby
            child.rehearse(lambda: False)
    # Children must not touch (and so copy) the server's heap: freeze it out of the gc.
    gc.collect()
    gc.freeze()
    if not few_runs:
        _collapse_into_huge_pages(proc_fd)
    return torch.__version__


def _import_dynamo() -> None:
    """Load torch's compiler stack (torch._dynamo), which every optimizer's constructor and
    step load on first use: seconds a run of any training program if left to the child.
    Making a ``torch.compiler.disable`` wrapper (public API; never called) loads it.

    Its import makes a cache folder under the temporary directory, which the confined server
    lacks: it is pointed at ``/tmp`` (there, read-only) for the import only, so each run's
    own ``/tmp`` holds whatever a run later writes there."""
    saved = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = "/tmp"
    try:
        with contextlib.suppress(Exception):  # only ever a head start
            import torch

            torch.compiler.disable(lambda: None)
    finally:
        if saved is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = saved


def _collapse_into_huge_pages(proc_fd: int) -> None:
    """Back the server's heap with 2 MB pages where the kernel can (Linux >= 6.1).

    A fork copies one page-table entry per 4 kB resident page and an exit frees them: with
    ~190 MB of heap (torch, numpy, sympy) that was ~14 ms of CPU per fork and more per exit.
    Huge pages cut both to a few ms. Copy-on-write still copies 4 kB at a time, and without
    MADV_HUGEPAGE new memory of a run keeps normal pages. Nothing changes where it fails.
    """
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        # the machine's /proc (ours is gone once confined), opened before the minimal root
        with open(os.open("self/maps", os.O_RDONLY, dir_fd=proc_fd)) as handle:
            lines = handle.read().splitlines()
        for line in lines:
            fields = line.split()
            path = fields[5] if len(fields) > 5 else ""
            if fields[1] != "rw-p" or path not in ("", "[heap]"):
                continue  # anonymous private memory only: not files, stacks or vdso
            low, high = (int(bound, 16) for bound in fields[0].split("-"))
            start = (low + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1)
            end = high & ~(HUGE_PAGE - 1)
            # One call per huge page: a call over a range stops at the first page that
            # cannot collapse, which left a third of the heap in 4 kB pages.
            for page in range(start, end, HUGE_PAGE):
                libc.madvise(page, HUGE_PAGE, MADV_COLLAPSE)


def _allowed_paths() -> list[str]:
    """What a run may see of the machine besides ``/usr`` and the libraries: the Python
    installation, its site-packages, and of our own package only the sandbox."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix]
    paths += [entry for entry in sys.path
              if os.path.basename(entry) in ("site-packages", "dist-packages")]
    paths += [os.path.join(package, "__init__.py"), os.path.join(package, "sandbox")]
    return [path for path in paths if path and os.path.isabs(path)]


def _package_data() -> list[str]:
    """Our package's folders other than the sandbox (the bundled lessons with their
    solutions among them): empty for runs where a site-packages bind shows the package."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with contextlib.suppress(OSError):
        return [entry.path for entry in os.scandir(package)
                if entry.is_dir() and entry.name not in ("sandbox", "__pycache__")]
    return []


def _trial(binds: list[str], covers: list[str], proc_fd: int) -> None:
    """In a throwaway child: the whole confinement, a run's PID namespace included."""
    from tutor.sandbox import confine

    confine.confine_server(binds, covers)
    pid = os.fork()  # PID 1 of the server's namespace, as the template will be
    if pid == 0:
        code = 1
        with contextlib.suppress(BaseException):
            confine.open_own_pid_namespace(proc_fd)
            confine.new_pid_namespace_for_next_child()
            run = os.fork()
            if run == 0:
                os._exit(0)
            code = os.waitstatus_to_exitcode(os.waitpid(run, 0)[1])
        os._exit(code)
    if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0:
        raise OSError("a run's own PID namespace was refused")


def _confine(options: dict[str, Any], proc_fd: int) -> dict[str, Any]:
    """Confine this process (the manager) before it forks the template; see the module doc.

    Tried first in a throwaway child, so a kernel that says no half-way leaves us as we
    were. Returns what the parent learns: the mode, the namespaces, and why not, if not.
    """
    from tutor.sandbox import confine

    if options.get("unconfined"):
        return {"mode": "none", "namespaces": [], "reason": "confinement was turned off"}
    binds = _allowed_paths()
    covers = [str(path) for path in options.get("hide", [])] + _package_data()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        code = 0
        try:
            _trial(binds, covers, proc_fd)
        except Exception as exc:
            os.write(write_end, str(exc).encode()[:2000])
            code = 1
        os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        said = reader.read().decode(errors="replace")
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return {"mode": "none", "namespaces": [], "reason": said or "the kernel refused"}
    namespaces = confine.confine_server(binds, covers)
    return {"mode": "root" if os.geteuid() == 0 else "user", "namespaces": namespaces,
            "reason": None}


def _drop_current_folder_from_path() -> None:
    """Python 3.10 has no ``-P``: take the learner's folder off ``sys.path`` before torch,
    numpy and the rest are imported, so files there cannot shadow them."""
    here = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".", here)]


def _template_main(sock: socket.socket, manager: int, options: dict[str, Any],
                   confinement: dict[str, Any], proc_fd: int) -> NoReturn:
    """The fork template: warm up, then fork standbys on request and report on them.

    Its loop is kept to the few objects it needs (see the module doc): whatever it writes
    between two forks is copied again by each fork, and a 2 MB page written while a child
    shares it is split for good.
    """
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # the manager died before we could ask to die with it (PID 1 of a new namespace sees
    # no parent: 0)
    if os.getppid() not in (manager, 0):
        os._exit(1)
    confined = confinement["mode"] != "none"
    exposed = [] if confined else [str(path) for path in options.get("hide", [])]
    try:
        version = _warm_up(proc_fd, few_runs=bool(options.get("few_runs")))
        from tutor.sandbox import confine
        from tutor.sandbox.child import Standby, count_own_tasks

        vm_bytes = _template_address_space(proc_fd)
        if confined:
            confine.open_own_pid_namespace(proc_fd)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            sock.send(json.dumps({"fatal": f"{type(exc).__name__}: {exc}"}).encode())
        os._exit(1)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sock.send(json.dumps({"ready": version, "exposed": exposed,
                          "confinement": confinement}).encode())
    if not options.get("few_runs"):
        _collapse_into_huge_pages(proc_fd)  # again: what set-up allocated since then
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    poller.register(wake_r, select.POLLIN)
    own_uid = os.geteuid()
    serial = 0
    fork, recv_fds, read, write, close = _fork, socket.recv_fds, os.read, os.write, os.close
    wait4, no_hang = os.wait4, os.WNOHANG
    clock, cpu_clock = time.perf_counter_ns, time.process_time_ns
    fd = sock.fileno()
    while True:
        for ready, _ in poller.poll():
            if ready == wake_r:  # SIGCHLD: reaped below
                # Up to a short read, not until it raises: an exception a wake-up would
                # touch (and so copy) ~30 more pages.
                with contextlib.suppress(OSError):
                    while len(read(wake_r, 4096)) == 4096:
                        pass
                continue
            message, fds, _, _ = recv_fds(sock, 16, 1)
            if not message:  # the manager is gone
                os._exit(0)
            if len(fds) != 1:
                for extra in fds:
                    close(extra)
                continue
            serial += 1
            standby = Standby(confined=confined, vm_bytes=vm_bytes)
            if own_uid == 0:
                standby.uid = confine.run_uid(serial)
            else:
                standby.own_tasks = count_own_tasks(os.getuid(), proc_fd)
            try:
                if confined:
                    confine.new_pid_namespace_for_next_child()
                pid = fork()
            except OSError:
                close(fds[0])
                os._exit(1)  # the manager learns it, and the parent starts a new server
            if pid == 0:
                _become_standby(fds[0], standby)
            close(fds[0])
            write(fd, b"F%d %d %d" % (pid, cpu_clock(),
                                      -1 if standby.uid is None else standby.uid))
        while True:
            try:
                pid, status, usage = wait4(-1, no_hang)
            except ChildProcessError:
                break
            if pid == 0:
                break
            write(fd, b"S%d %d %d %d %d" % (pid, status,
                                            round((usage.ru_utime + usage.ru_stime) * 1e9),
                                            usage.ru_minflt, clock()))


def _template_address_space(proc_fd: int) -> int:
    """Our address space, read through the machine's ``/proc`` (kept open from before the
    minimal root), for runs that cannot read their own."""
    fd = os.open("self/statm", os.O_RDONLY, dir_fd=proc_fd)
    try:
        return int(os.read(fd, 256).split()[0]) * os.sysconf("SC_PAGE_SIZE")
    finally:
        os.close(fd)


def _start_template(request: socket.socket, options: dict[str, Any],
                    confinement: dict[str, Any], proc_fd: int) -> tuple[socket.socket, int]:
    """Fork the template (before anything heavy is imported here) and return our end of
    its socket and its pid."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    manager = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            ours.close()
            request.close()  # requests are the manager's: the template never reads them
            _template_main(theirs, manager, options, confinement, proc_fd)
        finally:
            os._exit(1)
    theirs.close()
    return ours, pid


def main(argv: list[str]) -> int:
    _drop_current_folder_from_path()
    sock = socket.socket(fileno=int(argv[1]))
    os.setpgid(0, 0)  # our own group: a Ctrl-C in the terminal is the parent's to handle
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _become_subreaper()
    options = json.loads(argv[2]) if len(argv) > 2 else {}
    # the machine's /proc, for the template's counts once /proc is no longer the machine's
    proc_fd = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
    confinement = _confine(options, proc_fd)
    template, template_pid = _start_template(sock, options, confinement, proc_fd)
    os.close(proc_fd)
    state = _State(sock=sock, template=template, template_pid=template_pid,
                   confined=confinement["mode"] != "none")
    said = template.recv(65536)
    try:
        ready = json.loads(said) if said else {"fatal": "the server could not start"}
    except ValueError:
        ready = {"fatal": "the server said something unreadable"}
    if "ready" not in ready:
        with contextlib.suppress(OSError):
            sock.send(json.dumps(ready).encode())
        _shutdown(state)
        return 1
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    runs_too = True
    try:
        _ask_for_standby(state)
        sock.send(json.dumps({**ready, "pid": os.getpid(), "template": template_pid}).encode())
        return _serve(state, wake_r)
    except _TemplateGone:
        runs_too = False
        return 1
    finally:
        _shutdown(state, runs_too=runs_too)


def _serve(state: _State, wake_r: int) -> int:
    assert state.sock is not None and state.template is not None
    poller = select.poll()
    poller.register(state.sock.fileno(), select.POLLIN)
    poller.register(state.template.fileno(), select.POLLIN)
    poller.register(wake_r, select.POLLIN)
    template_fd = state.template.fileno()
    next_sweep = next_check = time.monotonic() + SWEEP_SECONDS
    while True:
        timeout_ms = max(0.0, min(next_sweep, next_check) - time.monotonic()) * 1000
        finished = False
        for fd, _ in poller.poll(timeout_ms):
            if fd == wake_r:
                with contextlib.suppress(OSError):
                    while len(os.read(wake_r, 4096)) == 4096:
                        pass
                finished |= _reap_own(state)
            elif fd == template_fd:
                finished |= _from_template(state)
            elif not _dispatch(state):
                return 0
        if finished:
            next_check = min(next_check, time.monotonic() + SWEEP_AFTER_RUN_S)
        _ask_for_standby(state)
        now = time.monotonic()
        if state.confined:  # PID namespaces: nothing a run started outlives it
            next_sweep = next_check = now + 3600
        elif now >= next_sweep or (now >= next_check and _strays(state)):
            _sweep(state)
            next_sweep = now + SWEEP_SECONDS
        if now >= next_check:
            next_check = next_sweep


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""What a run's process does once the warm server hands it a job.

The process was forked from the server (torch already imported) and is the leader of its
own session. As a standby, before any request, it drops privileges when running as root and
rehearses a typical run (:func:`prepare`), so the request's path is short. Then it holds only
the four pipe ends it was given: it applies the request's limits, runs the learner's code,
waits for the probes (sent only after the code finished), and writes one result frame of
plain JSON. It never returns.

Requests come from the parent and are read as the plain data they are. What goes back is
plain JSON of the shape of :class:`~tutor.sandbox.models.RunResult`, built without pydantic
(see :mod:`tutor.sandbox.snapshots`); the parent validates it.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import gc
import io
import json
import math
import os
import re
import resource
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any, NoReturn

from tutor.sandbox import budget, confine, protocol, stand_in, vary
from tutor.sandbox.snapshots import Data, graph, snapshot

LEARNER_FILE = "<learner>"
PROBE_FILE = "<probe>"
REPORT_HEADROOM = 256 * 1024 * 1024
"""Address space above the learner's limit that the reporter may use after a MemoryError."""
MAX_LOCALS = 20
MAX_FRAMES = 50
MAX_WARNINGS = 50


Marks = list[tuple[str, int, int]]
"""Phase marks of a run: (name, perf_counter_ns, thread_time_ns); see tutor.sandbox.trace."""


def mark(marks: Marks, name: str) -> None:
    """Note the wall clock and the CPU time of this (the run's main) thread.

    The thread's clock, not the process's: once RLIMIT_CPU arms the process CPU timer, the
    process clock only advances at scheduler ticks (4 ms), too coarse for these phases.
    """
    marks.append((name, time.perf_counter_ns(), time.thread_time_ns()))


def count_own_tasks(uid: int, proc: int | str = "/proc") -> int:
    """Threads of ``uid`` on the machine: what RLIMIT_NPROC counts for a non-root user.

    ``proc``: the machine's ``/proc``, or a descriptor of it kept open from before the
    minimal root (where ``/proc`` is not the machine's)."""
    total = 0
    dir_fd = proc if isinstance(proc, int) else None
    prefix = "" if dir_fd is not None else f"{proc}/"
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"{prefix}{entry}", dir_fd=dir_fd).st_uid != uid:
                continue
            fd = os.open(f"{prefix}{entry}/stat", os.O_RDONLY, dir_fd=dir_fd)
            try:
                fields = os.read(fd, 4096).rsplit(b")", 1)[1].split()
            finally:
                os.close(fd)
            total += int(fields[17])  # num_threads
        except (OSError, IndexError, ValueError):
            continue
    return total


def _read_exact(fd: int, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        data = os.read(fd, size - len(chunks))
        if not data:
            raise EOFError("parent closed the command pipe")
        chunks += data
    return bytes(chunks)


def _read_frame(fd: int) -> Any:
    (length,) = protocol.HEADER.unpack(_read_exact(fd, protocol.HEADER.size))
    return json.loads(_read_exact(fd, length))


def _write_all(write: Callable[[int, bytes | memoryview], int], fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = write(fd, view)
        view = view[written:]


MAX_OPEN_FILES = 256
SCRATCH_MB = 64
"""Size of a confined run's one tmpfs, shared by ``/tmp`` and ``/dev/shm``; it is memory, on
top of ``Limits.memory_mb``, and also caps the size of any one file the run writes."""


@dataclass
class Standby:
    """What the template hands a standby at its fork (plain values, no I/O needed)."""

    own_tasks: int | None = None
    """Threads of our uid on the machine (non-root only: RLIMIT_NPROC counts them all)."""
    uid: int | None = None
    """The run's own uid (as root)."""
    confined: bool = False
    """The server is confined: this run must be too, or not run at all."""
    vm_bytes: int = 0
    """The template's address space, for runs that have no ``/proc`` to read their own."""


def _address_space(standby: Standby) -> int:
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
    except OSError:  # no /proc of its own (user namespaces): the template's measure
        return standby.vm_bytes
    try:
        return int(os.read(fd, 256).split()[0]) * os.sysconf("SC_PAGE_SIZE")
    finally:
        os.close(fd)


def _apply_limits(limits: Data, device: str, standby: Standby) -> None:
    """The request's limits (a :class:`~tutor.sandbox.models.Limits`); privileges were
    already dropped by :func:`prepare`."""
    cpu_s = math.ceil(limits["wall_time_s"]) + 1  # backstop should the parent vanish
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    if device == "cpu":
        # CUDA maps huge virtual ranges, so address-space limits only for CPU runs; GPU runs
        # are watched by the parent through their resident memory instead.
        soft = _address_space(standby) + limits["memory_mb"] * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (soft, soft + REPORT_HEADROOM))
    # As root, this process already runs as its own uid (see prepare), so the count is of
    # the run's own processes; otherwise it is added to the user's tasks at the fork.
    processes = limits["max_processes"]
    allowed = processes if standby.own_tasks is None else standby.own_tasks + processes
    for limit, wanted in ((resource.RLIMIT_NPROC, allowed),
                          (resource.RLIMIT_NOFILE, MAX_OPEN_FILES),
                          (resource.RLIMIT_FSIZE, SCRATCH_MB << 20)):
        _, hard = resource.getrlimit(limit)
        if hard != resource.RLIM_INFINITY:
            wanted = min(wanted, hard)  # only ever lowered: no privilege needed
        resource.setrlimit(limit, (wanted, wanted))


PR_SET_KEEPCAPS = 8
CAP_DAC_READ_SEARCH = 2
_CAP_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


_LIBC = ctypes.CDLL(None, use_errno=True)
"""Opened once in the warm server; runs inherit it."""


_CAP_HEADER = _CapHeader(_CAP_VERSION_3, 0)
_CAP_READ_SEARCH = (_CapData * 2)()
_CAP_READ_SEARCH[0].effective = _CAP_READ_SEARCH[0].permitted = 1 << CAP_DAC_READ_SEARCH
"""Built once in the warm server, like the seccomp program (see :mod:`confine`)."""


def _drop_root_unconfined(uid: int) -> None:
    """As root where the kernel gave no namespaces: become ``uid``, keeping only the
    capability to read files (the interpreter's own may live under a private home such as
    /root/.pyenv, and a run still imports modules lazily); the syscall filter then denies
    ``open_by_handle_at``, which that capability would otherwise open any file with."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    _LIBC.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)
    os.setresuid(uid, uid, uid)
    if _LIBC.capset(ctypes.byref(_CAP_HEADER), _CAP_READ_SEARCH) != 0:
        confine.drop_privileges(None)  # root without it (a container's set): keep nothing


RUN_ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
    "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "OMP_NUM_THREADS": "1",
}
"""A run's whole environment (the server was started with a scrubbed one already)."""
GPU_ENVIRONMENT = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
                   "CUDA_HOME", "LD_LIBRARY_PATH", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def _scrub_environment() -> None:
    kept = {name: os.environ[name] for name in GPU_ENVIRONMENT if name in os.environ}
    os.environ.clear()
    os.environ.update({**RUN_ENVIRONMENT, **kept})


REHEARSAL = (
    "import torch\nx = torch.ones(2, 2, requires_grad=True)\ny = (x * 2 + 1).mean()\n",
    "y.backward()\n",
    "text = repr(x.grad)\n",
    "text += repr(y) + str(y.grad_fn)\n",
)
"""What almost every run does first, in steps. A fresh fork pays for its first touches
(copy-on-write faults on the server's pages, ~7 us each here; torch's lazy autograd setup):
the first backward and print of a run cost ~7 ms of CPU more than later ones. The fork
template rehearses once at warm-up, so every run inherits the lazy setup done; a standby
with idle time rehearses again before its request arrives (the copy-on-write faults are its
own), and its request never waits for more than one step."""


def backward_starts_no_device_threads(torch: Any) -> bool:
    """False where torch has a GPU backend: there a process's first backward asks the
    driver for its devices (initialising CUDA, say) to start a thread per device, which
    neither the fork template nor a standby may do for runs that never call backward."""
    accelerator = getattr(torch, "accelerator", None)  # torch >= 2.6; it never asks a driver
    if accelerator is not None:
        return accelerator.current_accelerator() is None
    return not (torch.backends.cuda.is_built() or torch.backends.mps.is_built())


def rehearse(request_waiting: Callable[[], bool]) -> None:
    """Run :data:`REHEARSAL` (its backward only where no GPU driver would be asked), then
    a snapshot, a probe and a reported error, stopping as soon as ``request_waiting()``."""
    import torch

    namespace: dict[str, Any] = {"__name__": "__rehearsal__", "__builtins__": builtins}
    codes = [code for code in REHEARSAL
             if code != "y.backward()\n" or backward_starts_no_device_threads(torch)]
    steps: list[Callable[[], object]] = [
        lambda code=code: exec(compile(code, "<rehearsal>", "exec"), namespace)  # type: ignore[misc]
        for code in codes
    ]
    steps.append(lambda: json.dumps({"expr": "x", "value": snapshot(namespace["x"]),
                                     "graph": graph(namespace["y"], namespace)}))
    steps.append(lambda: _probe({"expr": "x.grad"}, namespace, []))
    steps.append(lambda: _rehearse_error(namespace))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for step in steps:
                if request_waiting():
                    break
                step()
    finally:
        namespace.clear()


def _rehearse_error(namespace: dict[str, Any]) -> None:
    """A learner's error, reported: a run that raises pays for the traceback's first walk."""
    code = "x.numpy()\n"
    try:
        exec(compile(code, LEARNER_FILE, "exec"), namespace)
    except RuntimeError as exc:
        json.dumps(error_info(exc, code.splitlines()))


def _rehearse_serving() -> None:
    """The first touches of what :func:`serve` does around any learner's code.

    Every run pays for these (copy-on-write faults on the server's pages) whatever its code,
    so a standby always does them before its request: the same CPU, off the request's path.
    """
    import random

    import torch

    frame = json.dumps({"nonce": "0", "code": "", "device": "cpu", "limits": {
        "wall_time_s": 10.0, "memory_mb": 1, "output_bytes": 1, "max_processes": 1}}).encode()
    json.loads(frame)
    _result_json("ok", "cpu", None, [{"category": "UserWarning", "message": "", "line": 1}],
                 [], None, torch.__version__)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        exec(compile("pass", LEARNER_FILE, "exec"), {"__builtins__": builtins})
    _seed(torch, "cpu")
    random.seed(0)
    with contextlib.suppress(ImportError):
        import numpy

        numpy.random.seed(0)
    torch.device("cpu")
    stream = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                              errors="backslashreplace", line_buffering=True)
    stream.close()  # closefd=False: descriptor 1 stays open
    for limit in (resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_NPROC):
        resource.getrlimit(limit)


REHEARSE_AFTER_IDLE_S = 0.03
"""A standby rehearses only once no request came for this long: back-to-back runs (batch
grading) would pay for a rehearsal they have no time to use, in CPU taken from the run in
flight; a learner's next run is seconds away."""


def prepare(request_waiting: Callable[[float], bool], marks: Marks, standby: Standby) -> None:
    """What a standby does before its request arrives: everything that does not depend on
    the request, so the request's own path is short. Never touches CUDA.

    ``request_waiting(timeout)`` tells whether the request is there (waiting up to timeout).
    A confined standby (the template made it PID 1 of a new PID namespace) takes its own
    mount and network namespaces and scratch tmpfs, then gives up every privilege and
    installs the syscall filter; any step that fails raises, and the run does not happen.
    Marks "standby_ready" once the run could start, "serving_rehearsed" after the first
    touches every run needs, "rehearsed" if the torch rehearsal ran.
    """
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file past its cap: EFBIG, not death
    signal.signal(protocol.WHERE_SIGNAL, signal.SIG_IGN)  # asked where before the code ran
    _scrub_environment()
    if standby.confined:
        confine.confine_run(SCRATCH_MB)
        os.chdir("/tmp")
        confine.drop_privileges(standby.uid)
        confine.forbid_syscalls()
    else:
        if standby.uid is not None:
            _drop_root_unconfined(standby.uid)
        _LIBC.prctl(confine.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        with contextlib.suppress(OSError):  # where the kernel has seccomp
            confine.forbid_syscalls()
    import torch

    if torch.get_num_threads() != 1:  # set once in the server: ~0.3 ms a run saved
        torch.set_num_threads(1)
    mark(marks, "standby_ready")
    with contextlib.suppress(Exception):  # only ever a head start: a run works without it
        _rehearse_serving()
    mark(marks, "serving_rehearsed")
    if request_waiting(REHEARSE_AFTER_IDLE_S):
        return
    with contextlib.suppress(Exception):  # only ever a head start: a run works without it
        rehearse(lambda: request_waiting(0.0))
        mark(marks, "rehearsed")


def _learner_line_now() -> int | None:
    frames = _frames_now(sys._getframe(1))
    return frames[-1][1] if frames else None


def _is_memory_error(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and (
        "can't allocate memory" in text or "out of memory" in text
    )


def _learner_frames(tb: TracebackType | None) -> list[tuple[FrameType, int]]:
    frames = []
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == LEARNER_FILE:
            frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return frames


_CALL_OPS = frozenset({"CALL", "CALL_FUNCTION_EX", "PRECALL", "CALL_KW", "CALL_FUNCTION",
                       "CALL_METHOD", "CALL_FUNCTION_KW"})
_RAISE_ON_REQUEST = ("_check", "_assert")
"""torch functions whose job is to raise what they are given (``torch._check(False, ...)``):
an error raised through them is the caller's, not torch's."""


def raised_by(exc: BaseException) -> str:
    """Whose code raised ``exc``, from its traceback (never from its text): ``torch`` (torch's
    Python code), ``call`` (a function implemented in C that a learner's line called, as every
    torch operation is), ``learner`` (a ``raise`` or ``throw`` in learner code, or torch asked
    to raise by it) or ``other`` (any other module, or code the learner compiled)."""
    tb = exc.__traceback__
    frames: list[TracebackType] = []
    while tb is not None:
        if tb.tb_frame.f_code.co_filename != budget.__file__:  # (a budgeted loop's own)
            frames.append(tb)
        tb = tb.tb_next
    if not frames:
        return "other"
    last = frames[-1]
    if last.tb_frame.f_code.co_filename == LEARNER_FILE:
        import dis

        ops = {i.offset: i.opname for i in dis.get_instructions(last.tb_frame.f_code)}
        return "call" if ops.get(last.tb_lasti) in _CALL_OPS else "learner"
    torch_module = sys.modules.get("torch")
    torch_dir = os.path.dirname(getattr(torch_module, "__file__", None) or "/nonexistent")
    learner_at = max((i for i, f in enumerate(frames)
                      if f.tb_frame.f_code.co_filename == LEARNER_FILE), default=-1)
    entered = frames[learner_at + 1]
    if not last.tb_frame.f_code.co_filename.startswith(torch_dir + os.sep):
        return "other"
    if entered.tb_frame.f_code.co_name.startswith(_RAISE_ON_REQUEST) or "testing" in (
        entered.tb_frame.f_code.co_filename.removeprefix(torch_dir).split(os.sep)
    ):
        return "learner"
    return "torch"


def _source(lines: list[str], line: int | None) -> str:
    if line is not None and 1 <= line <= len(lines):
        return lines[line - 1].strip()
    return ""


def _trace(frames: list[tuple[FrameType, int]], lines: list[str],
           callers: dict[int, FrameType] | None = None) -> list[Data]:
    """:class:`~tutor.sandbox.models.FrameInfo` data of learner frames, outermost first;
    ``callers``: the library frame that called a learner frame (by the learner frame's id)."""
    trace: list[Data] = []
    for frame, lineno in frames:
        item: Data = {"line": lineno, "function": frame.f_code.co_name,
                      "source": _source(lines, lineno)}
        caller = (callers or {}).get(id(frame))
        if caller is not None:
            with contextlib.suppress(Exception):  # only ever more evidence
                item.update(_library_caller(caller, frame))
        trace.append(item)
    if len(trace) > MAX_FRAMES:  # deep recursion: keep the outermost and the innermost
        trace = trace[:5] + trace[-(MAX_FRAMES - 5) :]
    return trace


PUBLIC_HOMES = ("torch.nn", "torch.optim", "torch.utils.data", "torch.autograd", "torch")
"""Where torch re-exports its classes: ``torch.nn.modules.module.Module`` is shown as
``torch.nn.Module``."""


def _public_name(module: str, qualname: str) -> str:
    head = qualname.split(".")[0]
    found = getattr(sys.modules.get(module), head, None)
    for home in PUBLIC_HOMES:
        if found is not None and getattr(sys.modules.get(home), head, None) is found:
            return f"{home}.{qualname}"
    return f"{module}.{qualname}"


def _library_caller(caller: FrameType, frame: FrameType) -> Data:
    """Evidence on a learner function that library code called: which library function
    called it, and, for a method, the library method of the same name it takes the place of
    (a ``train(self, data)`` that ``Module.eval()`` calls as ``self.train(False)``)."""
    code = caller.f_code
    module = str(caller.f_globals.get("__name__", "?"))
    qualname = getattr(code, "co_qualname", code.co_name)  # (3.11 on)
    out: Data = {"called_by": _public_name(module, qualname)[:120]}
    mine = frame.f_code
    if not mine.co_argcount:
        return out
    owner = frame.f_locals.get(mine.co_varnames[0])
    if owner is None:
        return out
    mro = type.__dict__["__mro__"].__get__(type(owner))  # never a learner's own __mro__
    defined = [k for k in mro if mine.co_name in vars(k)]
    mine_at = next((i for i, k in enumerate(defined)
                    if getattr(vars(k)[mine.co_name], "__code__", None) is mine), None)
    if mine_at is None:
        return out
    base = next((k for k in defined[mine_at + 1:]
                 if str(k.__module__).split(".")[0] == "torch"), None)
    if base is None or _meant_to_be_overridden(vars(base)[mine.co_name]):
        return out
    import inspect

    out["overrides"] = _public_name(str(base.__module__),
                                    f"{base.__qualname__}.{mine.co_name}")[:120]
    with contextlib.suppress(TypeError, ValueError):
        signature = inspect.signature(vars(base)[mine.co_name])
        out["overridden_signature"] = str(signature.replace(
            return_annotation=inspect.Signature.empty))[:200]
    return out


def _meant_to_be_overridden(method: object) -> bool:
    """torch's own version only raises NotImplementedError (``Module.forward``,
    ``Function.backward``, ``Dataset.__getitem__``): a subclass is meant to replace it."""
    code = getattr(method, "__code__", None)
    return code is None or "NotImplementedError" in code.co_names


def _library_callers(tb: TracebackType | None) -> dict[int, FrameType]:
    """For each learner frame of the traceback whose caller is not learner code: that
    caller (a learner method torch itself called)."""
    callers: dict[int, FrameType] = {}
    previous: FrameType | None = None
    seen_learner = False  # the program's own frame is called by the child: not evidence
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename == budget.__file__:
            tb = tb.tb_next
            continue
        if frame.f_code.co_filename == LEARNER_FILE:
            if seen_learner and previous is not None and \
                    previous.f_code.co_filename != LEARNER_FILE:
                callers[id(frame)] = previous
            seen_learner = True
        previous = frame
        tb = tb.tb_next
    return callers


ARGUMENT_MESSAGE = re.compile(
    r"(?P<func>[\w.]+)\(\) (?:missing \d+ required (?:positional |keyword-only )?arguments?: "
    r"'(?P<missing>\w+)'|got an unexpected keyword argument '(?P<unexpected>\w+)'|takes)")


DISTRIBUTION_MESSAGE = re.compile(
    r"^Expected parameter (?P<named>\w+) .*? of distribution (?P<func>\w+)\(")
"""A ``torch.distributions`` argument outside its constraint (a negative ``scale``)."""


def _callee(frame: FrameType, line: str, message: str) -> Data | None:
    """What a call the message says was given the wrong arguments is (``LBFGS.step``, a
    distribution given a value outside its constraint): its public name, parameters and what
    its documentation says of the parameter named, read without running any code
    (``inspect.getattr_static``)."""
    import ast
    import inspect

    found = ARGUMENT_MESSAGE.search(message) or DISTRIBUTION_MESSAGE.search(message)
    if found is None:
        return None
    named = found.groupdict()
    last = found["func"].split(".")[-1]
    tree = ast.parse(line.strip().rstrip(":") or "pass")
    calls = [c.func for c in ast.walk(tree) if isinstance(c, ast.Call)
             and (c.func.attr if isinstance(c.func, ast.Attribute) else
                  getattr(c.func, "id", None)) in (last, found["func"].split(".")[0])]
    if not calls:
        return None
    chain: list[str] = []
    node: ast.expr = calls[0]
    while isinstance(node, ast.Attribute):
        chain.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    scopes = (frame.f_locals, frame.f_globals, vars(builtins))
    value: Any = next((scope[node.id] for scope in scopes if node.id in scope), None)
    for attr in chain:
        value = inspect.getattr_static(value, attr)
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, type):
        value = inspect.getattr_static(value, "__init__")
    module = str(getattr(value, "__module__", "") or "")
    qualname = str(getattr(value, "__qualname__", "") or "")
    if not module.startswith("torch") or not qualname:
        return None  # the learner's own function: the source says its parameters
    doc = inspect.getdoc(value) or ""
    if qualname.endswith(".__init__"):  # a class's own documentation says what it takes
        owner = sys.modules[module]
        for part in qualname.split(".")[:-1]:
            owner = inspect.getattr_static(owner, part)
        doc, qualname = inspect.getdoc(owner) or doc, qualname.removesuffix(".__init__")
    signature = inspect.signature(value)
    params = [p.replace(annotation=inspect.Parameter.empty)
              for p in signature.parameters.values()]
    if params and params[0].name == "self":  # the call the learner writes has none
        params = params[1:]
    plain = signature.replace(return_annotation=inspect.Signature.empty, parameters=params)
    param = named.get("missing") or named.get("unexpected") or named.get("named")
    described = ""
    if param and not named.get("unexpected"):
        said = re.search(rf"^\s*{param}\b[^:\n]*:\s*(.+(?:\n\s{{6,}}.+)*)", doc, re.MULTILINE)
        described = " ".join(said[1].split()) if said else ""
    reason = "missing" if named.get("missing") else "unexpected" if named.get(
        "unexpected") else "constraint" if named.get("named") else None
    return {"name": _public_name(module, qualname)[:120], "reason": reason,
            "signature": str(plain)[:300],
            "summary": doc.split("\n\n")[0].replace("\n", " ")[:300],
            "parameter": param, "parameter_doc": described[:300]}


def _frames_now(frame: FrameType | None) -> list[tuple[FrameType, int]]:
    """The learner's frames of the stack that runs ``frame``, outermost first."""
    frames = []
    while frame is not None:
        if frame.f_code.co_filename == LEARNER_FILE:
            frames.append((frame, frame.f_lineno))
        frame = frame.f_back
    frames.reverse()
    return frames


def where_frame(frame: FrameType | None, nonce: bytes) -> bytes:
    """The :data:`~tutor.sandbox.protocol.KIND_WHERE` frame for the stack that runs
    ``frame``: the parent words a stopped run's line with it (and the source it holds)."""
    trace = _trace(_frames_now(frame), [])
    payload = json.dumps([[item["line"], item["function"]] for item in trace])
    return protocol.encode(protocol.KIND_WHERE, nonce, payload.encode())


def _not_a_tensor(value: object) -> bool:
    """A tuple, list or NumPy array (its exact type, never a learner's subclass, whose repr
    could be anything)."""
    kind = type(value)
    return kind in (tuple, list) or (kind.__name__ == "ndarray" and kind.__module__ == "numpy")


def error_info(exc: BaseException, lines: list[str], *, with_locals: bool = True) -> Data:
    """An :class:`~tutor.sandbox.models.ErrorInfo`."""
    def source(line: int | None) -> str:
        return _source(lines, line)

    frames = _learner_frames(exc.__traceback__)
    trace = _trace(frames, lines, _library_callers(exc.__traceback__))
    line: int | None = frames[-1][1] if frames else None
    source_line = source(line) if line is not None else None
    if isinstance(exc, SyntaxError) and exc.filename == LEARNER_FILE:
        line = exc.lineno
        source_line = (exc.text or source(line)).strip()
    local_snaps: dict[str, Data] = {}
    kinds: dict[str, str] = {}
    if with_locals and frames:
        import torch

        named = set(re.findall(r"[A-Za-z_]\w*", source_line or ""))
        for name, value in list(frames[-1][0].f_locals.items()):
            if len(local_snaps) >= MAX_LOCALS:
                break
            if name.startswith("__"):
                continue
            # a tensor, or a container a torch call refuses (a tuple, a NumPy array) named
            # on the failing line: what the call was given instead of a tensor
            if isinstance(value, torch.Tensor) or (name in named and _not_a_tensor(value)):
                with contextlib.suppress(Exception):
                    local_snaps[name] = snapshot(value)
            elif name in named and len(kinds) < MAX_LOCALS:
                # the kind of value a plain name on the line holds (``dataset`` a bool): the
                # type's own name, never the value's text
                kind = type.__dict__["__name__"].__get__(type(value))
                if isinstance(kind, str) and kind.isidentifier():
                    kinds[name] = kind[:40]
    try:
        message = str(exc)
    except Exception:
        message = f"<{type(exc).__name__}: message could not be read>"
    if isinstance(exc, SyntaxError):
        message = exc.msg or message
    callee: Data | None = None
    if isinstance(exc, (TypeError, ValueError)) and frames and source_line:
        with contextlib.suppress(Exception):  # only ever more evidence
            callee = _callee(frames[-1][0], source_line, message)
    return {
        "type": type(exc).__name__,
        "message": message,
        "line": line,
        "source_line": source_line,
        "traceback": trace,
        "locals": local_snaps,
        "kinds": kinds,
        "callee": callee,
        "raised_by": raised_by(exc),
    }


def _exit_status(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    with contextlib.suppress(Exception):
        print(code, file=sys.stderr)
    return 1


def _probe(probe: Data, namespace: dict[str, Any], lines: list[str]) -> Data:
    """A :class:`~tutor.sandbox.models.ProbeResult` for a
    :class:`~tutor.sandbox.models.Probe`."""
    expr = str(probe["expr"])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = eval(compile(expr, PROBE_FILE, "eval"), namespace)
            snap = snapshot(value)
            drawn = graph(value, namespace) if probe.get("graph") else None
        return {"expr": expr, "value": snap, "error": None, "graph": drawn}
    except BaseException as exc:  # a probe's failure is data, including SystemExit
        return {"expr": expr, "value": None, "graph": None,
                "error": error_info(exc, lines, with_locals=False)}


def _result_json(outcome: str, device: str, error: Data | None, warned: list[Data],
                 probes: list[Data], exit_code: int | None, torch_version: str,
                 evidence: Data | None = None, varied: Data | None = None) -> bytes:
    """The JSON of a :class:`~tutor.sandbox.models.RunResult` (the parent adds the rest).

    A lone surrogate in a learner's string (``"\\ud800"``) is valid Python but not UTF-8
    nor strict JSON: it travels as ``?``, so such a string cannot void the result.
    """
    return json.dumps({
        "outcome": outcome, "device": device, "error": error, "warnings": warned,
        "probes": probes, "exit_code": exit_code, "torch_version": torch_version,
        **({"evidence": evidence} if evidence is not None else {}),
        **({"varied": varied} if varied is not None else {}),
    }, ensure_ascii=False).encode("utf-8", "replace")


def serve(fds: list[int], standby: Standby, marks: Marks) -> NoReturn:
    """Run one job on the pipes ``fds`` = [stdout, stderr, result, command]; never returns.

    ``marks`` holds the standby's own marks; they travel to the parent only if it asked.
    """
    run_pid = os.getpid()
    out_fd, err_fd, result_fd, command_fd = fds
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    for fd in (devnull, out_fd, err_fd):
        os.close(fd)
    stdout = io.TextIOWrapper(
        io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="backslashreplace",
        line_buffering=True,
    )
    stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace",
        line_buffering=True,
    )
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout, sys.stderr = stdout, stderr
    write, exit_now = os.write, os._exit  # the learner may patch the os module

    def flush() -> None:
        for stream in (stdout, stderr):
            with contextlib.suppress(Exception):
                stream.flush()

    request = _read_frame(command_fd)
    mark(marks, "request")
    nonce: bytes = request["nonce"].encode()
    code: str = request["code"]
    device: str = request["device"]
    limits: Data = request["limits"]
    _apply_limits(limits, device, standby)
    mark(marks, "limits")

    import random

    import torch

    wanted = request.get("vary")  # grading: hidden varied inputs (tutor.sandbox.vary)
    seed = vary.mixed(wanted, 0) if isinstance(wanted, int) else 0
    _seed(torch, device, seed)
    random.seed(seed)
    with contextlib.suppress(ImportError):
        import numpy

        numpy.random.seed(seed % 2**32)
    if device != "cpu":
        torch.set_default_device(device)
    lines = code.splitlines()
    import linecache

    linecache.cache[LEARNER_FILE] = (len(code), None, code.splitlines(True), LEARNER_FILE)
    namespace: dict[str, Any] = {
        "__name__": "__main__",
        "__builtins__": builtins,
        "device": torch.device(device),
    }
    caught: list[Data] = []
    mark(marks, "code_start")

    def show_warning(message: Any, category: type, filename: str, lineno: int,
                     file: Any = None, line: Any = None) -> None:
        where = lineno if filename == LEARNER_FILE else _learner_line_now()
        info = {"category": category.__name__, "message": str(message), "line": where}
        if info not in caught and len(caught) < MAX_WARNINGS:
            caught.append(info)

    outcome = "ok"
    error: Data | None = None
    exit_code: int | None = None
    # diagnosis: an instrumented re-run collects evidence (tutor.sandbox.evidence)
    recorder = _start_evidence(torch) if request.get("instrument") else None
    program = _budgeted(request.get("budget"), recorder, code, namespace)
    varier = vary.start(torch, wanted) if isinstance(wanted, int) else None
    # chat: a pasted program written for a GPU this machine lacks (tutor.sandbox.stand_in)
    gpu = stand_in.start(torch) if request.get("cuda_on_cpu") is True else None

    def say_where(signum: int, frame: FrameType | None) -> None:
        """The parent stops the run at a limit: tell it the learner's line first."""
        if os.getpid() == run_pid:  # (a process the learner forked holds no say)
            with contextlib.suppress(Exception):
                _write_all(write, result_fd, where_frame(frame, nonce))

    signal.signal(protocol.WHERE_SIGNAL, say_where)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show_warning
        try:
            exec(program if program is not None else compile(code, LEARNER_FILE, "exec"),
                 namespace)
        except SystemExit as exc:
            outcome, exit_code = "exited", _exit_status(exc)
        except BaseException as exc:
            if os.getpid() == run_pid and _is_memory_error(exc):
                outcome = "memory"
                _, hard = resource.getrlimit(resource.RLIMIT_AS)
                with contextlib.suppress(ValueError, OSError):
                    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
                trace = _trace(_learner_frames(exc.__traceback__), lines)
                namespace.clear()
                del exc
                gc.collect()
                line = trace[-1]["line"] if trace else None
                error = {
                    "type": "MemoryError", "line": line, "source_line": _source(lines, line)
                    if line is not None else None, "traceback": trace, "locals": {},
                    "message": f"the code used more than its memory limit "
                               f"({limits['memory_mb']} MB)",
                }
            else:
                outcome = "error"
                error = error_info(exc, lines)
        finally:  # from here on this process writes frames itself: none may cut in
            signal.signal(protocol.WHERE_SIGNAL, signal.SIG_IGN)
            if gpu is not None:  # the learner's code may have left the mode stack broken
                with contextlib.suppress(Exception):
                    gpu.__exit__(None, None, None)
            if varier is not None:  # probes see the values as the code left them
                varier.stop()
    if os.getpid() != run_pid:  # a process the learner forked ran off the end of the code
        flush()
        exit_now(0)
    evidence = recorder.finish(namespace, finished=outcome == "ok") \
        if recorder is not None else None  # diagnosis
    varied = varier.finish(namespace) if varier is not None else None
    mark(marks, "code_end")

    probes: list[Data] = []
    if request.get("probes") and outcome != "memory":
        write(result_fd, protocol.encode(protocol.KIND_DONE, nonce, b"{}"))
        for raw in _read_frame(command_fd):
            probes.append(_probe(raw, namespace, lines))
        if os.getpid() != run_pid:
            flush()
            exit_now(0)
        mark(marks, "probes")
    flush()
    payload = _result_json(outcome, device, error, caught, probes, exit_code, torch.__version__,
                           evidence, varied)
    if request.get("trace"):
        mark(marks, "result_built")
        _write_all(write, result_fd, protocol.encode(protocol.KIND_TRACE, nonce,
                                                     json.dumps(marks).encode()))
    _write_all(write, result_fd, protocol.encode(protocol.KIND_RESULT, nonce, payload))
    exit_now(exit_code if exit_code is not None else 0)


def _budgeted(wanted: Any, recorder: Any, code: str, namespace: dict[str, Any]) -> Any:
    """The program compiled with its training loops budgeted (an instrumented run asked for
    part of its training only: :mod:`tutor.sandbox.budget`); None when the run is whole."""
    if recorder is None or not isinstance(wanted, dict):
        return None
    backwards, steps = wanted.get("backwards"), wanted.get("steps", 0)
    if type(backwards) is not int or type(steps) is not int or backwards < 1 or steps < 0:
        return None
    namespace.update(budget.Budget(recorder, backwards, steps).names())
    return budget.compile_budgeted(code, LEARNER_FILE)


def _start_evidence(torch: Any) -> Any:
    """The diagnosis's recorder, started around the learner's code (imported only here)."""
    from tutor.sandbox import evidence

    return evidence.start(torch, LEARNER_FILE)


def _seed(torch: Any, device: str, seed: int = 0) -> None:
    """Seed the generators a run on ``device`` uses, identically every run (a varied run:
    with its own seed).

    ``torch.manual_seed`` also queues lazy seeding for CUDA, XPU and MTIA, each capturing
    ``traceback.format_stack()`` (reading source files): milliseconds of a CPU run. The
    server's warm-up already queued those seeds with 0, and no device is initialised before
    a run, so for CPU the default generator is all there is to reseed.
    """
    if device == "cpu":
        torch.default_generator.manual_seed(seed)
    else:
        torch.manual_seed(seed)


def print_failure() -> None:
    """Last resort inside the child: the sandbox itself failed; say so on stderr."""
    with contextlib.suppress(Exception):
        traceback.print_exc(file=sys.stderr)

"""Public entry of the sandbox: :class:`Sandbox` runs learner code in isolated processes.

The parent side. It starts the warm server (``tutor.sandbox.server``) in the background,
creates the pipes of each run, hands them to the server, then reads output and the result
frame itself while enforcing the wall-time, output and (for GPU runs) memory limits. The
result is rebuilt from validated JSON; what the child claims is checked against its real
exit status. Thread-safe: many runs may be in flight at once (grading with ``--jobs``).
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import json
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, runtime_checkable

from pydantic import ValidationError

from tutor.errors import TutorError
from tutor.i18n import T, Text
from tutor.records import check_options
from tutor.sandbox import protocol
from tutor.sandbox.models import (
    Confinement,
    ErrorInfo,
    FrameInfo,
    Limits,
    Outcome,
    Probe,
    RunBudget,
    RunResult,
)
from tutor.sandbox.trace import MAX_MARKS, Mark, RunTrace

if TYPE_CHECKING:  # typing.Unpack is 3.11+; annotations are never evaluated here
    from typing_extensions import Unpack

SERVER_START_TIMEOUT_S = 120.0
"""Importing torch takes seconds; on a loaded machine, many more."""
POLL_S = 0.05
WHERE_GRACE_S = 0.3
"""How long a run stopped at a limit has to say where it was before it is killed; only a
run stuck in one long C call (or deaf to the signal) waits it out."""
MAX_WHERE_FRAMES = 50
TRACE_REAP_WAIT_S = 2.0
"""Traced runs only: how long to wait for the server's report that the run was reaped."""
_DEVICES_CODE = """
import torch
__tutor_devices__ = ["cpu"]
if torch.cuda.is_available():
    __tutor_devices__ += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
_mps = getattr(torch.backends, "mps", None)
if _mps is not None and _mps.is_available():
    __tutor_devices__.append("mps")
"""


class DeviceError(TutorError, ValueError):
    """Unknown or unavailable device; the message names the devices that exist."""

    def __init__(self, requested: str, available: list[str], *, known: bool = True) -> None:
        self.requested = requested
        self.available = list(available)
        here = ", ".join(available)
        if known:
            self.text: Text = T(
                f"device '{requested}' is not available here; devices that exist: "
                f"{here} (or 'auto' for the best of them)",
                f"设备 '{requested}' 在本机不可用；可用的设备：{here}"
                "（或用 'auto' 自动选择最好的）",
            )
        else:
            self.text = T(
                f"unknown device '{requested}': use auto, cpu, cuda, cuda:N or mps "
                f"(devices here: {here})",
                f"未知的设备 '{requested}'：请用 auto、cpu、cuda、cuda:N 或 mps"
                f"（本机可用：{here}）",
            )
        super().__init__(self.text)


class SandboxError(TutorError):
    """The sandbox itself could not work (the server failed to start)."""

    exit_code = 3


class RunOptions(TypedDict, total=False):
    """The keyword options of a run (:meth:`Runner.run`); an option left out takes the
    default named here."""

    device: str
    """Where to run: ``cpu`` (default), ``cuda``, ``cuda:N``, ``mps`` or ``auto``."""
    probes: Sequence[str | Probe]
    """Expressions whose values the run reports (default none)."""
    limits: Limits | None
    """Time, memory and output limits (default :class:`Limits`)."""
    cancel: threading.Event | None
    """Set from another thread, it stops the run (its process is killed)."""
    instrument: bool
    """Collect :class:`~tutor.sandbox.models.Evidence` for the diagnosis (default no)."""
    budget: RunBudget | None
    """An instrumented run only: end each loop that trains once the run made this many
    backward() passes and steps (:mod:`tutor.sandbox.budget`; default: the whole run)."""
    vary: int | None
    """A seed: the leaves the code makes start from other values, and its random generators
    from this seed (:mod:`tutor.sandbox.vary`), for grading on hidden inputs."""
    cuda_on_cpu: bool
    """Run a program written for a GPU on the CPU in its place: every CUDA device it asks for
    is the CPU, and a move to CUDA is still a copy (:mod:`tutor.sandbox.stand_in`; default
    no). For code from elsewhere (the chat), never for the learner's own runs."""


@runtime_checkable
class Runner(Protocol):
    """What grading, the TUI and the CLI need of a sandbox; tests may pass fakes."""

    def run(self, code: str, **options: Unpack[RunOptions]) -> RunResult: ...

    def devices(self) -> list[str]: ...


_SAFE_PATH = ("-P",) if sys.version_info >= (3, 11) else ()
"""``-m`` would put the current folder first on ``sys.path``: a learner's ``numpy.py`` or
``torch.py`` there would shadow the real module in the server. ``tutor`` itself is found
through ``PYTHONPATH`` (below); on 3.10 the server drops the folder once it starts."""


SERVER_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "OMP_NUM_THREADS",
                      "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
                      "NVIDIA_DRIVER_CAPABILITIES", "CUDA_HOME", "LD_LIBRARY_PATH",
                      "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
"""All that the server keeps of our environment: a run inherits the server's memory, its
first environment included, so nothing else (``TUTOR_*`` keys, proxies, tokens) goes."""


def _server_environment() -> dict[str, str]:
    env = {name: os.environ[name] for name in SERVER_ENVIRONMENT if name in os.environ}
    # tutor itself is found through PYTHONPATH, first (runs see only its sandbox)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH"))
        if p)
    env.setdefault("OMP_NUM_THREADS", "1")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


class _Server:
    """One warm server process and the parent's end of its request socket."""

    def __init__(self, hide: Sequence[str] = (), *, few_runs: bool = False,
                 confine: bool = True) -> None:
        parent_end, server_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = _server_environment()
        self.sock = parent_end
        self.proc = subprocess.Popen(
            [sys.executable, *_SAFE_PATH, "-m", "tutor.sandbox.server", str(server_end.fileno()),
             json.dumps({"hide": list(hide), "few_runs": few_runs,
                         "unconfined": not confine})],
            pass_fds=(server_end.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            close_fds=True,
        )
        server_end.close()
        self.lock = threading.Lock()
        self.ready = False
        self.torch_version = ""
        self.template_pid = 0
        """The server's fork template, which holds torch and whose children the runs are
        (benchmarks read its CPU and memory)."""
        self.exposed: list[str] = []
        self.confinement = Confinement(mode="none", reason="the server has not started")
        self.failure: str | None = None
        self.last_cpu_ns: int | None = None
        """Server CPU time reported with the previous run's pid (traced runs only)."""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_ready(self, timeout: float) -> None:
        with self.lock:
            if self.ready:
                return
            if self.failure:
                raise SandboxError(self.failure)
            self.sock.settimeout(timeout)
            try:
                message = self.sock.recv(4096)
            except (TimeoutError, OSError) as exc:
                self.failure = f"the sandbox server did not start: {exc}"
                raise SandboxError(self.failure) from exc
            finally:
                self.sock.settimeout(None)
            try:
                data = json.loads(message) if message else {}
            except ValueError:
                data = {}
            if "ready" not in data:
                self.failure = "the sandbox server could not start" + (
                    f": {data['fatal']}" if "fatal" in data else ""
                )
                raise SandboxError(
                    self.failure, hint="check that torch imports: python -c 'import torch'"
                )
            self.torch_version = str(data["ready"])
            self.template_pid = int(data.get("template") or 0)
            self.exposed = [str(path) for path in data.get("exposed", [])]
            with contextlib.suppress(ValidationError):
                self.confinement = Confinement.model_validate(data.get("confinement"))
            self.ready = True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
        try:
            self.proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@dataclass(frozen=True)
class ServerUsage:
    """What the server's processes (the manager and the fork template) used so far."""

    cpu_s: float
    """Their own CPU time."""
    runs_cpu_s: float
    """CPU time of their children that were reaped: the runs, exits included."""
    minor_faults: int
    """Their own minor page faults: mostly copies of pages a fork shares with a child. A
    count, so it does not move with the machine's speed as CPU time does."""
    rss_bytes: int
    """Their resident memory together (shared pages counted in each)."""


class _RetryRun(Exception):
    """The server died before the run started; start a new one and try again."""


class Sandbox:
    """Runs code in fresh processes forked from a warm torch server. See the module doc."""

    def __init__(self, *, hide: Sequence[str | os.PathLike[str]] = (), few_runs: bool = False,
                 trace: Callable[[RunTrace], None] | None = None, confine: bool = True) -> None:
        """``hide``: folders no run may see (a lesson's solution, cached expected values,
        other students' submissions). A confined run sees only an allow-list of the machine
        (:mod:`tutor.sandbox.confine`), so these are out of its sight already, and any that
        lies inside what it does see (a course inside site-packages) is covered; unconfined,
        every one stays visible (:meth:`exposed`).
        ``confine``: False only to test the unconfined fallback.
        ``few_runs``: a command that runs code once or twice (``tutor run``): the server
        skips what only pays off over many runs (sympy's import, huge pages), about a
        second sooner to the first result; a run that needs sympy imports it itself.
        ``trace``: benchmarks only; called with each run's phase marks (costs a little)."""
        self._hide = [os.fspath(path) for path in hide]
        self._few_runs = few_runs
        self._confine = confine
        self._trace = trace
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._server: _Server | None = None
        self._devices: list[str] | None = None
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        """Begin warming up the server; returns at once."""
        self._current_server()

    def _current_server(self) -> _Server:
        with self._lock:
            if self._closed:
                raise SandboxError("the sandbox was closed")
            if self._server is None or not self._server.alive():
                if self._server is not None:
                    self._server.close()
                self._server = _Server(self._hide, few_runs=self._few_runs,
                                       confine=self._confine)
            return self._server

    def _replace(self, dead: _Server) -> None:
        with self._lock:
            if self._server is dead:
                dead.close()
                self._server = None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            server, self._server = self._server, None
        if server is not None:
            server.close()

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def server_usage(self) -> ServerUsage | None:
        """What the server has used so far (for benchmarks); None before it started or
        where ``/proc`` cannot tell."""
        server = self._server
        if server is None:
            return None
        pids = [pid for pid in (server.proc.pid, server.template_pid) if pid]
        cpu = runs = 0
        faults = rss = 0
        try:
            for pid in pids:
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
                faults += int(fields[7])
                cpu += int(fields[11]) + int(fields[12])
                runs += int(fields[13]) + int(fields[14])
                rss += _rss_bytes(pid)
        except (OSError, ValueError, IndexError):
            return None
        tick = os.sysconf("SC_CLK_TCK")
        return ServerUsage(cpu_s=cpu / tick, runs_cpu_s=runs / tick, minor_faults=faults,
                           rss_bytes=rss)

    # -- confinement -------------------------------------------------------------------
    def exposed(self) -> list[str]:
        """Folders asked to be hidden that runs can still see: none when runs are confined.
        Waits for the server to start."""
        server = self._current_server()
        server.wait_ready(SERVER_START_TIMEOUT_S)
        return list(server.exposed)

    def confinement(self) -> Confinement:
        """How the kernel confines runs here. Waits for the server to start."""
        server = self._current_server()
        server.wait_ready(SERVER_START_TIMEOUT_S)
        return server.confinement

    # -- devices -----------------------------------------------------------------------
    def devices(self) -> list[str]:
        """Devices that exist, asked of a forked child (never of this process), cached."""
        if self._devices is None:
            result = self.run(_DEVICES_CODE, device="cpu", probes=["__tutor_devices__"])
            probe = result.probe("__tutor_devices__")
            value = getattr(getattr(probe, "value", None), "value", None)
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise SandboxError("the sandbox could not list the devices of this machine")
            self._devices = value
        return list(self._devices)

    def resolve_device(self, device: str) -> str:
        """'auto' → the best device; 'cuda' → 'cuda:0'; raises DeviceError if unavailable."""
        wanted = device.strip().lower()
        if wanted == "cpu":
            return "cpu"
        known = wanted == "auto" or wanted in ("cuda", "mps") or (
            wanted.startswith("cuda:") and wanted[5:].isdigit()
        )
        available = self.devices()
        if not known:
            raise DeviceError(device, available, known=False)
        if wanted == "auto":
            for candidate in ("cuda:0", "mps"):
                if candidate in available:
                    return candidate
            return "cpu"
        if wanted == "cuda":
            wanted = "cuda:0"
        if wanted.startswith("cuda:"):
            wanted = f"cuda:{int(wanted[5:])}"
        if wanted not in available:
            raise DeviceError(device, available)
        return wanted

    # -- runs --------------------------------------------------------------------------
    def run(
        self,
        code: str,
        *,
        on_output: Callable[[str], None] | None = None,
        **options: Unpack[RunOptions],
    ) -> RunResult:
        """Run ``code`` in a fresh process and return what happened. Blocks; thread-safe.

        ``options``: see :class:`RunOptions`.
        ``on_output``: called from this thread with the run's stdout and stderr text, in the
        order it arrives, while the run goes; only what the output limit keeps (then the
        cut marker), so the chunks joined are ``stdout`` and ``stderr`` interleaved. Never
        called after ``run`` returns. An exception it raises stops the run (its process is
        killed) and is raised again from here; give it only to the runs of
        the learner's own code, never to a reference solution's."""
        called_ns = time.perf_counter_ns()
        check_options(options, RunOptions, "Sandbox.run")
        device = options.get("device", "cpu")
        limits = options.get("limits") or Limits()
        if len(code) > limits.source_bytes or len(code.encode("utf-8", "replace")) > \
                limits.source_bytes:
            return RunResult(outcome="error", device=device, error=ErrorInfo(
                type="SourceTooLarge",
                message=f"the program is larger than {limits.source_bytes} bytes: "
                        "it was not run"))
        resolved = self.resolve_device(device)
        wanted = [Probe(expr=p) if isinstance(p, str) else p for p in options.get("probes", ())]
        for attempt in range(3):
            server = self._current_server()
            try:
                server.wait_ready(SERVER_START_TIMEOUT_S)
                run = _Run(server, self._send_lock, code, resolved, wanted, limits,
                           options.get("cancel"), self._trace, called_ns)
                run.instrument = options.get("instrument", False)  # diagnosis
                run.budget = options.get("budget")
                run.vary = options.get("vary")  # grading: hidden varied inputs
                run.cuda_on_cpu = options.get("cuda_on_cpu", False)  # chat: pasted GPU code
                run.on_output = on_output
                return run.execute()
            except _RetryRun:
                self._replace(server)
                if attempt == 2:
                    raise SandboxError("the sandbox server keeps dying; no run possible") from None
        raise AssertionError("unreachable")


class _Stream:
    """One of a run's output pipes: the bytes kept of it, and its text as it comes."""

    def __init__(self) -> None:
        self.data = bytearray()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def text(self, data: bytes, *, final: bool = False) -> str:
        """The text of ``data`` that is complete so far (a character split between two
        reads is held back until its last byte comes)."""
        return self._decoder.decode(data, final)


class _Run:
    """One run seen from the parent: pipes, the select loop, and the verdict on the end."""

    def __init__(self, server: _Server, send_lock: threading.Lock, code: str, device: str,
                 probes: list[Probe], limits: Limits, cancel: threading.Event | None,
                 trace: Callable[[RunTrace], None] | None = None, called_ns: int = 0) -> None:
        self.server, self.send_lock = server, send_lock
        self.trace = trace
        self.marks: list[tuple[str, int, int]] = [
            ("request", called_ns or time.perf_counter_ns(), time.thread_time_ns())]
        self.run_marks: bytes | None = None
        self.pid_report: dict[str, Any] = {}
        self.status_report: dict[str, Any] = {}
        self.code, self.device, self.probes, self.limits = code, device, probes, limits
        self.cancel = cancel
        self.nonce = secrets.token_hex(16).encode()
        self.out = _Stream()
        self.err = _Stream()
        self.on_output: Callable[[str], None] | None = None
        self.listener_error: Exception | None = None
        self.truncated = False
        self.kill_reason: str | None = None
        self.kill_at: float | None = None
        """Stopped at a limit: when the run is killed whether or not it said where it was."""
        self.where_payload: bytes | None = None
        self.frames = protocol.FrameReader()
        self.bad_frames = False
        self.result_payload: bytes | None = None
        self.status: int | None = None
        self.monitor_lost = False
        self.instrument = False
        self.budget: RunBudget | None = None
        self.vary: int | None = None
        self.cuda_on_cpu = False

    def execute(self) -> RunResult:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        res_r, res_w = os.pipe()
        cmd_r, cmd_w = os.pipe()
        control, control_remote = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            request = {"nonce": self.nonce.decode(), "code": self.code, "device": self.device,
                       "limits": self.limits.model_dump(), "probes": bool(self.probes),
                       "trace": self.trace is not None}
            if self.instrument:  # diagnosis: the run collects evidence
                request["instrument"] = True
                if self.budget is not None:  # of part of its training only
                    request["budget"] = self.budget.model_dump()
            if self.vary is not None:  # grading: the run varies its inputs
                request["vary"] = self.vary
            if self.cuda_on_cpu:  # chat: a program written for a GPU, on the CPU
                request["cuda_on_cpu"] = True
            # The request goes into the command pipe before the pipes travel: the run reads it
            # as soon as it holds them, without waiting for this thread to learn its pid.
            self.pending_cmd = bytearray(_frame(request))
            os.set_blocking(cmd_w, False)
            self._write_command(cmd_w)
            started = time.monotonic()  # the wall-time limit counts from the hand-off
            try:
                with self.send_lock:
                    socket.send_fds(self.server.sock, [b"run"],
                                    [control_remote.fileno(), out_w, err_w, res_w, cmd_r])
            except OSError:
                raise _RetryRun() from None
            finally:
                control_remote.close()
                for fd in (out_w, err_w, res_w, cmd_r):
                    os.close(fd)
            self._mark("sent")
            pid = self._await_pid(control)
            self._mark("pid")
            self._loop(pid, started, control, out_r, err_r, res_r, cmd_w)
            duration_ms = (time.monotonic() - started) * 1000
            verdict = self._verdict(duration_ms)
            self._mark("validated")
            if self.trace is not None:
                self._report_trace(control)
            if self.listener_error is not None:
                raise self.listener_error
            return verdict
        finally:
            control.close()
            for fd in (out_r, err_r, res_r, cmd_w):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _await_pid(self, control: socket.socket) -> int:
        while True:
            ready, _, _ = select.select([control], [], [], 1.0)
            if ready:
                message = control.recv(4096)
                if not message:
                    raise _RetryRun()
                self.pid_report = json.loads(message)
                return int(self.pid_report["pid"])
            if not self.server.alive():
                raise _RetryRun()

    def _kill(self, pid: int, reason: str | None) -> None:
        if reason is not None and self.kill_reason is None:
            self.kill_reason = reason
        self.kill_at = None
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)

    def _stop(self, pid: int, reason: str) -> None:
        """Stop the run at a limit: ask it where it is (the learner's line is the first thing
        a learner needs about an endless loop), kill it once it said or after a grace."""
        if self.kill_reason is not None:
            return
        self.kill_reason = reason
        try:
            os.kill(pid, protocol.WHERE_SIGNAL)
        except OSError:
            self._kill(pid, None)
            return
        self.kill_at = time.monotonic() + WHERE_GRACE_S

    def _loop(self, pid: int, started: float, control: socket.socket, out_r: int, err_r: int,
              res_r: int, cmd_w: int) -> None:
        readers: dict[int, _Stream | None] = {out_r: self.out, err_r: self.err, res_r: None}
        open_readers = set(readers)
        deadline = started + self.limits.wall_time_s
        baseline_rss = _rss_bytes(pid) if self.device != "cpu" else 0
        while True:
            now = time.monotonic()
            if now >= deadline:
                self._stop(pid, "timeout")
            if self.cancel is not None and self.cancel.is_set() and self.kill_reason is None:
                self._kill(pid, "cancelled")
            if baseline_rss and _rss_bytes(pid) - baseline_rss > self.limits.memory_mb << 20:
                self._stop(pid, "memory")
            if self.kill_at is not None and (now >= self.kill_at
                                             or self.where_payload is not None):
                self._kill(pid, None)
            if self.status is not None or (self.monitor_lost and not _alive(pid)):
                break
            if self.result_payload is not None and self.kill_reason is None:
                break  # the result frame is the child's last act: no need to await its exit
            wait_for: list[socket.socket | int] = [] if self.monitor_lost else [control]
            wait_for += open_readers
            writers = [cmd_w] if self.pending_cmd else []
            if self.kill_at is not None:
                timeout = max(0.0, min(self.kill_at - now, POLL_S))
            elif self.kill_reason is None:
                timeout = max(0.0, min(deadline - now, POLL_S))
            else:
                timeout = POLL_S
            readable, writable, _ = select.select(wait_for, writers, [], timeout)
            if writable:
                self._write_command(cmd_w)
            for item in readable:
                if isinstance(item, socket.socket):
                    message = control.recv(4096)
                    if not message:
                        self.monitor_lost = True  # the server died (the learner killed it?)
                    else:
                        with contextlib.suppress(ValueError, KeyError, TypeError):
                            self.status_report = json.loads(message)
                            self.status = int(self.status_report["status"])
                    continue
                self._read(item, readers, open_readers, pid)
        self._kill(pid, None)  # no orphans: the whole group goes, even after success
        for fd in list(open_readers):  # what was written before the end is in the pipes
            while fd in open_readers and select.select([fd], [], [], 0)[0]:
                self._read(fd, readers, open_readers, pid)
        for stream in (self.out, self.err):  # a character cut off by the end, as U+FFFD
            self._stream(stream.text(b"", final=True))
        if self.truncated:
            self._stream(self._cut_marker())

    def _write_command(self, cmd_w: int) -> None:
        """Write what the pipe takes now of the pending command (cmd_w is non-blocking)."""
        try:
            written = os.write(cmd_w, self.pending_cmd)
            del self.pending_cmd[:written]
        except BlockingIOError:
            pass
        except BrokenPipeError:
            self.pending_cmd.clear()

    def _read(self, fd: int, readers: dict[int, _Stream | None], open_readers: set[int],
              pid: int) -> None:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        if not data:
            open_readers.discard(fd)
            return
        sink = readers[fd]
        if sink is None:
            self._feed_result(data)
            return
        room = self.limits.output_bytes - len(self.out.data) - len(self.err.data)
        if len(data) > room:
            data = data[: max(room, 0)]
            if not self.truncated:
                self.truncated = True
                self._stop(pid, "output_limit")
            open_readers.discard(fd)
        sink.data += data
        self._stream(sink.text(data))
        if self.listener_error is not None:
            self._kill(pid, "cancelled")  # its listener has gone: nobody waits for the run

    def _stream(self, text: str) -> None:
        """Hand ``text`` to the run's listener, if any; one that raises is let go."""
        if not text or self.on_output is None:
            return
        try:
            self.on_output(text)
        except Exception as exc:  # raised again when the run is over (see Sandbox.run)
            self.listener_error = exc
            self.on_output = None

    def _cut_marker(self) -> str:
        return (f"\n… [output cut: the run printed more than {self.limits.output_bytes}"
                " bytes] …\n")

    def _feed_result(self, data: bytes) -> None:
        if self.bad_frames:
            return
        try:
            for frame in self.frames.feed(data):
                kind, payload = protocol.split(frame, self.nonce)
                if kind == protocol.KIND_DONE and self.probes is not None:
                    self.pending_cmd += _frame([p.model_dump() for p in self.probes])
                elif kind == protocol.KIND_RESULT and self.result_payload is None:
                    self.result_payload = payload
                    self._mark("result")
                elif kind == protocol.KIND_TRACE and self.run_marks is None:
                    self.run_marks = payload
                elif kind == protocol.KIND_WHERE and self.where_payload is None:
                    self.where_payload = payload
        except protocol.FrameError:
            self.bad_frames = True  # forged or broken: nothing more from this channel counts

    def _mark(self, name: str) -> None:
        if self.trace is not None:
            self.marks.append((name, time.perf_counter_ns(), time.thread_time_ns()))

    def _report_trace(self, control: socket.socket) -> None:
        """Traced runs: await the server's reap report, then hand the marks to the callback."""
        if self.status is None and not self.monitor_lost:
            ready, _, _ = select.select([control], [], [], TRACE_REAP_WAIT_S)
            if ready:
                with contextlib.suppress(OSError, ValueError, TypeError):
                    self.status_report = json.loads(control.recv(4096) or b"{}")
        marks = [Mark(process="parent", name=name, wall_ns=wall, cpu_ns=cpu)
                 for name, wall, cpu in self.marks]
        pid_report, status = self.pid_report, self.status_report
        for name, key in (("received", "received_ns"), ("handed", "handed_ns")):
            if isinstance(pid_report.get(key), int):
                marks.append(Mark(process="server", name=name, wall_ns=pid_report[key]))
        if isinstance(status.get("reaped_ns"), int):
            marks.append(Mark(process="server", name="reaped", wall_ns=status["reaped_ns"]))
        with contextlib.suppress(ValueError, TypeError, LookupError, ValidationError):
            raw = json.loads(self.run_marks or b"[]")
            if isinstance(raw, list) and len(raw) <= MAX_MARKS:
                marks += [Mark(process="run", name=item[0], wall_ns=item[1], cpu_ns=item[2])
                          for item in raw]
        server_cpu = pid_report.get("cpu_ns")
        server_delta = None
        if isinstance(server_cpu, int):
            if self.server.last_cpu_ns is not None:
                server_delta = server_cpu - self.server.last_cpu_ns
            self.server.last_cpu_ns = server_cpu
        run_cpu, faults = status.get("cpu_ns"), status.get("minflt")
        self.trace(RunTrace(  # type: ignore[misc]
            marks=marks, server_cpu_ns=server_delta,
            run_cpu_ns=run_cpu if isinstance(run_cpu, int) else None,
            run_minor_faults=faults if isinstance(faults, int) else None,
        ))

    def _claimed(self) -> RunResult | None:
        if self.result_payload is None or self.bad_frames:
            return None
        try:
            return RunResult.model_validate_json(self.result_payload)
        except ValidationError:
            self.bad_frames = True
            return None

    def _verdict(self, duration_ms: float) -> RunResult:
        stdout = self.out.data.decode("utf-8", errors="replace")
        stderr = self.err.data.decode("utf-8", errors="replace")
        if self.truncated:
            marker = self._cut_marker()
            if len(self.err.data) and len(self.err.data) >= len(self.out.data):
                stderr += marker
            else:
                stdout += marker
        base: dict[str, object] = {
            "device": self.device, "stdout": stdout, "stderr": stderr,
            "output_truncated": self.truncated, "duration_ms": round(duration_ms, 3),
            "torch_version": self.server.torch_version,
        }
        claimed = self._claimed()
        reason = self.kill_reason
        if reason is not None:
            return RunResult(outcome=_REASON_OUTCOME[reason], error=self._reason_error(reason),
                             **base)
        status = self.status
        if status is not None and os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig == signal.SIGXCPU:
                return RunResult(outcome="timeout", error=self._reason_error("timeout"), **base)
            return RunResult(outcome="crashed", signal=sig, error=ErrorInfo(
                type="Crashed", message=f"the process died from signal {sig} "
                f"({_signal_name(sig)})"), **base)
        exit_code = os.WEXITSTATUS(status) if status is not None else None
        if claimed is not None and claimed.outcome in ("ok", "error", "memory", "exited"):
            consistent = exit_code is None or (
                exit_code == 0 if claimed.outcome != "exited" else exit_code == claimed.exit_code
            )
            if consistent:
                return claimed.model_copy(update={**base, "torch_version": claimed.torch_version
                                                  or self.server.torch_version})
        if exit_code is None:
            return RunResult(outcome="crashed", error=ErrorInfo(
                type="Crashed", message="the run's process vanished without a result"), **base)
        error = None
        if self.bad_frames:
            error = ErrorInfo(type="ProtocolError", message=(
                "the code wrote data the sandbox could not read on its result channel; "
                "the result was discarded"))
        return RunResult(outcome="exited", exit_code=exit_code, error=error, **base)

    def _reason_error(self, reason: str) -> ErrorInfo:
        messages = {
            "timeout": f"the code ran longer than {self.limits.wall_time_s:g} s and was stopped",
            "cancelled": "the run was cancelled",
            "memory": f"the code used more than {self.limits.memory_mb} MB and was stopped",
            "output_limit": f"the code printed more than {self.limits.output_bytes} bytes "
            "and was stopped",
        }
        types = {"timeout": "Timeout", "cancelled": "Cancelled", "memory": "MemoryError",
                 "output_limit": "OutputLimit"}
        trace = self._where()
        line = trace[-1].line if trace else None
        return ErrorInfo(type=types[reason], message=messages[reason], line=line,
                         source_line=trace[-1].source if trace else None, traceback=trace)

    def _where(self) -> list[FrameInfo]:
        """Where the run was when it was stopped, as it said (a claim: only lines of the
        code it was given are kept, and their source is read from that code here)."""
        if self.where_payload is None or self.bad_frames:
            return []
        try:
            said = json.loads(self.where_payload)
        except ValueError:
            return []
        lines = self.code.splitlines()
        trace: list[FrameInfo] = []
        for item in said if isinstance(said, list) else []:
            if not (isinstance(item, list) and len(item) == 2 and type(item[0]) is int
                    and isinstance(item[1], str) and 1 <= item[0] <= len(lines)):
                return []
            trace.append(FrameInfo(line=item[0], function=item[1][:80],
                                   source=lines[item[0] - 1].strip()))
        return trace[-MAX_WHERE_FRAMES:]


_REASON_OUTCOME: dict[str, Outcome] = {
    "timeout": "timeout", "cancelled": "timeout", "memory": "memory",
    "output_limit": "output_limit",
}


def _frame(value: object) -> bytes:
    data = json.dumps(value).encode()
    return protocol.HEADER.pack(len(data)) + data


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return "unknown"


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


_default: Sandbox | None = None
_default_lock = threading.Lock()


def default_sandbox() -> Sandbox:
    """The process-wide shared sandbox, started on first use and closed at exit."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Sandbox()
            _default.start()
            atexit.register(_default.close)
        return _default

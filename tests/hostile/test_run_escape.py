"""Escape: whatever a run starts, however it detaches, is gone when the run ends; it cannot
reach the grader, the server, other namespaces or the network."""

from __future__ import annotations

import os
import socket
import threading

import pytest
from conftest import NAMESPACE_LINE, TOKEN, assert_nothing_left

from tutor.sandbox import Limits, Sandbox

SLEEP = f"['/bin/sleep', '600.{int(TOKEN, 16) % 10**6}']"
"""A process the machine can find by its argument (sleep takes a fraction)."""

DETACHING = {
    "setsid-double-fork": (
        "import os, time\n"
        "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        "        time.sleep(600)\n    os._exit(0)\nprint('parent done')\n"),
    "popen-new-session": (
        f"import subprocess\nsubprocess.Popen({SLEEP}, start_new_session=True)\n"),
    "nohup-background": (
        f"import subprocess\nsubprocess.run(['/bin/sh', '-c', 'nohup ' + ' '.join({SLEEP}) + "
        "' >/dev/null 2>&1 &'])\n"),
    "fork-from-thread": (
        "import os, threading, time\n"
        "def go():\n    if os.fork() == 0:\n        time.sleep(600)\n"
        "threading.Thread(target=go).start()\n"),
    "daemon-thread": (
        "import threading, time\nthreading.Thread(target=time.sleep, args=(600,), "
        "daemon=True).start()\n"),
    "multiprocessing-daemon": (
        "import multiprocessing, time\n"
        "p = multiprocessing.get_context('fork').Process(target=time.sleep, args=(600,), "
        "daemon=True)\np.start()\n"),
    "child-outlives-an-error": (
        f"import subprocess\nsubprocess.Popen({SLEEP})\nraise ValueError('bye')\n"),
    "child-outlives-a-timeout": (
        f"import subprocess, time\nsubprocess.Popen({SLEEP})\ntime.sleep(60)\n"),
    "watcher-of-files-made-later": (
        "import os, time\n"
        "if os.fork() == 0:\n    os.setsid()\n"
        "    while True:\n        os.listdir('/tmp')\n        time.sleep(0.05)\n"),
    "ignores-sigterm-and-sighup": (
        "import os, signal, time\n"
        "if os.fork() == 0:\n"
        "    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):\n"
        "        signal.signal(s, signal.SIG_IGN)\n    time.sleep(600)\n"),
}


@pytest.mark.parametrize("code", DETACHING.values(), ids=DETACHING.keys())
def test_nothing_a_run_starts_outlives_it(hostile_sandbox: Sandbox, code: str) -> None:
    result = hostile_sandbox.run(NAMESPACE_LINE + code, limits=Limits(wall_time_s=3))
    assert result.outcome in ("ok", "error", "timeout"), result
    assert_nothing_left(result)
    assert hostile_sandbox.run("print(1 + 1)").stdout == "2\n"


DENIED = {
    # (code printing a result, what it must print)
    "ptrace-attach": ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                      "print(libc.ptrace(16, 1, 0, 0), ctypes.get_errno())\n", "-1 1"),
    "new-user-namespace": ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                           "print(libc.unshare(0x10000000), ctypes.get_errno())\n", "-1 1"),
    "clone-with-namespace": ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                             "print(libc.syscall(56, 0x20000000 | 17, 0, 0, 0, 0), "
                             "ctypes.get_errno())\n", "-1 1"),
    "mount-tmpfs": ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                    "print(libc.mount(b'x', b'/tmp', b'tmpfs', 0, None), "
                    "ctypes.get_errno())\n", "-1 1"),
    "chroot": ("import os\ntry:\n    os.chroot('/tmp')\nexcept PermissionError as e:\n"
               "    print('denied', e.errno)\n", "denied 1"),
    "become-root": ("import os\ntry:\n    os.setuid(0)\nexcept PermissionError as e:\n"
                    "    print('denied', e.errno)\n", "denied 1"),
    "setns-to-pid-1": ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                       "print(libc.setns(os.open('/proc/self/ns/net', 0), 0), "
                       "ctypes.get_errno())\n", "-1 1"),
    "keyctl": ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
               "print(libc.syscall(250, 0, -3, 0, 0, 0), ctypes.get_errno())\n", "-1 1"),
    "bpf": ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "print(libc.syscall(321, 0, 0, 0), ctypes.get_errno())\n", "-1 1"),
    "perf-event-open": ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                        "print(libc.syscall(298, 0, 0, -1, -1, 0), ctypes.get_errno())\n",
                        "-1 1"),
    "x32-syscall-abi": ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                        "print(libc.syscall(0x40000000 | 39), ctypes.get_errno())\n", "-1 1"),
}


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86-64 system call numbers")
@pytest.mark.parametrize(("code", "printed"), DENIED.values(), ids=DENIED.keys())
def test_what_a_lesson_never_needs_is_denied(hostile_sandbox: Sandbox, code: str,
                                             printed: str) -> None:
    result = hostile_sandbox.run(NAMESPACE_LINE + code)
    assert result.outcome == "ok", result
    assert result.stdout.splitlines()[-1] == printed
    assert_nothing_left(result)


def test_signals_reach_no_process_but_the_runs_own(hostile_sandbox: Sandbox) -> None:
    me = os.getpid()
    code = NAMESPACE_LINE + (
        "import os, signal\nfor pid in range(2, 4000):\n"
        "    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\n"
        "print('visible', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n"
        "os.kill(-1, signal.SIGKILL)\n")
    result = hostile_sandbox.run(code)
    assert "visible [1]" in result.stdout  # the run's namespace holds the run alone
    assert os.getpid() == me and hostile_sandbox.run("print('alive')").stdout == "alive\n"
    assert_nothing_left(result)


def test_a_run_cannot_kill_the_server(hostile_sandbox: Sandbox) -> None:
    server = hostile_sandbox._server
    assert server is not None
    code = NAMESPACE_LINE + (
        f"import os, signal\nfor pid in ({server.proc.pid}, {server.template_pid}, "
        f"{os.getpid()}, os.getppid()):\n"
        "    try:\n        os.kill(pid, signal.SIGKILL)\n        print('sent', pid)\n"
        "    except OSError as e:\n        print('no', pid, e.errno)\n")
    result = hostile_sandbox.run(code)
    assert result.outcome == "ok", result
    assert hostile_sandbox._server is server and server.alive()
    assert_nothing_left(result)


def _listening_tcp() -> tuple[socket.socket, int]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.5)
    return listener, listener.getsockname()[1]


def test_no_tcp_to_the_machines_loopback(hostile_sandbox: Sandbox) -> None:
    listener, port = _listening_tcp()
    with listener:
        code = NAMESPACE_LINE + (
            f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), "
            "timeout=2)\n    print('connected')\n"
            "except OSError as e:\n    print('refused', e.errno)\n")
        result = hostile_sandbox.run(code)
        with pytest.raises(TimeoutError):
            listener.accept()
    assert "refused" in result.stdout and "connected" not in result.stdout
    assert_nothing_left(result)


def test_no_udp_out(hostile_sandbox: Sandbox) -> None:
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.settimeout(0.5)
    port = receiver.getsockname()[1]
    with receiver:
        code = NAMESPACE_LINE + (
            "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f"try:\n    s.sendto(b'leak', ('127.0.0.1', {port}))\n    print('sent')\n"
            "except OSError as e:\n    print('unreachable', e.errno)\n")
        result = hostile_sandbox.run(code)
        with pytest.raises(TimeoutError):
            receiver.recv(16)
    assert "unreachable" in result.stdout
    assert_nothing_left(result)


def test_no_abstract_unix_socket_of_the_machine(hostile_sandbox: Sandbox) -> None:
    name = f"\0tutor-hostile-{TOKEN}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(name)
    listener.listen(1)
    accepted: list[object] = []
    listener.settimeout(2)
    waiter = threading.Thread(target=lambda: accepted.append(_accept(listener)))
    waiter.start()
    code = NAMESPACE_LINE + (
        f"import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect({name!r})\n"
        "    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\n")
    result = hostile_sandbox.run(code)
    waiter.join()
    listener.close()
    assert "refused" in result.stdout and accepted == [None]
    assert_nothing_left(result)


def _accept(listener: socket.socket) -> object:
    try:
        return listener.accept()
    except TimeoutError:
        return None


def test_no_unix_socket_in_the_machines_tmp(hostile_sandbox: Sandbox) -> None:
    path = f"/tmp/tutor-hostile-{TOKEN[:4]}.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    try:
        code = NAMESPACE_LINE + (
            f"import os\nprint('seen' if os.path.exists({path!r}) else 'absent')\n")
        result = hostile_sandbox.run(code)
    finally:
        listener.close()
        os.unlink(path)
    assert result.stdout.splitlines()[-1] == "absent"
    assert_nothing_left(result)

"""The server's children: standbys forked without CPython's after-fork hooks (while it is
one thread), strays told apart from runs and the standby, and what each server process
holds.

Run in fresh interpreters: the test process has threads and children of other tests.
"""

from __future__ import annotations

import os
import textwrap

from fresh_process import run_fresh

from tutor.sandbox import Sandbox

PROBE = textwrap.dedent("""
    import os, sys, threading
    from tutor.sandbox import server

    ran = []
    os.register_at_fork(after_in_child=lambda: ran.append(1))
    if sys.argv[1] == "thread":
        stop = threading.Event()
        threading.Thread(target=stop.wait, daemon=True).start()
    read_end, write_end = os.pipe()
    pid = server._fork()
    if pid == 0:
        os.write(write_end, b"hooks ran" if ran else b"no hooks")
        os._exit(0)
    os.close(write_end)
    print(os.read(read_end, 64).decode())
    os.waitpid(pid, 0)
""")


def test_one_thread_forks_without_python_hooks() -> None:
    assert run_fresh(PROBE, "alone") == ["no hooks"]


def test_with_another_thread_the_plain_fork_runs_the_hooks() -> None:
    assert run_fresh(PROBE, "thread") == ["hooks ran"]


STRAYS = textwrap.dedent("""
    import os, signal, time
    from tutor.sandbox import server

    state = server._State(sock=None)
    said = [server._strays(state)]
    run, stray = os.fork(), None
    if run == 0:
        time.sleep(60)
    state.runs[run] = None
    said.append(server._strays(state))
    stray = os.fork()
    if stray == 0:
        time.sleep(60)
    said.append(server._strays(state))
    for pid in (run, stray):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    state.runs.clear()
    said.append(server._strays(state))
    print(said)
""")


def test_strays_are_children_that_are_neither_runs_nor_the_standby() -> None:
    assert run_fresh(STRAYS) == ["[False, False, True, False]"]


def _mapped(pid: int, library: str) -> bool:
    with open(f"/proc/{pid}/maps") as handle:
        return library in handle.read()


def test_only_the_fork_template_holds_torch_and_neither_holds_pydantic(
    sandbox: Sandbox,
) -> None:
    # What the template maps is copied into each fork's page tables; the manager is light.
    assert sandbox.run("pass").outcome == "ok"
    server = sandbox._server
    assert server is not None and server.template_pid
    assert _mapped(server.template_pid, "libtorch_cpu")
    assert not _mapped(server.proc.pid, "libtorch_cpu")
    for pid in (server.proc.pid, server.template_pid):
        assert not _mapped(pid, "pydantic_core")


def test_server_usage_covers_both_processes() -> None:
    box = Sandbox()
    assert box.server_usage() is None  # nothing started yet
    with box:
        assert box.run("pass").outcome == "ok"
        usage = box.server_usage()
        assert usage is not None
        server = box._server
        assert server is not None
        with open(f"/proc/{server.template_pid}/statm", "rb") as handle:
            template_rss = int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        assert usage.rss_bytes > template_rss > 0  # the manager's memory is added to it
        assert usage.cpu_s > 0 and usage.minor_faults > 0

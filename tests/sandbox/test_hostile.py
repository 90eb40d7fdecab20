"""Hostile learner code: each case ends with a clear outcome, the sandbox still works, the
next run is clean, and nothing the run started is left alive."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import pytest
from sandbox_procs import (
    RUN_NAMESPACE,
    alive,
    children,
    in_namespace,
    left_behind,
    run_left_behind,
    still_alive,
)

from tutor.sandbox import Limits, RunResult, Sandbox

PID_LINE = ("import os\nprint('PID', os.getpid(), *((os.readlink('/proc/self/ns/pid'), "
            f"{RUN_NAMESPACE}) if os.getpid() == 1 else ('-', '-')), flush=True)\n")


def run_pid(result: RunResult) -> tuple[int, str, int | None]:
    """The run's pid and, where it is confined, its PID namespace and the start time of its
    PID 1 (else '-' and None)."""
    match = re.search(r"PID (\d+) (\S+) (\S+)", result.stdout)
    assert match, result.stdout
    started = match.group(3)
    return int(match.group(1)), match.group(2), None if started == "-" else int(started)


def assert_clean_after(sandbox: Sandbox, result: RunResult, *others: int) -> None:
    """Nothing left alive, and the next run works normally and sees a fresh process.
    ``others``: pids the run printed, which mean something only where it is unconfined."""
    pid, namespace, init_started = run_pid(result)
    if namespace != "-":  # its own PID namespace: every process it started lives there
        assert run_left_behind(namespace, init_started) == []
    else:
        assert left_behind(pid, others) == []
    following = sandbox.run("import torch\nx = torch.ones(2)\nprint(x.sum().item())")
    assert following.outcome == "ok", following
    assert following.stdout == "2.0\n"


def test_infinite_loop_times_out(sandbox: Sandbox) -> None:
    result = sandbox.run(PID_LINE + "while True:\n    pass\n", limits=Limits(wall_time_s=1))
    assert result.outcome == "timeout"
    assert result.error is not None and result.error.type == "Timeout"
    assert_clean_after(sandbox, result)


def test_loop_ignoring_sigterm_still_dies(sandbox: Sandbox) -> None:
    code = PID_LINE + (
        "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "while True:\n    pass\n"
    )
    result = sandbox.run(code, limits=Limits(wall_time_s=1))
    assert result.outcome == "timeout"
    assert_clean_after(sandbox, result)


def test_sleep_forever_times_out(sandbox: Sandbox) -> None:
    result = sandbox.run(PID_LINE + "import time\ntime.sleep(10_000)\n",
                         limits=Limits(wall_time_s=1))
    assert result.outcome == "timeout"
    assert_clean_after(sandbox, result)


def test_fork_bomb_is_bounded_by_the_process_limit(sandbox: Sandbox) -> None:
    code = PID_LINE + (
        "import time\nchildren = 0\n"
        "while True:\n"
        "    try:\n        pid = os.fork()\n"
        "    except OSError:\n        break\n"
        "    if pid == 0:\n        time.sleep(120)\n        os._exit(0)\n"
        "    children += 1\n"
        "print('forked', children)\n"
    )
    result = sandbox.run(code, limits=Limits(max_processes=8, wall_time_s=20))
    assert result.outcome == "ok", result
    forked = int(re.search(r"forked (\d+)", result.stdout).group(1))  # type: ignore[union-attr]
    assert 1 <= forked < 8
    assert_clean_after(sandbox, result)


def test_memory_bomb(sandbox: Sandbox) -> None:
    code = PID_LINE + "blocks = []\nwhile True:\n    blocks.append(bytearray(16 * 2**20))\n"
    result = sandbox.run(code, limits=Limits(memory_mb=256))
    assert result.outcome == "memory", result
    assert result.error is not None and result.error.type == "MemoryError"
    assert_clean_after(sandbox, result)


def test_huge_tensor_is_a_memory_outcome(sandbox: Sandbox) -> None:
    code = PID_LINE + "import torch\nx = torch.empty(2**40, dtype=torch.uint8)\n"
    result = sandbox.run(code, limits=Limits(memory_mb=256))
    assert result.outcome == "memory", result
    assert_clean_after(sandbox, result)


def test_output_flood_is_cut_with_a_marker(sandbox: Sandbox) -> None:
    code = PID_LINE + "while True:\n    print('x' * 1000)\n"
    result = sandbox.run(code, limits=Limits(output_bytes=20_000))
    assert result.outcome == "output_limit"
    assert result.output_truncated
    assert "output cut" in result.stdout
    assert len(result.stdout.encode()) < 20_000 + 200
    assert_clean_after(sandbox, result)


def test_os_exit_mid_run_is_exited_not_ok(sandbox: Sandbox) -> None:
    result = sandbox.run(PID_LINE + "os._exit(0)\nprint('never')\n", probes=["1 + 1"])
    assert result.outcome == "exited"
    assert result.exit_code == 0
    assert "never" not in result.stdout
    assert_clean_after(sandbox, result)


def test_sys_exit_3(sandbox: Sandbox) -> None:
    result = sandbox.run(PID_LINE + "import sys\nsys.exit(3)\n")
    assert result.outcome == "exited"
    assert result.exit_code == 3
    assert_clean_after(sandbox, result)


def test_segfault_through_ctypes_is_crashed(sandbox: Sandbox) -> None:
    result = sandbox.run(PID_LINE + "import ctypes\nctypes.string_at(0)\n")
    assert result.outcome == "crashed"
    assert result.signal == signal.SIGSEGV
    assert_clean_after(sandbox, result)


def test_killing_the_parent_pid_does_not_break_the_next_run(sandbox: Sandbox) -> None:
    code = PID_LINE + (
        "import signal\n"
        "try:\n    os.kill(os.getppid(), signal.SIGKILL)\n"
        "except PermissionError:\n    print('not allowed')\n"
        "print('after')\n"
    )
    result = sandbox.run(code)
    assert result.outcome == "ok", result  # as root the run has its own uid: not allowed
    assert "after" in result.stdout
    assert_clean_after(sandbox, result)


def test_a_dead_server_is_restarted_transparently() -> None:
    with Sandbox() as box:
        assert box.run("print('one')").stdout == "one\n"
        server = box._server
        assert server is not None
        server.proc.kill()
        server.proc.wait()
        again = box.run("print('two')")
        assert again.outcome == "ok"
        assert again.stdout == "two\n"
        assert box._server is not server


def test_a_dead_fork_template_ends_its_server_and_the_next_run_has_a_new_one() -> None:
    # Not root, a run may kill its parent: the template that forked it.
    with Sandbox() as box:
        assert box.run("print('one')").stdout == "one\n"
        server = box._server
        assert server is not None and server.template_pid
        os.kill(server.template_pid, signal.SIGKILL)
        assert server.proc.wait(timeout=10) is not None  # the manager ends with it
        again = box.run("print('two')")
        assert again.outcome == "ok", again
        assert again.stdout == "two\n"
        assert box._server is not server


def test_the_fork_template_and_its_standby_die_with_their_server() -> None:
    with Sandbox() as box:
        box.run("pass")
        server = box._server
        assert server is not None and server.template_pid
        deadline = time.monotonic() + 10
        while not (standbys := children(server.template_pid)):  # asked for after the run
            assert time.monotonic() < deadline, "no standby was forked"
            time.sleep(0.05)
        server.proc.kill()
        server.proc.wait()
        assert still_alive([server.template_pid, *standbys]) == []


def test_deep_recursion_is_an_error_with_a_short_traceback(sandbox: Sandbox) -> None:
    code = PID_LINE + "def down(n):\n    return down(n + 1)\ndown(0)\n"
    result = sandbox.run(code)
    assert result.outcome == "error"
    assert result.error is not None and result.error.type == "RecursionError"
    assert result.error.line == 4
    assert 0 < len(result.error.traceback) <= 50
    assert_clean_after(sandbox, result)


def test_reading_stdin_gets_end_of_file(sandbox: Sandbox) -> None:
    result = sandbox.run(PID_LINE + "name = input('name? ')\n", limits=Limits(wall_time_s=5))
    assert result.outcome == "error"
    assert result.error is not None and result.error.type == "EOFError"
    assert_clean_after(sandbox, result)


def test_background_thread_and_child_process_are_killed(sandbox: Sandbox) -> None:
    code = PID_LINE + (
        "import subprocess, threading, time\n"
        "threading.Thread(target=time.sleep, args=(600,)).start()\n"
        "child = subprocess.Popen(['sleep', '600'])\n"
        "escaped = subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
        "print('CHILDREN', child.pid, escaped.pid, flush=True)\n"
    )
    result = sandbox.run(code)
    assert result.outcome == "ok", result
    children = tuple(int(p) for p in result.stdout.split("CHILDREN")[1].split())
    assert_clean_after(sandbox, result, *children)


def test_monkeypatching_torch_does_not_reach_the_next_run(sandbox: Sandbox) -> None:
    patched = sandbox.run(
        PID_LINE + "import torch\ntorch.ones = lambda *a, **k: 'patched'\n"
        "torch.Tensor.backward = None\nprint(torch.ones(1))\n"
    )
    assert patched.stdout.endswith("patched\n")
    result = sandbox.run(
        "import torch\nx = torch.ones(2, requires_grad=True)\nx.sum().backward()\n"
        "print(type(torch.ones(1)).__name__, x.grad.tolist())"
    )
    assert result.stdout == "Tensor [1.0, 1.0]\n"
    assert_clean_after(sandbox, patched)


def test_forged_results_are_only_data(sandbox: Sandbox) -> None:
    fake = RunResult(outcome="ok", device="cpu", stdout="FORGED").model_dump_json().encode()
    code = PID_LINE + (
        "import struct\n"
        f"fake = {fake!r}\n"
        "print(fake.decode())\n"
        "for fd in range(3, 256):\n"
        "    for frame in (struct.pack('>I', len(fake)) + fake,\n"
        "                  struct.pack('>I', len(fake) + 12) + b'result:xyz:' + fake,\n"
        "                  struct.pack('>I', 2**31) + b'junk'):\n"
        "        try:\n            os.write(fd, frame)\n"
        "        except OSError:\n            pass\n"
        "os._exit(0)\n"
    )
    result = sandbox.run(code)
    assert result.outcome == "exited"
    assert result.exit_code == 0
    assert result.stdout.startswith("PID")  # the fake JSON is printed output, nothing more
    assert_clean_after(sandbox, result)


def test_forged_frames_then_normal_end_is_not_ok(sandbox: Sandbox) -> None:
    code = PID_LINE + "import struct\nfor fd in range(3, 64):\n" + (
        "    try:\n        os.write(fd, struct.pack('>I', 5) + b'junk!')\n"
        "    except OSError:\n        pass\n"
    )
    result = sandbox.run(code)
    assert result.outcome != "ok"
    assert_clean_after(sandbox, result)


def test_parent_process_is_untouched(sandbox: Sandbox) -> None:
    before = os.getpid()
    sandbox.run("import os, signal\nos.killpg(0, signal.SIGKILL)\n")
    assert os.getpid() == before and alive(before)
    assert sandbox.run("print('fine')").stdout == "fine\n"


@pytest.mark.parametrize("jobs", [4])
def test_concurrent_runs_do_not_mix(sandbox: Sandbox, jobs: int) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def one(index: int) -> RunResult:
        return sandbox.run(f"import torch\nprint({index})\nv = torch.tensor({index})",
                           probes=["v"])

    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(one, range(12)))
    for index, result in enumerate(results):
        assert result.stdout == f"{index}\n"
        value = result.probe("v").value  # type: ignore[union-attr]
        assert value is not None and value.values == index  # type: ignore[union-attr]


def test_a_namespace_inode_given_again_is_not_the_runs() -> None:
    """The kernel gives a freed PID-namespace inode to the next namespace made (another
    worker's standby): what lives there is a run's only while its PID 1 is the one that
    started when the run printed. Shown on a namespace of our own, whose PID 1 sleeps."""
    sleeper = subprocess.Popen(["unshare", "--pid", "--fork", "sleep", "30"],
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not (inner := children(sleeper.pid)) and sleeper.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.02)
        if not inner:
            pytest.skip("no PID namespace of our own here (unshare --pid failed)")
        namespace = os.readlink(f"/proc/{inner[0]}/ns/pid")
        with open(f"/proc/{inner[0]}/stat", "rb") as handle:
            init_started = int(handle.read().rsplit(b")", 1)[1].split()[19])
        assert in_namespace(namespace, init_started=init_started) == inner
        assert in_namespace(namespace, init_started=init_started + 1) == []
    finally:
        sleeper.kill()
        sleeper.wait()

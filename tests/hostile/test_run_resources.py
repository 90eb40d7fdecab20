"""Resources: disk, shared memory, descriptors, threads, processes, memory, output and time
are bounded, each ends in a clear outcome, and nothing stays behind on the machine."""

from __future__ import annotations

import shutil

import pytest
from run_cases import NAMESPACE_LINE, TOKEN, assert_nothing_left

from tutor.sandbox import Limits, Sandbox

CASES = {
    # name: (code, outcome, text the stdout or error must hold; "|" between alternatives)
    "fill-tmp": (f"data = b'0' * (1 << 20)\nwith open('/tmp/fill-{TOKEN}', 'wb') as f:\n"
                 "    for i in range(900):\n        f.write(data)\n",
                 "error", "File too large|No space left"),
    "fill-dev-shm": (f"data = b'0' * (1 << 20)\nwith open('/dev/shm/fill-{TOKEN}', 'wb') as f:\n"
                     "    for i in range(512):\n        f.write(data)\n",
                     "error", "File too large|No space left"),
    "many-small-files": (f"for i in range(100000):\n    open(f'/tmp/{TOKEN}-{{i}}', 'w')\n",
                         "error", "No space left"),
    "descriptors": ("import os\nfds = [os.open('/dev/null', os.O_RDONLY) for _ in range(100000)]\n",
                    "error", "Too many open files"),
    "threads": ("import threading, time\nstop = threading.Event()\n"
                "for _ in range(5000):\n    threading.Thread(target=stop.wait).start()\n",
                "error", "thread"),
    "fork-bomb": ("import os\nwhile True:\n    os.fork()\n", "error", "Resource temporarily"),
    "memory": ("x = bytearray(8 << 30)\n", "memory", "memory"),
    "memfd": ("import os\nos.memfd_create('x')\n", "error", "not permitted"),
    "sysv-shm": ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                 "print('shmget', libc.shmget(0, 1 << 30, 0o1000 | 0o600), ctypes.get_errno())\n",
                 "ok", "shmget -1 1"),
    "output-flood": ("while True:\n    print('x' * 1000)\n", "output_limit", ""),
    "cpu-spin": ("while True:\n    pass\n", "timeout", ""),
}


@pytest.mark.parametrize(("code", "outcome", "said"), CASES.values(), ids=CASES.keys())
def test_exhaustion_is_bounded_and_leaves_nothing(hostile_sandbox: Sandbox, code: str,
                                                  outcome: str, said: str) -> None:
    before = shutil.disk_usage("/tmp").used
    result = hostile_sandbox.run(NAMESPACE_LINE + code,
                                 limits=Limits(wall_time_s=4, memory_mb=512))
    assert result.outcome == outcome, result
    text = result.stdout + (result.error.message if result.error else "")
    assert any(part in text for part in said.split("|")), text[-500:]
    if outcome != "output_limit":
        assert_nothing_left(result)
    # the machine's /tmp did not take the run's writes
    assert shutil.disk_usage("/tmp").used - before < 200 << 20
    following = hostile_sandbox.run("print('next')")
    assert following.outcome == "ok" and following.stdout == "next\n"


def test_scratch_space_is_fresh_for_every_run(hostile_sandbox: Sandbox) -> None:
    listing = "import os\nprint(sorted(os.listdir('/tmp')), os.listdir('/dev/shm'))\n"
    fresh = hostile_sandbox.run(listing)  # a checkout under /tmp shows its folder there
    first = hostile_sandbox.run(NAMESPACE_LINE + "open('/tmp/left', 'w').write('x')\n"
                                "open('/dev/shm/left', 'w').write('x')\n")
    assert first.outcome == "ok", first
    second = hostile_sandbox.run(listing)
    assert second.stdout == fresh.stdout and "left" not in second.stdout
    assert_nothing_left(first)


def test_a_huge_program_is_refused_before_it_runs(hostile_sandbox: Sandbox) -> None:
    code = "x = 1\n" * 9_000_000  # 54 MB
    result = hostile_sandbox.run(code)
    assert result.outcome == "error" and result.error is not None
    assert result.error.type == "SourceTooLarge" and "not run" in result.error.message
    assert hostile_sandbox.run("print('next')").stdout == "next\n"

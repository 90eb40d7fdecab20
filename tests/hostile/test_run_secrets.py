"""Secrets: a run sees an allow-list of the machine (the Python installation, the
libraries, a few devices), never the solutions, caches, the checkout's history, other
students' work, root-only files or the grader's environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from run_cases import NAMESPACE_LINE, SECRET, Secrets, assert_nothing_left

from tutor.sandbox import Sandbox

REPO = Path(__file__).resolve().parents[2]


def _read(path: str) -> str:
    return (f"try:\n    print(open({path!r}, errors='replace').read())\n"
            "except OSError as e:\n    print('unreadable', type(e).__name__)\n")


def test_solutions_caches_history_and_other_students_are_absent(
    hostile_sandbox: Sandbox, planted: Secrets
) -> None:
    code = NAMESPACE_LINE + "".join(_read(path) for path in planted.files)
    code += "".join(f"import os\nprint(os.path.exists({str(p)!r}))\n"
                    for p in (planted.course, planted.cache, planted.checkout / ".git",
                              planted.other_student))
    result = hostile_sandbox.run(code)
    assert result.outcome == "ok", result
    assert result.stdout.count("unreadable") == len(planted.files)
    assert result.stdout.splitlines()[-4:] == ["False"] * 4
    assert_nothing_left(result, planted)


@pytest.mark.parametrize("path", ["/etc/shadow", "/etc/passwd", "/etc/hostname",
                                  "/root/.bash_history", "/proc/1/environ"])
def test_machine_files_are_absent(hostile_sandbox: Sandbox, path: str) -> None:
    result = hostile_sandbox.run(NAMESPACE_LINE + _read(path))
    assert result.stdout.splitlines()[-1].startswith("unreadable"), result.stdout
    assert_nothing_left(result)


def test_this_checkout_is_absent_but_its_sandbox_package(hostile_sandbox: Sandbox) -> None:
    code = NAMESPACE_LINE + "import os\n" + "".join(
        f"print({name!r}, os.path.exists({str(REPO / name)!r}))\n"
        for name in (".git", "lessons", "tests", "tutor/bundled_lessons", "tutor/course",
                     "tutor/sandbox/child.py"))
    result = hostile_sandbox.run(code)
    seen = dict(line.rsplit(" ", 1) for line in result.stdout.splitlines()[1:])
    assert seen == {".git": "False", "lessons": "False", "tests": "False",
                    "tutor/bundled_lessons": "False", "tutor/course": "False",
                    "tutor/sandbox/child.py": "True"}
    assert_nothing_left(result)


def test_the_root_holds_only_the_allow_list(hostile_sandbox: Sandbox) -> None:
    code = NAMESPACE_LINE + ("import os\nprint(sorted(os.listdir('/')))\n"
                             "print(sorted(os.listdir('/dev')))\n"
                             "print([sorted(os.listdir(p)) for p in "
                             "('/sys', '/sys/devices', '/sys/devices/system')])\n")
    result = hostile_sandbox.run(code)
    top, dev, sys_tree = (eval(line) for line in result.stdout.splitlines()[1:4])
    if not any(d.startswith("nvidia") for d in dev):  # a GPU's driver reads all of /sys
        # of /sys, only the CPU topology torch's cpuinfo reads
        assert sys_tree == [["devices"], ["system"], ["cpu"]]
    assert not set(top) & {"home", "root", "srv", "opt", "mnt", "var", "boot", "media"} - {
        part for part in (Path(os.path.realpath(p)).parts[1] for p in
                          (os.sys.base_prefix, os.sys.prefix)) if part}
    assert "etc" in top and "usr" in top and "tmp" in top
    assert set(dev) <= {"null", "zero", "full", "random", "urandom", "shm", "fd", "stdin",
                        "stdout", "stderr"} | {d for d in dev if d.startswith("nvidia")}
    assert_nothing_left(result)


def test_the_graders_environment_is_not_inherited(hostile_sandbox: Sandbox) -> None:
    assert os.environ.get("TUTOR_LLM_API_KEY") == SECRET  # the parent holds it
    code = NAMESPACE_LINE + (
        "import os\nprint(sorted(os.environ))\n"
        "for path in ('/proc/self/environ', '/proc/1/environ'):\n"
        "    try:\n        print(open(path, 'rb').read())\n"
        "    except OSError as e:\n        print('unreadable', path)\n")
    result = hostile_sandbox.run(code)
    names = eval(result.stdout.splitlines()[1])
    assert not [name for name in names if name.startswith("TUTOR") or "KEY" in name]
    assert_nothing_left(result)


def test_no_secret_anywhere_in_the_runs_own_memory(hostile_sandbox: Sandbox) -> None:
    # A run inherits the server's memory: the server must never have held the secret.
    code = NAMESPACE_LINE + (
        f"import ctypes\nneedle = bytes.fromhex({SECRET.encode().hex()!r})\nfound = 0\n"
        "for line in open('/proc/self/maps').read().splitlines():\n"
        "    fields = line.split()\n"
        "    if not fields[1].startswith('r') or fields[-1] in ('[vvar]', '[vsyscall]',"
        " '[vvar_vclock]'):\n        continue\n"
        "    low, high = (int(x, 16) for x in fields[0].split('-'))\n"
        "    if high - low > 1 << 30:\n        continue\n"
        "    found += ctypes.string_at(low, high - low).count(needle)\n"
        "print('found', found - 1)\n")  # the needle's own bytes in this code are one hit
    result = hostile_sandbox.run(code)
    assert result.outcome == "ok", result
    assert result.stdout.splitlines()[-1] == "found 0"


def test_file_handles_cannot_open_what_the_root_hides(hostile_sandbox: Sandbox) -> None:
    code = NAMESPACE_LINE + (
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "handle = (ctypes.c_ubyte * 16)(8, 0, 0, 0, 1, 0, 0, 0)\n"
        "print(libc.syscall(304, os.open('/', os.O_RDONLY), handle, 0), ctypes.get_errno())\n")
    if os.uname().machine != "x86_64":
        pytest.skip("x86-64 system call number")
    result = hostile_sandbox.run(code)
    assert result.stdout.splitlines()[-1] == "-1 1"
    assert_nothing_left(result)


def test_mounts_show_no_path_of_the_machine_outside_the_allow_list(
    hostile_sandbox: Sandbox, planted: Secrets
) -> None:
    result = hostile_sandbox.run(NAMESPACE_LINE + "print(open('/proc/self/mounts').read())\n")
    assert result.outcome == "ok", result
    for folder in (planted.course, planted.cache, planted.checkout, REPO / "lessons"):
        assert str(folder) not in result.stdout
    assert_nothing_left(result)

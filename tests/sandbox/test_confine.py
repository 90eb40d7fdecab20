"""Kernel confinement: what the server reports, the syscall filter on its own, the
unconfined fallback, and confinement as an ordinary user (unprivileged user namespaces).

The hostile cases (escape, secrets, resources) are in tests/hostile/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from tutor.sandbox import Sandbox

REPO = Path(__file__).resolve().parents[2]


def test_a_confined_sandbox_says_how(sandbox: Sandbox) -> None:
    confinement = sandbox.confinement()
    if not confinement.confined:
        pytest.skip(f"no namespaces on this kernel: {confinement.reason}")
    assert confinement.mode == ("root" if os.geteuid() == 0 else "user")
    assert {"mount", "network", "pid"} <= set(confinement.namespaces)
    assert sandbox.exposed() == []


def test_runs_work_as_before_inside(sandbox: Sandbox) -> None:
    result = sandbox.run("import torch, email.mime.text, json\n"
                         "x = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n"
                         "print(x.grad, os.getcwd() if False else '')\n")
    assert result.outcome == "ok", result.stderr
    assert result.stdout == "tensor([2., 2.]) \n"


def test_a_folder_inside_the_allow_list_can_still_be_hidden(tmp_path: Path) -> None:
    # a course installed inside site-packages would be visible through its bind: covered
    target = Path(os.path.realpath(Path(sysconfig.get_paths()["purelib"]) / "pip"))
    if not target.is_dir():
        pytest.skip("no pip folder in site-packages to stand for a course")
    with Sandbox(hide=[target]) as box:
        if not box.confinement().confined:
            pytest.skip("no namespaces on this kernel")
        result = box.run(f"import os\nprint(os.listdir({str(target)!r}))\n")
    assert result.stdout == "[]\n", result


def test_unconfined_the_sandbox_says_so_and_shows_the_folders(tmp_path: Path) -> None:
    with Sandbox(hide=[tmp_path], confine=False) as box:
        confinement = box.confinement()
        assert confinement.mode == "none" and confinement.reason
        assert box.exposed() == [str(tmp_path)]
        (tmp_path / "seen").write_text("x")
        result = box.run(f"import os\nprint(os.listdir({str(tmp_path)!r}))\n")
    assert result.stdout == "['seen']\n"


FILTER = textwrap.dedent("""
    import ctypes, os, threading, json
    from tutor.sandbox import confine
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(38, 1, 0, 0, 0)
    confine.forbid_syscalls()
    said = {}
    said["unshare"] = (libc.unshare(0x10000000), ctypes.get_errno())
    said["ptrace"] = (libc.ptrace(16, os.getppid(), 0, 0), ctypes.get_errno())
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    said["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    box = []
    t = threading.Thread(target=lambda: box.append("thread ran"))
    t.start(); t.join()
    said["thread"] = box
    said["read"] = bool(open("/proc/self/stat").read())
    print(json.dumps(said))
""")


@pytest.mark.skipif(sys.platform != "linux", reason="seccomp is Linux's")
def test_the_syscall_filter_denies_its_list_and_nothing_else() -> None:
    done = subprocess.run([sys.executable, "-c", FILTER], capture_output=True, text=True,
                          timeout=60, check=True, cwd=REPO)
    said = json.loads(done.stdout)
    assert said["unshare"] == [-1, 1] and said["ptrace"] == [-1, 1]
    # fork, threads (clone3 answers ENOSYS: the C library falls back to clone) and files
    assert said["fork"] == 7 and said["thread"] == ["thread ran"] and said["read"] is True


AS_A_USER = textwrap.dedent("""
    import json, os, sys
    from tutor.sandbox import Sandbox
    with Sandbox(hide=[sys.argv[1]]) as box:
        confinement = box.confinement()
        result = box.run(
            "import os\\nprint(os.getuid(), os.getpid())\\n"
            "print(os.path.exists(%r), os.path.exists('/etc/shadow'))\\n"
            "import socket\\ntry:\\n    socket.create_connection(('127.0.0.1', 9), 1)\\n"
            "except OSError as e:\\n    print('net', e.errno)\\n"
            "import torch\\nx = torch.ones(2, requires_grad=True)\\n(x * x).sum().backward()\\n"
            "print(x.grad)\\n" % sys.argv[1])
    print(json.dumps({"mode": confinement.mode, "reason": confinement.reason,
                      "stdout": result.stdout, "outcome": result.outcome}))
""")


@pytest.mark.skipif(sys.platform != "linux" or os.geteuid() != 0,
                    reason="needs root to become an ordinary user for the test")
def test_as_an_ordinary_user_runs_are_confined_in_a_user_namespace(tmp_path: Path) -> None:
    """The same confinement without root, where the kernel allows user namespaces; the
    interpreter must be one an ordinary user can start (not under /root)."""
    python = shutil.which(f"python{sys.version_info[0]}.{sys.version_info[1]}",
                          path="/usr/bin:/usr/local/bin")
    site = sysconfig.get_paths()["purelib"]
    nobody = 65534
    if python is None or not _reachable(python, nobody) or not _reachable(site, nobody) \
            or not _reachable(str(REPO / "tutor"), nobody):
        pytest.skip("no interpreter, site-packages or checkout an ordinary user can read")
    secret = tmp_path / "course"
    secret.mkdir()
    tmp_path.chmod(0o755)
    secret.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{REPO}:{site}", "HOME": "/nonexistent"}
    done = subprocess.run([python, "-c", AS_A_USER, str(secret)], capture_output=True,
                          text=True, timeout=300, env=env, cwd="/",
                          user=nobody, group=nobody, extra_groups=[])
    assert done.returncode == 0, done.stderr[-2000:]
    said = json.loads(done.stdout)
    if said["mode"] == "none":
        pytest.skip(f"this kernel gives an ordinary user no namespaces: {said['reason']}")
    assert said["mode"] == "user" and said["outcome"] == "ok", said
    lines = said["stdout"].splitlines()
    assert lines[0] == f"{nobody} 1"  # not root, PID 1 of its own namespace
    assert lines[1] == "False False"
    assert lines[2] == "net 101"  # ENETUNREACH: no network, loopback included
    assert lines[3] == "tensor([2., 2.])"


def _reachable(path: str, uid: int) -> bool:
    """Whether ``uid`` (not root, in no group of ours) can reach ``path``."""
    current = Path(path).resolve()
    for folder in [current, *current.parents]:
        mode = folder.stat().st_mode
        other_ok = mode & 0o005 if folder.is_dir() else mode & 0o004
        if folder.stat().st_uid != uid and not other_ok:
            return False
    return True


def _huge_kb(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup") as handle:
        for line in handle:
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1])
    return 0


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps_rollup"), reason="no smaps_rollup")
def test_the_confined_template_keeps_its_heap_in_huge_pages(sandbox: Sandbox) -> None:
    """The template finds its own mappings through the machine's /proc (its own is gone
    inside the minimal root): without huge pages each fork and exit cost ~2x the CPU.
    (The session's sandbox is a confined one.)"""
    sizes = {}
    with Sandbox(confine=False) as unconfined:
        for confine, box in ((False, unconfined), (True, sandbox)):
            box.run("pass")
            server = box._server
            assert server is not None
            sizes[confine] = _huge_kb(server.template_pid)
    if sizes[False] == 0:
        pytest.skip("this kernel collapses no huge pages (MADV_COLLAPSE needs Linux 6.1)")
    assert sizes[True] > sizes[False] // 2, sizes

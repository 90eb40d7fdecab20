"""Runs see hidden folders empty, cannot open files by handle, and the host is untouched."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tutor.sandbox import Sandbox
from tutor.sandbox.confine import hideable

OPEN_BY_HANDLE = """\
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
number = {"x86_64": 304, "aarch64": 265}[platform.machine()]
handle = (ctypes.c_ubyte * 16)(8, 0, 0, 0, 1, 0, 0, 0)  # handle_bytes=8, type=1: nonsense
root = os.open("/", os.O_RDONLY)
result = libc.syscall(number, root, handle, os.O_RDONLY)
print(result, ctypes.get_errno())
"""


@pytest.fixture(scope="module")
def hidden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lessons")
    (folder / "solution.yaml").write_text("solution: x.grad = torch.tensor([3., 3.])\n")
    return folder


@pytest.fixture(scope="module")
def confined(hidden: Path) -> Iterator[Sandbox]:
    with Sandbox(hide=[hidden]) as sandbox:
        if sandbox.exposed():
            pytest.skip("this kernel gives runs no mount namespace: folders stay visible")
        yield sandbox


def test_a_run_sees_a_hidden_folder_empty(confined: Sandbox, hidden: Path) -> None:
    result = confined.run(f"import os\nprint(os.listdir({str(hidden)!r}))\n"
                          f"open({str(hidden / 'solution.yaml')!r}).read()\n")
    assert result.stdout == "[]\n"
    assert result.outcome == "error" and result.error is not None
    assert result.error.type == "FileNotFoundError"


def test_a_run_cannot_lift_the_cover(confined: Sandbox, hidden: Path) -> None:
    code = (f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            f"print(libc.umount2({str(hidden).encode()!r}, 2), ctypes.get_errno())\n"
            f"import os\nprint(os.listdir({str(hidden)!r}))\n")
    result = confined.run(code)
    assert result.outcome == "ok", result.error
    status, error = result.stdout.splitlines()[0].split()
    assert status == "-1" and int(error) == errno.EPERM
    assert result.stdout.splitlines()[1] == "[]"


def test_a_run_cannot_open_files_by_handle(confined: Sandbox) -> None:
    result = confined.run(OPEN_BY_HANDLE)
    assert result.outcome == "ok", result.error
    assert result.stdout.split() == ["-1", str(errno.EPERM)]


def test_the_machine_still_sees_the_hidden_folder(confined: Sandbox, hidden: Path) -> None:
    assert confined.run("pass").outcome == "ok"
    assert os.listdir(hidden) == ["solution.yaml"]


def test_runs_work_as_before_with_folders_hidden(confined: Sandbox) -> None:
    result = confined.run("import torch\nx = torch.ones(2, requires_grad=True)\n"
                          "(x * 2).sum().backward()\nimport email.mime.text\nprint(x.grad)\n")
    assert result.outcome == "ok", result.stderr
    assert result.stdout == "tensor([2., 2.])\n"


def test_a_folder_holding_the_interpreter_stays_visible(tmp_path: Path) -> None:
    hidden, refused = hideable(
        [str(tmp_path), sys.prefix, os.path.dirname(sys.prefix), str(tmp_path)],
        needed=[sys.prefix, *sys.path],
    )
    assert hidden == [os.path.realpath(tmp_path)]
    assert refused == [os.path.realpath(sys.prefix), os.path.realpath(os.path.dirname(sys.prefix))]


def test_a_sandbox_says_which_folders_stay_visible() -> None:
    package = str(Path(__file__).resolve().parents[2] / "tutor")
    with Sandbox(hide=[package]) as sandbox:
        assert sandbox.exposed() == [os.path.realpath(package)]
        assert sandbox.run("import torch\nprint(torch.ones(1))\n").stdout == "tensor([1.])\n"


@pytest.mark.skipif(sys.platform != "linux", reason="seccomp is Linux's")
def test_the_file_handle_filter_answers_eperm_and_nothing_else() -> None:
    def run(first: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", first + OPEN_BY_HANDLE],
                              capture_output=True, text=True, timeout=60, check=True)
        return done.stdout.split()

    filtered = run("from tutor.sandbox.confine import forbid_file_handles\n"
                   "assert forbid_file_handles()\n")
    assert filtered == ["-1", str(errno.EPERM)]
    # other system calls still work under the filter
    assert run("from tutor.sandbox.confine import forbid_file_handles\n"
               "assert forbid_file_handles()\n"
               "print('read', bool(open('/proc/self/stat').read()))\n")[:2] == ["read", "True"]
    if _can_read_search():  # without the filter the call gets past the permission check
        assert run("")[1] != str(errno.EPERM)


def _can_read_search() -> bool:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) & (1 << 2))  # CAP_DAC_READ_SEARCH
    return False


USER_NAMESPACE = """\
import ctypes, errno, os, sys
from tutor.sandbox import confine
if os.geteuid() == 0:  # take the path of a user who is not root
    os.setgroups([])
    os.setresgid(4321, 4321, 4321)
    os.setresuid(4321, 4321, 4321)
    ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE, as a user's own process is
if not confine.hide([sys.argv[1]]):
    print("unavailable")
    raise SystemExit(0)
confine.drop_all_capabilities()
libc = ctypes.CDLL(None, use_errno=True)
lifted = libc.umount2(sys.argv[1].encode(), 2) == 0
print(os.listdir(sys.argv[1]), lifted, ctypes.get_errno() == errno.EPERM)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="namespaces are Linux's")
def test_without_root_a_user_namespace_covers_the_folder(tmp_path: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="tutor-hide-"))  # reachable by any user
    try:
        folder.chmod(0o755)
        (folder / "solution.yaml").write_text("x")
        done = subprocess.run([sys.executable, "-c", USER_NAMESPACE, str(folder)],
                              capture_output=True, text=True, timeout=60, check=True)
        if done.stdout.strip() == "unavailable":
            pytest.skip("this kernel allows no user namespaces")
        assert done.stdout.split() == ["[]", "False", "True"]
        assert os.listdir(folder) == ["solution.yaml"]
    finally:
        shutil.rmtree(folder)


def test_a_working_folder_inside_a_hidden_one_reaches_nothing(
    hidden: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(hidden)  # the server, and so every run, starts here
    with Sandbox(hide=[hidden]) as sandbox:
        if sandbox.exposed():
            pytest.skip("this kernel gives runs no mount namespace: folders stay visible")
        result = sandbox.run("import os\nprint(os.listdir('.'))\nopen('solution.yaml')\n")
    assert result.stdout == "[]\n"
    assert result.error is not None and result.error.type == "FileNotFoundError"

"""What a run may see: folders hidden by a private mount namespace, and no file handles.

A standby calls :func:`hide` before it drops privileges: it moves into a mount namespace of
its own (as root; otherwise into a user namespace as well, where the kernel allows it) and
covers each hidden folder with an empty read-only tmpfs. Mounts are made private first, so
nothing leaks back to the machine, and the covers cannot be lifted by the run: as root the
run has dropped CAP_SYS_ADMIN; in a user namespace it drops every capability; a namespace
the run creates itself copies the covers locked.

A run as root keeps CAP_DAC_READ_SEARCH (see :func:`tutor.sandbox.child.prepare`), which
would let ``open_by_handle_at`` open any file by its inode whatever covers its folder:
:func:`forbid_file_handles` denies that one system call with a seccomp filter.

Linux only; everything here fails softly (returns False) where the kernel says no, and the
run then goes on unconfined — :class:`tutor.sandbox.RunResult` says which it was.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys
from collections.abc import Sequence

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
EPERM = 1

_OPEN_BY_HANDLE_AT: dict[str, list[tuple[int, int]]] = {
    # machine → (audit arch, syscall number) pairs a process of that machine can use
    "x86_64": [(0xC000003E, 304), (0xC000003E, 304 | 0x40000000), (0x40000003, 342)],
    "aarch64": [(0xC00000B7, 265), (0x40000028, 371)],
}

LINUX = sys.platform == "linux"
_libc = ctypes.CDLL(None, use_errno=True)
if LINUX:
    _libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                            ctypes.c_char_p]
    _libc.unshare.argtypes = [ctypes.c_int]


def _mount(source: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    def raw(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    if _libc.mount(raw(source), raw(target), raw(fstype), flags, raw(data)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {target}: {os.strerror(errno)}")


def _enter_namespaces() -> None:
    if os.geteuid() == 0:
        if _libc.unshare(CLONE_NEWNS) != 0:
            raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
        return
    uid, gid = os.geteuid(), os.getegid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER | CLONE_NEWNS)")
    # the same ids inside: the run stays who it was, with (until it drops them) the
    # capabilities this namespace gives it over its own mounts
    with open("/proc/self/setgroups", "w") as handle:
        handle.write("deny")
    with open("/proc/self/uid_map", "w") as handle:
        handle.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as handle:
        handle.write(f"{gid} {gid} 1")


def hide(paths: Sequence[str]) -> bool:
    """Cover each existing folder of ``paths`` with an empty read-only tmpfs, for this
    process and its children only. True when every one is covered."""
    folders = [path for path in paths if os.path.isdir(path)]
    if not folders:
        return True
    if not LINUX:
        return False
    try:
        _enter_namespaces()
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        for folder in folders:
            _mount("tutor-hidden", folder, "tmpfs",
                   MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555")
    except OSError:
        return False
    try:  # a working folder inside a hidden one would still reach it by relative paths
        os.chdir(os.getcwd())
    except OSError:
        os.chdir("/")
    return True


def drop_all_capabilities() -> None:
    """Give up every capability (those a user namespace granted included); Linux only."""
    header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = bytes(24)  # two empty {effective, permitted, inheritable} sets
    if _libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def _filter(denied: list[tuple[int, int]]) -> bytes:
    """A classic BPF seccomp program: ``denied`` (arch, nr) pairs fail with EPERM."""
    load_nr, load_arch = (0x20, 0, 0, 0), (0x20, 0, 0, 4)  # BPF_LD|BPF_W|BPF_ABS
    body: list[tuple[int, int, int, int]] = []
    for index, (arch, number) in enumerate(denied):
        left = len(denied) - index - 1  # pairs after this one: 4 instructions each
        body += [
            load_arch,
            (0x15, 0, 2, arch),  # BPF_JMP|BPF_JEQ|BPF_K: another arch skips this pair
            load_nr,
            (0x15, 4 * left + 1, 0, number),  # this call: jump to the final "deny"
        ]
    body += [(0x06, 0, 0, SECCOMP_RET_ALLOW), (0x06, 0, 0, SECCOMP_RET_ERRNO | EPERM)]
    return b"".join(struct.pack("HBBI", *instruction) for instruction in body)


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_DENIED = _OPEN_BY_HANDLE_AT.get(platform.machine())
_FILTER = ctypes.create_string_buffer(_filter(_DENIED)) if _DENIED else None
_PROGRAM = (_Program(len(_FILTER.raw) // 8, ctypes.addressof(_FILTER))
            if _FILTER is not None else None)
"""Built once in the warm server: a standby only hands it to the kernel (building it there
cost ~0.3 ms of copy-on-write faults a run)."""


def forbid_file_handles() -> bool:
    """Deny ``open_by_handle_at`` to this process and its children. True when in force."""
    if _PROGRAM is None or not LINUX:
        return False
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(_PROGRAM), 0, 0) == 0


def hideable(paths: Sequence[str], needed: Sequence[str]) -> tuple[list[str], list[str]]:
    """Split ``paths`` into (folders a run can do without, folders it cannot).

    A folder that holds anything in ``needed`` (the interpreter, ``sys.path``, the temp
    folder) would take what a run relies on away from it: ``--lessons .`` in a project with
    its venv inside, say. Those stay visible.
    """
    keep = [os.path.realpath(path) for path in needed if os.path.isabs(path)]
    hidden, refused = [], []
    for path in paths:
        real = os.path.realpath(path)
        if any(other == real or other.startswith(real.rstrip("/") + "/") for other in keep):
            refused.append(real)
        elif real not in hidden:
            hidden.append(real)
    return hidden, refused

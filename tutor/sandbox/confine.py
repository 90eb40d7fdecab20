"""Kernel confinement of runs: namespaces, a minimal root, no privileges, a syscall filter.

Deny by default, in two steps that fit the warm-fork design:

1. :func:`confine_server`, once, in the server's manager before anything is forked or
   imported: new mount, network, IPC and UTS namespaces (and a user namespace where we are
   not root), and a minimal root built from an allow-list: the Python installation, its
   site-packages and the sandbox's own package, read-only; ``/usr`` and the libraries; a
   few device nodes. Nothing else of the machine exists there: no home, no caches, no
   lessons, no ``.git``, no other submissions, no ``/etc/shadow``. The fork template imports
   torch inside it, so every run inherits it.
2. Per run, in the standby before its request arrives: the template forks each standby as
   PID 1 of a new PID namespace (:func:`new_pid_namespace_for_next_child`), so when the run
   ends the kernel kills every process it started. The standby adds its own mount and
   network namespaces (:func:`confine_run`): a fresh size-capped tmpfs for ``/tmp`` and
   ``/dev/shm``, its own ``/proc`` where the kernel allows one, no network at all (not even
   loopback). Then it gives up every privilege (:func:`drop_privileges`): an unprivileged
   uid, no capabilities, ``no_new_privs``, and a seccomp filter (:func:`forbid_syscalls`)
   for what a lesson never needs (ptrace, mount, namespaces, keyctl, bpf, perf, …).

Where the kernel refuses namespaces (no root and no unprivileged user namespaces), the
server says so, runs keep only resource limits, and :class:`Confinement` reports which.
This module makes system calls through ctypes: Python's ``os`` lacks ``pivot_root``, and
``os.unshare``/``os.setns`` only exist from 3.12.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys
from collections.abc import Iterable, Sequence

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NAMESPACE_FLAGS = (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER
                   | CLONE_NEWPID | CLONE_NEWNET)
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_NOATIME = 0x400
MS_NODIRATIME = 0x800
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MNT_DETACH = 2
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
PR_SET_DUMPABLE = 4
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
EPERM = 1
ENOSYS = 38

UID_BASE = 200_000
"""As root, each run becomes its own uid from here on: unprivileged, alone in its uid (so
RLIMIT_NPROC counts exactly its processes), owning nothing of the machine."""
UID_SPAN = 60_000
SCRATCH = "/run/tutor-scratch"
"""Mount point in the minimal root where each run mounts its tmpfs, then binds from it."""

LINUX = sys.platform == "linux"
_MACHINE = platform.machine()
_libc = ctypes.CDLL(None, use_errno=True)
if LINUX:
    _libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                            ctypes.c_char_p]
    _libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    _libc.unshare.argtypes = [ctypes.c_int]
    _libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
    _libc.syscall.restype = ctypes.c_long

_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(_MACHINE)

# (audit arch, syscall numbers denied with EPERM, clone, clone3) per machine
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_DENIED_CALLS = {
    # ptrace, process_vm_readv/writev, mount, umount2, pivot_root, chroot, unshare, setns,
    # keyctl, add_key, request_key, bpf, perf_event_open, open_by_handle_at,
    # name_to_handle_at, kexec_load, kexec_file_load, init/finit/delete_module, reboot,
    # swapon, swapoff, acct, quotactl, syslog, userfaultfd, io_uring_*, the new mount API,
    # memfd_create (memory no limit counts), SysV shm/msg/sem and POSIX message queues
    # (objects that outlive a process)
    "x86_64": [101, 310, 311, 165, 166, 155, 161, 272, 308, 250, 248, 249, 321, 298, 304,
               303, 246, 320, 175, 313, 176, 169, 167, 168, 163, 179, 103, 323, 425, 426, 427,
               428, 429, 430, 431, 432, 433, 442, 319, 29, 68, 64, 240],
    "aarch64": [117, 270, 271, 40, 39, 41, 51, 97, 268, 219, 217, 218, 280, 241, 265, 264, 104,
                294, 105, 273, 106, 142, 224, 225, 89, 60, 116, 282, 425, 426, 427, 428, 429,
                430, 431, 432, 433, 442, 279, 194, 186, 190, 180],
}
_CLONE = {"x86_64": (56, 435), "aarch64": (220, 435)}


class ConfinementError(OSError):
    """A step of the confinement failed; the message says which."""


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise ConfinementError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    def raw(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    _check(_libc.mount(raw(source), raw(target), raw(fstype), flags, raw(data)),
           f"mount {target}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _pivot_root(new_root: str, put_old: str) -> None:
    if _PIVOT_ROOT is None:
        raise ConfinementError(0, f"pivot_root: unknown on {_MACHINE}")
    _check(int(_libc.syscall(_PIVOT_ROOT, os.fsencode(new_root), os.fsencode(put_old))),
           "pivot_root")


def _locked_flags(path: str) -> int:
    """The mount flags of ``path`` that a read-only remount must keep (in a user namespace
    the kernel refuses a remount that would clear them)."""
    flags = os.statvfs(path).f_flag
    kept = 0
    for st, ms in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV),
                   (os.ST_NOEXEC, MS_NOEXEC), (os.ST_NOATIME, MS_NOATIME),
                   (os.ST_NODIRATIME, MS_NODIRATIME), (getattr(os, "ST_RELATIME", 4096),
                                                       MS_RELATIME)):
        if flags & st:
            kept |= ms
    return kept


def _make_path(target: str, is_dir: bool) -> None:
    parent = os.path.dirname(target)
    os.makedirs(parent, mode=0o755, exist_ok=True)
    if is_dir:
        os.makedirs(target, mode=0o755, exist_ok=True)
    elif not os.path.exists(target):
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))


def _bind(old_root: str, new_root: str, path: str, *, writable_device: bool = False) -> None:
    """Bind ``path`` of the machine (seen under ``old_root``) read-only at the same place in
    ``new_root``."""
    source = old_root + path
    target = new_root + path
    _make_path(target, os.path.isdir(source))
    _mount(source, target, None, MS_BIND | MS_REC)
    if not writable_device:
        _mount(None, target, None,
               MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | _locked_flags(target))


def _covered(path: str, binds: Iterable[str]) -> bool:
    return any(path == bind or path.startswith(bind.rstrip("/") + "/") for bind in binds)


SYSTEM_PATHS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
CPU_TOPOLOGY = "/sys/devices/system/cpu"
CPU_INFO = "/proc/cpuinfo"
"""Read-only CPU counts, caches and features: torch's cpuinfo reads them as torch is imported,
and ops that pick a kernel by CPU (EmbeddingBag, fbgemm and quantized ops) raise "Failed to
initialize cpuinfo!" when it found neither."""


def gpu_devices() -> list[str]:
    """Device nodes a CUDA run needs, where the machine has them."""
    try:
        names = sorted(os.listdir("/dev"))
    except OSError:
        return []
    return [f"/dev/{name}" for name in names if name.startswith("nvidia")]


def confine_server(binds: Sequence[str], covers: Sequence[str]) -> list[str]:
    """Enter new namespaces and a minimal root holding only ``binds`` (read-only), with
    each of ``covers`` that lies inside them seen as an empty folder.

    Call it in a single-threaded process before it forks anything that must be confined.
    Returns the namespaces entered; raises :class:`ConfinementError` (nothing changed that
    matters: the caller ends or goes on unconfined) where the kernel says no.
    """
    if not LINUX:
        raise ConfinementError(0, "kernel confinement needs Linux")
    root = os.geteuid() == 0
    # PID too: our children go into a new PID namespace (owned by our user namespace, where
    # there is one), in which the template may then make one for each run
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID
    names = ["mount", "network", "ipc", "uts", "pid"]
    if not root:
        flags |= CLONE_NEWUSER
        names.insert(0, "user")
    uid, gid = os.geteuid(), os.getegid()
    _check(_libc.unshare(flags), "unshare")
    if not root:
        # the same ids inside: runs stay who they were, with (until they drop them) the
        # capabilities this namespace gives over its own mounts and namespaces
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    # As bubblewrap does: a tmpfs at /tmp becomes the root, the machine's root moves to
    # /oldroot inside it, the new root is built from there, then the old one is dropped.
    base = "/tmp"
    _mount("tutor-base", base, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    os.mkdir(f"{base}/newroot", 0o755)
    os.mkdir(f"{base}/oldroot", 0o755)
    _mount("tutor-root", f"{base}/newroot", "tmpfs", MS_NOSUID, "mode=0755,size=4m")
    os.chdir(base)
    _pivot_root(".", "oldroot")
    os.chdir("/")
    old, new = "/oldroot", "/newroot"
    real = []
    for path in binds:
        resolved = os.path.realpath(path)
        if os.path.exists(old + resolved) and resolved not in real:
            real.append(resolved)
    if gpu_devices():  # the CUDA driver reads the device topology there
        real.append("/sys")
    else:
        real.append(CPU_TOPOLOGY)
    for path in SYSTEM_PATHS:
        if os.path.islink(old + path):  # merged /usr: /lib -> usr/lib and the like
            os.symlink(os.readlink(old + path), new + path)
        elif os.path.isdir(old + path) and path not in real:
            real.append(path)
    for path in (*SYSTEM_FILES, *real):
        if os.path.exists(old + path) and not _covered(path, [p for p in real if p != path]):
            _bind(old, new, path)
    os.makedirs(new + "/etc", mode=0o755, exist_ok=True)
    os.makedirs(new + "/dev", mode=0o755, exist_ok=True)
    for device in (*DEVICES, *gpu_devices()):
        if os.path.exists(old + device):
            _bind(old, new, device, writable_device=True)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{new}/dev/{name}")
    for folder, mode in (("/tmp", 0o1777), ("/dev/shm", 0o1777), ("/proc", 0o555),
                         (SCRATCH, 0o755)):
        os.makedirs(new + folder, exist_ok=True)
        os.chmod(new + folder, mode)
    if os.path.exists(old + CPU_INFO):
        # torch reads it (with CPU_TOPOLOGY) once, as the template imports it, and keeps the
        # answer: each run's own /proc later covers this one file
        _bind(old, new, CPU_INFO)
    for path in covers:
        resolved = os.path.realpath(path)
        if _covered(resolved, real) and os.path.isdir(new + resolved):
            _mount("tutor-hidden", new + resolved, "tmpfs",
                   MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555")
    global _UNDER_TMP
    _UNDER_TMP = [path for path in real if path.startswith("/tmp/")]
    # nothing a run writes outside its own tmpfs: the root itself is read-only
    _mount(None, new, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)
    os.chdir(new)
    _pivot_root(".", ".")  # the old root now lies on top of the new one: detach it
    _check(_libc.umount2(b".", MNT_DETACH), "umount old root")
    os.chdir("/")
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # runs of our uid cannot read our memory
    return names


_own_pid_ns: int | None = None
_UNDER_TMP: list[str] = []
"""Allowed paths inside /tmp (a checkout with its venv there): a run's own /tmp would cover
them, so each run binds them again into it."""


def open_own_pid_namespace(proc: int) -> None:
    """Open our PID namespace through ``proc``, a descriptor of the machine's ``/proc``
    kept from before the minimal root (whose ``self`` is us, as the machine sees us)."""
    global _own_pid_ns
    _own_pid_ns = os.open("self/ns/pid", os.O_RDONLY, dir_fd=proc)


def new_pid_namespace_for_next_child() -> None:
    """Make the next process this one forks PID 1 of a new PID namespace.

    The kernel lets a process unshare its children's PID namespace only while it equals its
    own, so this first steps back into our own namespace (``setns``) and then unshares.
    """
    if _own_pid_ns is None:
        raise ConfinementError(0, "open_own_pid_namespace was not called")
    _check(_libc.setns(_own_pid_ns, CLONE_NEWPID), "setns(pid)")
    _check(_libc.unshare(CLONE_NEWPID), "unshare(pid)")


def confine_run(scratch_mb: int) -> bool:
    """In a standby that is PID 1 of its own PID namespace: its own mount and network
    namespaces, one fresh tmpfs of ``scratch_mb`` MB shared by ``/tmp`` and ``/dev/shm``,
    and a ``/proc`` of its own where the kernel allows it. True when ``/proc`` is there."""
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWNET), "unshare(mount, network)")
    _mount("tutor-scratch", SCRATCH, "tmpfs", MS_NOSUID | MS_NODEV,
           f"mode=0755,size={max(scratch_mb, 1)}m,nr_inodes=4096")
    for folder in ("tmp", "shm"):
        os.mkdir(f"{SCRATCH}/{folder}", 0o1777)
        os.chmod(f"{SCRATCH}/{folder}", 0o1777)
    for path in _UNDER_TMP:  # still visible at /tmp/...: bound into the run's /tmp too
        _bind("", SCRATCH, path)
    _mount(f"{SCRATCH}/tmp", "/tmp", None, MS_BIND | MS_REC)
    _mount(f"{SCRATCH}/shm", "/dev/shm", None, MS_BIND)
    _check(_libc.umount2(os.fsencode(SCRATCH), MNT_DETACH), "umount scratch")
    try:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except ConfinementError:
        return False  # a user namespace where the machine's /proc is not fully visible
    return True


def run_uid(serial: int) -> int:
    return UID_BASE + serial % UID_SPAN


def drop_privileges(uid: int | None) -> None:
    """Become ``uid`` (as root) and give up every capability, for good."""
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # from root to another uid: every capability goes
    header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    _check(_libc.capset(header, bytes(24)), "capset")  # those a user namespace gave
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def _filter(arch: int, denied: Sequence[int], clone: int, clone3: int) -> bytes:
    """A classic BPF seccomp program: another architecture, the x32 ABI and ``denied`` fail
    with EPERM; ``clone`` asking for a namespace fails with EPERM; ``clone3`` (its flags are
    out of a filter's reach) answers ENOSYS, so the C library falls back to ``clone``."""
    ld_arch, ld_nr, ld_arg0 = (0x20, 0, 0, 4), (0x20, 0, 0, 0), (0x20, 0, 0, 16)
    allow, deny = (0x06, 0, 0, SECCOMP_RET_ALLOW), (0x06, 0, 0, SECCOMP_RET_ERRNO | EPERM)
    nosys = (0x06, 0, 0, SECCOMP_RET_ERRNO | ENOSYS)
    body: list[tuple[int, int, int, int]] = [
        ld_arch,
        (0x15, 1, 0, arch),  # JEQ arch: skip the deny
        deny,
        ld_nr,
        (0x35, 0, 1, 0x40000000),  # JGE x32 bit: deny
        deny,
    ]
    for number in denied:
        body += [(0x15, 0, 1, number), deny]
    body += [
        (0x15, 0, 1, clone3), nosys,
        (0x15, 0, 3, clone),  # not clone: allow
        ld_arg0,
        (0x45, 0, 1, NAMESPACE_FLAGS),  # JSET namespace flags: deny
        deny,
        allow,
    ]
    return b"".join(struct.pack("HBBI", *instruction) for instruction in body)


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _build_program() -> tuple[ctypes.Array[ctypes.c_char], _Program] | None:
    if not LINUX or _MACHINE not in _DENIED_CALLS:
        return None
    clone, clone3 = _CLONE[_MACHINE]
    code = ctypes.create_string_buffer(
        _filter(_AUDIT_ARCH[_MACHINE], _DENIED_CALLS[_MACHINE], clone, clone3))
    return code, _Program(len(code.raw) // 8, ctypes.addressof(code))


_PROGRAM = _build_program()
"""Built once in the warm server; a standby only hands it to the kernel."""


def forbid_syscalls() -> None:
    """Install the filter for this process and its children (needs ``no_new_privs``)."""
    if _PROGRAM is None:
        raise ConfinementError(0, f"no syscall filter for {_MACHINE}")
    _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(_PROGRAM[1]), 0, 0),
           "seccomp")

"""Shared pieces of the hostile run cases: a confined sandbox whose parent holds secrets,
and the checks every run case ends with (no process survives, nothing is left in the
machine's /tmp or /dev/shm, no secret appears in what the run said)."""

from __future__ import annotations

import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from sandbox_procs import RUN_NAMESPACE, boot_ticks, in_namespace

from tutor.sandbox import RunResult

SECRET = "sk-hostile-" + secrets.token_hex(8)
"""Set in the parent's environment (as an LLM key would be) before the sandbox starts."""
TOKEN = secrets.token_hex(6)
"""Marks what a run creates, so the machine can be searched for it afterwards."""
NAMESPACE_LINE = ("import os\nprint('NS', os.readlink('/proc/self/ns/pid'), "
                  f"{RUN_NAMESPACE}, flush=True)\n")


@dataclass
class Secrets:
    """Files a run must never read, laid out as a teacher's machine would have them."""

    course: Path
    cache: Path
    checkout: Path
    other_student: Path
    files: dict[str, str]


def namespace_of(result: RunResult) -> tuple[str, int]:
    """The run's PID namespace link and the start time of its PID 1 (NAMESPACE_LINE)."""
    match = re.search(r"NS (pid:\[\d+\]) (\d+)", result.stdout)
    assert match, (result.stdout, result.stderr)
    return match.group(1), int(match.group(2))


def marked() -> list[str]:
    """What of the machine carries this session's TOKEN: processes and files in /tmp and
    /dev/shm."""
    hits = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if TOKEN.encode() in handle.read():
                        hits.append(f"process {entry}")
            except OSError:
                continue
    for folder in ("/tmp", "/dev/shm"):
        try:
            hits += [f"{folder}/{name}" for name in os.listdir(folder) if TOKEN in name]
        except OSError:
            continue
    return hits


def assert_nothing_left(result: RunResult, planted: Secrets | None = None,
                        patience_s: float = 10.0) -> None:
    """No process of the run alive, nothing marked on the machine, no secret said. Call it
    as soon as the run has returned."""
    (namespace, init_started), ended = namespace_of(result), boot_ticks()
    deadline = time.monotonic() + patience_s
    while (in_namespace(namespace, ended, init_started) or marked()) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert in_namespace(namespace, ended, init_started) == []
    assert marked() == []
    said = result.stdout + result.stderr + (result.error.message if result.error else "")
    assert SECRET not in said
    if planted is not None:
        for text in planted.files.values():
            assert text not in said

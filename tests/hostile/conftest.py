"""Shared pieces of the hostile-code suite: a confined sandbox whose parent holds secrets,
and the checks every run case ends with (no process survives, nothing is left in the
machine's /tmp or /dev/shm, no secret appears in what the run said)."""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sandbox_procs import boot_ticks, in_namespace

from tutor.sandbox import RunResult, Sandbox

SECRET = "sk-hostile-" + secrets.token_hex(8)
"""Set in the parent's environment (as an LLM key would be) before the sandbox starts."""
TOKEN = secrets.token_hex(6)
"""Marks what a run creates, so the machine can be searched for it afterwards."""
NAMESPACE_LINE = "import os\nprint('NS', os.readlink('/proc/self/ns/pid'), flush=True)\n"


@dataclass
class Secrets:
    """Files a run must never read, laid out as a teacher's machine would have them."""

    course: Path
    cache: Path
    checkout: Path
    other_student: Path
    files: dict[str, str]


@pytest.fixture(scope="session")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Secrets:
    root = tmp_path_factory.mktemp("teacher")
    texts: dict[str, str] = {}

    def plant(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = f"secret-{secrets.token_hex(8)}"
        path.write_text(text)
        path.chmod(0o644)
        texts[str(path)] = text

    course, cache, checkout = root / "course", root / "cache", root / "checkout"
    plant(course / "01-lesson.yaml")
    plant(cache / "expected" / "values.json")
    plant(checkout / ".git" / "objects" / "ab" / "solution")
    plant(root / "class" / "bob" / "fix-scalar.py")
    for folder in (root, course, cache, checkout, root / "class", root / "class" / "bob"):
        folder.chmod(0o755)
    return Secrets(course, cache, checkout, root / "class" / "bob", texts)


@pytest.fixture(scope="session")
def hostile_sandbox(planted: Secrets) -> Iterator[Sandbox]:
    previous = os.environ.get("TUTOR_LLM_API_KEY")
    os.environ["TUTOR_LLM_API_KEY"] = SECRET
    box = Sandbox(hide=[planted.course, planted.cache, planted.other_student.parent])
    try:
        if not box.confinement().confined:
            pytest.skip(f"the kernel gives no namespaces here: {box.confinement().reason}")
        yield box
    finally:
        box.close()
        if previous is None:
            os.environ.pop("TUTOR_LLM_API_KEY", None)
        else:
            os.environ["TUTOR_LLM_API_KEY"] = previous


def namespace_of(result: RunResult) -> str:
    match = re.search(r"NS (pid:\[\d+\])", result.stdout)
    assert match, (result.stdout, result.stderr)
    return match.group(1)


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
    namespace, ended = namespace_of(result), boot_ticks()
    deadline = time.monotonic() + patience_s
    while (in_namespace(namespace, ended) or marked()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert in_namespace(namespace, ended) == []
    assert marked() == []
    said = result.stdout + result.stderr + (result.error.message if result.error else "")
    assert SECRET not in said
    if planted is not None:
        for text in planted.files.values():
            assert text not in said

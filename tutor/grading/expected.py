"""Truth from torch: runs of the reference solution, cached on disk.

The solution runs in its own sandboxed process with the same probes as the learner's run.
A run is keyed by a sha256 of (solution, probes, torch version, device; for a run on varied
inputs also its seed and :data:`~tutor.sandbox.vary.VARY_FORMAT`), so editing a lesson,
upgrading torch or changing how inputs are varied never serves a stale truth. The learner's
process never sees this data: it is computed in another process and compared in the parent.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import tempfile
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from tutor.paths import cache_root
from tutor.sandbox.models import Probe, RunResult
from tutor.sandbox.vary import VARY_FORMAT

if TYPE_CHECKING:
    from tutor.sandbox.runner import Runner

CACHE_FORMAT = 1
CACHEABLE_OUTCOMES = frozenset({"ok", "error"})
"""Deterministic endings; a timeout may be the machine's fault and is run again next time."""

TRUTH_RETRIES = 1
"""A reference run that did not finish (a timeout on a busy machine) is tried once more at
once, so a parallel load does not turn an honest submission's grade into zero."""


@cache
def torch_version() -> str:
    """The installed torch's version, read from its metadata (importing torch costs seconds)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch")
    except PackageNotFoundError:
        return "unknown"


def default_cache_dir() -> Path:
    return cache_root() / "expected"


def _probe_key(probe: str | Probe) -> dict[str, object]:
    if isinstance(probe, Probe):
        return {"expr": probe.expr, "graph": probe.graph}
    return {"expr": probe, "graph": False}


def cache_key(code: str, probes: Sequence[str | Probe], device: str,
              vary: int | None = None) -> str:
    payload: dict[str, object] = {
        "format": CACHE_FORMAT,
        "code": code,
        "probes": [_probe_key(p) for p in probes],
        "torch": torch_version(),
        "device": device,
    }
    if vary is not None:  # a varied run (tutor.sandbox.vary); the key of others is unchanged
        payload["vary"] = [VARY_FORMAT, vary]
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


class ExpectedCache:
    """Reference-solution runs, in memory and on disk (``directory``; ``None``: the user
    cache dir). Thread-safe: concurrent graders of one step run its solution once.

    Disk entries carry an HMAC made with a random key kept beside them (mode 0600), so a
    file written by anyone without the key (a submission, a stale copy) is not trusted: it
    is ignored and the solution runs again.
    """

    def __init__(self, directory: Path | None = None, *, disk: bool = True) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.disk = disk
        self._memory: dict[str, RunResult] = {}
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self.runs = 0
        """Solution runs actually executed (not served from a cache), for tests and stats."""

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def _secret(self) -> bytes:
        path = self.directory / "key"
        try:
            return path.read_bytes()
        except FileNotFoundError:
            pass
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return path.read_bytes()
        with os.fdopen(fd, "wb") as handle:
            handle.write(os.urandom(32))
        return path.read_bytes()

    def _mac(self, key: str, body: bytes) -> str:
        return hmac.new(self._secret(), key.encode() + b"\0" + body, "sha256").hexdigest()

    def get(self, key: str) -> RunResult | None:
        if key in self._memory:
            return self._memory[key]
        if not self.disk:
            return None
        try:
            mac, _, body = self._path(key).read_bytes().partition(b"\n")
            if not hmac.compare_digest(mac.decode("ascii"), self._mac(key, body)):
                return None  # not written by a holder of the key: run again
            result = RunResult.model_validate_json(body)
        except (OSError, ValidationError, ValueError):
            return None  # missing or unreadable: run again
        self._memory[key] = result
        return result

    def put(self, key: str, result: RunResult) -> None:
        if result.outcome not in CACHEABLE_OUTCOMES:
            return
        self._memory[key] = result
        if not self.disk:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            body = result.model_dump_json().encode("utf-8")
            mac = self._mac(key, body).encode("ascii")
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                handle.write(mac + b"\n" + body)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only cache dir only costs speed

    def solution_run(
        self, runner: Runner, code: str, probes: Sequence[str | Probe], device: str,
        *, vary: int | None = None,
    ) -> RunResult:
        """The run of ``code`` with ``probes`` on ``device``, from the cache or fresh;
        ``vary``: its leaves varied with this seed (:mod:`tutor.sandbox.vary`)."""
        key = cache_key(code, probes, device, vary)
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            cached = self.get(key)
            if cached is not None:
                return cached
            for _ in range(1 + TRUTH_RETRIES):
                if vary is None:
                    result = runner.run(code, device=device, probes=list(probes))
                else:
                    result = runner.run(code, device=device, probes=list(probes), vary=vary)
                with self._lock:
                    self.runs += 1
                if result.outcome in CACHEABLE_OUTCOMES:
                    break
            self.put(key, result)
            return result

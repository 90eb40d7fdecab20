"""Run a script in a fresh interpreter from the repository root: what a module import or a
start-up costs can only be seen in a process that has not imported anything yet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_fresh(script: str, *args: str) -> list[str]:
    """The script's output lines (``args`` are its ``sys.argv[1:]``); it must exit 0."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()

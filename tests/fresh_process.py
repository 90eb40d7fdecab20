"""Run a script in a fresh interpreter from the repository root: what a module import or a
start-up costs can only be seen in a process that has not imported anything yet."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_fresh(script: str, *args: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The script's output lines (``args`` are its ``sys.argv[1:]``, ``env`` more of its
    environment); it must exit 0."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()


_ASK = (
    "import sys\n"
    "from tutor.cli import main\n"
    "main(['ask', '--offline', sys.argv[1]])\n"
    "print('loaded:', *(m for m in sys.argv[2:] if m in sys.modules))"
)


def ask_fresh(question: str, modules: Iterable[str], tmp_path: Path) -> tuple[list[str], list[str]]:
    """``tutor ask --offline QUESTION`` as from the shell, its caches (under ``tmp_path``)
    filled by a first run, no LLM configured: (the answer's lines, which of ``modules`` the
    second run imported)."""
    env = {"TUTOR_LLM_CONFIG": str(tmp_path / "none.yaml"),
           "TUTOR_CACHE_DIR": str(tmp_path / "cache")}
    run_fresh(_ASK, question, *modules, env=env)
    *answer, loaded = run_fresh(_ASK, question, *modules, env=env)
    return answer, loaded.split()[1:]

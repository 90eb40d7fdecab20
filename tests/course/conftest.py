"""Shared fixtures for the course tests: fixture folders and the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture
def mini_course() -> Path:
    return FIXTURES / "mini_course"


@pytest.fixture
def broken_lessons() -> Path:
    return FIXTURES / "broken_lessons"


@pytest.fixture
def write_lesson(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write YAML text to ``tmp_path/name`` and return its path."""

    def write(text: str, name: str = "lesson.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture
def tutor_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``python -m tutor ARGS`` the way a user would, from the repository root."""

    def run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        env["TUTOR_LANG"] = "en"
        return subprocess.run(
            [sys.executable, "-m", "tutor", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    return run

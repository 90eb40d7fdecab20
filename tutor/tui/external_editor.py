"""Editing the current code in the learner's own editor ($VISUAL, then $EDITOR)."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


def editor_command(env: Mapping[str, str] | None = None) -> list[str] | None:
    """The editor the learner set ($VISUAL, then $EDITOR), split as a shell would; None
    when neither is set."""
    env = os.environ if env is None else env
    for name in ("VISUAL", "EDITOR"):
        value = env.get(name, "").strip()
        if value:
            return shlex.split(value)
    return None


def edit_text(
    text: str,
    command: list[str],
    *,
    run: Callable[..., Any] = subprocess.run,
    stem: str = "exercise",
) -> str:
    """Write ``text`` to a temporary ``.py`` file, open it with ``command`` and return what
    the file holds once the editor exits. An editor that fails raises ``OSError`` or
    ``subprocess.CalledProcessError``; the temporary file is removed either way."""
    with tempfile.TemporaryDirectory(prefix="tutor-edit-") as folder:
        path = Path(folder) / f"{stem}.py"
        path.write_text(text, encoding="utf-8")
        run([*command, str(path)], check=True)
        return path.read_text(encoding="utf-8")

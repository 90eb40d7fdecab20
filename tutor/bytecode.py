"""Compiled bytecode for tutor's own modules, where Python is told not to write it.

A regular install gets its bytecode from pip at install time. The README's install is
editable: tutor runs from its source tree, where pip compiles nothing. Where
``PYTHONDONTWRITEBYTECODE`` is set as well (Docker images often set it; this project's
machines do), every start compiled each tutor module it imported, again: ~0.25 s of the
TUI's start-up, a quarter of its budget, and as much of every ``tutor run`` or ``tutor
verify``. The TUI calls :func:`refresh_bytecode` once its first screen is drawn (off the UI
thread) and the other commands once they are done, so the next start reads bytecode as a
regular install does. Only tutor's own package is written, nothing else on ``sys.path``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def stale_modules() -> list[str]:
    """The tutor modules imported in this process whose bytecode is missing or older than
    their source (a stat or two each: cheap enough to ask at every start)."""
    stale = []
    for name, module in list(sys.modules.items()):
        if name != "tutor" and not name.startswith("tutor."):
            continue
        source, cached = getattr(module, "__file__", None), getattr(module, "__cached__", None)
        if not source or not cached or not source.endswith(".py"):
            continue
        try:
            if os.stat(cached).st_mtime < os.stat(source).st_mtime:
                stale.append(name)
        except OSError:
            stale.append(name)
    return sorted(stale)


def refresh_bytecode() -> bool | None:
    """:func:`compile_package` when a tutor module imported here lacked up-to-date
    bytecode; None when there is nothing to do."""
    if not sys.dont_write_bytecode or not stale_modules():
        return None
    return compile_package()


def compile_package(root: Path = PACKAGE_DIR) -> bool | None:
    """Write the missing or stale bytecode of every module under ``root``.

    None where there is nothing to do: Python writes bytecode itself, or ``root`` cannot be
    written (a read-only install: its modules are compiled in memory as before, and not
    compiled here in vain at every command); else whether every module compiled.
    """
    if not sys.dont_write_bytecode or not os.access(root, os.W_OK):
        return None
    import compileall

    # Up-to-date files are skipped (their recorded mtime matches), and each file is
    # written atomically, so two tutors starting at once do not clash.
    return bool(compileall.compile_dir(root, quiet=2))

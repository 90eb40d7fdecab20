"""Compiled bytecode for tutor's own modules, where Python is told not to write it.

A regular install gets its bytecode from pip at install time. The README's install is
editable: tutor runs from its source tree, where pip compiles nothing. Where
``PYTHONDONTWRITEBYTECODE`` is set as well (Docker images often set it; this project's
machines do), every start compiled each tutor module it imported, again: ~0.25 s of the
TUI's start-up, a quarter of its budget. The TUI calls :func:`compile_package` once its
first screen is drawn, off the UI thread, so the next start reads bytecode like a regular
install does. Only tutor's own package is written, nothing else on ``sys.path``.
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def compile_package(root: Path = PACKAGE_DIR) -> bool | None:
    """Write the missing or stale bytecode of every module under ``root``.

    None where Python writes bytecode itself (nothing to do); else whether every module
    compiled. A folder that cannot be written (a read-only install) is not an error: its
    modules are compiled in memory as before.
    """
    if not sys.dont_write_bytecode:
        return None
    import compileall

    # Up-to-date files are skipped (their recorded mtime and size match), and the files
    # are written atomically, so two apps starting at once do not clash.
    return bool(compileall.compile_dir(root, quiet=2))

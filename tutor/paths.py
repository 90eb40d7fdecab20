"""Where the app keeps its files, and which of them a learner's run must not see."""

from __future__ import annotations

import importlib.resources
import os
from collections.abc import Iterable
from pathlib import Path

from platformdirs import user_cache_dir, user_data_dir

APP_NAME = "autograd-tutor"
EXERCISE_DIR = Path("autograd-exercises")
"""Where ``tutor start`` writes the exercises as files, relative to the current folder."""


def cache_root() -> Path:
    """Caches (lessons, expected values, the chat index): ``TUTOR_CACHE_DIR`` or the
    user cache directory."""
    explicit = os.environ.get("TUTOR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(user_cache_dir(APP_NAME, appauthor=False))


def write_cache_file(path: Path, text: str) -> None:
    """Write a cache entry whole or not at all (a reader never sees half of one); a cache
    that cannot be written is skipped: it only saves time."""
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    except OSError:
        pass


def bundled_lessons_dir() -> Path:
    """The course shipped with the package (``tutor/bundled_lessons``), else ``lessons/``."""
    try:
        bundled = importlib.resources.files("tutor") / "bundled_lessons"
        if bundled.is_dir():
            return Path(str(bundled))
    except (ModuleNotFoundError, TypeError, NotADirectoryError):  # pragma: no cover
        pass
    return Path(__file__).resolve().parents[1] / "lessons"


def data_root() -> Path:
    """Progress: the user data directory (``--data-dir`` overrides it per command)."""
    return Path(user_data_dir(APP_NAME, appauthor=False))


def private_folders(
    lessons: Path | None, data_dir: Path | None = None, *, also: Iterable[Path] = ()
) -> list[Path]:
    """Folders a learner's run must see empty (``Sandbox(hide=...)``): the lessons (their
    solutions), the caches (expected values) and the progress data; ``also`` adds more,
    such as the other students' submissions when grading."""
    if lessons is None:
        lessons = bundled_lessons_dir()
    return [lessons, cache_root(), data_dir if data_dir is not None else data_root(), *also]

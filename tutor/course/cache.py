"""A cache of validated lessons, so starting the app does not re-parse YAML every time.

Parsing the course with a line-keeping YAML parser costs about a second; validating the
cached JSON with pydantic costs milliseconds. An entry is keyed by the sha256 of the file's
bytes and of the models' source, so an edited lesson or a changed format is never served
stale. Only lessons that loaded without any problem are cached; a broken cache entry is
ignored. ``TUTOR_CACHE_DIR`` moves the cache; an unwritable cache is skipped.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

from pydantic import ValidationError

from tutor.course import models
from tutor.course.models import Lesson
from tutor.paths import cache_root


def cache_dir() -> Path:
    return cache_root() / "lessons"


@cache
def _format_fingerprint() -> bytes:
    return hashlib.sha256(Path(models.__file__).read_bytes()).digest()


def _entry(content: bytes) -> Path:
    key = hashlib.sha256(_format_fingerprint() + content).hexdigest()
    return cache_dir() / f"{key}.json"


def cached_lesson(content: bytes) -> Lesson | None:
    """The lesson these file bytes validated to before, if it is cached."""
    try:
        return Lesson.model_validate_json(_entry(content).read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


def store_lesson(content: bytes, lesson: Lesson) -> None:
    entry = _entry(content)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        partial = entry.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(lesson.model_dump_json(), encoding="utf-8")
        partial.replace(entry)  # atomic: a reader never sees half an entry
    except OSError:
        pass

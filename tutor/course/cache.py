"""A cache of validated lessons, so starting the app does not re-parse YAML every time.

Parsing the course with a line-keeping YAML parser costs about a second. An entry is the
lesson's records as JSON (:func:`tutor.records.to_json`), and reads back without pydantic (the
app's first screen is drawn before pydantic is imported: see :mod:`tutor.records`); only
record classes are ever built from it. An entry is keyed by the sha256 of the file's bytes and
of the format's source (the models, :class:`~tutor.i18n.Text`, this encoding), so an edited
lesson or a changed format is never served stale. Only lessons that loaded without any
problem are cached; a broken cache entry is ignored. ``TUTOR_CACHE_DIR`` moves the cache; an
unwritable cache is skipped.
"""

from __future__ import annotations

import hashlib
import sys
from functools import cache
from pathlib import Path

from tutor import i18n, records
from tutor.course import models
from tutor.course.models import Lesson
from tutor.paths import cache_root, write_cache_file


def cache_dir() -> Path:
    return cache_root() / "lessons"


@cache
def _format_fingerprint() -> bytes:
    digest = hashlib.sha256()
    for module in (models, i18n, records, sys.modules[__name__]):
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.digest()


def _entry(content: bytes) -> Path:
    key = hashlib.sha256(_format_fingerprint() + content).hexdigest()
    return cache_dir() / f"{key}.json"


def cached_lesson(content: bytes) -> Lesson | None:
    """The lesson these file bytes validated to before, if it is cached."""
    try:
        lesson = records.from_json(_entry(content).read_bytes())
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return lesson if isinstance(lesson, Lesson) else None


def store_lesson(content: bytes, lesson: Lesson) -> None:
    try:
        text = records.to_json(lesson)
    except (ValueError, TypeError):  # a literal JSON cannot hold
        return
    write_cache_file(_entry(content), text)

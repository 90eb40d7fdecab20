"""A cache of validated lessons, so starting the app does not re-parse YAML every time.

Parsing the course with a line-keeping YAML parser costs about a second. An entry is the
lesson's records as JSON, each tagged with its class, and reads back without pydantic (the
app's first screen is drawn before pydantic is imported: see :mod:`tutor.records`); only
record classes are ever built from it. An entry is keyed by the sha256 of the file's bytes and
of the format's source (the models, :class:`~tutor.i18n.Text`, this encoding), so an edited
lesson or a changed format is never served stale. Only lessons that loaded without any
problem are cached; a broken cache entry is ignored. ``TUTOR_CACHE_DIR`` moves the cache; an
unwritable cache is skipped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

from tutor import i18n, records
from tutor.course import models
from tutor.course.models import Lesson
from tutor.paths import cache_root, write_cache_file
from tutor.records import Record

TAG = "__record__"
"""The key that names an object's record class in an entry."""


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


def _tag(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _encode(value: Any) -> dict[str, Any]:
    if isinstance(value, Record) and dataclasses.is_dataclass(value):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return {TAG: _tag(type(value)), **fields}
    raise TypeError(f"not a record: {type(value).__name__}")


def records_json(value: Any) -> str:
    """``value`` (a course, a lesson) as the cache stores its records: a fingerprint of its
    content that needs no pydantic (the chat index's cache key)."""
    return json.dumps(value, default=_encode, ensure_ascii=False)


def _record_classes() -> dict[str, type[Record]]:
    found: dict[str, type[Record]] = {}
    todo = [Record]
    while todo:
        for sub in todo.pop().__subclasses__():
            found[_tag(sub)] = sub
            todo.append(sub)
    return found


def _decoder() -> Any:
    classes = _record_classes()

    def decode(obj: dict[str, Any]) -> Any:
        tag = obj.pop(TAG, None)
        return obj if tag is None else classes[tag](**obj)

    return decode


def cached_lesson(content: bytes) -> Lesson | None:
    """The lesson these file bytes validated to before, if it is cached."""
    try:
        lesson = json.loads(_entry(content).read_bytes(), object_hook=_decoder())
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return lesson if isinstance(lesson, Lesson) else None


def store_lesson(content: bytes, lesson: Lesson) -> None:
    try:
        text = json.dumps(lesson, default=_encode, ensure_ascii=False)
    except (ValueError, TypeError):  # a literal JSON cannot hold
        return
    write_cache_file(_entry(content), text)

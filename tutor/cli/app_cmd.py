"""``tutor`` with no subcommand: the interactive Textual app.

Start-up must not wait for torch: the sandbox warms up in the background once the first
screen is drawn, the tutor chat builds its index on the first question, the course comes
from a JSON cache, and the device list arrives when the sandbox can answer (until then runs
use cpu).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import threading
from pathlib import Path
from typing import Any

from tutor.course.models import Course
from tutor.errors import TutorError


class LazyTutor:
    """The tutor chat, built on first use (in a worker thread, never at start-up)."""

    def __init__(self, course: Course) -> None:
        self._course = course
        self._tutor: Any = None
        self._lock = threading.Lock()

    def _get(self) -> Any:
        with self._lock:
            if self._tutor is None:
                from tutor.chat import Tutor

                self._tutor = Tutor.from_environment(self._course)
            return self._tutor

    def ask(self, question: str, **kwargs: Any) -> Any:
        return self._get().ask(question, **kwargs)


def _course_key(files: list[Path]) -> str:
    """Changes whenever a lesson file or the lesson models change."""
    import tutor
    import tutor.course.models as models

    digest = hashlib.sha256(tutor.__version__.encode())
    for path in [Path(models.__file__), *files]:
        stat = path.stat()
        digest.update(f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:32]


def load_course_cached(lessons: Path | None, cache_dir: Path) -> Course:
    """The course, from a JSON cache when no lesson file changed since it was written.

    Parsing the YAML with positions costs more than half a second; validating the cached
    JSON a few milliseconds, which keeps the first screen fast. Any problem with the cache
    falls back to loading (and so reporting broken lessons) as usual."""
    from tutor.course import bundled_lessons_dir, lesson_files, load_course

    directory = Path(lessons) if lessons is not None else bundled_lessons_dir()
    cached: Path | None = None
    try:
        cached = cache_dir / f"course-{_course_key(lesson_files(directory))}.json"
        return Course.model_validate_json(cached.read_bytes())
    except (OSError, ValueError, TutorError):
        pass
    course = load_course(directory)
    if cached is None:
        return course
    with contextlib.suppress(OSError):
        cache_dir.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(course.model_dump_json(), encoding="utf-8")
        os.replace(partial, cached)  # atomic: a reader never sees half a file
    return course


def _cache_dir(data_dir: Path | None) -> Path:
    if data_dir is not None:
        return Path(data_dir) / "cache"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("autograd-tutor"))


def run(args: argparse.Namespace) -> int:
    from tutor.cli.common import resolve_lang
    from tutor.progress import ProgressStore
    from tutor.sandbox import Sandbox
    from tutor.tui.app import create_app

    data_dir = getattr(args, "data_dir", None)
    course = load_course_cached(getattr(args, "lessons", None), _cache_dir(data_dir))
    store = ProgressStore.default(data_dir)
    # Not started here: the app asks for the devices once its first screen is drawn, which
    # starts the torch server in the background.
    sandbox = Sandbox()
    try:
        app = create_app(
            course=course,
            runner=sandbox,
            store=store,
            tutor=LazyTutor(course),
            lang=resolve_lang(args),  # type: ignore[arg-type]
            device=getattr(args, "device", None) or "auto",
        )
        app.run()
    finally:
        sandbox.close()
        store.close()
    return int(app.return_code or 0)

"""``tutor`` with no subcommand: the interactive Textual app.

Start-up must not wait for torch: the sandbox warms up in the background once the first
screen is drawn, the tutor chat builds its index on the first question, the course loader
serves validated lessons from its cache, and the device list arrives when the sandbox can
answer (until then runs use cpu).
"""

from __future__ import annotations

import argparse
import gc
import threading
from typing import Any

from tutor.course.models import Course


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


def run(args: argparse.Namespace) -> int:
    # No garbage collection until the first screen is drawn (the app freezes what start-up
    # built and turns it back on): its passes over the modules being imported are pure cost.
    gc.disable()
    try:
        return _run(args)
    finally:
        gc.enable()


def _run(args: argparse.Namespace) -> int:
    from tutor.cli.common import resolve_lang
    from tutor.course import load_course
    from tutor.paths import private_folders
    from tutor.progress import ProgressStore
    from tutor.sandbox import Sandbox
    from tutor.tui.app import create_app

    course = load_course(getattr(args, "lessons", None))  # cached by the loader
    store = ProgressStore.default(getattr(args, "data_dir", None))
    # Not started here: the app asks for the devices once its first screen is drawn, which
    # starts the torch server in the background.
    sandbox = Sandbox(hide=private_folders(getattr(args, "lessons", None),
                                           getattr(args, "data_dir", None)))
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

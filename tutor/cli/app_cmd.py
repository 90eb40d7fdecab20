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
from collections.abc import Callable
from typing import Any

from tutor.course.models import Course
from tutor.i18n import Lang
from tutor.settings import Settings, choose_lang


class OnFirstUse:
    """An object built the first time one of its attributes is used, in whichever thread
    uses it first: the app's first use of the sandbox and the tutor is in worker threads,
    after the first screen, so their modules load off the start-up path."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._built: Any = None
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        return self._built is not None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # protocol probes (copy, pickle, inspect) build nothing
            raise AttributeError(name)
        with self._lock:
            if self._built is None:
                self._built = self._build()
        return getattr(self._built, name)


def lazy_tutor(course: Course, runner: Any = None) -> OnFirstUse:
    """The tutor chat, built on the first question (its index is built there too);
    ``runner``: the sandbox it runs a "what does this print?" question's snippet in."""

    def build() -> Any:
        from tutor.chat import Tutor

        return Tutor.from_environment(course, runner=runner)

    return OnFirstUse(build)


def lazy_sandbox(**options: Any) -> OnFirstUse:
    """The sandbox client, built when the app first asks for the devices (that also starts
    the torch server): its pydantic models of runs load then, not before the first screen."""

    def build() -> Any:
        from tutor.sandbox import Sandbox

        return Sandbox(**options)

    return OnFirstUse(build)


def app_choices(args: argparse.Namespace, saved: Settings) -> tuple[Lang, str]:
    """Language and device: the language in the order of every face (``--lang``,
    ``TUTOR_LANG``, the one the learner last chose in the app, the locale); the device the
    command line's, else the one last chosen, else ``auto``."""
    lang = choose_lang(getattr(args, "lang", None), saved)
    device = getattr(args, "device", None) or saved.device or "auto"
    return lang, device


def run(args: argparse.Namespace) -> int:
    # No garbage collection until the first screen is drawn (the app then freezes what
    # start-up built and turns it back on): its passes over the objects of the modules
    # being imported find nothing to free. Measured side by side with
    # benchmarks/bench_startup.py, this is a good part of the first screen's time.
    gc.disable()
    try:
        return _run(args)
    finally:
        gc.enable()


def _run(args: argparse.Namespace) -> int:
    from tutor.course import load_course
    from tutor.course.quiz import local_learner
    from tutor.learning import LearningSession
    from tutor.paths import private_folders
    from tutor.progress import ProgressStore
    from tutor.settings import SettingsStore, settings_path
    from tutor.tui.app import TutorApp

    course = load_course(getattr(args, "lessons", None))  # cached by the loader
    data_dir = getattr(args, "data_dir", None)
    store = ProgressStore.default(data_dir)
    settings = SettingsStore(settings_path(data_dir))
    lang, device = app_choices(args, settings.current)
    # Not started here: the app asks for the devices once its first screen is drawn, which
    # starts the torch server in the background.
    sandbox = lazy_sandbox(hide=private_folders(getattr(args, "lessons", None),
                                                getattr(args, "data_dir", None)))
    try:
        # Runs use cpu until the sandbox has said which devices exist; the app then takes
        # ``device`` (what the learner asked for: auto, cpu, cuda...) if it is there.
        session = LearningSession(course, sandbox, store, tutor=lazy_tutor(course, sandbox),
                                  lang=lang, learner=local_learner())
        app = TutorApp(session, wanted_device=device, settings=settings)
        app.run()
    finally:
        if sandbox.built:
            sandbox.close()
        store.close()
    return int(app.return_code or 0)

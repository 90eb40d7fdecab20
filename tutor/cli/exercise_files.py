"""What the own-editor commands share: their options and opening the exercise folder.

Every ``tutor`` start builds the options (all subcommands register at once): nothing heavier
than :mod:`tutor.paths` is imported at module level.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from tutor.cli.common import add_data_dir, add_device, add_lang, add_lessons, resolve_lang, said
from tutor.errors import TutorError
from tutor.i18n import T

if TYPE_CHECKING:
    from tutor.cli.exercise_view import AttemptView
    from tutor.learning.exercises import ExerciseFiles


def add_exercise_options(parser: argparse.ArgumentParser, *, runs: bool = False) -> None:
    """Options of start/watch/verify/list/hint/reset (``runs``: the command runs the
    exercises, so it takes --device too). The global ones are repeated so they also work
    after the subcommand (SUPPRESS keeps a value given before it)."""
    from tutor.paths import EXERCISE_DIR

    parser.add_argument("--dir", type=Path, default=EXERCISE_DIR, metavar="DIR",
                        help=said(parser, "exercises.dir", dir=EXERCISE_DIR))
    add_lang(parser, order="lang.order.files")
    add_lessons(parser, "exercises.lessons")
    add_data_dir(parser)
    if runs:
        add_device(parser)


def add_exercise_argument(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    """The EXERCISE an exercise command acts on (``optional``: the one the learner is on
    when it is not given)."""
    key = "exercises.exercise_or_current" if optional else "exercises.exercise"
    parser.add_argument("exercise", nargs="?" if optional else None, metavar="EXERCISE",
                        help=said(parser, key))


@contextmanager
def open_exercises(args: argparse.Namespace, *, runs: bool) -> Iterator[ExerciseFiles]:
    """The exercise folder over a learning session. ``runs``: a warm sandbox is started
    and the device resolved (``list``, ``hint`` and ``reset`` run nothing and start none)."""
    from tutor.course import load_course
    from tutor.course.quiz import local_learner
    from tutor.learning import LearningSession
    from tutor.learning.exercises import ExerciseFiles
    from tutor.paths import private_folders
    from tutor.progress import ProgressStore
    from tutor.sandbox import DeviceError, Sandbox
    from tutor.workspace import Workspace

    workspace = Workspace(args.dir)
    manifest = workspace.load_manifest()
    lessons_dir = getattr(args, "lessons", None)
    if lessons_dir is None and manifest.lessons_dir is not None:
        lessons_dir = Path(manifest.lessons_dir)
    course = load_course(lessons_dir)
    # after --lang, TUTOR_LANG and the app's choice: the language the files are written in
    lang = resolve_lang(args, otherwise=lambda: manifest.lang)
    sandbox = Sandbox(hide=private_folders(lessons_dir, getattr(args, "data_dir", None)))
    try:
        device = "cpu"
        if runs:
            sandbox.start()  # warms torch up while the rest opens
            try:
                device = sandbox.resolve_device(getattr(args, "device", None) or "auto")
            except DeviceError as exc:
                raise TutorError(
                    exc.text, hint=T("pick one with --device", "请用 --device 选择一个")
                ) from exc
        with ProgressStore.default(getattr(args, "data_dir", None)) as store:
            session = LearningSession(
                course, sandbox, store, lang=lang, device=device,
                learner=local_learner(),  # quiz files number choices as the app orders them
            )
            yield ExerciseFiles(session, workspace)
    finally:
        sandbox.close()


@contextmanager
def open_with_view(args: argparse.Namespace, *, runs: bool
                   ) -> Iterator[tuple[ExerciseFiles, AttemptView]]:
    """:func:`open_exercises` and a view on the terminal in the files' language: how each
    own-editor command (list, hint, reset, verify, watch) starts."""
    from rich.console import Console

    from tutor.cli.exercise_view import AttemptView

    console = Console(highlight=False, soft_wrap=True)
    with open_exercises(args, runs=runs) as files:
        yield files, AttemptView(console, files.session.lang)

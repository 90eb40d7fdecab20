"""Fixtures for exercise-file tests: the mini course, a workspace, a store, fake grading.

The fake grading stands in for ``tutor.grading`` where grading is not the point (the watch
presenter, key handling, the own-editor commands): it passes exactly the step's reference
solution, fails anything else with one failing check, and reports a run with the learner's
printed output and an error when the code contains ``raise``.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from watch_fakes import MINI_COURSE, FakeGrading, NoRunner, fake_explain

from tutor.cli.watch_cmd import WatchSession
from tutor.course import load_course
from tutor.course.models import Course
from tutor.learning import LearningSession
from tutor.learning.exercises import ExerciseFiles
from tutor.progress import ProgressStore
from tutor.workspace import Workspace


@pytest.fixture(scope="session")
def mini_course_dir() -> Path:
    return MINI_COURSE


@pytest.fixture(scope="session")
def mini_course() -> Course:
    return load_course(MINI_COURSE)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ProgressStore]:
    s = ProgressStore.default(tmp_path / "data")
    yield s
    s.close()


@pytest.fixture
def workspace(tmp_path: Path, mini_course: Course) -> Workspace:
    ws = Workspace(tmp_path / "exercises")
    ws.write_course(mini_course, lang="en", lessons_dir=MINI_COURSE)
    return ws


@pytest.fixture
def console() -> Console:
    return Console(file=io.StringIO(), width=120, color_system=None, soft_wrap=True)


@pytest.fixture
def fake_grading() -> FakeGrading:
    return FakeGrading()


@pytest.fixture
def take_output(console: Console) -> Callable[[], str]:
    """``take_output()`` returns what was printed since the last call."""

    def take() -> str:
        text = console.file.getvalue()  # type: ignore[attr-defined]
        console.file.seek(0)  # type: ignore[attr-defined]
        console.file.truncate()  # type: ignore[attr-defined]
        return text

    return take


@pytest.fixture
def make_files(
    workspace: Workspace, mini_course: Course, store: ProgressStore, fake_grading: FakeGrading
) -> Callable[..., ExerciseFiles]:
    """``make_files(lang="en")``: the mini-course workspace over a learning session."""

    def make(lang: str = "en", grading: Any = None) -> ExerciseFiles:
        session = LearningSession(
            mini_course,
            NoRunner(),
            store,
            lang=lang,  # type: ignore[arg-type]
            grading=grading or fake_grading,
            diagnose=fake_explain,
        )
        return ExerciseFiles(session, workspace)

    return make


@pytest.fixture
def make_session(
    make_files: Callable[..., ExerciseFiles], console: Console
) -> Callable[..., WatchSession]:
    """``make_session(lang="en")``: a watch session over the mini-course workspace."""

    def make(lang: str = "en", grading: Any = None) -> WatchSession:
        return WatchSession(make_files(lang, grading), console)

    return make

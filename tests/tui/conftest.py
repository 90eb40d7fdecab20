"""Fixtures for the TUI tests: the mini course, a real progress store in a temp folder,
and fakes for everything torch-related (see tui_fakes.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tui_fakes import FakeGrading, FakeRunner, FakeTutor, fake_diagnose

from tutor.course import load_course
from tutor.course.models import Course
from tutor.progress import ProgressStore

MINI_COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"


@pytest.fixture(scope="session")
def course() -> Course:
    return load_course(MINI_COURSE)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ProgressStore]:
    with ProgressStore(tmp_path / "progress.sqlite") as progress:
        yield progress


@pytest.fixture
def make_app(course: Course, store: ProgressStore):
    """Build the app with fakes; keyword arguments override any part."""
    from tui_fakes import create_app

    def build(**overrides):
        parts = {
            "course": course,
            "runner": FakeRunner(),
            "store": store,
            "tutor": FakeTutor(),
            "lang": "en",
            "device": "cpu",
            "grading": FakeGrading(),
            "diagnose": fake_diagnose,
        }
        parts.update(overrides)
        return create_app(**parts)

    return build

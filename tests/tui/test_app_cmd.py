"""``tutor`` (no subcommand) start-up pieces that need no screen: the course cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import tutor.course
from tutor.cli.app_cmd import LazyTutor, load_course_cached
from tutor.course import load_course
from tutor.errors import TutorError

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"


def test_course_cache_is_used_and_invalidated(tmp_path: Path, monkeypatch) -> None:
    lessons = tmp_path / "lessons"
    shutil.copytree(MINI, lessons)
    cache = tmp_path / "cache"
    first = load_course_cached(lessons, cache)
    assert first == load_course(lessons)
    assert len(list(cache.glob("course-*.json"))) == 1

    def no_yaml(directory=None):
        raise AssertionError("the cache should have been used")

    monkeypatch.setattr(tutor.course, "load_course", no_yaml)
    assert load_course_cached(lessons, cache) == first

    monkeypatch.undo()
    path = lessons / "01-mini-basics.yaml"
    path.write_text(path.read_text().replace("Mini: requires_grad", "Changed: requires_grad"))
    changed = load_course_cached(lessons, cache)
    assert changed.lessons[0].title.en.startswith("Changed")


def test_broken_lessons_still_reported(tmp_path: Path) -> None:
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "01-bad.yaml").write_text("id: Bad Id\n")
    with pytest.raises(TutorError):
        load_course_cached(lessons, tmp_path / "cache")
    with pytest.raises(TutorError):
        load_course_cached(tmp_path / "missing", tmp_path / "cache")


def test_lazy_tutor_builds_on_first_question(monkeypatch) -> None:
    built: list[object] = []

    class Recorder:
        @classmethod
        def from_environment(cls, course):
            built.append(course)
            return cls()

        def ask(self, question, **kwargs):
            return f"answer to {question}"

    import tutor.chat

    monkeypatch.setattr(tutor.chat, "Tutor", Recorder)
    course = load_course(MINI)
    lazy = LazyTutor(course)
    assert built == []
    assert lazy.ask("why", lang="en") == "answer to why"
    assert lazy.ask("again", lang="en") == "answer to again"
    assert built == [course]

"""The validated-lesson cache: served when the bytes are unchanged, never when they are not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tutor.course import LessonError, load_course
from tutor.course import loader as loader_module
from tutor.i18n import Text

MINI = Path(__file__).parents[1] / "fixtures" / "mini_course"


@pytest.fixture
def course_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TUTOR_CACHE_DIR", str(tmp_path / "cache"))
    target = tmp_path / "course"
    shutil.copytree(MINI, target)
    return target


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: Path) -> None:
        raise AssertionError(f"{path} was parsed although it is cached")

    monkeypatch.setattr(loader_module, "parse_lesson_file", refuse)


def test_second_load_comes_from_the_cache_and_is_equal(
    course_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = load_course(course_dir)
    _no_parsing(monkeypatch)
    assert load_course(course_dir) == first


def test_an_edited_lesson_is_parsed_again(course_dir: Path) -> None:
    load_course(course_dir)
    path = sorted(course_dir.glob("*.yaml"))[0]
    text = path.read_text(encoding="utf-8")
    lesson_id = load_course(course_dir).lessons[0].id
    path.write_text(text.replace(f"id: {lesson_id}\n", "id: renamed-lesson\n", 1), "utf-8")
    assert load_course(course_dir).lessons[0].id == "renamed-lesson"


def test_a_broken_lesson_is_never_served_from_the_cache(course_dir: Path) -> None:
    load_course(course_dir)
    path = sorted(course_dir.glob("*.yaml"))[0]
    path.write_text(path.read_text(encoding="utf-8") + "\nunknown_key: 1\n", "utf-8")
    for _ in range(2):
        with pytest.raises(LessonError):
            load_course(course_dir)


def test_a_corrupt_cache_entry_is_ignored(course_dir: Path, tmp_path: Path) -> None:
    expected = load_course(course_dir)
    for entry in (tmp_path / "cache" / "lessons").glob("*.json"):
        entry.write_text("{not json", encoding="utf-8")
    assert load_course(course_dir) == expected


def test_duplicate_lesson_ids_are_still_reported_with_cached_files(course_dir: Path) -> None:
    load_course(course_dir)
    first = sorted(course_dir.glob("*.yaml"))[0]
    shutil.copy(first, course_dir / "99-copy.yaml")
    with pytest.raises(LessonError, match="duplicate lesson id"):
        load_course(course_dir)


def test_an_entry_builds_only_lesson_records(
    course_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry names the class of each object: a name that is not a record (here a function
    that would run a command) makes it a miss, parsed again, never a call."""
    expected = load_course(course_dir)
    called: list[object] = []
    monkeypatch.setattr("os.system", lambda *args, **kwargs: called.append((args, kwargs)))
    entries = sorted((tmp_path / "cache" / "lessons").glob("*.json"))
    assert entries
    for entry in entries:
        text = entry.read_text(encoding="utf-8")
        assert '"__record__": "tutor.course.models.Lesson"' in text
        entry.write_text(text.replace("tutor.course.models.Lesson", "os.system", 1), "utf-8")
    assert load_course(course_dir) == expected
    assert called == []


def test_cached_records_are_the_validated_ones(course_dir: Path) -> None:
    """What the cache gives back is what pydantic validated: the same classes, texts as
    Text, starters under their field name, every check."""
    first = load_course(course_dir)
    again = load_course(course_dir)
    assert again == first and again is not first
    for lesson_a, lesson_b in zip(first.lessons, again.lessons, strict=True):
        for a, b in zip(lesson_a.steps, lesson_b.steps, strict=True):
            assert type(a) is type(b)
            assert isinstance(b.title, Text)
            for check_a, check_b in zip(getattr(a, "checks", []), getattr(b, "checks", []),
                                        strict=True):
                assert type(check_a) is type(check_b) and check_a == check_b

"""The validated-lesson cache: served when the bytes are unchanged, never when they are not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tutor.course import LessonError, load_course
from tutor.course import loader as loader_module

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

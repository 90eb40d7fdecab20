"""Starter code in the learner's language: the model, the learning session, exercise files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tutor.course import load_course
from tutor.course.models import CodeStep, Course, FixStep
from tutor.learning import LearningSession
from tutor.progress import ProgressStore
from tutor.workspace import Workspace, split_code

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"
FIRST = "mini-basics/first-backward"
EN_COMMENT = "# your code here"
ZH_COMMENT = "# 在这里写你的代码"


@pytest.fixture(scope="module")
def course() -> Course:
    return load_course(MINI)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ProgressStore]:
    with ProgressStore.default(tmp_path / "data") as s:
        yield s


class NoRunner:
    """Showing and resetting code never runs anything."""

    def run(self, code: str, **kwargs: object) -> object:
        raise AssertionError("nothing should run")

    def devices(self) -> list[str]:
        return ["cpu"]


def _step(data: object) -> CodeStep:
    base = {"kind": "code", "id": "s", "title": "t", "prompt": "p", "solution": "x = 1",
            "checks": [{"kind": "no_error"}]}
    return CodeStep.model_validate({**base, "starter": data})  # type: ignore[dict-item]


def test_a_starter_is_one_program_or_one_per_language() -> None:
    plain = _step("x = 0  # same\n")
    assert plain.starter_for("en") == plain.starter_for("zh") == plain.starter == "x = 0  # same\n"
    both = _step({"en": "x = 0  # zero\n", "zh": "x = 0  # 零\n"})
    assert both.starter == "x = 0  # zero\n", "starter stays the English code"
    assert both.starter_for("zh") == "x = 0  # 零\n"
    assert both.is_starter("x = 0  # 零") and both.is_starter("x = 0  # zero\n\n")
    assert not both.is_starter("x = 1  # 零\n")
    assert _step("").starter_for("zh") == "" == CodeStep.model_validate(
        {"kind": "code", "id": "s", "title": "t", "prompt": "p", "solution": "x",
         "checks": [{"kind": "no_error"}]}).starter
    with pytest.raises(ValueError):
        FixStep.model_validate({"kind": "fix", "id": "s", "title": "t", "prompt": "p",
                                "solution": "x", "checks": [{"kind": "no_error"}],
                                "starter": {"en": "x"}})


def test_cached_lessons_keep_both_starters(tmp_path: Path, monkeypatch) -> None:
    from tutor.course.cache import cached_lesson, store_lesson

    monkeypatch.setenv("TUTOR_CACHE_DIR", str(tmp_path))
    lesson = load_course(MINI).lessons[0]
    store_lesson(b"key", lesson)
    again = cached_lesson(b"key")
    assert again is not None and again == lesson
    step = again.step("first-backward")
    assert ZH_COMMENT in step.starter_for("zh")  # type: ignore[union-attr]


def _session(course: Course, store: ProgressStore, lang: str) -> LearningSession:
    session = LearningSession(course, NoRunner(), store, lang=lang)  # type: ignore[arg-type]
    session.goto("mini-basics", "first-backward")
    return session


def test_session_shows_and_resets_to_the_starter_in_its_language(
    course: Course, store: ProgressStore
) -> None:
    session = _session(course, store, "zh")
    assert ZH_COMMENT in session.code() and EN_COMMENT not in session.code()
    assert session.starter_code("en") != session.starter_code() == session.reset_code()
    assert ZH_COMMENT in store.last_code(FIRST)  # type: ignore[operator]
    session.toggle_lang()
    # the saved code is an untouched starter: shown in the new language
    assert EN_COMMENT in session.code()
    assert session.is_starter(session.starter_code("zh"))
    assert EN_COMMENT in session.reset_code()


def test_session_keeps_edited_code_as_the_learner_left_it(
    course: Course, store: ProgressStore
) -> None:
    session = _session(course, store, "zh")
    edited = session.code() + "z = x.sum()\n"
    session.save_code(edited)
    assert not session.is_starter(edited)
    session.toggle_lang()
    assert session.code() == edited


def _file_code(ws: Workspace) -> str:
    entry = ws.load_manifest().entry(FIRST)
    assert entry is not None
    return split_code(ws.read(entry) or "")


def test_exercise_files_are_written_with_the_starter_of_their_language(
    course: Course, tmp_path: Path
) -> None:
    ws = Workspace(tmp_path / "ex")
    ws.write_course(course, lang="zh")
    assert ZH_COMMENT in _file_code(ws)
    # switching language rewrites an untouched file with the other starter
    report = ws.write_course(course, lang="en")
    assert EN_COMMENT in _file_code(ws) and ZH_COMMENT not in _file_code(ws)
    assert any("first-backward" in path for path in report.updated)
    # code saved in the app that is an untouched starter follows the language too
    ws2 = Workspace(tmp_path / "ex2")
    zh_starter = course.find(FIRST)[1].starter_for("zh")  # type: ignore[union-attr]
    ws2.write_course(course, lang="en", saved_code={FIRST: zh_starter}.get)
    assert EN_COMMENT in _file_code(ws2)
    # while code the learner wrote in the app is kept as written
    ws3 = Workspace(tmp_path / "ex3")
    ws3.write_course(course, lang="en", saved_code={FIRST: zh_starter + "y = 1\n"}.get)
    assert _file_code(ws3) == zh_starter + "y = 1\n"

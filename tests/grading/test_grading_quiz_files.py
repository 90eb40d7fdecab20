"""`tutor grade` of quiz files: the numbers a student wrote are read against the choices
their file lists (the order that student saw), never against one order for the class."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tutor.course import load_course
from tutor.course.models import Course, QuizStep
from tutor.course.quiz import choice_order
from tutor.grading.batch import discover, grade_submissions
from tutor.grading.expected import ExpectedCache
from tutor.workspace import Workspace

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"
QUIZ = "mini-basics/who-tracks"  # one right answer of two
MANY = "mini-graph/what-stops-tracking"  # two right answers of three


class NoRuns:
    def run(self, code: str, **_: Any) -> Any:
        raise AssertionError("a quiz file is data: nothing runs")

    def devices(self) -> list[str]:
        return ["cpu"]


@pytest.fixture(scope="module")
def course() -> Course:
    return load_course(MINI)


def hand_in(root: Path, course: Course, student: str, answers: dict[str, str]) -> None:
    """What a student hands in: their `tutor start` files (their own order), answered."""
    written = Workspace(root / "written" / student)
    written.write_course(course, lang="zh" if student == "mei" else "en", learner=student)
    for ref, answer in answers.items():
        entry = written.load_manifest().entry(ref)
        assert entry is not None
        text = written.path_of(entry).read_text(encoding="utf-8")
        folder = root / "class" / student
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{ref.split('/')[1]}.py").write_text(
            text.replace("ANSWER = []\n", answer), encoding="utf-8")


def right(course: Course, ref: str, student: str) -> str:
    step = course.find(ref)[1]
    assert isinstance(step, QuizStep)
    order = choice_order(student, ref, len(step.choices))
    return "ANSWER = [" + ", ".join(str(n) for n, i in enumerate(order, 1)
                                    if step.choices[i].correct) + "]\n"


def test_each_students_numbers_are_their_own(tmp_path: Path, course: Course) -> None:
    # "ana" sees the right answer first, "eli" second (choice_order of their names)
    assert choice_order("ana", QUIZ, 2) != choice_order("eli", QUIZ, 2)
    for student in ("ana", "eli"):
        hand_in(tmp_path, course, student, {QUIZ: "ANSWER = [1]\n"})
    hand_in(tmp_path, course, "mei", {QUIZ: right(course, QUIZ, "mei"),
                                      MANY: right(course, MANY, "mei")})
    submissions, unmatched = discover(tmp_path / "class", course)
    assert unmatched == []
    entries = {(e.student, e.exercise): e for e in grade_submissions(
        submissions, runner=NoRuns(), cache=ExpectedCache(disk=False))}
    assert entries[("ana", QUIZ)].status == "pass"
    assert entries[("eli", QUIZ)].status == "fail", "always 1 is not always right"
    assert entries[("mei", QUIZ)].status == "pass", "read in Chinese too"
    many = entries[("mei", MANY)]
    assert many.status == "pass" and many.score == many.max_score == 3
    for entry in entries.values():
        assert sum(t.max_score for t in entry.tests) == entry.max_score
        said = " ".join(t.message for t in entry.tests)
        assert "The right answer" not in said, "summative grading names no right choice"


@pytest.mark.parametrize(("body", "says"), [
    ("ANSWER = [1]\n", "does not list the quiz's choices"),  # the header was dropped
    (None, "no choice picked yet"),
    ("ANSWER = [1, 2]\n", "one right answer"),
    ("ANSWER = [__import__('os').getcwd()]\n", "must be numbers, not code"),
])
def test_a_file_that_cannot_be_read_is_not_gradable_and_says_why(
        tmp_path: Path, course: Course, body: str | None, says: str) -> None:
    hand_in(tmp_path, course, "ana", {QUIZ: "ANSWER = []\n" if body is None else body})
    path = tmp_path / "class" / "ana" / "who-tracks.py"
    if says.startswith("does not list"):
        path.write_text(body or "", encoding="utf-8")
    submissions, _ = discover(tmp_path / "class", course)
    (entry,) = grade_submissions(submissions, runner=NoRuns(), cache=ExpectedCache(disk=False))
    assert entry.status == "not_gradable" and entry.score == 0 and entry.max_score == 1
    assert says in entry.message
    assert sum(t.max_score for t in entry.tests) == entry.max_score

"""The one learning session every face drives: what it grades, diagnoses and records."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from watch_fakes import FIRST, FIX, FakeGrading, NoRunner, fake_explain

from tutor.course.models import Course
from tutor.errors import TutorError
from tutor.learning import LearningSession, NotRunnable, UnknownLesson
from tutor.progress import ProgressStore
from tutor.workspace import HEADER_END


def make(course: Course, store: ProgressStore, **kw: Any) -> LearningSession:
    kw.setdefault("grading", FakeGrading())
    kw.setdefault("diagnose", fake_explain)
    return LearningSession(course, NoRunner(), store, **kw)


def test_submit_grades_and_diagnoses_the_text_as_seen_and_keeps_the_code(
    mini_course: Course, store: ProgressStore
) -> None:
    seen: list[str] = []

    def diagnose(result: Any, code: str) -> list:
        seen.append(code)
        return fake_explain(result, code)

    grading = FakeGrading()
    session = make(mini_course, store, grading=grading, diagnose=diagnose)
    lesson, step = mini_course.find(FIRST)
    body = "import torch\nraise RuntimeError('boom')\n"
    text = f"# header line\n{HEADER_END}\n{body}"
    attempt = session.submit(lesson, step, text, save_as=body)
    assert grading.calls == [(FIRST, text)] and seen == [text], "lines are the learner's"
    assert attempt.diagnoses and attempt.diagnoses[0].line == 3
    assert store.last_code(FIRST) == body and store.attempts(FIRST) == 1
    assert session.ref != FIRST, "submit does not move the learner"


def test_a_pass_is_diagnosed_too(mini_course: Course, store: ProgressStore) -> None:
    session = make(mini_course, store)
    lesson, step = mini_course.find(FIRST)
    attempt = session.submit(lesson, step, step.solution + "# x.data\n")
    # the fake passes only the exact solution; what matters is the diagnosis ran on it
    assert [d.id for d in attempt.diagnoses] == ["data-attribute"]


def test_record_false_grades_without_counting(mini_course: Course, store: ProgressStore):
    session = make(mini_course, store)
    lesson, step = mini_course.find(FIRST)
    attempt = session.submit(lesson, step, step.solution, record=False)
    assert attempt.verdict.passed
    assert store.attempts(FIRST) == 0 and store.passed_steps() == set()
    assert store.last_code(FIRST) is None


def test_a_diagnosis_that_fails_leaves_the_verdict_and_the_record(
    mini_course: Course, store: ProgressStore
) -> None:
    def broken(result: Any, code: str) -> list:
        raise TutorError("the diagnosis catalog is broken")

    session = make(mini_course, store, diagnose=broken)
    session.goto("mini-basics", "first-backward")
    attempt = session.run("import torch\n")
    assert attempt.verdict.status == "fail" and attempt.diagnoses == []
    assert attempt.diagnosis_error is not None
    assert "catalog is broken" in attempt.diagnosis_error.message
    assert store.attempts(FIRST) == 1 and session.last_attempt is attempt


def test_a_cancelled_run_is_neither_diagnosed_nor_recorded(
    mini_course: Course, store: ProgressStore
) -> None:
    cancel = threading.Event()

    class CancelledWhileGrading(FakeGrading):
        def grade_step(self, *args: Any, **kw: Any):  # type: ignore[override]
            cancel.set()
            return super().grade_step(*args, **kw)

    session = make(mini_course, store, grading=CancelledWhileGrading())
    lesson, step = mini_course.find(FIRST)
    attempt = session.submit(lesson, step, "import torch\nraise RuntimeError('x')\n",
                             cancel=cancel)
    assert attempt.cancelled and attempt.diagnoses == []
    assert store.attempts(FIRST) == 0


def test_only_code_steps_can_be_submitted(mini_course: Course, store: ProgressStore) -> None:
    session = make(mini_course, store)
    lesson, step = mini_course.find("mini-basics/intro")
    with pytest.raises(NotRunnable):
        session.submit(lesson, step, "x = 1\n")


def test_hints_of_any_step_by_ref(mini_course: Course, store: ProgressStore) -> None:
    session = make(mini_course, store)
    hints = mini_course.find(FIX)[1].hints
    assert session.reveal_hint(FIX) == hints[0]
    assert session.hints_shown(FIX) == 1 and session.visible_hints(FIX) == [hints[0]]
    assert session.hints_shown() == 0, "the current step is another one"
    assert session.reveal_hint(FIX) == hints[1]
    assert session.reveal_hint(FIX) is None, "all shown"
    assert store.hints_revealed(FIX) == 2
    with pytest.raises(UnknownLesson):
        session.reveal_hint("mini-basics/nope")


def test_asking_for_a_hint_is_one_rule_for_every_face(
    mini_course: Course, store: ProgressStore
) -> None:
    """The app and the shell both ask ``next_hint``: the hints so far, the newest last; once
    all are shown, all of them ``again`` and nothing more unlocked; None without hints."""
    session = make(mini_course, store)
    hints = mini_course.find(FIX)[1].hints
    first = session.next_hint(FIX)
    assert first is not None and (first.shown, first.number, first.total, first.again) == (
        (hints[0],), 1, 2, False)
    second = session.next_hint(FIX)
    assert second is not None and (second.text, second.number, second.again) == (
        hints[1], 2, False)
    again = session.next_hint(FIX)
    assert again is not None and (again.shown, again.number, again.again) == (
        tuple(hints), 2, True)
    assert store.hints_revealed(FIX) == 2
    assert session.next_hint("mini-basics/intro") is None, "a reading has no hints"


def test_a_wrong_answer_is_diagnosed_from_evidence_and_a_right_one_is_not(
    mini_course: Course, store: ProgressStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that ended normally but gave a wrong answer most likely holds a silent bug:
    it gets the instrumented re-run; a right answer pays nothing for one."""
    from tutor.diagnosis import reasoning

    reasoned: list[str] = []

    def from_evidence(code: str, result: Any, runner: Any, *, device: str = "cpu"
                      ) -> tuple[list, None]:
        reasoned.append(code)
        return [], None

    monkeypatch.setattr(reasoning, "diagnose_with_evidence", from_evidence)
    session = LearningSession(mini_course, NoRunner(), store, grading=FakeGrading())
    lesson, step = mini_course.find(FIRST)
    wrong = "import torch\nx = torch.ones(2)\n"
    assert not session.submit(lesson, step, wrong).verdict.passed
    assert reasoned == [wrong]
    assert session.submit(lesson, step, step.solution).verdict.passed
    assert reasoned == [wrong], "a pass is not re-run"

"""Fakes and helpers of the exercise-file tests (imported by conftest.py and the tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tutor.course.models import Lesson
from tutor.diagnosis.models import Diagnosis
from tutor.grading.models import CheckResult, Verdict
from tutor.i18n import T
from tutor.sandbox.models import ErrorInfo, RunResult
from tutor.workspace import HEADER_END, Workspace, split_code

MINI_COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"
FIRST = "mini-basics/first-backward"
QUIZ = "mini-basics/who-tracks"
"""The quiz between FIRST and FIX: its file comes second."""
FIX = "mini-graph/fix-scalar"
FILES = 7
"""Exercise files of the mini course: five code/fix steps, two quizzes."""


def right_body(course: Any, ref: str, learner: str | None) -> str:
    """What a learner who knows the answer writes below the header: the solution of a code
    step, the numbers of the right choices of a quiz in ``learner``'s order."""
    from tutor.course.models import QuizStep
    from tutor.course.quiz import choice_order
    from tutor.workspace import answer_code

    step = course.find(ref)[1]
    if not isinstance(step, QuizStep):
        return str(step.solution)
    order = (choice_order(learner, ref, len(step.choices)) if learner is not None
             else list(range(len(step.choices))))
    return answer_code(p for p, i in enumerate(order) if step.choices[i].correct)


def save(workspace: Workspace, ref: str, body: str) -> Path:
    """Save new code under the file's header, the way an editor would; returns the path."""
    entry = workspace.load_manifest().entry(ref)
    assert entry is not None
    path = workspace.path_of(entry)
    header = path.read_text(encoding="utf-8").partition(HEADER_END + "\n")[0]
    path.write_text(header + HEADER_END + "\n" + body, encoding="utf-8")
    return path



class FakeGrading:
    """``grade_step`` as the session calls it; keeps every call. Quizzes are graded for
    real (no run is involved)."""

    @staticmethod
    def grade_quiz(*args: Any, **kwargs: Any) -> Verdict:
        from tutor.grading import grade_quiz

        return grade_quiz(*args, **kwargs)

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def grade_step(
        self, lesson: Lesson, step: Any, code: str, *, runner: Any, device: str = "cpu"
    ) -> Verdict:
        ref = f"{lesson.id}/{step.id}"
        self.calls.append((ref, code))
        body = split_code(code)
        ok = body.strip() == step.solution.strip()
        error = None
        if "raise" in body:
            error = ErrorInfo(type="RuntimeError", message="boom", line=3)
        run = RunResult(
            outcome="error" if error else "ok",
            device="cpu",
            stdout="printed by learner\n" if "print(" in body else "",
            error=error,
        )
        check = CheckResult(
            name="value:x.grad",
            label=T("x.grad", "x.grad"),
            status="pass" if ok else "fail",
            points=1.0 if ok else 0.0,
            max_points=1.0,
            message=T("matches", "一致") if ok else T("x.grad is None", "x.grad 是 None"),
            output=None if ok else "got None\nexpected tensor([1., 1.])",
        )
        return Verdict(
            step=ref,
            status="pass" if ok else ("error" if error else "fail"),
            score=check.points,
            max_score=1.0,
            checks=[check],
            run=run,
        )


class NoRunner:
    """The fake grading runs nothing itself; a run asked of this is a test bug."""

    def run(self, code: str, **_: Any) -> RunResult:
        raise AssertionError("the fake grading does not run code")

    def devices(self) -> list[str]:
        return ["cpu"]


def fake_explain(result: RunResult, code: str) -> list[Diagnosis]:
    diagnoses = []
    if result.error is not None:
        diagnoses.append(
            Diagnosis(
                id="generic",
                severity="error",
                title=T("RuntimeError: boom", "RuntimeError：boom"),
                explanation=T("Something exploded.", "出了问题。"),
                fix=T("Do not raise.", "不要抛出异常。"),
                line=result.error.line,
                generic=True,
            )
        )
    if ".data" in code:  # a pitfall: said whether the run passed or not
        diagnoses.append(
            Diagnosis(
                id="data-attribute",
                severity="warning",
                title=T("`.data` hides changes from autograd", "`.data` 会对自动求导隐藏修改"),
                explanation=T("Use detach().", "请使用 detach()。"),
                fix=T("Write x.detach() instead of x.data.", "用 x.detach() 代替 x.data。"),
            )
        )
    return diagnoses

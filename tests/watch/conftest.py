"""Fixtures for exercise-file tests: the mini course, a workspace, a store, a fake grader.

The fake grader stands in for ``tutor.grading.grade_step`` where grading is not the point
(the watch loop, key handling): it passes exactly the step's reference solution, fails
anything else with one failing check, and reports a run with the learner's printed output
and an error when the code contains ``raise``.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from tutor.cli.watch_cmd import WatchSession
from tutor.course import load_course
from tutor.course.models import CodeStep, Course, FixStep, Lesson
from tutor.diagnosis.models import Diagnosis
from tutor.grading.models import CheckResult, Verdict
from tutor.i18n import T
from tutor.progress import ProgressStore
from tutor.sandbox.models import ErrorInfo, RunResult
from tutor.workspace import Workspace, split_code

MINI_COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"


@pytest.fixture(scope="session")
def mini_course_dir() -> Path:
    return MINI_COURSE


@pytest.fixture(scope="session")
def mini_course() -> Course:
    return load_course(MINI_COURSE)


@pytest.fixture
def store(tmp_path: Path) -> ProgressStore:
    s = ProgressStore.default(tmp_path / "data")
    yield s
    s.close()


@pytest.fixture
def workspace(tmp_path: Path, mini_course: Course) -> Workspace:
    ws = Workspace(tmp_path / "exercises")
    ws.write_course(mini_course, lang="en", lessons_dir=MINI_COURSE)
    return ws


class FakeGrader:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def __call__(self, lesson: Lesson, step: CodeStep | FixStep, code: str) -> Verdict:
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


def fake_explain(result: RunResult, code: str) -> list[Diagnosis]:
    if result.error is None:
        return []
    return [
        Diagnosis(
            id="generic",
            severity="error",
            title=T("RuntimeError: boom", "RuntimeError：boom"),
            explanation=T("Something exploded.", "出了问题。"),
            fix=T("Do not raise.", "不要抛出异常。"),
            line=result.error.line,
            generic=True,
        )
    ]


@pytest.fixture
def console() -> Console:
    return Console(file=io.StringIO(), width=120, color_system=None, soft_wrap=True)


@pytest.fixture
def fake_grader() -> FakeGrader:
    return FakeGrader()


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
def make_session(
    workspace: Workspace,
    mini_course: Course,
    store: ProgressStore,
    console: Console,
    fake_grader: FakeGrader,
) -> Callable[..., WatchSession]:
    """``make_session(lang="en")``: a watch session over the mini-course workspace."""

    def make(lang: str = "en") -> WatchSession:
        return WatchSession(
            workspace,
            mini_course,
            grader=fake_grader,
            store=store,
            console=console,
            lang=lang,  # type: ignore[arg-type]
            explain=fake_explain,
        )

    return make

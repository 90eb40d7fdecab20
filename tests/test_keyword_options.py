"""``**options: Unpack[TypedDict]`` APIs refuse keywords they do not declare at run time too
(a misspelled option was silently ignored: only the type checker saw it)."""

from __future__ import annotations

import pytest

from tutor.course import load_course
from tutor.course.models import CodeStep
from tutor.grading import grade_step
from tutor.sandbox import Sandbox


def test_a_run_refuses_an_unknown_option(sandbox: Sandbox) -> None:
    with pytest.raises(TypeError, match="timout"):
        sandbox.run("print(1)", timout=3)  # type: ignore[call-arg]


def test_grading_refuses_an_unknown_option_and_wants_a_runner(sandbox: Sandbox) -> None:
    course = load_course()
    lesson, step = next((lesson, step) for lesson in course.lessons for step in lesson.steps
                        if isinstance(step, CodeStep))
    with pytest.raises(TypeError, match="devcie"):
        grade_step(lesson, step, step.solution, runner=sandbox, devcie="cpu")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="runner"):
        grade_step(lesson, step, step.solution)  # type: ignore[call-arg]

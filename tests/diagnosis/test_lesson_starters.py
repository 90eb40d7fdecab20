"""The bundled course's fix-the-bug starters are the mistakes the tutor teaches: every one
that raises must get a specific diagnosis, not the generic one."""

from __future__ import annotations

import pytest

from tutor.diagnosis import explain
from tutor.sandbox import Sandbox

loader = pytest.importorskip("tutor.course.loader")
FIX_STEPS = [
    (lesson, step)
    for lesson in loader.load_course().lessons
    for step in lesson.steps
    if step.kind == "fix"
]


@pytest.mark.parametrize(("lesson", "step"), FIX_STEPS,
                         ids=[f"{lesson.id}/{step.id}" for lesson, step in FIX_STEPS])
def test_a_raising_starter_gets_a_specific_diagnosis(lesson, step, sandbox: Sandbox) -> None:
    result = sandbox.run(step.starter)
    if result.error is None:
        pytest.skip("this starter runs; its bug shows in the checks, not as an error")
    diagnoses = explain(result, step.starter)
    assert diagnoses and not diagnoses[0].generic, (result.error.type, result.error.message)

"""Dynamic lesson lint: every step must be gradable with its own reference answers.

``tutor lint`` calls :func:`verify_lesson` for each lesson; each problem names the step and
the field to point at (``solution``, ``starter``, ``code``, ``cross_check``, ``choices``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from tutor.course.models import AnswerStep, CodeStep, FixStep, Lesson, QuizStep
from tutor.grading.answers import AnswerSyntaxError, parse_answer
from tutor.grading.compare import compare
from tutor.grading.expected import ExpectedCache
from tutor.grading.models import Verdict
from tutor.grading.verdicts import compare_answer, grade_step

if TYPE_CHECKING:
    from tutor.sandbox.runner import Runner


class SelfCheckProblem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    step_id: str
    field: str
    message: str


def _failures(verdict: Verdict) -> str:
    """The failing checks of a verdict, one clause each (authors read English)."""
    parts = [f"{c.name}: {c.message.en}" for c in verdict.checks if c.status != "pass"]
    if not parts and verdict.message is not None:
        parts = [verdict.message.en]
    return "; ".join(parts) or verdict.status


def _runnable(
    lesson: Lesson, step: CodeStep | FixStep, runner: Runner, device: str, cache: ExpectedCache
) -> list[SelfCheckProblem]:
    problems: list[SelfCheckProblem] = []
    solution = grade_step(lesson, step, step.solution, runner=runner, device=device, cache=cache)
    if not solution.passed:
        problems.append(
            SelfCheckProblem(
                step_id=step.id,
                field="solution",
                message=f"the reference solution does not pass its own checks ({solution.status}): "
                + _failures(solution),
            )
        )
    if isinstance(step, FixStep):
        problems += _passing_starters(lesson, step, runner, device, cache)
    return problems


def _passing_starters(
    lesson: Lesson, step: FixStep, runner: Runner, device: str, cache: ExpectedCache
) -> list[SelfCheckProblem]:
    """A fix-the-bug starter must fail in every language it is written in: a translated
    starter is graded on its own, so a zh version that lost the bug is caught too."""
    versions = {"en": step.starters.en, "zh": step.starters.zh}
    translated = versions["en"] != versions["zh"]
    problems: list[SelfCheckProblem] = []
    for lang, code in versions.items():
        if lang == "zh" and not translated:
            break
        verdict = grade_step(lesson, step, code, runner=runner, device=device, cache=cache)
        if verdict.passed:
            which = "the buggy starter"
            if translated:
                which = f"the {lang} version of the buggy starter"
            problems.append(
                SelfCheckProblem(
                    step_id=step.id,
                    field=f"starter.{lang}" if translated else "starter",
                    message=f"{which} already passes every check; a fix-the-bug step's "
                    "starter must raise or fail a check",
                )
            )
    return problems


def _answer(
    step: AnswerStep, runner: Runner, device: str, cache: ExpectedCache
) -> list[SelfCheckProblem]:
    run = cache.solution_run(runner, step.code, [step.expr], device)
    if run.outcome != "ok":
        detail = f"{run.error.type}: {run.error.message}" if run.error else run.outcome
        return [
            SelfCheckProblem(
                step_id=step.id,
                field="code",
                message=f"the step's code does not run cleanly ({detail})",
            )
        ]
    probe = run.probe(step.expr)
    if probe is None or probe.value is None:
        detail = f"{probe.error.type}: {probe.error.message}" if probe and probe.error else ""
        return [
            SelfCheckProblem(
                step_id=step.id,
                field="code",
                message=f"`{step.expr}` cannot be evaluated after the code ran {detail}".rstrip(),
            )
        ]
    if step.cross_check is None:
        return []
    if isinstance(step.cross_check, str):
        try:
            answer = parse_answer(step.cross_check)
        except AnswerSyntaxError as error:
            return [SelfCheckProblem(step_id=step.id, field="cross_check", message=str(error))]
        ok, message, _ = compare_answer(step.expr, answer, probe.value, step.rtol, step.atol)
    else:
        result = compare(
            step.expr, probe.value, step.cross_check, rtol=step.rtol, atol=step.atol, literal=True
        )
        ok, message = result.ok, result.message
    if ok:
        return []
    return [
        SelfCheckProblem(
            step_id=step.id,
            field="cross_check",
            message=f"cross_check disagrees with torch: {message.en}",
        )
    ]


def _quiz(step: QuizStep) -> list[SelfCheckProblem]:
    correct = sum(1 for choice in step.choices if choice.correct)
    if correct == 0:
        return [
            SelfCheckProblem(
                step_id=step.id, field="choices", message="no choice is marked correct"
            )
        ]
    if correct > 1 and not step.multiple:
        return [
            SelfCheckProblem(
                step_id=step.id,
                field="choices",
                message=f"{correct} choices are marked correct; set "
                "`multiple: true` or mark exactly one",
            )
        ]
    return []


def verify_lesson(
    lesson: Lesson, *, runner: Runner, device: str = "cpu", cache: ExpectedCache | None = None
) -> list[SelfCheckProblem]:
    """Every problem found by running the lesson's reference answers, in step order."""
    cache = cache if cache is not None else ExpectedCache(disk=False)
    problems: list[SelfCheckProblem] = []
    for step in lesson.steps:
        if isinstance(step, (CodeStep, FixStep)):
            problems += _runnable(lesson, step, runner, device, cache)
        elif isinstance(step, AnswerStep):
            problems += _answer(step, runner, device, cache)
        elif isinstance(step, QuizStep):
            problems += _quiz(step)
    return problems

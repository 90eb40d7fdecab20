"""Checks -> verdicts; truth from running reference solutions; batch grading; reports.

Public API::

    grade_step(lesson, step: CodeStep | FixStep, code, *, runner, device="cpu", cache=None)
        -> Verdict                       # runs the code once with every probe the checks need
    grade_run(lesson, step, code, run, expected) -> Verdict   # grade a run made elsewhere
    expected_run(step, *, runner, device="cpu", cache=None) -> RunResult   # the truth
    probes_for(step.checks) -> list[str]                    # what a run must probe
    grade_answer(lesson, step: AnswerStep, typed, *, runner, device="cpu", cache=None) -> Verdict
    grade_quiz(lesson, step: QuizStep, selected: Sequence[int]) -> Verdict
    parse_answer(typed) -> ParsedAnswer  # safe, no eval; raises AnswerSyntaxError
    ExpectedCache(directory: Path | None)  # on-disk cache of solution runs

Batch grading lives in :mod:`tutor.grading.batch`, report writers in
:mod:`tutor.grading.reports`, the lesson self-check in :mod:`tutor.grading.selfcheck`.
"""

from tutor.grading.answers import AnswerSyntaxError, ParsedAnswer, parse_answer
from tutor.grading.checks import probes_for
from tutor.grading.expected import ExpectedCache
from tutor.grading.models import CheckResult, CheckStatus, Verdict, VerdictStatus
from tutor.grading.verdicts import (
    QuizSelectionError,
    expected_run,
    grade_answer,
    grade_quiz,
    grade_run,
    grade_step,
)

__all__ = [
    "AnswerSyntaxError",
    "CheckResult",
    "CheckStatus",
    "ExpectedCache",
    "ParsedAnswer",
    "QuizSelectionError",
    "Verdict",
    "VerdictStatus",
    "expected_run",
    "grade_answer",
    "grade_quiz",
    "grade_run",
    "grade_step",
    "parse_answer",
    "probes_for",
]

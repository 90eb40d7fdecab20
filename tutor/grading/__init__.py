"""Checks -> verdicts; truth from running reference solutions; batch grading; reports.

Public API::

    # options (GradingOptions): runner=..., device="cpu", cache=None (the truth's cache)
    grade_step(lesson, step: CodeStep | FixStep, code, **options)
        -> Verdict                       # runs the code once with every probe the checks need
    grade_run(lesson, step, code, run, expected) -> Verdict   # grade a run made elsewhere
    expected_run(step, **options) -> RunResult              # the truth
    probes_for(step.checks) -> list[str]                    # what a run must probe
    grade_answer(lesson, step: AnswerStep, typed, **options) -> Verdict
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
    GradingOptions,
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
    "GradingOptions",
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

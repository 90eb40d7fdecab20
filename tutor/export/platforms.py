"""Gradescope's and PrairieLearn's results formats, built from graded entries.

Gradescope: https://gradescope-autograders.readthedocs.io/en/latest/specs/ (``results.json``
in ``/autograder/results``: ``score``, ``output``, ``tests`` with ``name``, ``score``,
``max_score``, ``status`` passed/failed, ``output``, ``visibility``).
PrairieLearn: https://prairielearn.readthedocs.io/en/latest/externalGrading/ (``results.json``
in ``/grade/results``: ``gradable``, ``score`` in [0, 1], ``message``, ``output``,
``format_errors``, ``tests`` with ``name``, ``description``, ``points``, ``max_points``,
``message``, ``output``).

A submission a student did not hand in (an expected file is missing) still lists every check
of that exercise at 0 points, so the tests always add up to the maximum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tutor.export.messages import msg
from tutor.grading import feedback
from tutor.grading.reports import SubmissionEntry
from tutor.i18n import Lang

Visibility = Literal["hidden", "after_due_date", "after_published", "visible"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GradescopeTest(_Model):
    name: str
    score: float
    max_score: float
    status: Literal["passed", "failed"]
    output: str = ""
    visibility: Visibility = "visible"


class GradescopeResults(_Model):
    score: float
    output: str = ""
    execution_time: float | None = Field(None, description="Seconds.")
    visibility: Visibility = "visible"
    stdout_visibility: Visibility = "hidden"
    tests: list[GradescopeTest] = Field(default_factory=list)


class PrairieLearnTest(_Model):
    name: str
    description: str = ""
    points: float
    max_points: float
    message: str = ""
    output: str = ""


class PrairieLearnResults(_Model):
    gradable: bool = True
    score: float = Field(0.0, ge=0.0, le=1.0, description="Fraction of the points.")
    message: str = ""
    output: str = ""
    format_errors: list[str] = Field(default_factory=list)
    tests: list[PrairieLearnTest] = Field(default_factory=list)


@dataclass(frozen=True)
class Missing:
    """An exercise the submission did not hand in: its checks, each scoring 0."""

    exercise: str
    expected_files: list[str]
    checks: list[tuple[str, float]]
    """(label, max points) of every check."""


def student_output(output: str | None, passed: bool) -> str:
    """A check's detail as a student may see it: on a check that fails, the expected value
    is cut (it is the answer; summative grading never shows it), the rest (what the code
    gave, its printed output, torch's error) kept."""
    if not output or passed:
        return output or ""
    expected = feedback.msg("detail.expected")
    labels = tuple(f"{label}{colon}" for label in (expected.en, expected.zh)
                   for colon in (":", "："))
    kept = []
    for line in output.splitlines():
        if line.startswith(labels):
            break
        kept.append(line)
    return "\n".join(kept)


def _detail(message: str, output: str | None, passed: bool) -> str:
    return "\n".join(part for part in (message, student_output(output, passed)) if part)


def _overall(entries: Sequence[SubmissionEntry], missing: Sequence[Missing], lang: Lang) -> str:
    lines = []
    for entry in entries:
        line = msg("platform.summary", exercise=entry.exercise, score=entry.score,
                                       max_score=entry.max_score).get(lang)
        lines.append(f"{line}  {entry.message}".rstrip())
    for item in missing:
        total = sum(points for _, points in item.checks)
        said = msg("platform.summary", exercise=item.exercise, score=0, max_score=total)
        files = msg("platform.missing", files=" / ".join(item.expected_files))
        lines.append(f"{said.get(lang)}  {files.get(lang)}")
    return "\n".join(lines)


def gradescope_results(
    entries: Sequence[SubmissionEntry], missing: Sequence[Missing] = (), *, lang: Lang = "en",
    visibility: Visibility = "visible", execution_time: float | None = None,
) -> GradescopeResults:
    tests = [
        GradescopeTest(
            name=f"{entry.exercise}: {test.label}", score=test.score, max_score=test.max_score,
            status="passed" if test.status == "pass" else "failed",
            output=_detail(test.message, test.output, test.status == "pass"),
            visibility=visibility,
        )
        for entry in entries for test in entry.tests
    ]
    for item in missing:
        note = msg("platform.missing", files=" / ".join(item.expected_files)).get(lang)
        tests += [GradescopeTest(name=f"{item.exercise}: {label}", score=0.0, max_score=points,
                                 status="failed", output=note, visibility=visibility)
                  for label, points in item.checks]
    return GradescopeResults(
        score=round(sum(test.score for test in tests), 6), output=_overall(entries, missing, lang),
        execution_time=execution_time, visibility=visibility, tests=tests,
    )


def prairielearn_results(
    entries: Sequence[SubmissionEntry], missing: Sequence[Missing] = (), *, lang: Lang = "en",
) -> PrairieLearnResults:
    """Not gradable (no attempt is charged) when a file is not valid Python, as PrairieLearn
    does for a syntax error; otherwise the fraction of every check's points."""
    broken = [e for e in entries if e.status == "not_gradable"]
    if broken:
        errors = [msg("platform.not_gradable", exercise=e.exercise, message=e.message).get(lang)
                  for e in broken]
        return PrairieLearnResults(gradable=False, message="\n".join(errors),
                                   format_errors=errors)
    tests = [
        PrairieLearnTest(name=f"{entry.exercise}: {test.name}", description=test.label,
                         points=test.score, max_points=test.max_score, message=test.message,
                         output=student_output(test.output, test.status == "pass"))
        for entry in entries for test in entry.tests
    ]
    for item in missing:
        note = msg("platform.missing", files=" / ".join(item.expected_files)).get(lang)
        tests += [PrairieLearnTest(name=f"{item.exercise}: {label}", description=label,
                                   points=0.0, max_points=points, message=note)
                  for label, points in item.checks]
    total = sum(test.max_points for test in tests)
    score = sum(test.points for test in tests) / total if total else 0.0
    return PrairieLearnResults(score=round(min(max(score, 0.0), 1.0), 6),
                               message=_overall(entries, missing, lang), tests=tests)


def gradescope_failure(reason: str, *, lang: Lang = "en") -> GradescopeResults:
    """What Gradescope is told when grading itself failed: zero, and why, never a blank."""
    return GradescopeResults(score=0.0, output=msg("platform.crashed", reason=reason).get(lang))


def prairielearn_failure(reason: str, *, lang: Lang = "en") -> PrairieLearnResults:
    """Grading itself failed: not gradable, so the student loses no attempt."""
    text = msg("platform.crashed", reason=reason).get(lang)
    return PrairieLearnResults(gradable=False, message=text, format_errors=[text])

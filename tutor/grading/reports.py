"""Grading reports: the versioned JSON document, JUnit XML and a CSV gradebook.

The JSON format is documented in ``REPORT_FORMAT.md``; it mirrors the fields of Exercism's
results v3 and Gradescope's results.json so a wrapper for either is a few lines.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tutor.errors import TutorError
from tutor.grading.models import CheckStatus, Verdict, VerdictStatus
from tutor.i18n import Lang

REPORT_VERSION: Literal[1] = 1
REPORT_OUTPUT_CAP = 500
"""Characters of a check's output kept in reports (Exercism caps ``output`` at 500)."""


class ReportError(TutorError):
    """A report file cannot be read (for ``--resume``) or written."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TestEntry(_Model):
    """One check of one submission."""

    name: str
    label: str
    status: CheckStatus
    score: float
    max_score: float
    message: str
    output: str | None = None


class SubmissionEntry(_Model):
    """One graded file."""

    student: str
    exercise: str = Field(description="'LESSON/STEP'")
    lesson: str
    step: str
    file: str = Field(description="Path relative to the submissions folder.")
    sha256: str = Field(description="Of the file's bytes; --resume skips an unchanged file.")
    status: VerdictStatus
    score: float
    max_score: float
    message: str = ""
    tests: list[TestEntry] = Field(default_factory=list)
    duration_ms: float = 0.0
    exercise_sha256: str = Field(
        "", description="Of the exercise as graded (checks, solution, hidden inputs): "
        "--resume regrades a file whose exercise changed since.",
    )


class MissingEntry(_Model):
    """An exercise of the batch a student did not submit: 0 of its max score."""

    student: str
    exercise: str = Field(description="'LESSON/STEP'")
    lesson: str
    step: str
    status: Literal["missing"] = "missing"
    score: float = 0.0
    max_score: float


class Summary(_Model):
    submissions: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    not_gradable: int = 0
    missing: int = Field(
        0, description="Exercises a student did not submit; each counts 0 of its max_score."
    )
    score: float = 0.0
    max_score: float = 0.0
    percent: float = Field(
        0.0, description="100 * score / max_score over every student and exercise, a missing "
        "submission counting zero (the gradebook's rule).",
    )


class GradeReport(_Model):
    version: Literal[1] = REPORT_VERSION
    tool: str = "autograd-tutor"
    tool_version: str = ""
    torch_version: str = ""
    device: str = "cpu"
    lang: Lang = "en"
    show_expected: bool = Field(
        False, description="Whether the feedback shows expected values (--show-expected)."
    )
    created: str = Field("", description="ISO 8601 time the grading finished (UTC).")
    summary: Summary = Field(default_factory=Summary)
    submissions: list[SubmissionEntry] = Field(default_factory=list)
    students: list[str] = Field(
        default_factory=list,
        description="Every student folder, also one with no gradable file (it scores 0).",
    )
    unmatched: list[str] = Field(
        default_factory=list, description="Files that matched no exercise, with the reason."
    )
    exercises: list[str] = Field(
        default_factory=list,
        description="The batch's exercises in course order: the order of every report.",
    )
    missing: list[MissingEntry] = Field(
        default_factory=list, description="Each exercise a student did not submit (scored 0)."
    )


def _cap(text: str | None) -> str | None:
    if text is None or len(text) <= REPORT_OUTPUT_CAP:
        return text
    return text[: REPORT_OUTPUT_CAP - 15] + " ... [truncated]"


def entry_from_verdict(
    verdict: Verdict, *, student: str, file: str, sha256: str, lang: Lang,
    duration_ms: float = 0.0, exercise_sha256: str = "",
) -> SubmissionEntry:
    lesson, _, step = verdict.step.partition("/")
    return SubmissionEntry(
        student=student, exercise=verdict.step, lesson=lesson, step=step, file=file,
        sha256=sha256, status=verdict.status, score=verdict.score,
        max_score=verdict.max_score,
        message=verdict.message.get(lang) if verdict.message else "",
        tests=[
            TestEntry(
                name=check.name, label=check.label.get(lang), status=check.status,
                score=check.points, max_score=check.max_points,
                message=check.message.get(lang), output=_cap(check.output_for(lang)),
            )
            for check in verdict.checks
        ],
        duration_ms=round(duration_ms, 3),
        exercise_sha256=exercise_sha256,
    )


def exercise_maxima(
    entries: Sequence[SubmissionEntry], order: Sequence[str] = ()
) -> dict[str, float]:
    """The max score of every exercise someone submitted: those of ``order`` (the course's)
    first, in that order, then any other in first-seen order."""
    maxima: dict[str, float] = {}
    for entry in entries:
        maxima[entry.exercise] = max(maxima.get(entry.exercise, 0.0), entry.max_score)
    ranked = [ref for ref in order if ref in maxima]
    ranked += [ref for ref in maxima if ref not in ranked]
    return {ref: maxima[ref] for ref in ranked}


def roster(entries: Sequence[SubmissionEntry], students: Iterable[str] = ()) -> list[str]:
    """Every student, sorted: those named (folders, even empty ones) and those who submitted."""
    return sorted(set(students) | {entry.student for entry in entries})


def missing_pairs(
    entries: Sequence[SubmissionEntry], students: Iterable[str] = (), order: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """(student, exercise) for each exercise of the batch a student did not submit.

    The one rule for totals: the table, the summary, the CSV and the JSON all count such a
    pair as 0 of the exercise's max score, as a gradebook does."""
    have = {(entry.student, entry.exercise) for entry in entries}
    return [
        (student, exercise)
        for student in roster(entries, students)
        for exercise in exercise_maxima(entries, order)
        if (student, exercise) not in have
    ]


def summarize(entries: Sequence[SubmissionEntry], students: Iterable[str] = ()) -> Summary:
    """Counts and the total score; ``students`` adds folders with nothing graded."""
    maxima = exercise_maxima(entries)
    missing = missing_pairs(entries, students)
    score = round(sum(e.score for e in entries), 6)
    max_score = round(
        sum(e.max_score for e in entries) + sum(maxima[x] for _, x in missing), 6
    )
    return Summary(
        submissions=len(entries),
        passed=sum(e.status == "pass" for e in entries),
        failed=sum(e.status == "fail" for e in entries),
        errors=sum(e.status == "error" for e in entries),
        not_gradable=sum(e.status == "not_gradable" for e in entries),
        missing=len(missing),
        score=score,
        max_score=max_score,
        percent=round(100.0 * score / max_score, 2) if max_score else 0.0,
    )


def ordered(
    entries: Sequence[SubmissionEntry], order: Sequence[str] = ()
) -> list[SubmissionEntry]:
    """Entries by student, then in course order (``order``), then by file: the order of the
    JSON, the JUnit XML and the CSV alike."""
    rank = {ref: i for i, ref in enumerate(order)}
    return sorted(entries, key=lambda e: (e.student, rank.get(e.exercise, len(rank)),
                                          e.exercise, e.file))


def build_report(
    entries: Sequence[SubmissionEntry], *, students: Iterable[str] = (),
    order: Sequence[str] = (), **meta: object,
) -> GradeReport:
    """The report of a batch: entries in course order, every missing submission an entry,
    the summary by the one rule for totals. ``meta``: the header fields (tool_version...)."""
    students = list(students)
    entries = ordered(entries, order)
    maxima = exercise_maxima(entries, order)
    missing = [
        MissingEntry(student=student, exercise=exercise, lesson=exercise.partition("/")[0],
                     step=exercise.partition("/")[2], max_score=maxima[exercise])
        for student, exercise in missing_pairs(entries, students, order)
    ]
    return GradeReport.model_validate({
        **meta, "summary": summarize(entries, students), "submissions": entries,
        "students": students, "exercises": list(maxima), "missing": missing,
    })


def _umask() -> int:
    """The process's umask (read by setting it, as POSIX offers no other way)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_atomic(path: Path, data: str) -> None:
    """Write through a temporary file so an interrupted run never leaves half a report. The
    file gets the mode the umask gives a new file (mkstemp's own is 0600), and the folder
    must exist: a mistyped path is an error, not a new tree of folders."""
    path = Path(path)
    if not path.parent.is_dir():
        raise ReportError(f"cannot write {path}: the folder {path.parent} does not exist",
                          hint="create the folder first, or give another path")
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            os.fchmod(fd, 0o666 & ~_umask())
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise ReportError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_json(report: GradeReport, path: Path) -> None:
    _write_atomic(path, report.model_dump_json(indent=2) + "\n")


def load_json(path: Path) -> GradeReport:
    """A report written by :func:`write_json` (for ``--resume``)."""
    try:
        return GradeReport.model_validate_json(Path(path).read_bytes())
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ReportError(
            f"{path} is not a tutor grading report (version {REPORT_VERSION}): "
            f"{where}: {first['msg']}",
            hint="write a fresh one without --resume, or point --json at another file",
        ) from None


def _junit_text(entry: SubmissionEntry) -> str:
    lines = [entry.message] if entry.message else []
    for test in entry.tests:
        lines.append(
            f"[{test.status}] {test.name} ({test.score:g}/{test.max_score:g}): {test.message}"
        )
        if test.output and test.status != "pass":
            lines += ["    " + line for line in test.output.splitlines()]
    return "\n".join(lines)


_XML_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot hold at all, not even escaped (control characters, lone
surrogates, U+FFFE/U+FFFF)."""


def xml_safe(text: str) -> str:
    """``text`` without the characters XML cannot hold, each shown as ``\\xNN``."""
    return _XML_ILLEGAL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _clean_tree(root: ET.Element) -> None:
    for node in root.iter():
        node.text = xml_safe(node.text) if node.text else node.text
        node.tail = xml_safe(node.tail) if node.tail else node.tail
        for key, value in list(node.attrib.items()):
            node.set(key, xml_safe(value))


def junit_xml(report: GradeReport) -> str:
    """JUnit XML: a test suite per student (folders with nothing gradable included), a test
    case per exercise of the batch in course order; a missing submission is a failed case
    scoring 0, the one rule for totals (:func:`missing_pairs`). Whatever a submission made
    its messages say, the document stays well-formed."""
    root = ET.Element("testsuites", name="autograd-tutor")
    order = report.exercises
    rank = {ref: i for i, ref in enumerate(order)}
    students: dict[str, list[SubmissionEntry | tuple[str, float]]] = {
        student: [] for student in roster(report.submissions, report.students)
    }
    for entry in report.submissions:
        students[entry.student].append(entry)
    maxima = exercise_maxima(report.submissions, order)
    for student, exercise in missing_pairs(report.submissions, report.students, order):
        students[student].append((exercise, maxima[exercise]))
    totals = {"tests": 0, "failures": 0, "errors": 0}

    def position(item: SubmissionEntry | tuple[str, float]) -> tuple[int, str]:
        ref = item.exercise if isinstance(item, SubmissionEntry) else item[0]
        return rank.get(ref, len(rank)), ref

    for student, items in students.items():
        items.sort(key=position)
        entries = [item for item in items if isinstance(item, SubmissionEntry)]
        missing = len(items) - len(entries)
        failures = sum(e.status == "fail" for e in entries) + missing
        errors = sum(e.status in ("error", "not_gradable") for e in entries)
        suite = ET.SubElement(
            root, "testsuite", name=student, tests=str(len(items)),
            failures=str(failures), errors=str(errors),
            time=f"{sum(e.duration_ms for e in entries) / 1000:.3f}",
        )
        totals["tests"] += len(items)
        totals["failures"] += failures
        totals["errors"] += errors
        for item in items:
            if not isinstance(item, SubmissionEntry):
                exercise, max_score = item
                case = ET.SubElement(suite, "testcase", classname=student, name=exercise,
                                     time="0.000")
                props = ET.SubElement(case, "properties")
                ET.SubElement(props, "property", name="score", value="0")
                ET.SubElement(props, "property", name="max_score", value=f"{max_score:g}")
                ET.SubElement(case, "failure", message="not submitted", type="missing").text = (
                    f"{exercise}: no submission (scored 0 of {max_score:g})")
                continue
            entry = item
            case = ET.SubElement(
                suite, "testcase", classname=student, name=entry.exercise,
                file=entry.file, time=f"{entry.duration_ms / 1000:.3f}",
            )
            props = ET.SubElement(case, "properties")
            ET.SubElement(props, "property", name="score", value=f"{entry.score:g}")
            ET.SubElement(props, "property", name="max_score", value=f"{entry.max_score:g}")
            if entry.status != "pass":
                tag = "failure" if entry.status == "fail" else "error"
                node = ET.SubElement(case, tag, message=entry.message or entry.status,
                                     type=entry.status)
                node.text = _junit_text(entry)
            else:
                ET.SubElement(case, "system-out").text = _junit_text(entry)
    for key, value in totals.items():
        root.set(key, str(value))
    _clean_tree(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def write_junit(report: GradeReport, path: Path) -> None:
    _write_atomic(path, junit_xml(report) + "\n")


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""A cell starting with one of these is a formula to a spreadsheet (OWASP's CSV injection)."""
CSV_BOM = "\ufeff"
"""Written first, so that Excel reads the file as UTF-8 (张伟, not å¼ ä¼Ÿ)."""


def csv_cell(text: str) -> str:
    """A cell a spreadsheet shows as text: a leading ``'`` neutralises a formula."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def gradebook_csv(report: GradeReport, exercises: list[str] | None = None) -> str:
    """A row per student, a column per exercise (its score), then total, max and percent.

    Every row is a student: each exercise's max score is in its column's name
    (``seed/nonscalar (max 5)``). ``exercises`` orders the columns (default: the report's
    course order); a missing submission is 0, as it counts in the total
    (:func:`missing_pairs`); a student with nothing graded is a row of zeros."""
    max_of = exercise_maxima(report.submissions, exercises or report.exercises)
    columns = list(max_of)
    scores: dict[str, dict[str, float]] = {}
    for entry in report.submissions:
        scores.setdefault(entry.student, {})[entry.exercise] = entry.score
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")  # RFC 4180: a \r in a cell is quoted
    writer.writerow([
        "student", *(csv_cell(f"{c} (max {max_of[c]:g})") for c in columns),
        "total", "max_total", "percent",
    ])
    max_total = sum(max_of.values())
    for student in roster(report.submissions, report.students):
        row = scores.get(student, {})
        total = sum(row.values())
        percent = 100.0 * total / max_total if max_total else 0.0
        writer.writerow([
            csv_cell(student), *(f"{row.get(c, 0.0):g}" for c in columns),
            f"{total:g}", f"{max_total:g}", f"{percent:.1f}",
        ])
    return buffer.getvalue()


def write_csv(report: GradeReport, path: Path, exercises: list[str] | None = None) -> None:
    _write_atomic(path, CSV_BOM + gradebook_csv(report, exercises))

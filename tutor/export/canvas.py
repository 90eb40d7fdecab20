"""A gradebook CSV that Canvas imports (Grades → Import).

Canvas matches a row to a student by its ``ID``, ``SIS User ID`` or ``SIS Login ID`` column,
and reads ``Student`` and ``Section`` too; each further column is an assignment (a new name
creates one), and a ``Points Possible`` row right under the header gives each maximum.
Student folders are usually named by login, so a folder's name fills ``SIS Login ID`` unless
``--id-column`` says otherwise; ``--roster`` (Canvas's own gradebook export) fills the other
identity columns from it. A missing submission is a 0, the one rule of the tutor's totals.
Written with a BOM so Excel keeps 张伟 as it is.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Literal

from tutor.errors import TutorError
from tutor.export.feedback import ordered_exercises
from tutor.grading.reports import GradeReport, exercise_maxima, roster
from tutor.i18n import T

IdColumn = Literal["SIS Login ID", "SIS User ID", "ID", "Student"]
IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_ROW = "Points Possible"


def read_roster(path: Path, id_column: IdColumn) -> dict[str, dict[str, str]]:
    """Canvas's gradebook export, by ``id_column``; rows without that value are skipped."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise TutorError(T(f"{path}: cannot be read ({exc.strerror})",
                           f"{path}：无法读取（{exc.strerror}）")) from None
    rows = list(csv.DictReader(io.StringIO(text)))
    if not rows or id_column not in rows[0]:
        raise TutorError(
            T(f"{path}: no {id_column!r} column; give Canvas's own gradebook export",
              f"{path}：没有 {id_column!r} 列；请使用 Canvas 导出的成绩册"),
            hint=T("Canvas: Grades → Export → Export Entire Gradebook",
                   "Canvas：成绩 → 导出 → 导出整个成绩册"))
    return {row[id_column].strip(): row for row in rows
            if row.get(id_column, "").strip() and row.get("Student", "") != POINTS_ROW}


def canvas_csv(
    report: GradeReport, course_order: list[str], *, id_column: IdColumn = "SIS Login ID",
    roster_rows: dict[str, dict[str, str]] | None = None, prefix: str = "autograd: ",
) -> str:
    exercises = ordered_exercises(report, course_order)
    maxima = exercise_maxima(report.submissions)
    scores = {(e.student, e.exercise): e.score for e in report.submissions}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([*IDENTITY, *(f"{prefix}{x}" for x in exercises)])
    writer.writerow([POINTS_ROW, "", "", "", "", *(f"{maxima[x]:g}" for x in exercises)])
    for student in roster(report.submissions, report.students):
        known = (roster_rows or {}).get(student, {})
        identity = {column: known.get(column, "") for column in IDENTITY}
        identity[id_column] = student
        if not identity["Student"]:
            identity["Student"] = student
        writer.writerow([*(identity[c] for c in IDENTITY),
                         *(f"{scores.get((student, x), 0.0):g}" for x in exercises)])
    return buffer.getvalue()


def write_canvas(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8-sig", newline="")

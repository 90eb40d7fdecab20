"""A Markdown feedback file per student, from a grading report, in the report's language.

The feedback was written in ``report.lang`` when the class was graded; the headings and
words around it follow the same language, so a teacher can hand the file back as it is.
Expected values are never in it beyond what the report itself shows.
"""

from __future__ import annotations

import re
from pathlib import Path

from tutor.export.messages import msg
from tutor.grading.reports import GradeReport, SubmissionEntry, exercise_maxima, roster
from tutor.i18n import Lang

SAFE_NAME = re.compile(r"[^\w.-]+", re.UNICODE)


def _cell(text: str) -> str:
    """One Markdown table cell: pipes escaped, lines joined."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def _fence(text: str) -> str:
    """A code block whose fence no line of ``text`` can close."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _exercise(entry: SubmissionEntry, lang: Lang) -> list[str]:
    head = f"## {entry.exercise} — {entry.score:g} / {entry.max_score:g} · " \
           f"{msg(f'feedback.status.{entry.status}').get(lang)}"
    lines = [head, "", msg("feedback.file", file=entry.file).get(lang)]
    if entry.message:
        lines += ["", entry.message]
    if entry.tests:
        columns = (msg(f"feedback.{key}").get(lang) for key in ("check", "result", "points"))
        lines += ["", f"| {' | '.join(columns)} |", "|---|---|---|"]
        lines += [f"| {_cell(t.label)} | {msg(f'feedback.status.{t.status}').get(lang)} | "
                  f"{t.score:g} / {t.max_score:g} |" for t in entry.tests]
    wrong = [t for t in entry.tests if t.status != "pass"]
    if wrong:
        lines += ["", f"### {msg('feedback.details').get(lang)}"]
        for test in wrong:
            lines += ["", f"- **{test.label}**: {test.message}"]
            if test.output:
                lines += ["", _fence(test.output)]
    elif entry.status == "pass":
        lines += ["", msg("feedback.all_pass").get(lang)]
    return lines


def student_markdown(report: GradeReport, student: str, exercises: list[str]) -> str:
    """``exercises``: the batch's exercises in course order (missing ones count 0)."""
    lang = report.lang
    maxima = exercise_maxima(report.submissions)
    mine = {e.exercise: e for e in report.submissions if e.student == student}
    score = sum(e.score for e in mine.values())
    max_score = sum(maxima.get(x, 0.0) for x in exercises)
    percent = 100.0 * score / max_score if max_score else 0.0
    lines = [f"# {msg('feedback.title', student=student).get(lang)}", "",
             msg("feedback.total", score=score, max_score=max_score, percent=percent).get(lang)]
    for exercise in exercises:
        lines.append("")
        entry = mine.get(exercise)
        if entry is None:
            lines += [f"## {exercise} — 0 / {maxima[exercise]:g}", "",
                      msg("feedback.missing", max_score=maxima[exercise]).get(lang)]
        else:
            lines += _exercise(entry, lang)
    date = report.created[:10] or "?"
    lines += ["", "---", "", msg("feedback.graded", version=report.tool_version,
                                 torch=report.torch_version, date=date).get(lang)]
    return "\n".join(lines) + "\n"


def ordered_exercises(report: GradeReport, course_order: list[str]) -> list[str]:
    maxima = exercise_maxima(report.submissions)
    ordered = [x for x in course_order if x in maxima]
    return ordered + [x for x in maxima if x not in ordered]


def file_name(student: str) -> str:
    """A file name for a student folder's name (kept readable, 张伟 included)."""
    safe = SAFE_NAME.sub("_", student).strip("._") or "student"
    return f"{safe}.md"


def write_feedback(report: GradeReport, folder: Path, course_order: list[str]) -> list[Path]:
    """One ``<student>.md`` per student of the report (those who submitted nothing too)."""
    folder.mkdir(parents=True, exist_ok=True)
    exercises = ordered_exercises(report, course_order)
    written: list[Path] = []
    used: set[str] = set()
    for student in roster(report.submissions, report.students):
        name = file_name(student)
        stem, n = name[:-3], 2
        while name in used:  # two folder names that sanitise alike
            name, n = f"{stem}-{n}.md", n + 1
        used.add(name)
        path = folder / name
        path.write_text(student_markdown(report, student, exercises), encoding="utf-8")
        written.append(path)
    return written

"""Markdown feedback per student and the Canvas CSV, from a grading report."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from tutor.cli import main
from tutor.export.canvas import canvas_csv, read_roster
from tutor.export.feedback import student_markdown, write_feedback
from tutor.grading.reports import GradeReport, SubmissionEntry, summarize
from tutor.grading.reports import TestEntry as CheckEntry

ORDER = ["l/a", "l/b"]


def entry(student: str, exercise: str, score: float, lang_message: str = "") -> SubmissionEntry:
    lesson, _, step = exercise.partition("/")
    ok = score == 3
    return SubmissionEntry(
        student=student, exercise=exercise, lesson=lesson, step=step, file=f"{student}/{step}.py",
        sha256="0" * 64, status="pass" if ok else "fail", score=score, max_score=3,
        message=lang_message or ("All checks pass." if ok else "1 of 2 checks do not pass yet."),
        tests=[
            CheckEntry(name="no_error", label="runs without error", status="pass", score=1,
                      max_score=1, message="It runs."),
            CheckEntry(name="value:x.grad", label="value of `x.grad` | pipe",
                      status="pass" if ok else "fail", score=score - 1, max_score=2,
                      message="`x.grad` is right." if ok else "`x.grad` is wrong.",
                      output="got: tensor [0.5]\n```\nexpected: tensor [1.0]"),
        ],
    )


def report(lang: str = "en") -> GradeReport:
    entries = [entry("ana", "l/b", 3), entry("ana", "l/a", 1), entry("张伟", "l/a", 3)]
    students = ["ana", "zoe", "张伟"]
    return GradeReport(tool_version="0.1.0", torch_version="2.13.0", lang=lang,  # type: ignore[arg-type]
                       created="2026-12-01T10:00:00+00:00", summary=summarize(entries, students),
                       submissions=entries, students=students)


def test_markdown_feedback_in_english() -> None:
    text = student_markdown(report(), "ana", ORDER)
    assert text.startswith("# Feedback for ana\n")
    assert "Total: **4 / 6** (66.7%)" in text
    assert text.index("## l/a") < text.index("## l/b")  # course order, not file order
    assert "| value of `x.grad` \\| pipe | ✗ fail | 0 / 2 |" in text
    assert "- **value of `x.grad` | pipe**: `x.grad` is wrong." in text
    assert "````text\ngot: tensor [0.5]\n```\nexpected" in text  # a fence its text cannot close
    assert "Every check passes." in text


def test_markdown_feedback_in_chinese_and_missing_work() -> None:
    text = student_markdown(report("zh"), "张伟", ORDER)
    assert text.startswith("# 张伟 的反馈\n")
    assert "总分：**3 / 6**（50.0%）" in text
    assert "## l/b — 0 / 3" in text and "未提交：0 / 3 分。" in text
    assert "由 autograd-tutor 0.1.0（torch 2.13.0）于 2026-12-01 评分。" in text


def test_a_file_per_student_also_one_with_nothing(tmp_path: Path) -> None:
    written = write_feedback(report(), tmp_path / "fb", ORDER)
    assert sorted(p.name for p in written) == ["ana.md", "zoe.md", "张伟.md"]
    assert "Total: **0 / 6**" in (tmp_path / "fb" / "zoe.md").read_text(encoding="utf-8")


def test_canvas_csv() -> None:
    text = canvas_csv(report(), ORDER)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                       "autograd: l/a", "autograd: l/b"]
    assert rows[1] == ["Points Possible", "", "", "", "", "3", "3"]
    assert rows[2] == ["ana", "", "", "ana", "", "1", "3"]
    assert rows[3] == ["zoe", "", "", "zoe", "", "0", "0"]  # missing work is 0, as in totals
    assert rows[4] == ["张伟", "", "", "张伟", "", "3", "0"]


def test_canvas_roster_fills_identity(tmp_path: Path) -> None:
    roster = tmp_path / "export.csv"
    roster.write_text(
        "\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Quiz 1 (12)\n"
        "    Points Possible,,,,,10\n"
        "\"Zhang, Wei\",4471,S-77,张伟,Section A,9\n", encoding="utf-8")
    rows_by_login = read_roster(roster, "SIS Login ID")
    text = canvas_csv(report(), ORDER, roster_rows=rows_by_login)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[4] == ["Zhang, Wei", "4471", "S-77", "张伟", "Section A", "3", "0"]


def test_export_commands_write_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    path.write_text(report().model_dump_json(), encoding="utf-8")
    assert main(["export", "feedback", str(path), "-o", str(tmp_path / "fb")]) == 0
    assert (tmp_path / "fb" / "ana.md").is_file()
    assert main(["export", "canvas", str(path), "-o", str(tmp_path / "c.csv")]) == 0
    data = (tmp_path / "c.csv").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")  # a BOM: Excel keeps 张伟
    assert main(["export", "canvas", str(tmp_path / "nope.json"), "-o", str(tmp_path / "x.csv")
                 ]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["gradescope", "prairielearn", "feedback"])
def test_only_canvas_takes_canvas_options(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    # the options were added to every export kind by a loop variable left over from another loop
    with pytest.raises(SystemExit):
        main(["export", kind, "--help"])
    assert "--id-column" not in capsys.readouterr().out


def test_canvas_takes_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["export", "canvas", "--help"])
    out = capsys.readouterr().out
    assert "--id-column" in out and "--roster" in out

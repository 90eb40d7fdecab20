"""`tutor grade` end to end: the CLI as a subprocess, the way a teacher or CI calls it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tutor.course.models import Lesson

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "submissions"

pytestmark = pytest.mark.slow


def tutor(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), TUTOR_LANG="en", NO_COLOR="1", COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "tutor", *args], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=300,
    )


@pytest.fixture
def course_dir(tmp_path: Path, seed_lesson: Lesson) -> Path:
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    # JSON is YAML: the seed lesson as a lesson file
    (lessons / "90-seed.yaml").write_text(
        json.dumps(seed_lesson.model_dump(mode="json", exclude_none=True)), encoding="utf-8"
    )
    return lessons


def test_grade_a_folder_then_resume(course_dir: Path, tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    for rel in ["ana/nonscalar.py", "ana/square.py", "chen/nonscalar.py", "eli/nonscalar.py",
                "gus/nonscalar.py", "ivo/nonscalar.py"]:
        (subs / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / rel, subs / rel)
    (subs / "ana" / "scratch.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    common = ["--lessons", str(course_dir), "--json", "out/r.json", "--timeout", "3",
              "--jobs", "2"]
    first = tutor("grade", "subs", *common, "--junit", "out/r.xml", "--csv", "out/r.csv",
                  cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "6 submissions: 2 passed, 1 failed, 2 errors, 1 not gradable" in first.stdout
    assert "skipped ana/scratch.py" in first.stderr
    assert "Traceback" not in first.stderr
    report = json.loads((tmp_path / "out" / "r.json").read_text(encoding="utf-8"))
    assert report["version"] == 1 and report["torch_version"].startswith("2.")
    statuses = {s["file"]: (s["status"], s["score"]) for s in report["submissions"]}
    assert statuses == {
        "ana/nonscalar.py": ("pass", 5.0), "ana/square.py": ("pass", 3.0),
        "chen/nonscalar.py": ("fail", 3.0), "eli/nonscalar.py": ("error", 1.0),
        "gus/nonscalar.py": ("error", 0.0), "ivo/nonscalar.py": ("not_gradable", 0.0),
    }
    assert report["unmatched"] == ["ana/scratch.py: no code, fix-the-bug or quiz step has the id "
                                   "'scratch'"]
    # 5 students x 2 exercises: 6 submitted, 4 missing seed/square (failed cases scoring 0)
    junit = ET.parse(tmp_path / "out" / "r.xml").getroot()
    assert (junit.get("tests"), junit.get("failures")) == ("10", "5")
    gradebook = (tmp_path / "out" / "r.csv").read_text(encoding="utf-8-sig").splitlines()
    assert gradebook[0] == (
        "student,seed/nonscalar (max 5),seed/square (max 3),total,max_total,percent")

    # edit one file; --resume regrades only it; --fail-under decides the exit status
    shutil.copy(CORPUS / "ana" / "nonscalar.py", subs / "chen" / "nonscalar.py")
    second = tutor("grade", "subs", *common, "--resume", "--fail-under", "90", cwd=tmp_path)
    assert second.returncode == 1, second.stderr
    assert "5 unchanged submissions taken from out/r.json" in second.stdout
    assert "under --fail-under 90%" in second.stderr
    again = json.loads((tmp_path / "out" / "r.json").read_text(encoding="utf-8"))
    assert {s["file"]: s["status"] for s in again["submissions"]}["chen/nonscalar.py"] == "pass"

    # the exercise changes (a check is worth more): --resume regrades its files and says so
    lesson_file = course_dir / "90-seed.yaml"
    lesson = json.loads(lesson_file.read_text(encoding="utf-8"))
    nonscalar = next(step for step in lesson["steps"] if step["id"] == "nonscalar")
    nonscalar["checks"][1]["points"] = 4
    lesson_file.write_text(json.dumps(lesson), encoding="utf-8")
    third = tutor("grade", "subs", *common, "--resume", cwd=tmp_path)
    assert third.returncode == 0, third.stderr
    assert "5 unchanged submissions regraded because their exercise changed" in third.stdout
    assert "1 unchanged submissions taken from out/r.json" in third.stdout
    final = json.loads((tmp_path / "out" / "r.json").read_text(encoding="utf-8"))
    assert {s["file"]: s["max_score"] for s in final["submissions"]}["chen/nonscalar.py"] == 7.0


def test_grade_one_exercise_in_chinese(course_dir: Path, tmp_path: Path) -> None:
    result = tutor("grade", "--exercise", "seed/nonscalar", str(CORPUS / "dara/nonscalar.py"),
                   str(CORPUS / "ana/nonscalar.py"), "--lessons", str(course_dir),
                   "--lang", "zh", "--device", "cpu", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "的形状是 (1, 2)；应为 (2,)" in result.stdout
    assert "共 2 份提交：1 份通过" in result.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["nowhere"], "nowhere: no such folder"),
        (["x.py"], "x.py: not a folder"),
        (["subs", "--fail-under", "150"], "--fail-under is a percentage from 0 to 100"),
        (["--exercise", "seed/nope", "x.py"], "no exercise 'seed/nope'"),
        (["--exercise", "seed/nonscalar", "missing.py"], "missing.py: no such file"),
        (["--exercise", "seed/mm-xgrad", "x.py"], "only code, fix and quiz steps take files"),
        (["subs", "--resume"], "--resume reads the results"),
        (["empty"], "no submissions found"),
        (["--exercise", "seed/nonscalar", "subs/ana"], "subs/ana: a folder, not a .py file"),
        (["--exercise", "nonscalr", "x.py"], "did you mean seed/nonscalar"),
        (["--exercise", "other/nonscalar", "x.py"], "did you mean seed/nonscalar?"),
    ],
)
def test_user_errors_are_one_clear_message(
    args: list[str], says: str, course_dir: Path, tmp_path: Path
) -> None:
    (tmp_path / "x.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    (tmp_path / "subs" / "ana").mkdir(parents=True)
    result = tutor("grade", *args, "--lessons", str(course_dir), cwd=tmp_path)
    assert result.returncode == 2
    assert says in result.stderr and "Traceback" not in result.stderr


def test_summary_table_stays_readable_with_many_exercises() -> None:
    from rich.console import Console

    from tutor.cli.grade_cmd import MAX_EXERCISE_COLUMNS, _summary_table
    from tutor.grading.reports import GradeReport, SubmissionEntry

    refs = [f"lesson/step-{i}" for i in range(MAX_EXERCISE_COLUMNS + 1)]
    entries = [
        SubmissionEntry(student="amy", exercise=ref, lesson="lesson", step=ref[7:],
                        file=f"amy/{ref[7:]}.py", sha256="0" * 64,
                        status="pass" if i % 2 else "fail", score=float(i % 2), max_score=1.0)
        for i, ref in enumerate(refs)
    ]
    console = Console(record=True, width=100)
    console.print(_summary_table(GradeReport(submissions=entries), "en", False, refs))
    text = console.export_text()
    assert "passed" in text and "3/7" in text.splitlines()[3]
    assert "step-0" not in text
    narrow = Console(record=True, width=120)
    narrow.print(_summary_table(GradeReport(submissions=entries[:3]), "zh", False, refs))
    few = narrow.export_text()
    assert "lesson/step-0" in few and "学生" in few


def test_resume_keeps_nothing_from_a_report_graded_another_way() -> None:
    # a report in English, reused for a --lang zh run, would mix English feedback into a
    # report that says lang: zh; a different device or torch may give other scores
    from tutor.cli.grade_cmd import reusable
    from tutor.grading.reports import GradeReport, SubmissionEntry

    entry = SubmissionEntry(student="ana", exercise="seed/nonscalar", lesson="seed",
                            step="nonscalar", file="ana/nonscalar.py", sha256="0" * 64,
                            status="pass", score=1.0, max_score=1.0, message="All checks pass.")
    report = GradeReport(tool_version="0.1.0", torch_version="2.13.0+cpu", device="cpu",
                         lang="en", submissions=[entry])
    same = {"lang": "en", "device": "cpu", "torch_version": "2.13.0+cpu", "tool_version": "0.1.0"}
    assert reusable(report, **same) == [entry]
    assert reusable(None, **same) == []
    for key, other in [("lang", "zh"), ("device", "cuda:0"), ("torch_version", "2.14.0"),
                       ("tool_version", "0.2.0")]:
        assert reusable(report, **{**same, key: other}) == [], key


def test_report_paths_that_cannot_be_written_are_refused_before_grading(tmp_path: Path) -> None:
    # `tutor grade subs --junit /tmp` graded every submission, then failed on the write
    from tutor.cli.grade_cmd import check_outputs
    from tutor.errors import TutorError

    (tmp_path / "a-file").write_text("x\n", encoding="utf-8")
    check_outputs([None, tmp_path / "r.json", tmp_path / "r.csv"])
    # `--json /nonexist/x.json` made /nonexist/: a mistyped folder is an error now
    with pytest.raises(TutorError, match="does not exist"):
        check_outputs([tmp_path / "out" / "new" / "r.json"])
    assert not (tmp_path / "out").exists()
    with pytest.raises(TutorError, match="is a folder"):
        check_outputs([tmp_path])
    with pytest.raises(TutorError, match="is a file, not a folder"):
        check_outputs([tmp_path / "a-file" / "r.xml"])


def test_one_rule_for_missing_submissions_and_empty_students(
    course_dir: Path, tmp_path: Path
) -> None:
    """A missing submission is 0 of its max in the table, the summary, the CSV and the JSON;
    a student folder with no gradable file is listed everywhere (and noted on stderr)."""
    subs = tmp_path / "subs"
    for rel in ["ana/nonscalar.py", "ana/square.py", "chen/nonscalar.py"]:
        (subs / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / rel, subs / rel)
    (subs / "gina").mkdir()
    (subs / "gina" / "notes.txt").write_text("nothing gradable\n", encoding="utf-8")
    result = tutor("grade", "subs", "--lessons", str(course_dir), "--timeout", "3",
                   "--json", "r.json", "--csv", "r.csv", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "gina/: no gradable file" in result.stderr
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in result.stdout.splitlines() if line.startswith("│")}
    assert rows == {"ana": ["5/5", "3/3", "8/8"], "chen": ["3/5", "-/3", "3/8"],
                    "gina": ["-/5", "-/3", "0/8"]}
    assert "3 missing (scored 0); score 11/24 (45.8%)" in result.stdout
    gradebook = (tmp_path / "r.csv").read_text(encoding="utf-8-sig").splitlines()
    assert gradebook[1:] == ["ana,5,3,8,8,100.0", "chen,3,0,3,8,37.5", "gina,0,0,0,8,0.0"]
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["students"] == ["ana", "chen", "gina"]
    assert {k: report["summary"][k] for k in ("missing", "score", "max_score")} == {
        "missing": 3, "score": 11.0, "max_score": 24.0}
    # each missing submission is an entry, in the course's order, like the CSV's columns
    assert [(m["student"], m["exercise"], m["score"], m["max_score"]) for m in
            report["missing"]] == [("chen", "seed/square", 0.0, 3.0),
                                   ("gina", "seed/nonscalar", 0.0, 5.0),
                                   ("gina", "seed/square", 0.0, 3.0)]
    assert report["exercises"] == ["seed/nonscalar", "seed/square"]


def test_reports_are_written_when_stdout_is_closed(course_dir: Path, tmp_path: Path) -> None:
    """`tutor grade ... | head -2`: the reader is gone before the table; the files are still
    written, and the exit status is grading's, not a broken pipe's."""
    subs = tmp_path / "subs" / "ana"
    subs.mkdir(parents=True)
    shutil.copy(CORPUS / "ana" / "nonscalar.py", subs / "nonscalar.py")
    env = dict(os.environ, PYTHONPATH=str(REPO), TUTOR_LANG="zh", NO_COLOR="1")
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read the table
    try:
        result = subprocess.run(
            [sys.executable, "-m", "tutor", "grade", "subs", "--lessons", str(course_dir),
             "--timeout", "3", "--csv", "r.csv", "--junit", "r.xml"],
            cwd=tmp_path, env=env, stdout=write_end, stderr=subprocess.PIPE, text=True,
            timeout=300,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "r.csv").read_text(encoding="utf-8-sig").splitlines()[1] == (
        "ana,5,5,5,100.0")
    assert ET.parse(tmp_path / "r.xml").getroot().get("tests") == "1"
    assert "标准输出在汇总显示完之前被关闭" in result.stderr
    assert "Traceback" not in result.stderr

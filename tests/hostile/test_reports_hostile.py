"""Breaking the reports: whatever submissions do to their messages, names and files, the
JSON, JUnit XML and CSV are well-formed (each is parsed back here), a spreadsheet never runs
a cell as a formula, and a file that is not safe to read is graded as not gradable without
being followed or opened."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import threading
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from grading_cases import COPY_WRONG, NONSCALAR_SOLUTION, NONSCALAR_WRONG, course

from tutor.grading import ExpectedCache
from tutor.grading.batch import discover, grade_submissions, student_folders
from tutor.grading.reports import (
    CSV_BOM,
    GradeReport,
    SubmissionEntry,
    build_report,
    write_csv,
    write_json,
    write_junit,
)
from tutor.sandbox import Limits

LIMITS = Limits(wall_time_s=5.0)
ORDER = ["hostile/nonscalar", "hostile/copy", "hostile/item", "hostile/square"]


@pytest.fixture(scope="module")
def cache() -> ExpectedCache:
    return ExpectedCache(disk=False)


def _layout(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def _grade(root: Path, sandbox: Any, cache: ExpectedCache) -> tuple[GradeReport, list[str]]:
    submissions, unmatched = discover(root, course())
    entries = grade_submissions(submissions, runner=sandbox, jobs=2, cache=cache,
                                limits=LIMITS)
    report = build_report(entries, students=student_folders(root), order=ORDER,
                          unmatched=[str(item) for item in unmatched])
    return report, [str(item) for item in unmatched]


def _parse_back(report: GradeReport, folder: Path) -> tuple[dict[str, Any], ET.Element,
                                                             list[list[str]]]:
    """Write all three reports and parse each back: a broken one fails here."""
    folder.mkdir(exist_ok=True)
    write_json(report, folder / "r.json")
    write_junit(report, folder / "r.xml")
    write_csv(report, folder / "r.csv")
    data = json.loads((folder / "r.json").read_text(encoding="utf-8"))
    GradeReport.model_validate(data)
    xml_root = ET.parse(folder / "r.xml").getroot()
    raw = (folder / "r.csv").read_bytes()
    assert raw.startswith(CSV_BOM.encode("utf-8"))
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline="")))
    return data, xml_root, rows


def _entry(report: GradeReport, student: str, exercise: str = "hostile/nonscalar"
           ) -> SubmissionEntry:
    return next(e for e in report.submissions
                if e.student == student and e.exercise == exercise)


MESSAGES = {
    "control characters": "bad\x01\x02\x08\x0b\x0c\x1b[31mred\x7f",
    "a NUL": "before\x00after",
    "markup that closes the element": '</failure><testcase name="x">&amp;"\'<![CDATA[',
    "U+FFFE and U+FFFF": "\ufffe\uffff",
    "a lone surrogate's escape": "\\ud800 and \u2028 line separator",
}


@pytest.mark.parametrize("case", sorted(MESSAGES))
def test_an_exception_message_cannot_break_the_reports(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path, case: str
) -> None:
    text = MESSAGES[case]
    code = NONSCALAR_WRONG + f"raise RuntimeError({text!r})\n"
    root = _layout(tmp_path / "subs", {"mallory/nonscalar.py": code,
                                       "ana/nonscalar.py": NONSCALAR_WRONG})
    report, _ = _grade(root, sandbox, cache)
    data, xml_root, rows = _parse_back(report, tmp_path / "out")
    mallory = _entry(report, "mallory")
    ana = _entry(report, "ana")
    assert mallory.status == "error" and mallory.score <= ana.score, (mallory.message, ana.message)
    assert [s["student"] for s in data["submissions"]] == ["ana", "mallory"]
    assert {s.get("name") for s in xml_root.iter("testsuite")} == {"ana", "mallory"}
    assert [row[0] for row in rows[1:]] == ["ana", "mallory"]


FORMULAS = ["=HYPERLINK(\"evil.example\",\"x\")", "+1+1", "-2+3", "@SUM(A1:A9)",
            "=cmd|' -C calc'!A0"]


@pytest.mark.parametrize("name", FORMULAS)
def test_a_student_named_like_a_formula_is_text_in_the_gradebook(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path, name: str
) -> None:
    root = _layout(tmp_path / "subs", {f"{name}/nonscalar.py": NONSCALAR_WRONG})
    report, _ = _grade(root, sandbox, cache)
    _, xml_root, rows = _parse_back(report, tmp_path / "out")
    assert rows[1][0] == "'" + name
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)
    assert [s.get("name") for s in xml_root.iter("testsuite")] == [name]


@pytest.mark.parametrize("start", ["\t", "\r"])
def test_a_cell_starting_with_a_tab_or_a_return_is_neutralised(
    tmp_path: Path, start: str
) -> None:
    # names like these come from --exercise, where the "student" is the path given
    entry = SubmissionEntry(student=f"{start}=1+1", exercise="hostile/nonscalar",
                            lesson="hostile", step="nonscalar", file="x.py", sha256="0",
                            status="fail", score=1.0, max_score=5.0)
    _, _, rows = _parse_back(build_report([entry], order=ORDER), tmp_path)
    assert rows[1][0] == f"'{start}=1+1"


def test_a_chinese_name_reads_back_from_the_bom_csv(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path
) -> None:
    root = _layout(tmp_path / "subs", {"张伟/nonscalar.py": NONSCALAR_SOLUTION})
    report, _ = _grade(root, sandbox, cache)
    _, _, rows = _parse_back(report, tmp_path / "out")
    assert rows[1][:2] == ["张伟", "5"]


@pytest.mark.parametrize("name", ["bad\x07name", " padded ", "x" * 101])
def test_a_student_folder_with_an_invalid_name_is_refused_with_the_reason(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path, name: str
) -> None:
    root = _layout(tmp_path / "subs", {f"{name}/nonscalar.py": NONSCALAR_SOLUTION,
                                       "ana/nonscalar.py": NONSCALAR_WRONG})
    report, unmatched = _grade(root, sandbox, cache)
    _parse_back(report, tmp_path / "out")
    assert [e.student for e in report.submissions] == ["ana"]
    assert report.students == ["ana"]
    assert any("student folder name" in item for item in unmatched)


def test_an_odd_file_name_is_listed_as_unmatched_and_the_reports_hold(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path
) -> None:
    root = _layout(tmp_path / "subs", {"ana/non\nscalar<&>.py": NONSCALAR_SOLUTION,
                                       "ana/nonscalar.py": NONSCALAR_WRONG})
    report, unmatched = _grade(root, sandbox, cache)
    data, _, _ = _parse_back(report, tmp_path / "out")
    assert len(report.submissions) == 1 and len(unmatched) == 1
    assert data["unmatched"] == unmatched


# --------------------------------------------------------------------------- unsafe files


def _not_gradable(report: GradeReport, student: str, why: str) -> SubmissionEntry:
    entry = _entry(report, student)
    assert entry.status == "not_gradable" and entry.score == 0.0
    assert why in entry.message, entry.message
    assert sum(test.max_score for test in entry.tests) == entry.max_score == 5.0
    return entry


def test_a_symlink_to_another_students_file_is_not_followed(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path
) -> None:
    root = _layout(tmp_path / "subs", {"bob/nonscalar.py": NONSCALAR_SOLUTION,
                                       "ana/nonscalar.py": NONSCALAR_WRONG})
    (root / "mallory").mkdir()
    (root / "mallory" / "nonscalar.py").symlink_to("../bob/nonscalar.py")
    report, _ = _grade(root, sandbox, cache)
    _parse_back(report, tmp_path / "out")
    mallory = _not_gradable(report, "mallory", "symbolic link")
    assert mallory.score <= _entry(report, "ana").score
    assert _entry(report, "bob").score == 5.0


def test_a_symlink_to_a_root_only_file_is_not_read(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("TOP-SECRET-CONTENT = 1\n", encoding="utf-8")
    secret.chmod(0o600)
    root = _layout(tmp_path / "subs", {"ana/nonscalar.py": NONSCALAR_WRONG})
    (root / "mallory").mkdir()
    target = "/etc/shadow" if Path("/etc/shadow").exists() else str(secret)
    (root / "mallory" / "nonscalar.py").symlink_to(target)
    (root / "eve").mkdir()
    (root / "eve" / "nonscalar.py").symlink_to(secret)
    report, _ = _grade(root, sandbox, cache)
    data, _, _ = _parse_back(report, tmp_path / "out")
    _not_gradable(report, "mallory", "symbolic link")
    _not_gradable(report, "eve", "symbolic link")
    dumped = json.dumps(data)
    assert "TOP-SECRET" not in dumped and "root:" not in dumped


def test_a_dangling_symlink_is_not_gradable(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path
) -> None:
    root = _layout(tmp_path / "subs", {"ana/nonscalar.py": NONSCALAR_WRONG})
    (root / "mallory").mkdir()
    (root / "mallory" / "nonscalar.py").symlink_to("/nonexistent/nowhere.py")
    report, _ = _grade(root, sandbox, cache)
    _not_gradable(report, "mallory", "symbolic link")


def test_a_symlinked_student_folder_is_not_a_student(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path
) -> None:
    root = _layout(tmp_path / "subs", {"bob/nonscalar.py": NONSCALAR_SOLUTION})
    (root / "eve").symlink_to("bob", target_is_directory=True)
    report, unmatched = _grade(root, sandbox, cache)
    _parse_back(report, tmp_path / "out")
    assert [e.student for e in report.submissions] == ["bob"] and report.students == ["bob"]
    assert any(item.startswith("eve/") and "symbolic link" in item for item in unmatched)


def test_a_symlinked_folder_inside_a_student_folder_is_not_followed(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path
) -> None:
    root = _layout(tmp_path / "subs", {"bob/hostile/nonscalar.py": NONSCALAR_SOLUTION})
    (root / "mallory").mkdir()
    (root / "mallory" / "hostile").symlink_to("../bob/hostile", target_is_directory=True)
    report, unmatched = _grade(root, sandbox, cache)
    assert [e.student for e in report.submissions] == ["bob"]
    assert any(item.startswith("mallory/hostile/") for item in unmatched)


def test_a_fifo_is_not_opened_and_grading_goes_on(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path
) -> None:
    root = _layout(tmp_path / "subs", {"ana/nonscalar.py": NONSCALAR_WRONG})
    (root / "mallory").mkdir()
    os.mkfifo(root / "mallory" / "nonscalar.py")
    found: list[Any] = []
    reader = threading.Thread(target=lambda: found.append(discover(root, course())),
                              daemon=True)
    reader.start()
    reader.join(timeout=60)
    assert found, "discover blocked on the FIFO"
    report, _ = _grade(root, sandbox, cache)
    _not_gradable(report, "mallory", "FIFO")


def test_a_device_file_is_not_opened(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path
) -> None:
    root = _layout(tmp_path / "subs", {"ana/nonscalar.py": NONSCALAR_WRONG})
    (root / "mallory").mkdir()
    try:
        os.mknod(root / "mallory" / "nonscalar.py", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("making a device file needs CAP_MKNOD")
    report, _ = _grade(root, sandbox, cache)
    _not_gradable(report, "mallory", "device")


def test_a_50_mb_source_is_refused_unread(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path
) -> None:
    root = _layout(tmp_path / "subs", {"ana/nonscalar.py": NONSCALAR_WRONG})
    (root / "mallory").mkdir()
    with open(root / "mallory" / "nonscalar.py", "wb") as handle:
        handle.truncate(50_000_000)  # sparse: costs no disk
    report, _ = _grade(root, sandbox, cache)
    entry = _not_gradable(report, "mallory", "50.0 MB")
    assert "at most 1000 kB" in entry.message


def test_a_bom_is_accepted(sandbox: Any, cache: ExpectedCache, tmp_path: Path) -> None:
    root = _layout(tmp_path / "subs", {
        "ana/nonscalar.py": "\ufeff".encode() + NONSCALAR_SOLUTION.encode("utf-8")})
    report, _ = _grade(root, sandbox, cache)
    assert _entry(report, "ana").status == "pass"


def test_a_file_that_is_not_utf8_is_not_gradable_with_the_reason(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path
) -> None:
    root = _layout(tmp_path / "subs", {"ana/nonscalar.py": b"x = '\xff\xfe'\n"})
    report, _ = _grade(root, sandbox, cache)
    _not_gradable(report, "ana", "not UTF-8")


# --------------------------------------------------------------------------- totals, order


def test_refused_and_unparsable_submissions_list_every_check(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path
) -> None:
    root = _layout(tmp_path / "subs", {
        "ana/nonscalar.py": "import os\n" + NONSCALAR_WRONG,  # the integrity policy
        "bo/nonscalar.py": "def broken(:\n",  # a syntax error
    })
    report, _ = _grade(root, sandbox, cache)
    for student in ("ana", "bo"):
        entry = _entry(report, student)
        assert entry.score == 0.0 and entry.status in ("error", "not_gradable")
        assert [t.name for t in entry.tests] == [
            "no_error", "value:x.grad", "attribute:x.grad.shape", "ast:grad_from_backward"]
        assert sum(t.max_score for t in entry.tests) == entry.max_score == 5.0


def test_every_report_follows_the_course_order_and_counts_missing_work_alike(
    sandbox: Any, cache: ExpectedCache, tmp_path: Path
) -> None:
    # file names sort copy < nonscalar, the course has nonscalar first
    root = _layout(tmp_path / "subs", {"ana/copy.py": COPY_WRONG,
                                       "ana/nonscalar.py": NONSCALAR_WRONG,
                                       "bo/nonscalar.py": NONSCALAR_SOLUTION})
    report, _ = _grade(root, sandbox, cache)
    data, xml_root, rows = _parse_back(report, tmp_path / "out")
    order = ["hostile/nonscalar", "hostile/copy"]
    assert [s["exercise"] for s in data["submissions"] if s["student"] == "ana"] == order
    ana = next(s for s in xml_root.iter("testsuite") if s.get("name") == "ana")
    assert [c.get("name") for c in ana.iter("testcase")] == order
    bo = next(s for s in xml_root.iter("testsuite") if s.get("name") == "bo")
    assert [c.get("name") for c in bo.iter("testcase")] == order
    assert rows[0] == ["student", "hostile/nonscalar (max 5)", "hostile/copy (max 4)",
                       "total", "max_total", "percent"]
    # no "(max)" row: every row is a student; a missing submission is 0, as in the total
    assert rows[1:] == [["ana", "3", "1", "4", "9", "44.4"], ["bo", "5", "0", "5", "9", "55.6"]]
    assert data["missing"] == [{"student": "bo", "exercise": "hostile/copy",
                                "lesson": "hostile", "step": "copy", "status": "missing",
                                "score": 0.0, "max_score": 4.0}]
    assert data["summary"]["max_score"] == 18.0 and data["summary"]["score"] == 9.0


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_report_files_honour_the_umask(tmp_path: Path, umask: int) -> None:
    report = build_report([], order=ORDER)
    old = os.umask(umask)
    try:
        for name, write in (("r.json", write_json), ("r.xml", write_junit),
                            ("r.csv", write_csv)):
            write(report, tmp_path / name)
            assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~umask
    finally:
        os.umask(old)


def test_a_report_in_a_missing_folder_is_an_error_and_makes_no_folder(tmp_path: Path) -> None:
    from tutor.grading.reports import ReportError

    with pytest.raises(ReportError, match="does not exist"):
        write_json(build_report([]), tmp_path / "nonexist" / "x.json")
    assert not (tmp_path / "nonexist").exists()

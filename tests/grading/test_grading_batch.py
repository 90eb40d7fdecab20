"""Batch grading: discovering submissions, grading in parallel, resuming; report writers."""

from __future__ import annotations

import csv
import io
import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tutor.course.models import Course, Lesson
from tutor.grading import ExpectedCache
from tutor.grading.batch import discover, grade_submissions
from tutor.grading.reports import (
    GradeReport,
    ReportError,
    gradebook_csv,
    junit_xml,
    load_json,
    summarize,
    write_json,
)
from tutor.sandbox import Limits, Sandbox
from tutor.sandbox.models import Probe, RunResult

CORPUS = Path(__file__).resolve().parent / "submissions"
LIMITS = Limits(wall_time_s=3.0)


def _course(seed_lesson: Lesson) -> Course:
    """The seed lesson plus a second lesson that also has a step called "nonscalar"."""
    twin = seed_lesson.model_copy(update={"id": "twin", "steps": [seed_lesson.step("nonscalar")]})
    return Course(lessons=[seed_lesson, twin])


def _layout(root: Path, files: dict[str, str]) -> Path:
    for rel, source in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if source.startswith("corpus:"):
            shutil.copy(CORPUS / source.removeprefix("corpus:"), path)
        else:
            path.write_text(source, encoding="utf-8")
    return root


def test_discover_layouts_and_unmatched(seed_lesson: Lesson, tmp_path: Path) -> None:
    root = _layout(tmp_path / "subs", {
        "ana/mm.py": "corpus:ana/mm.py",                    # unique step id in the course
        "ana/nonscalar.py": "corpus:ana/nonscalar.py",      # ambiguous: seed and twin
        "bo/seed--nonscalar.py": "corpus:bo/nonscalar.py",  # <lesson>--<step>.py
        "bo/twin/nonscalar.py": "corpus:chen/nonscalar.py", # <lesson>/<step>.py
        "bo/notes.py": "x = 1\n",                           # no such step
        "bo/mm-xgrad.py": "x = 1\n",                        # an answer step takes no file
        "loose.py": "x = 1\n",                              # not in a student folder
        "bo/.hidden/mm.py": "x = 1\n",
        "bo/__pycache__/mm.py": "x = 1\n",
        "bo/readme.txt": "hello\n",
    })
    submissions, unmatched = discover(root, _course(seed_lesson))
    assert [(s.student, s.exercise, s.file) for s in submissions] == [
        ("ana", "seed/mm", "ana/mm.py"),
        ("bo", "seed/nonscalar", "bo/seed--nonscalar.py"),
        ("bo", "twin/nonscalar", "bo/twin/nonscalar.py"),
    ]
    reasons = {u.file: u.reason for u in unmatched}
    assert set(reasons) == {"ana/nonscalar.py", "bo/notes.py", "bo/mm-xgrad.py", "loose.py"}
    assert "several lessons (seed, twin)" in reasons["ana/nonscalar.py"]
    assert "<lesson>--nonscalar.py" in reasons["ana/nonscalar.py"]
    # a Chinese-speaking teacher reads why each file was skipped in Chinese too
    said = {u.file: u.said("zh") for u in unmatched}
    twin = said["ana/nonscalar.py"]
    assert "多个课程" in twin and "<课程>--nonscalar.py" in twin
    assert "文件夹" in said["loose.py"] and said["bo/notes.py"].startswith("bo/notes.py: ")


class FlakyRunner:
    """The real sandbox, except that it fails on code containing a marker."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner

    def run(self, code: str, *, device: str = "cpu", probes: Sequence[str | Probe] = (),
            limits: Limits | None = None, vary: int | None = None) -> RunResult:
        if "BREAK_THE_GRADER" in code:
            raise OSError("sandbox pipe closed")
        return self.inner.run(code, device=device, probes=probes, limits=limits, vary=vary)

    def devices(self) -> list[str]:
        return self.inner.devices()


def test_grade_in_parallel_resume_and_go_on_after_failures(
    seed_lesson: Lesson, sandbox: Sandbox, tmp_path: Path
) -> None:
    root = _layout(tmp_path / "subs", {
        "ana/seed--nonscalar.py": "corpus:ana/nonscalar.py",
        "chen/seed--nonscalar.py": "corpus:chen/nonscalar.py",
        "fay/seed--nonscalar.py": "corpus:fay/nonscalar.py",
        "gus/seed--nonscalar.py": "corpus:gus/nonscalar.py",
        "ivo/seed--nonscalar.py": "corpus:ivo/nonscalar.py",
        "zed/seed--nonscalar.py": "import torch\n# BREAK_THE_GRADER\n",
        "ana/square.py": "corpus:ana/square.py",
    })
    course = _course(seed_lesson)
    submissions, _ = discover(root, course)
    seen: list[tuple[str, bool]] = []
    cache = ExpectedCache(tmp_path / "cache")
    entries = grade_submissions(
        submissions, runner=FlakyRunner(sandbox), jobs=2, cache=cache, limits=LIMITS,
        lang="zh", progress=lambda entry, resumed: seen.append((entry.file, resumed)),
    )
    got = {e.file: (e.status, e.score) for e in entries}
    assert got == {
        "ana/seed--nonscalar.py": ("pass", 5.0),
        "ana/square.py": ("pass", 3.0),
        "chen/seed--nonscalar.py": ("fail", 3.0),
        "fay/seed--nonscalar.py": ("error", 0.0),
        "gus/seed--nonscalar.py": ("error", 0.0),
        "ivo/seed--nonscalar.py": ("not_gradable", 0.0),
        "zed/seed--nonscalar.py": ("error", 0.0),
    }
    assert [e.file for e in entries] == [s.file for s in submissions]  # input order kept
    assert sorted(seen) == sorted((e.file, False) for e in entries)
    zed = next(e for e in entries if e.student == "zed")
    assert "OSError" in zed.message and "评分" in zed.message  # lang zh
    # the solutions ran once each, before any submission, and the one whose value check a
    # submission passed once more on varied inputs (its x.grad does not move: no learner's
    # varied run follows)
    assert cache.runs == 3

    # resume: unchanged files are taken from the previous report, changed ones regraded
    (root / "chen" / "seed--nonscalar.py").write_text(
        (CORPUS / "ana" / "nonscalar.py").read_text(), encoding="utf-8")
    submissions, _ = discover(root, course)
    seen.clear()
    again = grade_submissions(submissions, runner=sandbox, jobs=2, cache=cache, limits=LIMITS,
                              lang="zh", previous=entries,
                              progress=lambda entry, resumed: seen.append((entry.file, resumed)))
    regraded = [file for file, resumed in seen if not resumed]
    assert regraded == ["chen/seed--nonscalar.py"]
    assert {e.file: (e.status, e.score) for e in again}["chen/seed--nonscalar.py"] == ("pass", 5)
    unchanged = [e for e in again if e.file != "chen/seed--nonscalar.py"]
    assert unchanged == [e for e in entries if e.file != "chen/seed--nonscalar.py"]


def _report(entries: list[Any]) -> GradeReport:
    return GradeReport(summary=summarize(entries), submissions=entries)


def test_reports_json_junit_csv(seed_lesson: Lesson, sandbox: Sandbox, tmp_path: Path) -> None:
    root = _layout(tmp_path / "subs", {
        "ana/seed--nonscalar.py": "corpus:ana/nonscalar.py",
        "ana/square.py": "corpus:ana/square.py",
        "chen/seed--nonscalar.py": "corpus:chen/nonscalar.py",
        "ivo/seed--nonscalar.py": "corpus:ivo/nonscalar.py",
    })
    submissions, _ = discover(root, _course(seed_lesson))
    entries = grade_submissions(submissions, runner=sandbox, jobs=2,
                                cache=ExpectedCache(disk=False), limits=LIMITS)
    report = _report(entries)
    assert report.summary.model_dump() == {
        "submissions": 4, "passed": 2, "failed": 1, "errors": 0, "not_gradable": 1,
        "missing": 2, "score": 11.0, "max_score": 24.0, "percent": 45.83,
    }
    # JSON: versioned, valid against the model's own schema, round-trips
    path = tmp_path / "report.json"
    write_json(report, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == 1
    jsonschema.validate(data, GradeReport.model_json_schema())
    assert load_json(path) == report
    chen = next(s for s in data["submissions"] if s["student"] == "chen")
    value = next(t for t in chen["tests"] if t["name"] == "value:x.grad")
    # summative grading says what is wrong, never the truth (no --show-expected)
    assert value["status"] == "fail" and "at [0]: got 0.5." in value["message"]
    assert "1.0" not in value["message"] + value["output"] and "expected" not in value["output"]
    assert len(value["output"]) <= 500
    # JUnit: a suite per student, failures and errors counted; chen's and ivo's missing
    # seed/square are failed cases scoring 0, as in the table, the summary and the CSV
    root_xml = ET.fromstring(junit_xml(report))
    assert (root_xml.get("tests"), root_xml.get("failures"), root_xml.get("errors")) == (
        "6", "3", "1")
    missing = [case for case in root_xml.iter("testcase")
               if (fail := case.find("failure")) is not None and fail.get("type") == "missing"]
    assert sorted((case.get("classname"), case.get("name")) for case in missing) == [
        ("chen", "seed/square"), ("ivo", "seed/square")]
    assert {p.get("name"): p.get("value") for p in missing[0].iter("property")} == {
        "score": "0", "max_score": "3"}
    suites = {s.get("name"): s for s in root_xml.iter("testsuite")}
    assert set(suites) == {"ana", "chen", "ivo"}
    chen_case = next(c for c in suites["chen"].iter("testcase")
                     if c.get("name") == "seed/nonscalar")
    assert chen_case is not None and chen_case.get("name") == "seed/nonscalar"
    failure = chen_case.find("failure")
    assert failure is not None and "got 0.5" in (failure.text or "")
    assert "1.0" not in (failure.text or "")
    ivo_case = next(c for c in suites["ivo"].iter("testcase")
                    if c.get("name") == "seed/nonscalar")
    assert ivo_case is not None and ivo_case.find("error") is not None
    # CSV: a row per student (and nothing else), a column per exercise in course order,
    # its max in its name, a missing submission 0 as in the total
    rows = list(csv.reader(io.StringIO(gradebook_csv(report, ["seed/nonscalar", "seed/mm",
                                                              "seed/square"]))))
    assert rows[0] == ["student", "seed/nonscalar (max 5)", "seed/square (max 3)", "total",
                       "max_total", "percent"]
    assert rows[1:] == [["ana", "5", "3", "8", "8", "100.0"],
                        ["chen", "3", "0", "3", "8", "37.5"],
                        ["ivo", "0", "0", "0", "8", "0.0"]]


def test_load_json_rejects_other_files(tmp_path: Path) -> None:
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps({"version": 3, "status": "pass"}), encoding="utf-8")
    with pytest.raises(ReportError, match="not a tutor grading report"):
        load_json(bad)
    with pytest.raises(ReportError, match="cannot read"):
        load_json(tmp_path / "missing.json")


def test_check_output_is_in_the_report_language(
    seed_lesson: Lesson, sandbox: Sandbox, tmp_path: Path
) -> None:
    """`tests[].output` (got/expected) is written in `lang`, like `message`."""
    root = _layout(tmp_path / "subs", {"chen/seed--nonscalar.py": "corpus:chen/nonscalar.py"})
    submissions, _ = discover(root, _course(seed_lesson))
    outputs = {}
    for lang in ("en", "zh"):
        [entry] = grade_submissions(submissions, runner=sandbox, jobs=1, lang=lang,
                                    cache=ExpectedCache(disk=False), limits=LIMITS,
                                    reveal=True)
        outputs[lang] = next(t.output for t in entry.tests if t.name == "value:x.grad")
    assert outputs["en"] == (
        "got: tensor [0.5, 0.5] (shape (2,), torch.float32)\n"
        "expected: tensor [1.0, 1.0] (shape (2,), torch.float32)"
    )
    assert outputs["zh"] == (
        "得到：tensor [0.5, 0.5]（形状 (2,)，torch.float32）\n"
        "应为：tensor [1.0, 1.0]（形状 (2,)，torch.float32）"
    )


def test_exercise_by_bare_step_id_when_unique(seed_lesson: Lesson) -> None:
    from tutor.cli.grade_cmd import find_exercise
    from tutor.errors import TutorError

    course = _course(seed_lesson)
    lesson, step = find_exercise(course, "square")
    assert (lesson.id, step.id) == ("seed", "square")
    with pytest.raises(TutorError) as raised:
        find_exercise(course, "nonscalar")  # in two lessons: name the lesson
    assert raised.value.hint_in("en") == (
        "did you mean seed/nonscalar, twin/nonscalar? Write LESSON/STEP")
    assert raised.value.hint_in("zh") == "是不是 seed/nonscalar, twin/nonscalar？请写成 LESSON/STEP"


@pytest.mark.parametrize(("given", "suggested"), [
    # the lesson is right, the step is not: its code, fix and quiz steps, never its answer
    # or reading steps (they were: non-scalar/intro, sum-grad, ones-equals-sum)
    ("non-scalar/nope", ["non-scalar/fix-scalar", "non-scalar/gradient-argument",
                         "non-scalar/reproduce-error", "non-scalar/ones-equals-sum"]),
    ("non-scalar/fix-scalr", ["non-scalar/fix-scalar"]),
    ("nonscalar/fix-scalar", ["non-scalar/fix-scalar"]),
])
def test_a_wrong_exercise_suggests_only_gradable_steps(given: str,
                                                       suggested: list[str]) -> None:
    from tutor.cli.grade_cmd import find_exercise
    from tutor.course import load_course
    from tutor.errors import TutorError

    with pytest.raises(TutorError) as raised:
        find_exercise(load_course(None), given)
    assert raised.value.hint_in("en") == (
        f"did you mean {', '.join(suggested)}? Write LESSON/STEP")


def test_a_bare_id_of_an_answer_step_is_found_and_refused_as_such(tmp_path: Path) -> None:
    from tutor.cli.grade_cmd import _exercise_submissions
    from tutor.course import load_course
    from tutor.errors import TutorError

    (tmp_path / "x.py").write_text("x = 1\n")
    with pytest.raises(TutorError) as raised:  # it was "no exercise 'sum-grad'"
        _exercise_submissions(load_course(None), "sum-grad", [tmp_path / "x.py"])
    assert str(raised.value).startswith("non-scalar/sum-grad is an answer step")


def test_resume_regrades_what_an_exercise_change_made_stale(
    seed_lesson: Lesson, sandbox: Sandbox, tmp_path: Path
) -> None:
    """`--resume` kept grades made against an exercise's old checks (it keyed on student,
    exercise and file only): a change of checks, points or hidden inputs regrades."""
    from tutor.grading.batch import split_previous

    root = _layout(tmp_path / "subs", {"ana/seed--nonscalar.py": "corpus:ana/nonscalar.py",
                                       "chen/seed--nonscalar.py": "corpus:chen/nonscalar.py",
                                       "ana/square.py": "corpus:ana/square.py"})
    cache = ExpectedCache(disk=False)
    submissions, _ = discover(root, _course(seed_lesson))
    first = grade_submissions(submissions, runner=sandbox, jobs=2, cache=cache, limits=LIMITS)
    assert split_previous(submissions, first) == (dict(enumerate(first)), 0)

    data = seed_lesson.model_dump(mode="json")
    nonscalar = next(step for step in data["steps"] if step["id"] == "nonscalar")
    nonscalar["checks"][1]["points"] = 4  # the value check is worth more now
    changed = Lesson.model_validate(data)
    submissions, _ = discover(root, _course(changed))
    kept, stale = split_previous(submissions, first)
    assert stale == 2 and [submissions[i].exercise for i in kept] == ["seed/square"]
    again = grade_submissions(submissions, runner=sandbox, jobs=2, cache=cache,
                              limits=LIMITS, previous=first)
    scores = {(e.student, e.exercise): (e.score, e.max_score) for e in again}
    assert scores[("ana", "seed/nonscalar")] == (7.0, 7.0)
    assert scores[("chen", "seed/nonscalar")] == (3.0, 7.0)

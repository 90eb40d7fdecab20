"""Teacher and author commands (grade, lint, start) speak --lang / TUTOR_LANG too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.cli import main
from tutor.cli.grade_cmd import total_line
from tutor.errors import TutorError
from tutor.i18n import T

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"


def _summary(submissions: int, errors: int) -> dict[str, float]:
    return {"submissions": submissions, "passed": 0, "failed": submissions - errors,
            "errors": errors, "not_gradable": 0, "score": 1.0, "max_score": 4.0,
            "percent": 25.0}


def test_grade_summary_counts_in_singular_and_plural() -> None:
    assert total_line(_summary(1, 1), "en") == (
        "1 submission: 0 passed, 0 failed, 1 error, 0 not gradable; score 1/4 (25.0%)"
    )
    three = total_line(_summary(3, 2), "en")
    assert three.startswith("3 submissions: 0 passed, 1 failed, 2 errors,")
    assert total_line(_summary(1, 1), "zh") == (
        "共 1 份提交：0 份通过，0 份未通过，1 份出错，0 份无法评分；得分 1/4（25.0%）"
    )


def test_grade_summary_with_missing_submissions_in_both_languages() -> None:
    summary = {**_summary(3, 2), "passed": 1, "failed": 0, "missing": 2}
    assert total_line(summary, "en") == (
        "3 submissions: 1 passed, 0 failed, 2 errors, 0 not gradable, 2 missing (scored 0); "
        "score 1/4 (25.0%)"
    )
    assert total_line(summary, "zh") == (
        "共 3 份提交：1 份通过，0 份未通过，2 份出错，0 份无法评分，2 份缺交（计 0 分）；"
        "得分 1/4（25.0%）"
    )


def test_an_error_and_its_hint_are_labelled_in_the_users_language() -> None:
    from argparse import Namespace

    from tutor.cli import _error_text

    bare, hinted = TutorError(T("bad", "坏")), TutorError(T("bad", "坏"), hint=T("do x", "做 x"))
    en, zh = Namespace(lang="en"), Namespace(lang="zh")
    assert [_error_text(bare, en), _error_text(hinted, en)] == [
        "tutor: error: bad", "tutor: error: bad\n  hint: do x"]
    assert [_error_text(bare, zh), _error_text(hinted, zh)] == [
        "tutor: 错误：坏", "tutor: 错误：坏\n  提示：做 x"]


def test_the_lint_progress_line_in_both_languages() -> None:
    from tutor.cli.messages import msg

    assert msg("lint.running_solutions", name="a.yaml") == T(
        "running solutions of a.yaml ...", "正在运行 a.yaml 的参考答案……")


def test_a_bilingual_user_error_keeps_english_for_code_that_reads_it() -> None:
    exc = TutorError(T("no such folder", "文件夹不存在"), hint=T("check it", "检查一下"))
    assert exc.message == "no such folder" and exc.hint == "check it"
    assert str(exc) == "no such folder\n  hint: check it"
    assert (exc.message_in("zh"), exc.hint_in("zh")) == ("文件夹不存在", "检查一下")
    plain = TutorError("same in both")
    assert plain.message_in("zh") == "same in both" and plain.hint_in("zh") is None


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().err


def test_grade_errors_in_chinese(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grade", str(tmp_path / "nope"), "--lang", "zh", "--lessons", str(MINI)]) == 2
    err = _err(capsys)
    assert f"tutor: 错误：{tmp_path / 'nope'}：文件夹不存在" in err
    assert "提示：请按 SUBMISSIONS_DIR/<学生>/<步骤id>.py 放置提交" in err
    assert main(["grade", "x", "--jobs", "0", "--lang", "zh"]) == 2
    assert "--jobs 至少为 1" in _err(capsys)
    assert main(["grade", "--exercise", "nope/step", "f.py", "--lang", "zh",
                 "--lessons", str(MINI)]) == 2
    assert "课程中没有练习 'nope/step'" in _err(capsys)


def test_grade_errors_follow_tutor_lang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUTOR_LANG", "zh")
    assert main(["grade", str(tmp_path), "--resume", "--lessons", str(MINI)]) == 2
    assert "--resume 从 --json FILE 读取上次的结果" in _err(capsys)
    monkeypatch.setenv("TUTOR_LANG", "en")
    assert main(["grade", str(tmp_path), "--resume", "--lessons", str(MINI)]) == 2
    assert "--resume reads the results of the last run" in _err(capsys)


def test_lint_summary_and_errors_in_chinese(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["lint", "--static-only", "--lang", "zh", str(MINI)]) == 0
    assert capsys.readouterr().out.strip().endswith("2 个课程，9 个步骤：全部通过")
    assert main(["lint", "--static-only", str(tmp_path / "none.yaml"), "--lang", "zh"]) == 2
    err = _err(capsys)
    assert "文件或文件夹不存在" in err and "请给出课程文件或文件夹" in err
    assert main(["lint", "--static-only", str(tmp_path), "--lang", "zh"]) == 2
    assert "这个文件夹中没有课程文件" in _err(capsys)


def test_lint_summary_with_problems_in_both_languages(tmp_path: Path) -> None:
    from tutor.course.lint import lint_paths

    lesson = tmp_path / "l.yaml"
    lesson.write_text("id: x\ntitle: {en: X, zh: 叉}\nsteps: []\n", encoding="utf-8")
    report = lint_paths([lesson])
    assert report.summary() == "1 problem in 1 file"
    assert report.summary("zh") == "1 个文件中有 1 个问题"


def test_lint_summary_counts_in_both_languages() -> None:
    from tutor.course.lint import LintReport, lint_paths
    from tutor.course.loader import Problem

    loaded = lint_paths([MINI]).loaded  # 2 lessons, 9 steps

    def summary(*problems: tuple[str, str]) -> tuple[str, str]:
        report = LintReport(loaded=loaded, problems=[
            Problem(Path(path), 1, 1, "m", "warning" if kind == "w" else "error")
            for path, kind in problems])
        return report.summary("en"), report.summary("zh")

    assert summary() == ("2 lessons, 9 steps: all clean", "2 个课程，9 个步骤：全部通过")
    assert summary(("a", "w")) == ("2 lessons, 9 steps: no errors, 1 warning in 1 file",
                                   "2 个课程，9 个步骤：没有错误，1 个文件中有 1 条警告")
    assert summary(("a", "w"), ("b", "w"), ("b", "w")) == (
        "2 lessons, 9 steps: no errors, 3 warnings in 2 files",
        "2 个课程，9 个步骤：没有错误，2 个文件中有 3 条警告")
    assert summary(("a", "e"), ("a", "w")) == ("2 problems (1 warning) in 1 file",
                                               "1 个文件中有 2 个问题（其中 1 条警告）")
    assert summary(("a", "e"), ("b", "w"), ("c", "w"), ("c", "e")) == (
        "4 problems (2 warnings) in 3 files", "3 个文件中有 4 个问题（其中 2 条警告）")


def test_start_errors_in_chinese(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--dir", str(tmp_path / "ex"), "--lessons", str(MINI),
              "--data-dir", str(tmp_path / "data"), "--lang", "zh"]
    assert main(["start", "99", *common]) == 2
    err = _err(capsys)
    assert "课程中没有课程 '99'" in err and "请用课程 id 或 1-2 的编号" in err
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert main(["start", "--dir", str(tmp_path / "file" / "ex"), "--lessons", str(MINI),
                 "--data-dir", str(tmp_path / "data"), "--lang", "zh"]) == 2
    err = _err(capsys)
    assert err.startswith("tutor: 错误：无法读取 ") and "Traceback" not in err

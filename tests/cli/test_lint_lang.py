"""`tutor lint` writes its problem lines in --lang / TUTOR_LANG (QA2 #7); English unchanged."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tutor.cli import main

LESSON = """\
id: mine
steps:
  - id: ex1
    kind: reading
    title: {en: R, zh: 读}
    body: {en: hello, zh: 你好}
  - id: ex1
    kind: reading
    title: {en: R, zh: 读}
    body: {en: hello, zh: 你好}
"""


@pytest.fixture
def lesson(tmp_path: Path) -> Path:
    path = tmp_path / "01-mine.yaml"
    path.write_text(LESSON, encoding="utf-8")
    return path


def _lint(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["lint", "--static-only", *args]) == 1
    return capsys.readouterr().out.splitlines()


def test_problem_lines_follow_lang(lesson: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _lint([str(lesson), "--lang", "zh"], capsys) == [
        f"{lesson}:1:1: 课程的顶层缺少必需的键 'title'",
        "1 个文件中有 1 个问题",
    ]
    lesson.write_text(LESSON.replace("id: mine\n", "id: mine\ntitle: {en: M, zh: 我的}\n"),
                      encoding="utf-8")
    assert _lint([str(lesson), "--lang", "zh"], capsys) == [
        f"{lesson}:8:9: 步骤 id 'ex1' 重复（第 4 行也有）",
        "1 个文件中有 1 个问题",
    ]
    assert _lint([str(lesson), "--lang", "en"], capsys) == [
        f"{lesson}:8:9: duplicate step id 'ex1' (also on line 4)",
        "1 problem in 1 file",
    ]


def test_tutor_lang_picks_chinese(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUTOR_LANG", "zh")
    other = tmp_path / "notyaml.py"
    other.write_text("import torch\n", encoding="utf-8")
    [line, summary] = _lint([str(other)], capsys)
    assert line == (
        f"{other}:1:1: 一个课程是一个映射（id:、title:、steps:），但这个文件里是纯文本"
        "（这是课程文件吗？课程是 *.yaml，这个是 '.py'）"
    )
    assert summary == "1 个文件中有 1 个问题"


def test_pydantic_s_own_words_are_chinese_in_zh_lint_lines(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a reading's title given a number: pydantic says "Input should be a valid string"
    path = tmp_path / "01-typed.yaml"
    path.write_text(LESSON.replace("id: mine\n", "id: mine\ntitle: 7\n")
                    .replace("  - id: ex1\n    kind: reading\n    title: {en: R, zh: 读}\n"
                             "    body: {en: hello, zh: 你好}\n", "", 1), encoding="utf-8")
    zh = _lint([str(path), "--lang", "zh"], capsys)
    en = _lint([str(path), "--lang", "en"], capsys)
    assert any("should be" in line for line in en), en
    assert not any("should" in line or "Input" in line for line in zh), zh
    assert any("应为" in line for line in zh), zh


@pytest.mark.parametrize(("lang", "said", "hint"), [
    ("en", "running the reference solutions is not available", "use --static-only"),
    ("zh", "无法运行参考答案", "用 --static-only"),
])
def test_lint_without_the_grader_says_so_in_the_language(
    lesson: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    lang: str, said: str, hint: str,
) -> None:
    monkeypatch.setitem(sys.modules, "tutor.grading.selfcheck", None)
    assert main(["lint", str(lesson), "--lang", lang]) == 2
    err = capsys.readouterr().err
    assert said in err and hint in err

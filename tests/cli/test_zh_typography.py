"""Chinese on the command line is set as Chinese: a full-width colon after a Chinese label
(``错误：``, ``提示：``, ``选项：``, argparse's headings included) and full-width brackets
around Chinese words (``intro（阅读）``). Each of these read ``错误: ``, ``选项:``,
``intro (阅读)``; an interrupted command said so in English only."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tutor.cjk import HAN
from tutor.cli import main
from tutor.i18n import load_messages

CLI = Path(__file__).resolve().parents[2] / "tutor" / "cli"
MINI_COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"
HALF_WIDTH_COLON = re.compile(rf"[{HAN}）」”】]:")
"""A half-width colon after Chinese (``提示: ``)."""
HALF_WIDTH_BRACKETS = re.compile(rf"[(\[](?=[^()\[\]]*[{HAN}])[^()\[\]]*[)\]]")
"""Half-width brackets around Chinese words (``(阅读)``, ``[错误]``)."""


def _chinese_texts() -> list[tuple[str, str]]:
    """(where, text) for every Chinese text of the command line: its two catalogs and each
    ``T(en, zh)`` in its modules (the constant parts of an f-string)."""
    found = [(f"{path.name}: {key}", text.zh)
             for path in (CLI / "messages.yaml", CLI / "help.yaml")
             for key, text in load_messages(path).items()]
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "T" \
                    and len(node.args) == 2:
                parts = [n.value for n in ast.walk(node.args[1])
                         if isinstance(n, ast.Constant) and isinstance(n.value, str)]
                found.append((f"{path.name}:{node.lineno}", "".join(parts)))
    return found


def test_the_command_lines_chinese_uses_full_width_colons_and_brackets() -> None:
    texts = _chinese_texts()
    assert len(texts) > 250
    assert [(where, text) for where, text in texts if HALF_WIDTH_COLON.search(text)
            or HALF_WIDTH_BRACKETS.search(text)] == []


def test_the_check_sees_half_width_marks() -> None:
    for wrong in ("tutor: 错误: 坏", "  提示: 做 x", "intro (阅读)", "[错误] 标题", "诊断: x"):
        assert HALF_WIDTH_COLON.search(wrong) or HALF_WIDTH_BRACKETS.search(wrong), wrong
    for right in ("tutor: 错误：坏", "intro（阅读）", "[x] (line 3)", "`path:line:col: message`"):
        assert not (HALF_WIDTH_COLON.search(right) or HALF_WIDTH_BRACKETS.search(right)), right


def test_an_error_and_its_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--lang", "zh", "run", str(tmp_path / "x.py")]) == 2
    assert capsys.readouterr().err == (f"tutor: 错误：{tmp_path / 'x.py'}：文件不存在\n"
                                       "  提示：检查路径后再试一次\n")


def test_argparses_own_words(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--lang", "zh", "run"])
    assert capsys.readouterr().err.endswith("tutor run: 错误：缺少必需的参数：FILE\n")
    with pytest.raises(SystemExit):
        main(["--lang", "zh", "lint", "--help"])
    out = capsys.readouterr().out
    assert "\n位置参数：\n" in out and "\n选项：\n" in out
    assert not re.search(rf"[{HAN}]:$", out, re.MULTILINE)
    with pytest.raises(SystemExit):
        main(["--lang", "en", "lint", "--help"])
    assert "\npositional arguments:\n" in capsys.readouterr().out


def test_the_lessons_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--lang", "zh", "lessons", "--lessons", str(MINI_COURSE)]) == 0
    out = capsys.readouterr().out
    assert "intro（阅读）" in out and "fix-scalar（改错）" in out and "(" not in out
    assert main(["--lang", "en", "lessons", "--lessons", str(MINI_COURSE)]) == 0
    assert "intro (reading)" in capsys.readouterr().out


@pytest.mark.parametrize(("lang", "said"),
                         [("en", "tutor: interrupted\n"), ("zh", "tutor: 已中断\n")])
def test_an_interrupted_command_says_so_in_its_language(
        lang: str, said: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tutor.cli import lessons_cmd

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(lessons_cmd, "run", interrupted)
    assert main(["--lang", lang, "lessons"]) == 130
    assert capsys.readouterr().err == said

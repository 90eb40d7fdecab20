"""Usage errors, schema errors and a learner's syntax error under ``diagnose --static``, in
the user's language and with the right exit code (QA2 #7, #11, #12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.cli import main
from tutor.cli.parser import lang_from_argv


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    return capsys.readouterr().err


def test_an_invalid_value_is_explained_in_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error(["--lang", "zh", "run", "--timeout", "abc", "x.py"], capsys)
    assert err.startswith("用法： tutor run ")
    assert "tutor run: 错误：参数 --timeout：'abc' 不是有效的 float 值" in err
    assert "invalid" not in err and "usage" not in err


def test_unrecognized_and_missing_arguments_follow_tutor_lang(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TUTOR_LANG", "zh")
    assert "tutor: 错误：无法识别的参数：--bogus" in usage_error(["run", "x.py", "--bogus"], capsys)
    assert "tutor run: 错误：缺少必需的参数：FILE" in usage_error(["run"], capsys)
    # --lang on the command line wins over TUTOR_LANG, even when written after the command
    err = usage_error(["run", "--lang", "en"], capsys)
    assert "tutor run: error: the following arguments are required: FILE" in err


def test_english_usage_errors_are_argparse_own(capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error(["--lang", "en", "run", "--timeout", "abc", "x.py"], capsys)
    assert err.startswith("usage: tutor run ")
    assert "tutor run: error: argument --timeout: invalid float value: 'abc'" in err


def test_wrapped_usage_lines_stay_aligned_under_the_chinese_label(
    capsys: pytest.CaptureFixture[str],
) -> None:
    en = usage_error(["--lang", "en", "frob"], capsys).splitlines()
    zh = usage_error(["--lang", "zh", "frob"], capsys).splitlines()
    assert en[1:-1] == zh[1:-1], "only the label and the error line change"
    assert "无效的选项 'frob'（可选：'lessons'" in zh[-1]


@pytest.mark.parametrize(("argv", "chinese"), [
    (["run", "x.py", "--lang", "fr"], "参数 --lang：无效的选项 'fr'（可选：'en', 'zh'）"),
    (["grade", "subs", "--jobs", "1.5"], "参数 --jobs/-j：'1.5' 不是有效的 int 值"),
    (["run", "x.py", "--timeout"], "参数 --timeout：后面需要一个值"),
    (["run", "x.py", "--bogus", "1"], "无法识别的参数：--bogus 1"),
])
def test_usage_errors_come_from_the_catalog(argv: list[str], chinese: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error(["--lang", "zh", *argv], capsys)
    said = err.splitlines()[-1]
    assert err.startswith("用法： tutor") and chinese in said
    for english in ("error", "argument", "invalid", "expected", "unrecognized"):
        assert english not in said


def test_lang_from_argv_takes_the_last_valid_one() -> None:
    assert lang_from_argv(["--lang", "en", "run", "--lang=zh"]) == "zh"
    assert lang_from_argv(["run", "--lang"]) is None
    assert lang_from_argv(["--lang", "fr"]) is None


def test_schema_takes_lang_and_says_a_write_error_in_chinese(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schema", "--lang", "zh", "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"tutor: 错误：{tmp_path}：无法写入 schema：这是一个文件夹" in err
    assert "提示：请为 --output 选择一个可写的路径" in err
    assert main(["--lang", "en", "schema", "-o", str(tmp_path / "no" / "s.json")]) == 2
    assert "cannot write the schema: No such file or directory" in capsys.readouterr().err
    out = tmp_path / "s.json"
    assert main(["schema", "--lang", "zh", "-o", str(out)]) == 0
    assert '"$schema"' in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(("lang", "header"), [
    ("en", "SyntaxError on line 2: '(' was never closed"),
    ("zh", "第 2 行出现 SyntaxError：'(' was never closed"),
])
def test_diagnose_static_explains_a_syntax_error_and_exits_1(
    lang: str, header: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a learner's broken file is their code failing (exit 1, as `run` and `diagnose` do), not
    # a usage error (it was exit 2 with "cannot be parsed")
    broken = tmp_path / "syn.py"
    broken.write_text("import torch\nx = (1\n", encoding="utf-8")
    assert main(["diagnose", "--static", str(broken), "--lang", lang]) == 1
    out = capsys.readouterr().out
    assert out.startswith(header)
    assert "`x = (1`" in out and "errors/intro" in out
    fine = tmp_path / "ok.py"
    fine.write_text("import torch\nx = torch.ones(2)\n", encoding="utf-8")
    assert main(["diagnose", "--static", str(fine), "--lang", lang]) == 0


def test_command_line_mistakes_in_run_and_diagnose_speak_chinese(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "ok.py"
    script.write_text("x = 1\n", encoding="utf-8")
    assert main(["--lang", "zh", "run", str(script), "--timeout", "-1"]) == 2
    assert "--timeout 必须是正的秒数" in capsys.readouterr().err
    assert main(["--lang", "zh", "diagnose"]) == 2
    assert "没有要诊断的内容" in capsys.readouterr().err
    assert main(["--lang", "zh", "diagnose", "--list", str(script)]) == 2
    assert "只能给一个" in capsys.readouterr().err


def test_speaking_chinese_to_argparse_leaves_the_process_as_it_was(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The parser speaks through gettext's global domain and ``LANGUAGE`` while it works; after
    a Chinese usage error both are back, so nothing else in the process is translated."""
    import gettext
    import os

    monkeypatch.setenv("LANGUAGE", "fr")
    domain = gettext.textdomain()
    assert "错误" in usage_error(["--lang", "zh", "run"], capsys)
    assert (gettext.textdomain(), os.environ["LANGUAGE"]) == (domain, "fr")
    monkeypatch.delenv("LANGUAGE")
    assert "错误" in usage_error(["--lang", "zh", "run"], capsys)
    assert "LANGUAGE" not in os.environ

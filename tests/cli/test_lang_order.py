"""One order for the language of every face, the app's and each command's: ``--lang``, then
``TUTOR_LANG``, then the language saved in the app (``settings.json`` in the data directory),
then the locale (or what a command knows better: the exercise files' language, the
question's). The commands ignored the saved language: a learner who picked 中文 in the app
got English from `tutor lessons`, `list`, `run`, `ask` and the help."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tutor.cli import main
from tutor.cli.app_cmd import app_choices
from tutor.cli.ask_cmd import answer_lang
from tutor.settings import Settings, choose_lang

MINI_COURSE = Path(__file__).resolve().parents[1] / "fixtures" / "mini_course"


@pytest.fixture(autouse=True)
def _english_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TUTOR_LANG", raising=False)
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")


def _saved(data: Path, lang: str) -> Path:
    data.mkdir(parents=True, exist_ok=True)
    (data / "settings.json").write_text(json.dumps({"lang": lang}), encoding="utf-8")
    return data


def test_the_order(monkeypatch: pytest.MonkeyPatch) -> None:
    zh, nothing = Settings(lang="zh"), Settings()
    assert choose_lang(None, nothing) == "en"  # the locale
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    assert choose_lang(None, nothing) == "zh"
    assert choose_lang(None, nothing, otherwise=lambda: "en") == "en"
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")
    assert choose_lang(None, zh) == "zh"  # the saved language over the locale
    assert choose_lang(None, zh, otherwise=lambda: "en") == "zh"
    monkeypatch.setenv("TUTOR_LANG", "en")
    assert choose_lang(None, zh) == "en"  # TUTOR_LANG over the saved language
    assert choose_lang("zh", Settings(lang="en")) == "zh"  # --lang over all
    monkeypatch.setenv("TUTOR_LANG", "fr")  # not a language: as if unset
    assert choose_lang(None, zh) == "zh"


def test_the_app_takes_the_same_order(monkeypatch: pytest.MonkeyPatch) -> None:
    args = argparse.Namespace(lang=None, device=None)
    assert app_choices(args, Settings(lang="zh")) == ("zh", "auto")
    monkeypatch.setenv("TUTOR_LANG", "en")
    assert app_choices(args, Settings(lang="zh")) == ("en", "auto")


def test_a_command_speaks_the_language_saved_in_the_app(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(_saved(tmp_path / "data", "zh"))
    assert main(["lessons", "--lessons", str(MINI_COURSE), "--data-dir", data]) == 0
    assert "标题" in capsys.readouterr().out
    assert main(["--data-dir", data, "lessons", "--lessons", str(MINI_COURSE), "--lang", "en"]) == 0
    assert "title" in capsys.readouterr().out
    monkeypatch.setenv("TUTOR_LANG", "en")
    assert main(["lessons", "--lessons", str(MINI_COURSE), "--data-dir", data]) == 0
    assert "title" in capsys.readouterr().out


def test_errors_and_help_follow_the_saved_language(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = str(_saved(tmp_path / "data", "zh"))
    assert main(["run", str(tmp_path / "missing.py"), "--data-dir", data]) == 2
    assert capsys.readouterr().err.startswith("tutor: 错误")
    with pytest.raises(SystemExit):
        main(["--data-dir", data, "lint", "--help"])
    assert capsys.readouterr().out.startswith("用法： tutor lint")
    with pytest.raises(SystemExit):
        main([f"--data-dir={data}", "run"])  # a usage error, before any namespace
    assert "缺少必需的参数" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--data-dir", str(tmp_path / "elsewhere"), "lint", "--help"])
    assert capsys.readouterr().out.startswith("usage: tutor lint")


def test_the_exercise_commands_follow_the_app_then_the_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"

    def cli(*args: str) -> int:
        return main(["--lessons", str(MINI_COURSE), "--data-dir", str(data), *args,
                     "--dir", str(tmp_path / "exercises")])

    assert cli("start", "--lang", "en") == 0
    capsys.readouterr()
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    assert cli("list") == 0  # nothing saved: the files' language, not the locale
    assert "exercises passed" in capsys.readouterr().out
    _saved(data, "zh")
    assert cli("list") == 0
    assert "个练习已通过" in capsys.readouterr().out
    monkeypatch.setenv("TUTOR_LANG", "en")
    assert cli("list") == 0
    assert "exercises passed" in capsys.readouterr().out


def test_ask_answers_in_the_saved_language_else_the_questions(tmp_path: Path) -> None:
    def asked(question: str, data: Path) -> str:
        return answer_lang(argparse.Namespace(question=question, data_dir=data))

    nothing = tmp_path / "none"
    assert asked("why is x.grad None?", nothing) == "en"
    assert asked("为什么 x.grad 是 None？", nothing) == "zh"
    assert asked("why is x.grad None?", _saved(tmp_path / "data", "zh")) == "zh"

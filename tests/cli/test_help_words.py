"""Every command's help in both languages: the English exactly as it was (the files in
``help_en/``), the Chinese without an English sentence outside code, option names and
metavars."""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tutor.cjk import HAN_RE
from tutor.cli import build_parser, main
from tutor.cli.messages import help_text
from tutor.cli.parser import cells
from tutor.i18n import LANGS

ENGLISH = Path(__file__).with_name("help_en")
"""``tutor [COMMAND [KIND]] --help`` in English at 80 columns, one file each."""
COLUMNS = "80"
ENGLISH_SENTENCE = re.compile(r"[A-Za-z][A-Za-z'-]*(?: [A-Za-z][A-Za-z'-]*){2,}")
"""Three English words in a row."""


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
              ) -> Iterator[tuple[str, ...]]:
    """Every command path of the command line: (), ("lint",), ("export", "canvas"), ..."""
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(build_parser("en")))


def _parser(lang: str, path: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = build_parser(lang)
    for name in path:
        [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = sub.choices[name]
    return parser


def _file(path: tuple[str, ...]) -> Path:
    return ENGLISH / (".".join(("tutor", *path)) + ".txt")


def help_text_in(lang: str, path: tuple[str, ...]) -> str:
    """What ``tutor --lang LANG PATH... --help`` prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_info:
        main(["--lang", lang, *path, "--help"])
    assert exit_info.value.code == 0
    return out.getvalue()


@pytest.fixture(autouse=True)
def _columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", COLUMNS)


def test_every_command_has_its_english_help_on_file() -> None:
    assert len(COMMANDS) == 1 + 16 + 4
    assert sorted(p.name for p in ENGLISH.glob("*.txt")) == sorted(_file(p).name
                                                                    for p in COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(("tutor", *p)))
def test_english_help_is_unchanged(path: tuple[str, ...]) -> None:
    assert help_text_in("en", path) == _file(path).read_text(encoding="utf-8")


def _code_in(parser: argparse.ArgumentParser) -> set[str]:
    """What the help shows as it is in every language: option names, metavars, choices."""
    names: set[str] = set()
    for action in parser._actions:
        names.update(action.option_strings)
        for shown in (action.metavar if isinstance(action.metavar, tuple) else (action.metavar,)):
            if shown:
                names.add(shown)
        if not action.option_strings and action.metavar is None:
            names.add(action.dest)
        names.update(str(choice) for choice in action.choices or ())
    return names


def _prose(text: str, code: set[str]) -> str:
    """The help after its usage lines, without `code` spans and the names in ``code``."""
    _usage, _, rest = text.partition("\n\n")
    rest = re.sub(r"`[^`]*`", " ", rest)
    for name in sorted(code, key=len, reverse=True):
        rest = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", " ", rest)
    return rest


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(("tutor", *p)))
def test_chinese_help_has_no_english_sentence(path: tuple[str, ...]) -> None:
    text = help_text_in("zh", path)
    assert text.startswith("用法： tutor")
    prose = _prose(text, _code_in(_parser("zh", path)))
    assert re.search(r"[\u4e00-\u9fff]", prose)
    assert [line for line in prose.splitlines() if ENGLISH_SENTENCE.search(line)] == []


@pytest.mark.parametrize("columns", ["60", "80", "120"])
def test_chinese_help_fits_the_terminal(columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """argparse wraps by characters and a Chinese one takes two columns: the Chinese help ran
    past the terminal (the lint description's lines were 150 columns wide at 80)."""
    monkeypatch.setenv("COLUMNS", columns)
    width = int(columns) - 2  # argparse's own margin
    wide = [(path, line) for path in COMMANDS for line in help_text_in("zh", path).splitlines()
            if cells(line) > width and cells(line) != len(line)]
    assert wide == []


def _broken_only_at_spaces(original: str, lines: list[str]) -> bool:
    """Whether ``lines`` are ``original`` broken up, losing at most the spaces they broke at
    (a space inside a line that ``original`` does not have is a wrong one)."""
    shown, i = "".join(lines), 0
    for char in shown:
        while i < len(original) and original[i] != char and original[i] == " ":
            i += 1
        if i == len(original) or original[i] != char:
            return False
        i += 1
    return original[i:].strip() == ""


@pytest.mark.parametrize("columns", range(40, 101, 3))
def test_chinese_help_is_broken_again_where_chinese_breaks(
        columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from tutor.cli.parser import TutorArgumentParser

    monkeypatch.setenv("COLUMNS", str(columns))
    texts = [help_text(key).zh for key in ("ask.description", "grade.description",
                                           "grade.shard", "start.description")]
    parser = TutorArgumentParser(lang="zh", prog="tutor", description=texts[0])
    for n, text in enumerate(texts[1:]):
        parser.add_argument(f"--option-{n}", metavar="X", help=text)
    lines = parser.format_help().splitlines()
    for text in texts:
        first = next(i for i, line in enumerate(lines) if text[:4] in line)
        column = lines[first].index(text[:4])
        paragraph = [lines[first][column:]]
        for line in lines[first + 1:]:
            if line[:column].strip() or not line[column:column + 1].strip():
                break
            paragraph.append(line[column:])
        assert _broken_only_at_spaces(text, paragraph), paragraph
        assert all(cells(line) <= columns - 2 - column for line in paragraph), paragraph
        assert not any(line[:1] in "，。、；：）”" and HAN_RE.match(before[-1:])
                       for before, line in itertools.pairwise(paragraph)), paragraph


def test_the_check_finds_english_prose() -> None:
    """The check above on a help that was English: today's (and what zh showed before)."""
    english = _file(("lint",)).read_text(encoding="utf-8")
    prose = _prose(english, _code_in(_parser("en", ("lint",))))
    assert ENGLISH_SENTENCE.search(prose)
    assert not ENGLISH_SENTENCE.search(_prose("usage: x\n\n  --static-only `a b c d` 只做检查",
                                              {"--static-only"}))


def test_every_help_text_has_both_languages_and_is_used() -> None:
    """Each entry of help.yaml is said by some command's help, in both languages (compared
    without white space: argparse wraps the lines, and may wrap Chinese inside a phrase; an
    entry with {placeholders} piece by piece)."""

    def bare(text: str) -> str:
        return re.sub(r"\s+", "", text)

    shown = {lang: bare("".join(help_text_in(lang, p) for p in COMMANDS)) for lang in LANGS}
    unused = [key for key, text in help_text.texts().items()
              if not all(bare(piece) in shown[lang] for lang in LANGS
                         for piece in re.split(r"\{\w+\}", text.get(lang)))]
    assert unused == []


if __name__ == "__main__":  # rewrite help_en/ after a deliberate change of the English
    os.environ["COLUMNS"] = COLUMNS
    for command in COMMANDS:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main(["--lang", "en", *command, "--help"])
        _file(command).write_text(out.getvalue(), encoding="utf-8")
    sys.exit(0)

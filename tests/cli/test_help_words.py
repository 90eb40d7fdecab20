"""Every command's help in both languages: the English exactly as it was (the files in
``help_en/``), the Chinese without an English sentence outside code, option names and
metavars."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tutor.cli import build_parser, main

ENGLISH = Path(__file__).with_name("help_en")
"""``tutor [COMMAND [KIND]] --help`` in English at 80 columns, one file each."""
COLUMNS = "80"


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
              ) -> Iterator[tuple[str, ...]]:
    """Every command path of the command line: (), ("lint",), ("export", "canvas"), ..."""
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(build_parser("en")))


def _file(path: tuple[str, ...]) -> Path:
    return ENGLISH / (".".join(("tutor", *path)) + ".txt")


def help_text(lang: str, path: tuple[str, ...]) -> str:
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
    assert help_text("en", path) == _file(path).read_text(encoding="utf-8")


if __name__ == "__main__":  # rewrite help_en/ after a deliberate change of the English
    os.environ["COLUMNS"] = COLUMNS
    for command in COMMANDS:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main(["--lang", "en", *command, "--help"])
        _file(command).write_text(out.getvalue(), encoding="utf-8")
    sys.exit(0)

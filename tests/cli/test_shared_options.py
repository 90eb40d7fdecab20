"""Shared options count before or after the subcommand, on every subcommand."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.cli import SUBCOMMANDS, build_parser

REQUIRED = {"ask": ["q"], "run": ["f.py"], "diagnose": ["f.py"], "grade": ["subs"],
            "reset": ["1"], "preview": ["x"], "export": ["feedback", "r.json", "-o", "out"]}


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_options_before_the_subcommand_are_kept(command: str) -> None:
    parser = build_parser()
    args = parser.parse_args(
        ["--lang", "zh", "--data-dir", "/tmp/d", "--lessons", "/tmp/l", command,
         *REQUIRED.get(command, [])]
    )
    assert args.lang == "zh"
    assert args.data_dir == Path("/tmp/d")
    assert args.lessons == Path("/tmp/l")


def test_options_after_the_subcommand_win() -> None:
    args = build_parser().parse_args(["--lang", "en", "ask", "q", "--lang", "zh"])
    assert args.lang == "zh"


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_options_after_the_subcommand_and_its_arguments_are_kept(command: str) -> None:
    # `tutor lessons --data-dir X` was rejected: every subcommand takes them after its name
    args = build_parser().parse_args(
        [command, *REQUIRED.get(command, []), "--lang", "zh", "--data-dir", "/tmp/d",
         "--lessons", "/tmp/l", "--device", "cpu"])
    assert (args.lang, args.data_dir, args.lessons) == ("zh", Path("/tmp/d"), Path("/tmp/l"))
    assert args.device == "cpu"


@pytest.mark.parametrize("kind", ["feedback", "gradescope", "prairielearn", "canvas"])
def test_export_kinds_take_the_shared_options_too(kind: str) -> None:
    need = {"feedback": ["r.json", "-o", "out"], "canvas": ["r.json", "-o", "out.csv"]}
    rest = need.get(kind, ["--exercise", "a/b", "-o", "out.zip"])
    args = build_parser().parse_args(["export", kind, *rest, "--lang", "zh",
                                      "--lessons", "/tmp/l"])
    assert (args.lang, args.lessons) == ("zh", Path("/tmp/l"))

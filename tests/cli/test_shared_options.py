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

"""``tutor --help`` and every subcommand's ``--help`` exit 0 and explain themselves."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tutor.cli import SUBCOMMANDS, build_parser, main

REPO = Path(__file__).resolve().parents[1]
MIN_DESCRIPTION_WORDS = 8
"""A description shorter than this does not explain what the command does."""


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action


def test_top_level_help_lists_every_subcommand_with_a_summary():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-m", "tutor", "--help"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: tutor")
    assert "PyTorch autograd" in result.stdout
    summaries = {a.dest: a.help for a in _subparsers(build_parser())._choices_actions}
    for name in SUBCOMMANDS:
        assert name in result.stdout
        assert summaries.get(name), f"`tutor {name}` has no one-line help in `tutor --help`"
        assert summaries[name] in " ".join(result.stdout.split())


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_subcommand_help_exits_0_and_explains_itself(name: str, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([name, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: tutor {name}")
    parser = _subparsers(build_parser()).choices[name]
    description = parser.description or ""
    assert len(description.split()) >= MIN_DESCRIPTION_WORDS, f"`tutor {name}` needs a description"
    assert " ".join(description.split()[:MIN_DESCRIPTION_WORDS]) in " ".join(out.split())
    for action in parser._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, f"`tutor {name}` option {action.option_strings[0]} has no help"


def test_every_subcommand_module_registers_cheaply():
    """Registering must not import torch, textual or the lesson models (every ``tutor``
    start builds the whole command line; ``--dir``'s default imported the exercise
    workspace, and with it the models: ~10 ms of the TUI's start-up): `tutor --help`
    stays instant."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    code = (
        "import argparse, sys\n"
        "from tutor.cli import add_subcommand\n"
        "sub = argparse.ArgumentParser().add_subparsers()\n"
        f"for name in {list(SUBCOMMANDS)!r}:\n"
        "    add_subcommand(sub, name)\n"
        "heavy = ('torch', 'textual', 'tutor.workspace', 'tutor.course.models')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"

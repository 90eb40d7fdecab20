"""``tutor reset EXERCISE``: put an exercise file back to its starter code."""

from __future__ import annotations

import argparse

from tutor.cli.exercise_files import add_exercise_argument, add_exercise_options
from tutor.cli.messages import msg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_exercise_argument(parser)
    add_exercise_options(parser)


def run(args: argparse.Namespace) -> int:
    from tutor.cli.exercise_files import open_with_view

    with open_with_view(args, runs=False) as (files, view):
        entry = files.find(args.exercise)
        backup = files.reset(entry)
        view.say(msg("reset.done", n=files.number_of(entry), path=entry.path), style="bold")
        if backup is not None:
            view.say(msg("reset.backup", backup=backup))
    return 0

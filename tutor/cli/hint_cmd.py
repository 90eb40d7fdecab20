"""``tutor hint [EXERCISE]``: the next hint of an exercise, one more each time (remembered,
and shared with the app and ``tutor watch``)."""

from __future__ import annotations

import argparse

from tutor.cli.exercise_files import add_exercise_argument, add_exercise_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_exercise_argument(parser, optional=True)
    add_exercise_options(parser)


def run(args: argparse.Namespace) -> int:
    from tutor.cli.exercise_files import open_with_view

    with open_with_view(args, runs=False) as (files, view):
        entry = files.find(args.exercise) if args.exercise else files.starting_entry()
        _, step = files.step_of(entry)
        view.line(f"{files.number_of(entry)}. {entry.path} · {step.title.get(view.lang)}",
                  style="bold")
        view.hint(files.hint(entry))
    return 0

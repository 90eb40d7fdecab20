"""``tutor reset EXERCISE``: put an exercise file back to its starter code."""

from __future__ import annotations

import argparse

from tutor.cli.exercise_files import add_exercise_argument, add_exercise_options
from tutor.i18n import T

MSG = {
    "done": T(
        "Reset {n}. {path} to the starter code. Your progress and hints are kept.",
        "已将 {n}. {path} 恢复为初始代码。你的进度和提示保持不变。",
    ),
    "backup": T(
        "Your previous code is in {backup}.",
        "你之前的代码保存在 {backup}。",
    ),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_exercise_argument(parser)
    add_exercise_options(parser)


def run(args: argparse.Namespace) -> int:
    from tutor.cli.exercise_files import open_with_view

    with open_with_view(args, runs=False) as (files, view):
        entry = files.find(args.exercise)
        backup = files.reset(entry)
        view.say(MSG["done"], style="bold", n=files.number_of(entry), path=entry.path)
        if backup is not None:
            view.say(MSG["backup"], backup=backup)
    return 0

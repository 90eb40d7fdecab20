"""``tutor list``: the exercise files and the progress on each (like ``rustlings list``).

Reads only: no sandbox is started and nothing is graded.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from tutor.cli.exercise_files import add_exercise_options
from tutor.cli.messages import msg

if TYPE_CHECKING:
    from tutor.i18n import Text
    from tutor.learning.exercises import ExerciseStatus


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_exercise_options(parser)


def _row(view_t: Callable[[Text], str], row: ExerciseStatus) -> list[str]:
    status = view_t(msg("list.missing") if row.missing else msg("list.status." + row.status))
    best = "-" if row.best_score is None else f"{row.best_score:g}/{row.max_score or 0:g}"
    hints = f"{row.hints_shown}/{len(row.step.hints)}" if row.step.hints else "-"
    marker = "▶" if row.current else " "
    return [f"{marker}{row.number}", row.entry.path, status, best, str(row.attempts), hints]


def run(args: argparse.Namespace) -> int:
    from rich.table import Table
    from rich.text import Text as RichText

    from tutor.cli.exercise_files import open_with_view

    with open_with_view(args, runs=False) as (files, view):
        view.stale(files.stale)
        rows = files.statuses()
        table = Table(box=None, pad_edge=False)
        for key in ("col.no", "col.file", "list.col.status", "list.col.best",
                    "list.col.attempts", "list.col.hints"):
            # a long file name folds, rather than a score being cut to "0.5…"
            table.add_column(view.t(msg(key)), no_wrap=key != "col.file",
                             overflow="fold" if key == "col.file" else "ellipsis")
        styles = {"passed": "green", "tried": "yellow", "new": "dim"}
        for row in rows:
            table.add_row(*(RichText(cell) for cell in _row(view.t, row)),
                          style=styles[row.status])
        view.console.print(table)
        passed = sum(row.status == "passed" for row in rows)
        view.say(msg("list.summary", passed=passed, total=len(rows)), style="bold")
        if any(row.current for row in rows):
            view.say(msg("list.current"), style="dim")
        if passed == len(rows):
            view.say(msg("list.all_done"), style="bold green")
        else:
            following = files.starting_entry()
            view.say(msg("list.next", n=files.number_of(following), path=following.path))
    return 0

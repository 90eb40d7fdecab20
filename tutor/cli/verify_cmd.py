"""``tutor verify``: grade every exercise file once, print a table and why each failing
exercise fails (CI for your own work).

Verify grades through the learning session, as ``watch`` and the app do: a file's text not
graded before is recorded as an attempt (so ``tutor list`` and the app see what passed); a
text already graded is graded again but not counted again.
"""

from __future__ import annotations

import argparse
import os

from tutor.cli.common import said
from tutor.cli.exercise_files import add_exercise_options
from tutor.cli.messages import msg
from tutor.i18n import T


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_exercise_options(parser, runs=True)
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), metavar="N",
                        help=said(parser, "verify.jobs"))


def run(args: argparse.Namespace) -> int:
    from rich.table import Table

    from tutor.cli.exercise_files import open_with_view
    from tutor.errors import TutorError

    if args.jobs < 1:  # as `tutor grade --jobs 0` says, rather than quietly using 1
        raise TutorError(
            T("--jobs must be at least 1", "--jobs 至少为 1"),
            hint=T("e.g. --jobs 2", "例如 --jobs 2"),
        )
    with open_with_view(args, runs=True) as (files, view):
        view.stale(files.stale)
        results = files.verify(jobs=args.jobs)
        table = Table(show_edge=False, pad_edge=False)
        for key in ("col.no", "col.file", "verify.col.result", "verify.col.score"):
            table.add_column(view.t(msg(key)), no_wrap=True)
        for number, (entry, attempt) in enumerate(results, 1):
            status = attempt.verdict.status if attempt is not None else "missing"
            score = (
                f"{attempt.verdict.score:g}/{attempt.verdict.max_score:g}" if attempt else "-"
            )
            style = "green" if status == "pass" else "red"
            shown = view.t(msg("verify.status." + status))
            table.add_row(str(number), entry.path, f"[{style}]{shown}[/]", score)
        view.console.print(table)
        failing = [
            (number, entry, attempt)
            for number, (entry, attempt) in enumerate(results, 1)
            if attempt is None or not attempt.verdict.passed
        ]
        for number, entry, attempt in failing:
            view.console.print()
            view.say(msg("verify.why", n=number, path=entry.path, ref=entry.ref), style="bold red")
            if attempt is None:
                view.say(msg("verify.missing", n=number))
            else:
                view.why(attempt)
        passed, total = len(results) - len(failing), len(results)
        view.console.print()
        view.say(
            msg("verify.summary", passed=passed, total=total),
            style="bold green" if not failing else "bold red",
        )
        return 0 if not failing else 1

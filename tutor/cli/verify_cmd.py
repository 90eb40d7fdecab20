"""``tutor verify``: grade every exercise file once and print a table (CI for your own work).

Verify only reads: it records no attempts, so running it never changes your progress.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from tutor.cli.common import add_device
from tutor.cli.watch_cmd import add_exercise_options
from tutor.i18n import T

if TYPE_CHECKING:
    from tutor.course.models import Course
    from tutor.workspace import ExerciseEntry

MSG = {
    "col.no": T("#", "#"),
    "col.file": T("file", "文件"),
    "col.result": T("result", "结果"),
    "col.score": T("score", "得分"),
    "status.pass": T("pass", "通过"),
    "status.fail": T("fail", "未通过"),
    "status.error": T("error", "运行出错"),
    "status.not_gradable": T("cannot grade", "无法评分"),
    "status.missing": T("missing", "文件缺失"),
    "summary": T("{passed}/{total} exercises pass", "{passed}/{total} 个练习通过"),
}


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "verify",
        help="grade every exercise file once; exit 1 if any fails",
        description=(
            "Grades every exercise file written by `tutor start` once and prints a table. "
            "Exit status 1 if any exercise does not pass, 0 if all do. Progress is not changed."
        ),
    )
    add_exercise_options(parser)
    add_device(parser)
    parser.add_argument(
        "--jobs",
        type=int,
        default=min(4, os.cpu_count() or 1),
        metavar="N",
        help="exercises graded at once (default: up to 4, by CPU count)",
    )


def _in_course(course: Course, ref: str) -> bool:
    try:
        course.find(ref)
    except KeyError:
        return False
    return True


def run(args: argparse.Namespace) -> int:
    from concurrent.futures import ThreadPoolExecutor

    from rich.console import Console
    from rich.table import Table

    from tutor.cli.watch_cmd import open_exercises
    from tutor.errors import TutorError

    if args.jobs < 1:  # as `tutor grade --jobs 0` says, rather than quietly using 1
        raise TutorError("--jobs must be at least 1")
    console = Console(highlight=False, soft_wrap=True)
    with open_exercises(args) as ctx:
        lang = ctx.lang
        table = Table(show_edge=False, pad_edge=False)
        for key in ("col.no", "col.file", "col.result", "col.score"):
            table.add_column(MSG[key].get(lang), no_wrap=True)
        entries = [
            entry
            for entry in ctx.workspace.load_manifest().exercises
            if _in_course(ctx.course, entry.ref)  # a step gone from the course cannot be graded
        ]

        def grade(entry: ExerciseEntry) -> tuple[str, str, bool]:
            text = ctx.workspace.read(entry)
            if text is None:
                return "missing", "-", False
            lesson, step = ctx.course.find(entry.ref)
            verdict = ctx.grader(lesson, step, text)  # type: ignore[arg-type]
            return verdict.status, f"{verdict.score:g}/{verdict.max_score:g}", verdict.passed

        # the sandbox runs several in parallel; results come back in file order
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(grade, entries))
        passed, total = sum(ok for _, _, ok in results), len(entries)
        for number, (entry, (status, score, _)) in enumerate(zip(entries, results, strict=True), 1):
            style = "green" if status == "pass" else "red"
            table.add_row(
                str(number),
                entry.path,
                f"[{style}]{MSG['status.' + status].get(lang)}[/]",
                score,
            )
        console.print(table)
        console.print(
            MSG["summary"].format(passed=passed, total=total).get(lang),
            style="bold green" if passed == total else "bold red",
            markup=False,
        )
        return 0 if passed == total else 1

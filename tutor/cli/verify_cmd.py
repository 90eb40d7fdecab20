"""``tutor verify``: grade every exercise file once and print a table (CI for your own work).

Verify only reads: it records no attempts, so running it never changes your progress.
"""

from __future__ import annotations

import argparse

from tutor.cli.watch_cmd import add_device_option, add_exercise_options
from tutor.i18n import T

MSG = {
    "col.no": T("#", "#"),
    "col.exercise": T("exercise", "练习"),
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
    add_device_option(parser)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from tutor.cli.watch_cmd import open_exercises

    console = Console(highlight=False, soft_wrap=True)
    with open_exercises(args) as ctx:
        lang = ctx.lang
        table = Table(show_edge=False, pad_edge=False)
        for key in ("col.no", "col.exercise", "col.file", "col.result", "col.score"):
            table.add_column(MSG[key].get(lang), no_wrap=key != "col.exercise")
        passed = total = 0
        entries = ctx.workspace.load_manifest().exercises
        for number, entry in enumerate(entries, 1):
            try:
                lesson, step = ctx.course.find(entry.ref)
            except KeyError:
                continue  # the step is no longer in the course: nothing to grade it against
            total += 1
            text = ctx.workspace.read(entry)
            if text is None:
                status, score = "missing", "-"
            else:
                verdict = ctx.grader(lesson, step, text)  # type: ignore[arg-type]
                status = verdict.status
                score = f"{verdict.score:g}/{verdict.max_score:g}"
                passed += verdict.passed
            style = "green" if status == "pass" else "red"
            table.add_row(
                str(number),
                entry.ref,
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

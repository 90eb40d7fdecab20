"""``tutor lessons``: the course as a table: lessons, their titles, steps and step kinds."""

from __future__ import annotations

import argparse

from tutor.cli.common import add_lang, add_lessons
from tutor.cli.messages import msg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_lang(parser, "lessons.lang")
    add_lessons(parser)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from tutor.cli.common import resolve_lang
    from tutor.course import load_course

    lang = resolve_lang(args)
    course = load_course(getattr(args, "lessons", None))
    table = Table(
        caption=msg(
            "lessons.caption",
            lessons=len(course.lessons),
            steps=sum(len(lesson.steps) for lesson in course.lessons),
        ).get(lang)
    )
    table.add_column(msg("col.no").get(lang), justify="right")
    table.add_column(msg("lessons.lesson").get(lang), no_wrap=True, style="bold")
    table.add_column(msg("lessons.title").get(lang))
    table.add_column(msg("lessons.steps").get(lang))
    for number, lesson in enumerate(course.lessons, start=1):
        steps = "\n".join(msg("lessons.step", step=step.id, kind=msg(f"lessons.{step.kind}"))
                          .get(lang) for step in lesson.steps)
        table.add_row(str(number), lesson.id, lesson.title.get(lang), steps)
    Console().print(table)
    return 0

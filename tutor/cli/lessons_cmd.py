"""``tutor lessons``: the course as a table: lessons, their titles, steps and step kinds."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tutor.cli.common import add_lang, add_lessons

if TYPE_CHECKING:
    from tutor.i18n import Text


def _labels() -> dict[str, Text]:
    """Column heads and step-kind names (built on use: importing this module stays cheap)."""
    from tutor.i18n import T

    return {
        "reading": T("reading", "阅读"),
        "code": T("code", "编程"),
        "fix": T("fix", "改错"),
        "quiz": T("quiz", "测验"),
        "answer": T("answer", "作答"),
        "number": T("#", "#"),
        "lesson": T("lesson", "课程"),
        "title": T("title", "标题"),
        "steps": T("steps (kind)", "步骤（类型）"),
        "caption": T("{lessons} lessons, {steps} steps", "共 {lessons} 课，{steps} 个步骤"),
    }


SUMMARY = "list the course: lessons, steps and their kinds"
DESCRIPTION = (
    "List the lessons of the course (the bundled one, or --lessons DIR) with their "
    "titles and steps, each step with its kind: reading, code, fix, quiz or answer."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_lang(parser, "language of titles (default: from TUTOR_LANG or the locale)")
    add_lessons(parser)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from tutor.cli.common import resolve_lang
    from tutor.course import load_course

    lang = resolve_lang(args)
    labels = _labels()
    course = load_course(getattr(args, "lessons", None))
    table = Table(
        caption=labels["caption"]
        .format(
            lessons=len(course.lessons),
            steps=sum(len(lesson.steps) for lesson in course.lessons),
        )
        .get(lang)
    )
    table.add_column(labels["number"].get(lang), justify="right")
    table.add_column(labels["lesson"].get(lang), no_wrap=True, style="bold")
    table.add_column(labels["title"].get(lang))
    table.add_column(labels["steps"].get(lang))
    for number, lesson in enumerate(course.lessons, start=1):
        steps = "\n".join(f"{step.id} ({labels[step.kind].get(lang)})" for step in lesson.steps)
        table.add_row(str(number), lesson.id, lesson.title.get(lang), steps)
    Console().print(table)
    return 0

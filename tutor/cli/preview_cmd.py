"""``tutor preview LESSON[/STEP]``: one step as the app shows it, for lesson authors.

In a terminal it opens the step alone in a small Textual app (the app's own step pane and,
for an answer step, its code); piped, or with ``--print``, it prints the step's text.
"""

from __future__ import annotations

import argparse
import difflib
from typing import Any

from tutor.cli.common import add_lang, add_lessons, said


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ref", metavar="LESSON[/STEP]", help=said(parser, "preview.ref"))
    parser.add_argument("--print", action="store_true", dest="print_only",
                        help=said(parser, "preview.print"))
    add_lang(parser, "preview.lang")
    add_lessons(parser)


def find_step(course: Any, ref: str) -> tuple[Any, Any]:
    """The lesson and step ``ref`` names; a name that is not there is one clear error
    with the closest names there are."""
    from tutor.errors import TutorError
    from tutor.i18n import T

    lesson_id, _, step_id = ref.partition("/")
    lessons = {lesson.id: lesson for lesson in course.lessons}
    if lesson_id not in lessons:
        close = difflib.get_close_matches(lesson_id, list(lessons), n=3)
        shown = ", ".join(close or list(lessons)[:5])
        raise TutorError(T(f"no lesson {lesson_id!r}", f"没有课程 {lesson_id!r}"),
                         hint=T(f"lessons: {shown} (tutor lessons lists them all)",
                                f"课程：{shown}（tutor lessons 列出全部）"))
    lesson = lessons[lesson_id]
    if not step_id:
        return lesson, lesson.steps[0]
    steps = {step.id: step for step in lesson.steps}
    if step_id not in steps:
        close = difflib.get_close_matches(step_id, list(steps), n=3)
        shown = ", ".join(close or list(steps))
        raise TutorError(T(f"lesson {lesson_id!r} has no step {step_id!r}",
                           f"课程 {lesson_id!r} 中没有步骤 {step_id!r}"),
                         hint=T(f"its steps: {shown}", f"它的步骤：{shown}"))
    return lesson, steps[step_id]


def run(args: argparse.Namespace) -> int:
    import sys

    from tutor.cli.common import resolve_lang
    from tutor.course import load_course

    lang = resolve_lang(args)
    course = load_course(getattr(args, "lessons", None))
    lesson, step = find_step(course, args.ref)
    if args.print_only or not sys.stdout.isatty():
        from rich.console import Console

        from tutor.tui.preview import step_renderables

        console = Console()
        for renderable in step_renderables(lesson, step, lang):
            console.print(renderable)
        return 0
    from tutor.tui.preview import PreviewApp

    PreviewApp(lesson, step, lang).run()
    return 0

"""``tutor start``: write the exercises as Python files to edit in your own editor."""

from __future__ import annotations

import argparse

from tutor.cli.common import said
from tutor.cli.exercise_files import add_exercise_options
from tutor.errors import TutorError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("lesson", nargs="?", metavar="LESSON", help=said(parser, "start.lesson"))
    add_exercise_options(parser)


def _lesson_id(course_ids: list[str], wanted: str) -> str:
    if wanted in course_ids:
        return wanted
    if wanted.isdigit() and 1 <= int(wanted) <= len(course_ids):
        return course_ids[int(wanted) - 1]
    from tutor.i18n import T

    ids, n = ", ".join(course_ids), len(course_ids)
    raise TutorError(
        T(f"no lesson {wanted!r} in the course", f"课程中没有课程 {wanted!r}"),
        hint=T(f"use an id or a number 1-{n}: {ids}", f"请用课程 id 或 1-{n} 的编号：{ids}"),
    )


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rich.console import Console

    from tutor.cli.common import resolve_lang
    from tutor.course import load_course
    from tutor.course.quiz import local_learner
    from tutor.i18n import T, locale_lang
    from tutor.progress import ProgressStore
    from tutor.workspace import Workspace, describe_report

    workspace = Workspace(args.dir)
    manifest = workspace.load_manifest() if workspace.exists() else None
    lessons_dir: Path | None = getattr(args, "lessons", None)
    if lessons_dir is None and manifest is not None and manifest.lessons_dir:
        lessons_dir = Path(manifest.lessons_dir)
    course = load_course(lessons_dir)
    # after --lang, TUTOR_LANG and the app's choice: the language the files are already in
    written = manifest.lang if manifest is not None else None
    lang = resolve_lang(args, otherwise=lambda: written or locale_lang())
    lesson_ids = None
    if args.lesson:
        lesson_ids = [_lesson_id([lesson.id for lesson in course.lessons], args.lesson)]
    with ProgressStore.default(getattr(args, "data_dir", None)) as store:
        report = workspace.write_course(
            course,
            lesson_ids=lesson_ids,
            lang=lang,
            lessons_dir=lessons_dir,
            saved_code=store.last_code,
            learner=local_learner(),  # quiz choices numbered in the app's order for this user
        )
    console = Console(highlight=False, soft_wrap=True)
    for line in describe_report(report, workspace.root):
        console.print(line.get(lang), markup=False)
    if not (report.written or report.updated or report.unchanged or report.kept):
        console.print(
            T("No exercises to write.", "没有需要写入的练习。").get(lang),
            markup=False,
        )
        return 0
    where = "" if str(args.dir) == "autograd-exercises" else f" --dir {args.dir}"
    console.print(
        T(
            "Next: open the files in your editor and run `tutor watch{where}`.",
            "下一步：在编辑器中打开这些文件，然后运行 `tutor watch{where}`。",
        )
        .format(where=where)
        .get(lang),
        style="bold",
        markup=False,
    )
    return 0

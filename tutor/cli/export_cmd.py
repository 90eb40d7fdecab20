"""``tutor export``: grading for the platforms a course already uses.

- ``gradescope --exercise LESSON/STEP... -o autograder.zip``: Gradescope's autograder bundle.
- ``prairielearn --exercise LESSON/STEP... -o grader.zip``: PrairieLearn's external grader.
- ``feedback REPORT.json -o DIR``: a Markdown feedback file per student.
- ``canvas REPORT.json -o grades.csv``: a gradebook CSV Canvas imports.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tutor.cli.common import add_lang, add_lessons, said
from tutor.cli.messages import msg
from tutor.errors import TutorError
from tutor.i18n import T


def add_arguments(parser: argparse.ArgumentParser) -> None:
    kinds = parser.add_subparsers(dest="export_kind", metavar="KIND", required=True)

    def kind(name: str) -> argparse.ArgumentParser:
        what = said(parser, f"export.{name}.summary")
        made: argparse.ArgumentParser = kinds.add_parser(name, help=what, description=what)
        return made

    for name in ("gradescope", "prairielearn"):
        sub = kind(name)
        sub.add_argument("--exercise", action="append", required=True, metavar="LESSON/STEP",
                         help=said(sub, "export.exercise"))
        sub.add_argument("-o", "--output", type=Path, required=True, metavar="ZIP")
        sub.add_argument("--timeout", type=float, default=10.0, metavar="S",
                         help=said(sub, "export.timeout"))
        if name == "gradescope":
            sub.add_argument("--visibility", default="visible",
                             choices=["visible", "after_due_date", "after_published", "hidden"],
                             help=said(sub, "export.visibility"))
        add_lessons(sub)
        add_lang(sub, "option.lang.feedback")
    for name, out in (("feedback", "DIR"), ("canvas", "CSV")):
        sub = kind(name)
        sub.add_argument("report", type=Path, metavar="REPORT.json",
                         help=said(sub, "export.report"))
        sub.add_argument("-o", "--output", type=Path, required=True, metavar=out)
        add_lessons(sub, "export.lessons")
        add_lang(sub)
    from tutor.cli import add_shared_options  # `tutor export canvas ... --data-dir X` too

    for name, sub in kinds.choices.items():
        add_shared_options(sub)
        if name == "canvas":
            sub.add_argument("--id-column", default="SIS Login ID",
                             choices=["SIS Login ID", "SIS User ID", "ID", "Student"],
                             help=said(sub, "export.id_column"))
            sub.add_argument("--roster", type=Path, default=None, metavar="CSV",
                             help=said(sub, "export.roster"))


def _exercises(args: argparse.Namespace) -> tuple[list[str], list[tuple[str, str, str]]]:
    """The refs (LESSON/STEP) and, per exercise, its file name and English prompt."""
    from tutor.cli.grade_cmd import find_exercise
    from tutor.course import load_course
    from tutor.course.models import CodeStep, FixStep

    course = load_course(getattr(args, "lessons", None))
    refs, questions = [], []
    for given in args.exercise:
        lesson, step = find_exercise(course, given)
        ref = f"{lesson.id}/{step.id}"
        if not isinstance(step, (CodeStep, FixStep)):
            raise TutorError(T(f"{ref} is a {step.kind} step; only code and fix steps are "
                               "graded from files",
                               f"{ref} 是 {step.kind} 步骤；只有 code 和 fix 步骤按文件评分"))
        if ref not in refs:
            refs.append(ref)
            questions.append((ref, f"{step.id}.py", step.prompt.en if step.prompt else ref))
    return refs, questions


def _write(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise TutorError(T(f"{path}: cannot be written ({exc.strerror})",
                           f"{path}：无法写入（{exc.strerror}）")) from None


def _course_order(args: argparse.Namespace) -> list[str]:
    from tutor.course import load_course

    course = load_course(getattr(args, "lessons", None))
    return [f"{lesson.id}/{step.id}" for lesson in course.lessons for step in lesson.steps]


def run(args: argparse.Namespace) -> int:
    from tutor.cli.common import resolve_lang

    lang = resolve_lang(args)
    kind = args.export_kind
    if kind in ("gradescope", "prairielearn"):
        from tutor.cli.common import wall_time
        from tutor.export.autograder import AutograderConfig
        from tutor.export.bundle import gradescope_zip, prairielearn_zip

        timeout = wall_time(args)
        refs, questions = _exercises(args)
        lessons = getattr(args, "lessons", None)
        config = AutograderConfig(
            platform=kind, exercises=refs, lang=lang, timeout_s=timeout,
            visibility=getattr(args, "visibility", "visible"),
        )
        if kind == "gradescope":
            data = gradescope_zip(config, lessons)
        else:
            # PrairieLearn's own limit covers the whole job: every exercise, plus start-up
            data = prairielearn_zip(config, lessons, questions,
                                    timeout_s=int(30 + timeout * len(refs)))
        _write(args.output, data)
        print(msg("wrote", path=args.output).get(lang))
        return 0
    from tutor.grading.reports import load_json

    report = load_json(args.report) if args.report.is_file() else None
    if report is None:
        raise TutorError(T(f"{args.report}: no such file", f"{args.report}：文件不存在"),
                         hint=T("give the --json report of `tutor grade`",
                                "请给出 `tutor grade` 的 --json 报告"))
    order = _course_order(args)
    if kind == "feedback":
        from tutor.export.feedback import write_feedback

        if args.output.exists() and not args.output.is_dir():
            raise TutorError(T(f"{args.output}: a file; give a folder for the feedback files",
                               f"{args.output}：这是文件；请给出放反馈文件的文件夹"))
        written = write_feedback(report, args.output, order)
        print(T(f"wrote {len(written)} feedback files to {args.output}",
                f"已在 {args.output} 写入 {len(written)} 份反馈").get(lang))
        return 0
    from tutor.export.canvas import canvas_csv, read_roster, write_canvas

    rows = read_roster(args.roster, args.id_column) if args.roster else None
    if rows is not None:
        from tutor.grading.reports import roster

        unknown = [s for s in roster(report.submissions, report.students) if s not in rows]
        for student in unknown:
            print(T(f"warning: {student} is not in {args.roster} ({args.id_column})",
                    f"警告：{student} 不在 {args.roster}（{args.id_column}）中").get(lang),
                  file=sys.stderr)
    write_canvas(args.output, canvas_csv(report, order, id_column=args.id_column,
                                         roster_rows=rows))
    print(msg("wrote", path=args.output).get(lang))
    return 0

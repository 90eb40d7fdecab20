"""``tutor grade``: headless grading of submissions, for teachers and CI."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tutor.cli import grade_shards
from tutor.cli.common import add_device, add_lang, add_lessons, add_timeout, said, wall_time
from tutor.cli.messages import msg
from tutor.errors import TutorError
from tutor.i18n import Lang, T, counted

if TYPE_CHECKING:
    from tutor.course.models import Course, Lesson, Step
    from tutor.grading.batch import Submission, Unmatched
    from tutor.grading.reports import GradeReport, SubmissionEntry

MAX_EXERCISE_COLUMNS = 6
"""More exercises than this and the summary shows passed/score per student instead."""
STATUS_STYLE = {"pass": "green", "fail": "yellow", "error": "red", "not_gradable": "magenta"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                        help=said(parser, "grade.paths"))
    parser.add_argument("--unconfined", action="store_true",
                        help=said(parser, "grade.unconfined"))
    parser.add_argument("--exercise", metavar="LESSON/STEP", default=None,
                        help=said(parser, "grade.exercise"))
    parser.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                        help=said(parser, "grade.jobs"))
    for report in ("json", "junit", "csv"):
        parser.add_argument(f"--{report}", type=Path, default=None, metavar="FILE",
                            help=said(parser, f"grade.{report}"))
    parser.add_argument("--resume", action="store_true", help=said(parser, "grade.resume"))
    parser.add_argument("--show-expected", action="store_true",
                        help=said(parser, "grade.show_expected"))
    parser.add_argument("--fail-under", type=float, default=None, metavar="PCT",
                        help=said(parser, "grade.fail_under"))
    add_timeout(parser, "grade.timeout")
    add_lessons(parser)
    add_device(parser)
    add_lang(parser, "option.lang.feedback")
    grade_shards.add_shard_option(parser)


def find_exercise(course: Course, ref: str) -> tuple[Lesson, Step]:
    """``LESSON/STEP``, or a step id found in only one lesson; else an error that names the
    gradable refs (code, fix and quiz steps) the teacher may have meant."""
    import difflib

    from tutor.course.models import CodeStep, FixStep, QuizStep

    refs = {f"{lesson.id}/{step.id}": (lesson, step)
            for lesson in course.lessons for step in lesson.steps}
    if ref in refs:  # any kind: the caller says why a quiz or a reading takes no files
        return refs[ref]
    lesson_id, slash, step_id = ref.rpartition("/")
    if not slash:  # a bare step id in one lesson only (of any kind, as above)
        owners = [r for r in refs if r.rpartition("/")[2] == step_id]
        if len(owners) == 1:
            return refs[owners[0]]
    gradable = [r for r, (_, step) in refs.items()
                if isinstance(step, (CodeStep, FixStep, QuizStep))]
    same_id = [r for r in gradable if r.rpartition("/")[2] == step_id]
    in_lesson = {r.rpartition("/")[2]: r for r in gradable if r.startswith(f"{lesson_id}/")}
    if same_id:
        close = same_id
    elif slash and in_lesson:  # the lesson is right: its own steps (the closest, else all)
        near = difflib.get_close_matches(step_id, list(in_lesson), n=3, cutoff=0.6)
        close = [in_lesson[name] for name in near] or list(in_lesson.values())
    else:
        close = difflib.get_close_matches(ref, gradable, n=3, cutoff=0.6)
    if close:
        listed = ", ".join(close)
        hint = T(f"did you mean {listed}? Write LESSON/STEP",
                 f"是不是 {listed}？请写成 LESSON/STEP")
    else:
        hint = T("`tutor lessons` lists the lessons and their steps; write LESSON/STEP of a "
                 "code, fix or quiz step",
                 "`tutor lessons` 会列出课程和步骤；请写成 code、fix 或 quiz 步骤的 LESSON/STEP")
    raise TutorError(T(f"no exercise {ref!r} in the course", f"课程中没有练习 {ref!r}"),
                     hint=hint)


def _a(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def _exercise_submissions(
    course: Course, ref: str, files: list[Path]
) -> list[Submission]:
    from tutor.course.models import CodeStep, FixStep, QuizStep
    from tutor.grading.batch import read_submission

    lesson, step = find_exercise(course, ref)
    ref = f"{lesson.id}/{step.id}"
    if not isinstance(step, (CodeStep, FixStep, QuizStep)):
        raise TutorError(T(f"{ref} is {_a(step.kind)} step; only code, fix and quiz steps "
                           "take files",
                           f"{ref} 是 {step.kind} 步骤；只有 code、fix 和 quiz 步骤可以评阅文件"))
    submissions = []
    for path in files:
        if not path.is_symlink() and path.is_dir():
            raise TutorError(
                T(f"{path}: a folder, not a .py file", f"{path}：这是文件夹，不是 .py 文件"),
                hint=T("give the learner's .py files, or grade a whole folder without "
                       "--exercise: `tutor grade SUBMISSIONS_DIR`",
                       "请给出学生的 .py 文件；要评阅整个文件夹，请不带 --exercise："
                       "`tutor grade SUBMISSIONS_DIR`"),
            )
        if not os.path.lexists(path):
            raise TutorError(T(f"{path}: no such file", f"{path}：文件不存在"),
                             hint=T("give the learner's .py files", "请给出学生的 .py 文件"))
        submissions.append(read_submission(path, str(path), str(path), lesson, step))
    return submissions


def _directory_submissions(
    course: Course, paths: list[Path]
) -> tuple[list[Submission], list[Unmatched], list[str]]:
    """The submissions, the files that matched nothing, and every student folder."""
    from tutor.grading.batch import discover, student_folders

    if len(paths) != 1:
        raise TutorError(T(
            "give one SUBMISSIONS_DIR, or --exercise LESSON/STEP with the files to grade",
            "请给出一个 SUBMISSIONS_DIR，或用 --exercise LESSON/STEP 加上要评分的文件",
        ))
    directory = paths[0]
    if not directory.is_dir():
        exists = directory.exists()
        raise TutorError(
            T(f"{directory}: {'not a folder' if exists else 'no such folder'}",
              f"{directory}：{'不是文件夹' if exists else '文件夹不存在'}"),
            hint=T("lay submissions out as SUBMISSIONS_DIR/<student>/<step-id>.py, or use "
                   "--exercise LESSON/STEP FILE...",
                   "请按 SUBMISSIONS_DIR/<学生>/<步骤id>.py 放置提交，或使用 "
                   "--exercise LESSON/STEP FILE..."),
        )
    submissions, unmatched = discover(directory, course)
    if not submissions:
        found = "".join(f"\n  {item}" for item in unmatched[:10])
        raise TutorError(
            T(f"{directory}: no submissions found{found}", f"{directory}：没有找到提交{found}"),
            hint=T("expected <student>/<step-id>.py files; `tutor lessons` lists the step ids",
                   "应为 <学生>/<步骤id>.py 文件；`tutor lessons` 会列出步骤 id"),
        )
    return submissions, unmatched, student_folders(directory)


def check_outputs(paths: list[Path | None]) -> None:
    """Refuse a report path that can never be written before grading, not after minutes of
    it: a folder, a file under something that is not a folder, or in a folder that does not
    exist (a mistyped path is not made into a new tree of folders)."""
    for path in paths:
        if path is None:
            continue
        if path.is_dir():
            raise TutorError(T(f"{path}: is a folder; give a file name for the report",
                               f"{path}：这是一个文件夹；请给出报告的文件名"))
        parent = next((p for p in path.parents if p.exists()), None)
        if parent is not None and not parent.is_dir():
            raise TutorError(T(f"{path}: {parent} is a file, not a folder",
                               f"{path}：{parent} 是文件，不是文件夹"))
        folder = path.parent if str(path.parent) else Path(".")
        if not folder.is_dir():
            raise TutorError(T(f"{path}: the folder {folder} does not exist",
                               f"{path}：文件夹 {folder} 不存在"),
                             hint=T("create it first, or give another path",
                                    "请先创建该文件夹，或换一个路径"))
        if parent is not None and not os.access(parent, os.W_OK | os.X_OK):
            raise TutorError(T(f"{path}: cannot write in {parent} (permission denied)",
                               f"{path}：无法在 {parent} 中写入（没有权限）"))


def _previous(args: argparse.Namespace) -> GradeReport | None:
    from tutor.grading.reports import load_json

    if not args.resume:
        return None
    if args.json is None or not args.json.exists():
        return None
    return load_json(args.json)


def reusable(previous: GradeReport | None, *, lang: str, device: str, torch_version: str,
             tool_version: str, show_expected: bool = False) -> list[SubmissionEntry]:
    """The entries --resume may keep: only from a report graded the same way. Feedback is
    written in the report's language and scores depend on device and versions, so a report
    made under other settings is regraded in full rather than mixed into this one."""
    if previous is None:
        return []
    same = (previous.lang, previous.device, previous.torch_version, previous.tool_version,
            previous.show_expected) == (
        lang, device, torch_version, tool_version, show_expected)
    return previous.submissions if same else []


def _summary_table(
    report: GradeReport, lang: Lang, per_file: bool, order: list[str]
) -> Any:
    """Per file with --exercise; else a row per student, where a missing exercise shows as
    ``-/max`` and counts zero, the rule of the summary and the CSV."""
    from rich.markup import escape
    from rich.table import Table

    from tutor.grading.reports import exercise_maxima, roster

    entries = report.submissions
    table = Table(show_lines=False)
    if per_file:
        for key in ("student", "status", "score", "feedback"):
            table.add_column(msg(f"grade.{key}").get(lang))
        for entry in entries:
            style = STATUS_STYLE[entry.status]
            failing = [t.message for t in entry.tests if t.status != "pass"]
            note = failing[0] if failing and entry.status != "pass" else entry.message
            table.add_row(
                escape(entry.file), f"[{style}]{msg(f'grade.status.{entry.status}').get(lang)}[/]",
                f"{entry.score:g}/{entry.max_score:g}", escape(note),
            )
        return table
    maxima = exercise_maxima(entries)
    exercises = [ref for ref in order if ref in maxima]
    exercises += [ref for ref in maxima if ref not in exercises]
    by_key = {(e.student, e.exercise): e for e in entries}
    wide = len(exercises) <= MAX_EXERCISE_COLUMNS  # else one summary column per student
    table.add_column(msg("grade.student").get(lang))
    if wide:
        for exercise in exercises:
            table.add_column(escape(exercise), justify="right")
    else:
        table.add_column(msg("grade.passed").get(lang), justify="right")
    table.add_column(msg("grade.score").get(lang), justify="right")
    for student in roster(entries, report.students):
        mine = [by_key[(student, x)] for x in exercises if (student, x) in by_key]
        score = sum(e.score for e in mine)
        max_score = sum(maxima.values())
        if wide:
            cells = []
            for exercise in exercises:
                got = by_key.get((student, exercise))
                cells.append(f"[dim]-/{maxima[exercise]:g}[/]" if got is None else
                             f"[{STATUS_STYLE[got.status]}]{got.score:g}/{got.max_score:g}[/]")
        else:
            cells = [f"{sum(e.status == 'pass' for e in mine)}/{len(exercises)}"]
        table.add_row(escape(student), *cells, f"{score:g}/{max_score:g}")
    return table


def total_line(summary: dict[str, Any], lang: Lang) -> str:
    """The summary under the table: "1 submission: ..., 1 error" (no plural in Chinese)."""
    missing = summary.get("missing", 0)
    values = {
        **summary,
        "submissions": counted(summary["submissions"], "submission"),
        "errors": counted(summary["errors"], "error"),
        "missing": msg("grade.total_missing", missing=missing) if missing else "",
    }
    return msg("grade.total", **values).get(lang)


def _course_order(course: Course) -> list[str]:
    return [f"{lesson.id}/{step.id}" for lesson in course.lessons for step in lesson.steps]


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from tutor import __version__
    from tutor.cli.common import resolve_lang
    from tutor.course import load_course
    from tutor.grading.batch import grade_submissions, split_previous
    from tutor.grading.expected import ExpectedCache, torch_version
    from tutor.grading.reports import (
        build_report,
        write_csv,
        write_json,
        write_junit,
    )
    from tutor.paths import private_folders
    from tutor.sandbox import Limits, Sandbox

    if grade_shards.is_merge(args):
        return grade_shards.run_merge(args)
    lang = resolve_lang(args)
    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    if args.jobs is not None and args.jobs < 1:
        raise TutorError(T("--jobs must be at least 1", "--jobs 至少为 1"))
    wall_time(args)
    if args.fail_under is not None and not 0 <= args.fail_under <= 100:
        raise TutorError(T(f"--fail-under is a percentage from 0 to 100, not {args.fail_under:g}",
                           f"--fail-under 是 0 到 100 的百分比，不能是 {args.fail_under:g}"))
    check_outputs([args.json, args.junit, args.csv])
    if args.resume and args.json is None:
        raise TutorError(T(
            "--resume reads the results of the last run from --json FILE; give it",
            "--resume 从 --json FILE 读取上次的结果；请同时给出 --json",
        ))
    course = load_course(getattr(args, "lessons", None))
    unmatched: list[Unmatched] = []
    students: list[str] = []
    if args.exercise:
        submissions = _exercise_submissions(course, args.exercise, args.paths)
    else:
        submissions, unmatched, students = _directory_submissions(course, args.paths)
    submissions, students, everyone = grade_shards.take_shard(args, submissions, students)
    previous_report = _previous(args)
    jobs = args.jobs or os.cpu_count() or 1

    for item in unmatched:
        err.print(msg("grade.unmatched", file=item.file, reason=item.text.get(lang)
                                             if item.text else item.reason).get(lang),
                  style="yellow", markup=False)
    submitted = {submission.student for submission in submissions}
    for student in students:
        if student not in submitted:
            err.print(msg("grade.empty_student", student=student).get(lang),
                      style="yellow", markup=False)

    resumed = 0
    # the students' runs see the lessons, the caches and the other submissions as empty
    around = [path if path.is_dir() else path.parent for path in args.paths]
    with Sandbox(hide=private_folders(getattr(args, "lessons", None),
                                      also=[path.resolve() for path in around])) as sandbox:
        sandbox.start()
        confinement = sandbox.confinement()
        if not confinement.confined and not args.unconfined:
            err.print(msg("grade.unconfined", reason=confinement.reason).get(lang),
                      style="red", markup=False)
            return 3
        for path in sandbox.exposed():
            err.print(msg("grade.exposed", path=path).get(lang),
                      style="yellow", markup=False)
        device = sandbox.resolve_device(getattr(args, "device", None) or "auto")
        previous = reusable(previous_report, lang=lang, device=device,
                            torch_version=torch_version(), tool_version=__version__,
                            show_expected=args.show_expected)
        regraded = split_previous(submissions, previous)[1]
        progress_bar = None
        task = None
        if err.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            progress_bar = Progress(
                "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                TimeElapsedColumn(), console=err, transient=True,
            )
            task = progress_bar.add_task(msg("grade.grading").get(lang), total=len(submissions))
            progress_bar.start()

        def progress(entry: SubmissionEntry, was_resumed: bool) -> None:
            nonlocal resumed
            resumed += was_resumed
            if progress_bar is not None and task is not None:
                progress_bar.advance(task)

        try:
            entries = grade_submissions(
                submissions, runner=sandbox, jobs=jobs, device=device, cache=ExpectedCache(),
                limits=Limits(wall_time_s=args.timeout), lang=lang, previous=previous,
                progress=progress, reveal=args.show_expected,
            )
        finally:
            if progress_bar is not None:
                progress_bar.stop()

    report = build_report(
        entries, students=students, order=_course_order(course),
        tool_version=__version__, torch_version=torch_version(), device=device, lang=lang,
        show_expected=args.show_expected,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        unmatched=[item.said(lang) for item in unmatched],
    )
    report = grade_shards.as_part(args, report, everyone)
    # the reports first: a closed or broken terminal (`| head`) must not cost the files
    for path, write in ((args.json, write_json), (args.junit, write_junit)):
        if path is not None:
            write(report, path)
            err.print(msg("wrote", path=path).get(lang), markup=False)
    if args.csv is not None:
        write_csv(report, args.csv)
        err.print(msg("wrote", path=args.csv).get(lang), markup=False)
    closed = False

    def on_broken_pipe() -> None:
        # rich exits 1 on a closed stdout; the grading is done, so say so and go on
        nonlocal closed
        closed = out.quiet = True
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

    out.on_broken_pipe = on_broken_pipe  # type: ignore[method-assign]
    out.print(_summary_table(report, lang, bool(args.exercise), _course_order(course)))
    out.print(total_line(report.summary.model_dump(), lang))
    if resumed:
        out.print(msg("grade.resumed", count=resumed, path=args.json).get(lang))
    if regraded:
        out.print(msg("grade.regraded", count=regraded).get(lang))
    if closed:
        err.print(msg("grade.stdout_closed").get(lang), style="yellow", markup=False)
    if args.fail_under is not None and report.summary.percent < args.fail_under:
        print(
            msg("grade.fail_under", percent=report.summary.percent, limit=args.fail_under)
            .get(lang),
            file=sys.stderr,
        )
        return 1
    return 0

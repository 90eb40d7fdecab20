"""``tutor grade SUBMISSIONS --shard K/N`` and ``tutor grade merge PART.json...``.

Kept apart from :mod:`tutor.cli.grade_cmd`, which calls in at three points: the option, the
choice of submissions, and the report written as a part.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from tutor.cli.common import said
from tutor.errors import TutorError
from tutor.i18n import T

if TYPE_CHECKING:
    from tutor.grading.batch import Submission
    from tutor.grading.reports import GradeReport
    from tutor.grading.shards import ShardReport

MERGE = "merge"


def add_shard_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shard", default=None, metavar="K/N", help=said(parser, "grade.shard"))


def is_merge(args: argparse.Namespace) -> bool:
    """``tutor grade merge PART...``; a lone folder named merge is still graded."""
    paths: list[Path] = args.paths
    return (paths[0] == Path(MERGE) and not args.exercise
            and (len(paths) > 1 or not paths[0].is_dir()))


def take_shard(
    args: argparse.Namespace, submissions: list[Submission], students: list[str]
) -> tuple[list[Submission], list[str], list[str]]:
    """This shard's submissions and folders, and the class's whole roster (for the part)."""
    from tutor.grading.reports import roster
    from tutor.grading.shards import parse_shard, select

    everyone = roster([], [*students, *(s.student for s in submissions)])
    if getattr(args, "shard", None) is None:
        return submissions, students, everyone
    if args.exercise:
        raise TutorError(T("--shard splits a class folder by student; it does not take "
                           "--exercise", "--shard 按学生划分班级目录，不能和 --exercise 一起用"))
    if args.json is None:
        raise TutorError(T("--shard writes its part with --json PART.json; give it",
                           "--shard 用 --json PART.json 写出分片结果；请给出 --json"))
    if args.resume:
        raise TutorError(T("--resume does not take --shard: grade the shard afresh",
                           "--resume 不能和 --shard 一起用：请重新评这个分片"))
    mine, folders = select(submissions, students, parse_shard(args.shard))
    return mine, folders, everyone


def as_part(args: argparse.Namespace, report: GradeReport, everyone: list[str]) -> GradeReport:
    """The report a shard writes: the same, marked with which share of which class."""
    from tutor.grading.shards import parse_shard, shard_report

    if getattr(args, "shard", None) is None:
        return report
    return shard_report(report, parse_shard(args.shard), everyone)


def run_merge(args: argparse.Namespace) -> int:
    from rich.console import Console

    from tutor.cli.common import resolve_lang
    from tutor.cli.grade_cmd import check_outputs, total_line
    from tutor.cli.messages import msg
    from tutor.course import load_course
    from tutor.grading.reports import write_csv, write_json, write_junit
    from tutor.grading.shards import load_part, merge

    lang = resolve_lang(args)
    if getattr(args, "shard", None) is not None or args.resume:
        raise TutorError(T("merge takes the parts and the reports to write (--json, --junit, "
                           "--csv), not --shard or --resume",
                           "merge 只接受分片文件和要写的报告（--json、--junit、--csv），"
                           "不接受 --shard 或 --resume"))
    if args.json is None and args.junit is None and args.csv is None:
        raise TutorError(T("merge writes reports: give --json, --junit or --csv",
                           "merge 会写出报告：请给出 --json、--junit 或 --csv"))
    check_outputs([args.json, args.junit, args.csv])
    names = args.paths[1:]
    parts: list[tuple[str, ShardReport]] = [(str(path), load_part(path)) for path in names]
    course = load_course(getattr(args, "lessons", None))
    order = [f"{lesson.id}/{step.id}" for lesson in course.lessons for step in lesson.steps]
    report = merge(parts, created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   order=order)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    for path, write in ((args.json, write_json), (args.junit, write_junit)):
        if path is not None:
            write(report, path)
            err.print(msg("wrote", path=path).get(lang), markup=False)
    if args.csv is not None:
        write_csv(report, args.csv, order)
        err.print(msg("wrote", path=args.csv).get(lang), markup=False)
    print(total_line(report.summary.model_dump(), lang))
    if args.fail_under is not None and report.summary.percent < args.fail_under:
        print(msg("grade.fail_under", percent=report.summary.percent,
                                          limit=args.fail_under).get(lang),
              file=sys.stderr)
        return 1
    return 0


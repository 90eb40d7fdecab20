"""``tutor lint``: check lesson files, statically and by running every reference solution."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tutor.cli.common import add_device, add_lang, resolve_lang, said
from tutor.errors import TutorError

if TYPE_CHECKING:
    from tutor.course.lint import LintReport, VerifyLesson


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                        help=said(parser, "lint.paths"))
    parser.add_argument("--static-only", action="store_true",
                        help=said(parser, "lint.static_only"))
    parser.add_argument("--strict", action="store_true", help=said(parser, "lint.strict"))
    add_device(parser, "lint.device")
    add_lang(parser, "lint.lang")


def _display(path: Path, explicit: bool) -> str:
    """Paths as the author typed them; the bundled course relative to here when possible."""
    if explicit:
        return str(path)
    real = path.resolve()
    try:
        return os.path.relpath(real) if real.is_relative_to(Path.cwd()) else str(real)
    except ValueError:  # pragma: no cover - other drive on Windows
        return str(real)


def _verify_lesson() -> VerifyLesson:
    try:
        from tutor.grading.selfcheck import verify_lesson
    except ImportError as exc:
        from tutor.cli.messages import msg

        raise TutorError(msg("lint.no_solution_runs", error=str(exc)),
                         hint=msg("lint.no_solution_runs_hint")) from None
    return verify_lesson


def _lint(args: argparse.Namespace, paths: list[Path]) -> LintReport:
    from tutor.course.lint import lint_paths

    if args.static_only:
        return lint_paths(paths)
    verify = _verify_lesson()
    from tutor.cli.messages import msg
    from tutor.sandbox import Sandbox

    lang = resolve_lang(args)

    def progress(loaded: Any) -> None:
        if sys.stderr.isatty():
            print(msg("lint.running_solutions", name=loaded.path.name).get(lang),
                  file=sys.stderr)

    with Sandbox() as sandbox:
        sandbox.start()
        # An unknown device raises DeviceError, a TutorError naming the devices there are.
        device = sandbox.resolve_device(getattr(args, "device", None) or "auto")
        return lint_paths(paths, verify=verify, runner=sandbox, device=device, on_lesson=progress)


def run(args: argparse.Namespace) -> int:
    from tutor.course import bundled_lessons_dir

    explicit = bool(args.paths)
    paths = list(args.paths) if explicit else [bundled_lessons_dir()]
    report = _lint(args, paths)
    lang = resolve_lang(args)
    for problem in report.problems:
        print(problem.format(_display(problem.path, explicit), lang))
    print(report.summary(lang))
    return 1 if report.failed(strict=args.strict) else 0

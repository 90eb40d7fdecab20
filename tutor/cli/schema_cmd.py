"""``tutor schema``: print the JSON Schema of a lesson file (for editors and validators)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tutor.errors import TutorError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "schema",
        help="print the JSON Schema of lesson files",
        description=(
            "Print the JSON Schema of a lesson YAML file, generated from the lesson models. "
            "Point your editor at it with a first line such as "
            "'# yaml-language-server: $schema=../tutor/course/lesson.schema.json' "
            "to get completion and validation while writing lessons."
        ),
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the schema to FILE instead of standard output",
    )


def run(args: argparse.Namespace) -> int:
    from tutor.course.schema import lesson_json_schema_text

    text = lesson_json_schema_text()
    if args.output is None:
        print(text, end="")
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise TutorError(
            f"{args.output}: cannot write the schema: {exc.strerror or exc}",
            hint="choose a writable path for --output",
        ) from None
    return 0

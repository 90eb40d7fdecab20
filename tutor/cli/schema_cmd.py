"""``tutor schema``: print the JSON Schema of a lesson file (for editors and validators)."""

from __future__ import annotations

import argparse
import errno
from pathlib import Path

from tutor.cli.common import add_lang, said
from tutor.errors import TutorError
from tutor.i18n import T

OS_REASONS_ZH = {
    errno.EISDIR: "这是一个文件夹",
    errno.ENOENT: "所在的文件夹不存在",
    errno.EACCES: "没有写入权限",
    errno.EROFS: "文件系统是只读的",
    errno.ENOTDIR: "路径中有一部分不是文件夹",
    errno.ENOSPC: "磁盘空间不足",
}
"""The OS says why a write failed in English (strerror); the common reasons in Chinese."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="FILE",
                        help=said(parser, "schema.output"))
    add_lang(parser, "schema.lang")


def run(args: argparse.Namespace) -> int:
    from tutor.course.schema import lesson_json_schema_text

    text = lesson_json_schema_text()
    if args.output is None:
        print(text, end="")
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        reason = exc.strerror or str(exc)
        reason_zh = OS_REASONS_ZH.get(exc.errno or 0, reason)
        raise TutorError(
            T(f"{args.output}: cannot write the schema: {reason}",
              f"{args.output}：无法写入 schema：{reason_zh}"),
            hint=T("choose a writable path for --output", "请为 --output 选择一个可写的路径"),
        ) from None
    return 0

"""The ``tutor`` command: argument parsing and dispatch, one module per subcommand.

Each module in :data:`SUBCOMMANDS` declares ``add_arguments(parser)`` (cheap: no torch, no
textual) and does its work in ``run(args) -> int``; its words are in ``help.yaml``: its
``NAME.summary`` (one line of ``tutor --help``), its ``NAME.description`` and its options'
help. :func:`add_subcommand` makes the subcommand from them. With no subcommand, ``tutor``
starts the TUI.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from tutor import __version__
from tutor.errors import TutorError
from tutor.i18n import Lang

SUBCOMMANDS = (
    "lessons",
    "lint",
    "schema",
    "run",
    "grade",
    "diagnose",
    "ask",
    "start",
    "watch",
    "verify",
    "list",
    "hint",
    "reset",
    "preview",
    "export",
    "serve",
)


def build_parser(
    error_lang: str | None = None, *, only: str | None = None
) -> argparse.ArgumentParser:
    """The whole command line; its help and usage errors speak ``error_lang`` (None:
    TUTOR_LANG, then the locale; :func:`main` gives the language every face would choose,
    :func:`tutor.cli.parser.argv_lang`): argparse's own words from its gettext catalog
    (tutor/cli/locale), the tutor's from ``help.yaml``. ``only``: the subcommand the
    command line names, the one built in full; the others are names only (their modules
    are not imported), which is all that parsing that command needs."""
    from tutor.cli import common
    from tutor.cli.parser import TutorArgumentParser

    parser = TutorArgumentParser(lang=error_lang, prog="tutor")
    parser.description = common.said(parser, "tutor.description")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help=common.said(parser, "tutor.version"))
    for add in common.SHARED_OPTIONS:
        add(parser, top_level=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        if only is not None and name != only:
            subparsers.add_parser(name)
            continue
        add_shared_options(add_subcommand(subparsers, name, common.parser_lang(parser)))
    return parser


def add_subcommand(subparsers: argparse._SubParsersAction[Any], name: str,
                   lang: Lang = "en") -> argparse.ArgumentParser:
    """The subcommand ``name`` as ``tutor.cli.<name>_cmd`` declares it, in ``lang`` (the
    parser's language): its summary, its description and its arguments."""
    from tutor.cli.messages import help_text

    module = importlib.import_module(f"tutor.cli.{name}_cmd")
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=help_text(f"{name}.summary").get(lang),
        description=help_text(f"{name}.description").get(lang))
    module.add_arguments(parser)
    return parser


def add_shared_options(parser: argparse.ArgumentParser) -> None:
    """Every subcommand takes the shared options after its name too (``tutor lessons
    --data-dir X``); one it already defines with its own help is kept as it is."""
    from tutor.cli import common

    for add in common.SHARED_OPTIONS:
        # argparse raises on an option string already taken: that subcommand's own wins.
        with contextlib.suppress(argparse.ArgumentError):
            add(parser)


def main(argv: Sequence[str] | None = None) -> int:
    from tutor.cli.parser import argv_lang

    argv = sys.argv[1:] if argv is None else list(argv)
    # `tutor ask "..."` parses one subcommand: the others' modules stay unimported
    only = argv[0] if argv and argv[0] in SUBCOMMANDS else None
    parser = build_parser(error_lang=argv_lang(argv), only=only)
    args = parser.parse_args(argv)
    try:
        if args.command is None:
            from tutor.cli import app_cmd

            return app_cmd.run(args)
        module = importlib.import_module(f"tutor.cli.{args.command}_cmd")
        code = int(module.run(args) or 0)
    except TutorError as exc:
        print(_error_text(exc, args), file=sys.stderr)
        code = exc.exit_code
    except KeyboardInterrupt:
        from tutor.cli.common import resolve_lang
        from tutor.cli.messages import msg

        print(msg("interrupted").get(resolve_lang(args)), file=sys.stderr)
        return 130
    return code


def _error_text(exc: TutorError, args: argparse.Namespace) -> str:
    """``tutor: error: ...`` with its hint, the labels in the user's language."""
    from tutor.cli.common import resolve_lang
    from tutor.cli.messages import msg

    lang = resolve_lang(args)
    lines = [msg("error.message", message=exc.text)]
    if exc.hint_in(lang):
        lines.append(msg("error.hint", hint=exc.hint_text))
    return "\n".join(line.get(lang) for line in lines)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The ``tutor`` command: argument parsing and dispatch, one module per subcommand.

Each module in :data:`SUBCOMMANDS` defines ``register(subparsers)`` (cheap: no torch, no
textual) and ``run(args) -> int``. With no subcommand, ``tutor`` starts the TUI.
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


def build_parser(error_lang: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; usage errors speak ``error_lang`` (None: TUTOR_LANG, then
    the locale)."""
    from tutor.cli import common
    from tutor.cli.usage_errors import TutorArgumentParser

    parser = TutorArgumentParser(error_lang=error_lang, prog="tutor")
    zh = _help_zh() if parser.help_lang() == "zh" else None
    parser.description = zh["description"] if zh else (
        "A terminal tutor for PyTorch autograd. Without a subcommand, starts the "
        "interactive app with the bundled lessons."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help=zh["version"] if zh else None)
    options = zh["options"] if zh else {}
    for name, add in (("lang", common.add_lang), ("lessons", common.add_lessons),
                      ("data_dir", common.add_data_dir), ("device", common.add_device)):
        if name in options:
            add(parser, options[name], top_level=True)  # type: ignore[operator]
        else:
            add(parser, top_level=True)  # type: ignore[operator]
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    summaries = zh["commands"] if zh else {}
    for name in SUBCOMMANDS:
        module = importlib.import_module(f"tutor.cli.{name}_cmd")
        module.register(_SummariesIn(subparsers, summaries))
    for sub in subparsers.choices.values():
        add_shared_options(sub)
    return parser


def _help_zh() -> dict[str, Any]:
    """The top-level help's Chinese text (data: help_zh.json)."""
    import json
    from importlib import resources

    text = resources.files("tutor.cli").joinpath("help_zh.json").read_text(encoding="utf-8")
    return dict(json.loads(text))


class _SummariesIn:
    """The subparsers action, with each subcommand's one-line summary (shown by
    ``tutor --help``) taken from ``summaries`` where it has one: the Chinese help."""

    def __init__(self, inner: Any, summaries: dict[str, str]) -> None:
        self._inner = inner
        self._summaries = summaries

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if self._summaries.get(name):
            kwargs["help"] = self._summaries[name]
        return self._inner.add_parser(name, **kwargs)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def add_shared_options(parser: argparse.ArgumentParser) -> None:
    """Every subcommand takes the shared options after its name too (``tutor lessons
    --data-dir X``); one it already defines with its own help is kept as it is."""
    from tutor.cli import common

    for add in (common.add_lang, common.add_lessons, common.add_data_dir, common.add_device):
        # argparse raises on an option string already taken: that subcommand's own wins.
        with contextlib.suppress(argparse.ArgumentError):
            add(parser)


def main(argv: Sequence[str] | None = None) -> int:
    from tutor.cli.usage_errors import lang_from_argv

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(error_lang=lang_from_argv(argv))
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
        print("tutor: interrupted", file=sys.stderr)
        return 130
    return code


def _error_text(exc: TutorError, args: argparse.Namespace) -> str:
    """``tutor: error: ...`` with its hint, the labels in the user's language."""
    from tutor.cli.common import resolve_lang

    lang = resolve_lang(args)
    error, hint = ("错误", "提示") if lang == "zh" else ("error", "hint")
    text = f"tutor: {error}: {exc.message_in(lang)}"
    hint_text = exc.hint_in(lang)
    return f"{text}\n  {hint}: {hint_text}" if hint_text else text


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

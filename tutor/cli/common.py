"""Options shared by several subcommands, so each is spelled and documented once."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_lang(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lang",
        choices=["en", "zh"],
        default=None,
        help="language of messages (default: from TUTOR_LANG or the locale)",
    )


def add_lessons(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lessons",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder of lesson YAML files (default: the bundled course)",
    )


def add_device(parser: argparse.ArgumentParser, default: str = "cpu") -> None:
    parser.add_argument(
        "--device",
        default=default,
        metavar="D",
        help=f"auto, cpu, cuda, cuda:N or mps (default: {default})",
    )


def add_data_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where progress is kept (default: the user data directory)",
    )


def resolve_lang(args: argparse.Namespace) -> str:
    from tutor.i18n import default_lang

    return getattr(args, "lang", None) or default_lang()

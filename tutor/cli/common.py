"""Options shared by several subcommands, so each is spelled and documented once."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tutor.i18n import Lang, as_lang, locale_lang
from tutor.settings import choose_lang, load_settings, settings_path

# On the top-level parser the options default to None; on a subcommand they default to
# SUPPRESS, so `tutor --lang zh run f.py` and `tutor run f.py --lang zh` both count.


def _default(top_level: bool, value: object = None) -> object:
    return value if top_level else argparse.SUPPRESS


def _add_shared(parser: argparse.ArgumentParser, flag: str, help: str, top_level: bool,
                **kwargs: Any) -> None:
    parser.add_argument(flag, default=_default(top_level), help=help, **kwargs)


def add_lang(parser: argparse.ArgumentParser, key: str = "option.lang", *,
             order: str = "lang.order", top_level: bool = False) -> None:
    """``--lang``, its help the entry ``key`` of ``help.yaml`` (so for the options below),
    whose ``{default}`` says the order the language is chosen in: the entry ``order``."""
    from tutor.cli.messages import help_text

    _add_shared(parser, "--lang", said(parser, key, default=help_text(order)), top_level,
                choices=["en", "zh"])


def add_lessons(parser: argparse.ArgumentParser, key: str = "option.lessons", *,
                top_level: bool = False) -> None:
    _add_shared(parser, "--lessons", said(parser, key), top_level, type=Path, metavar="DIR")


def add_device(parser: argparse.ArgumentParser, key: str = "option.device", *,
               top_level: bool = False) -> None:
    # None, not "auto", at the top level: the app tells a device given from one remembered.
    _add_shared(parser, "--device", said(parser, key), top_level, metavar="D")


def add_data_dir(parser: argparse.ArgumentParser, key: str = "option.data_dir", *,
                 top_level: bool = False) -> None:
    _add_shared(parser, "--data-dir", said(parser, key), top_level, type=Path, metavar="DIR")


SHARED_OPTIONS: tuple[Callable[..., None], ...] = (add_lang, add_lessons, add_data_dir,
                                                   add_device)
"""The options every subcommand takes, before or after its name."""


def parser_lang(parser: argparse.ArgumentParser) -> Lang:
    """The language ``parser`` speaks (a :class:`~tutor.cli.parser.TutorArgumentParser`
    knows it; any other parser speaks English)."""
    return as_lang(getattr(parser, "lang", None)) or "en"


def said(parser: argparse.ArgumentParser, key: str, **values: Any) -> str:
    """The help text ``key`` of ``help.yaml`` in the parser's language."""
    from tutor.cli.messages import help_text

    return help_text(key, **values).get(parser_lang(parser))


def add_timeout(parser: argparse.ArgumentParser, key: str = "option.timeout") -> None:
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help=said(parser, key))


def wall_time(args: argparse.Namespace) -> float:
    """``--timeout``, checked: a run needs a positive limit."""
    from tutor.errors import TutorError
    from tutor.i18n import T

    if not args.timeout > 0:
        raise TutorError(T(f"--timeout must be a positive number of seconds, not {args.timeout}",
                           f"--timeout 必须是正的秒数，而不是 {args.timeout}"))
    return float(args.timeout)


def read_source(path: Path, lang: Lang) -> str:
    """The text of a learner's Python file; every way it can fail is one clear message in
    the learner's language (``tutor run`` and ``tutor diagnose`` share it)."""
    from tutor.errors import TutorError
    from tutor.i18n import T

    if not path.exists():
        raise TutorError(T(f"{path}: no such file", f"{path}：文件不存在").get(lang),
                         hint=T("check the path and try again",
                                "检查路径后再试一次").get(lang))
    if path.is_dir():
        raise TutorError(T(f"{path}: is a folder, not a Python file",
                           f"{path}：这是一个文件夹，不是 Python 文件").get(lang))
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TutorError(T(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})",
                           f"{path}：不是 UTF-8 文本（第 {exc.start} 字节：{exc.reason}）")
                         .get(lang)) from exc
    except OSError as exc:
        raise TutorError(T(f"{path}: cannot be read ({exc.strerror})",
                           f"{path}：无法读取（{exc.strerror}）").get(lang)) from exc


def resolve_lang(args: argparse.Namespace, otherwise: Callable[[], Lang] = locale_lang) -> Lang:
    """The language a command speaks, in the order of every face
    (:func:`tutor.settings.choose_lang`): ``--lang``, ``TUTOR_LANG``, the language saved in
    the app (in ``--data-dir``), then ``otherwise()``: the locale unless the command knows
    better."""
    saved = load_settings(settings_path(getattr(args, "data_dir", None)))
    return choose_lang(getattr(args, "lang", None), saved, otherwise)

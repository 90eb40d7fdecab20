"""The argument parser, in the user's language.

argparse words its usage errors and help headings through :mod:`gettext`'s global domain
(Python's argparse how-to, "How to translate the argparse output"). :func:`speaking` makes
the tutor's catalog (``locale/zh/LC_MESSAGES/tutor-cli.po``, compiled to the ``.mo`` beside
it) that domain, in the parser's language, while a :class:`TutorArgumentParser` is built,
parses, or lays out its help, and puts the domain back after. The tutor's own words, its
help included, are not there but in ``help.yaml`` and ``messages.yaml``
(:mod:`tutor.cli.messages`).
"""

from __future__ import annotations

import argparse
import contextlib
import gettext
import itertools
import os
import re
import shutil
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from tutor.cjk import HAN, UNSPACED
from tutor.i18n import Lang
from tutor.settings import choose_lang, load_settings, settings_path

DOMAIN = "tutor-cli"
LOCALE_DIR = Path(__file__).with_name("locale")
USAGE = {"en": "usage: ", "zh": "用法： "}
"""The usage prefix, set after layout (see the .po's header): both are 7 columns wide."""
HEADING = re.compile(rf"^(\S[^\n]*[{HAN}]):$", re.MULTILINE)
"""A help section's heading in Chinese (``选项:``): argparse writes the colon itself, a
half-width one; after a Chinese label it is the full-width ``：``."""
_HANGING = re.compile(r"( *)(?:\S.*?\S? {2,})?(?=\S)")
"""Where a help line's text starts: after its indent and, on an option's first line, after
the option and the spaces that line its help up."""
_UNSPACED = re.compile(f"[{UNSPACED}]")


def cells(text: str) -> int:
    """The columns ``text`` takes on a terminal: two for a wide (East Asian) character."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def fit_to_width(text: str, width: int) -> str:
    """The help ``text`` with every paragraph that has a line wider than ``width`` columns
    broken again by columns. argparse wraps by characters, and a Chinese character takes two
    columns: its Chinese lines ran past the terminal. A paragraph keeps its hanging indent
    (an option's help stays in the help column) and breaks where Chinese may break (between
    characters, never before a closing mark or after an opening one). A line of one column
    per character (English) is never touched."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if cells(line) <= width or cells(line) == len(line):
            out.append(line)
            continue
        indent = _text_column(line)
        start = len(out)
        if _indent(line) == indent:  # a further line: its paragraph began above
            while start and _continues(out[start - 1], indent):
                start -= 1
            if start and _indent(out[start - 1]) < indent == _text_column(out[start - 1]):
                start -= 1  # the option's own line, its help beside it
        paragraph = [*out[start:], line]
        del out[start:]
        while i < len(lines) and _continues(lines[i], indent):
            paragraph.append(lines[i])
            i += 1
        out.extend(_broken(paragraph, indent, width))
    return "\n".join(out)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _text_column(line: str) -> int:
    found = _HANGING.match(line)
    return found.end() if found else 0


def _continues(line: str, indent: int) -> bool:
    """Whether ``line`` is a further line of a paragraph with this hanging indent."""
    return bool(line.strip()) and _indent(line) == indent


def _rejoined(lines: list[str], chars: int) -> str:
    """The text argparse (textwrap) broke into ``lines`` of at most ``chars`` characters.
    It broke at a space (and dropped it), after a hyphen, or inside a run without spaces
    longer than a line (Chinese has no spaces), which it cut to fill the line exactly."""
    text = lines[0]
    for before, after in itertools.pairwise(lines):
        run = len(before.rsplit(" ", 1)[-1]) + len(after.split(" ", 1)[0])
        inside = before[-1:].isspace() or (len(before) == chars and run > chars) or bool(
            (_UNSPACED.fullmatch(before[-1:]) and _UNSPACED.fullmatch(after[:1]))
            or re.search(r"\w-$", before))
        text += ("" if inside else " ") + after
    return text


def _broken(paragraph: list[str], indent: int, width: int) -> list[str]:
    """The lines of one paragraph (the first with its prefix: an option, or the hanging
    indent) broken again at ``width`` columns."""
    from tutor.tui.cjk_wrap import break_offsets  # (rich: only for a help that needs it)

    body = _rejoined([line[indent:] for line in paragraph], max(width - indent, 11))
    offsets = [0, *break_offsets(body, max(width - indent, 11)), len(body)]
    pieces = [body[a:b].strip() for a, b in itertools.pairwise(offsets)]
    prefixes = [paragraph[0][:indent], *[" " * indent] * len(pieces)]
    return [prefix + piece for prefix, piece in zip(prefixes, pieces, strict=False) if piece]


def catalog(lang: str) -> gettext.NullTranslations:
    """argparse's messages in ``lang`` (English: the ids themselves)."""
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang], fallback=True)


@contextlib.contextmanager
def speaking(lang: str) -> Iterator[None]:
    """argparse's own messages in ``lang`` for the duration: the tutor's catalog is gettext's
    global domain, and ``LANGUAGE`` (the first place gettext looks for a language) is
    ``lang``; both are put back after."""
    domain, language = gettext.textdomain(), os.environ.get("LANGUAGE")
    gettext.bindtextdomain(DOMAIN, str(LOCALE_DIR))
    gettext.textdomain(DOMAIN)
    os.environ["LANGUAGE"] = lang
    try:
        yield
    finally:
        gettext.textdomain(domain)
        if language is None:
            os.environ.pop("LANGUAGE", None)
        else:
            os.environ["LANGUAGE"] = language


def _option_from_argv(argv: Sequence[str], flag: str, valid: Callable[[str], bool]
                      ) -> str | None:
    """The value of the last valid ``flag VALUE`` or ``flag=VALUE`` in ``argv`` (the last
    wins, as in parsing), or None."""
    value = None
    for i, arg in enumerate(argv):
        given = argv[i + 1] if arg == flag and i + 1 < len(argv) else (
            arg.partition("=")[2] if arg.startswith(f"{flag}=") else None)
        if given is not None and valid(given):
            value = given
    return value


def lang_from_argv(argv: Sequence[str]) -> str | None:
    """The ``--lang`` the command line asks for, or None: the parser fails before it has a
    namespace to ask."""
    return _option_from_argv(argv, "--lang", lambda given: given in ("en", "zh"))


def data_dir_from_argv(argv: Sequence[str]) -> Path | None:
    """The ``--data-dir`` the command line gives (where the app saved its language), or
    None."""
    given = _option_from_argv(argv, "--data-dir", bool)
    return None if given is None else Path(given)


def argv_lang(argv: Sequence[str]) -> Lang:
    """The language of the command line's help and usage errors, chosen before parsing as
    every face chooses it (:func:`tutor.settings.choose_lang`)."""
    saved = load_settings(settings_path(data_dir_from_argv(argv)))
    return choose_lang(lang_from_argv(argv), saved)


class TutorArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser whose help and usage errors speak ``lang`` (None: TUTOR_LANG, then
    the locale). Subparsers made by :meth:`add_subparsers` speak it too."""

    def __init__(self, *args: Any, lang: str | None = None, **kwargs: Any) -> None:
        if lang is None:
            from tutor.i18n import default_lang

            lang = default_lang()
        self.lang = lang
        with speaking(lang):  # the help option and the group titles are worded here
            super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        with speaking(self.lang):
            return super().add_argument(*args, **kwargs)

    def add_subparsers(self, **kwargs: Any) -> argparse._SubParsersAction[Any]:
        lang = self.lang

        def make(**sub_kwargs: Any) -> TutorArgumentParser:
            return TutorArgumentParser(lang=lang, **sub_kwargs)

        kwargs.setdefault("parser_class", make)
        with speaking(lang):
            return super().add_subparsers(**kwargs)

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        with speaking(self.lang):  # "unrecognized arguments" is worded here
            return super().parse_args(args, namespace)

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        with speaking(self.lang):
            return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        with speaking(self.lang):
            return self._usage_in_lang(super().format_usage())

    def format_help(self) -> str:
        with speaking(self.lang):
            text = HEADING.sub(r"\1：", self._usage_in_lang(super().format_help()))
        return fit_to_width(text, shutil.get_terminal_size().columns - 2)

    def error(self, message: str) -> NoReturn:
        with speaking(self.lang):
            super().error(message)

    def _usage_in_lang(self, text: str) -> str:
        prefix = USAGE.get(self.lang, USAGE["en"])
        if text.startswith(USAGE["en"]):
            return prefix + text[len(USAGE["en"]):]
        return text

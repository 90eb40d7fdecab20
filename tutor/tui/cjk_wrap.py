"""Line breaking for Chinese in the TUI.

Rich (markdown, chat) and Textual (lesson list, labels) wrap text at spaces only: a run of
Chinese has no spaces, so it is one "word" that jumps whole to the next line (leaving most
of a line empty) or is chopped mid-word ("（lo" / "ss）"). Chinese may break between any
two characters, except that closing punctuation (，。）…) never starts a line and opening
punctuation (（“…) never ends one.

Both libraries find their break opportunities with one module-level regular expression;
:func:`install` swaps in patterns that also break between CJK characters and keep
punctuation with its neighbour. Everything else (Latin words, spaces, folding of words
longer than the line) is unchanged. The TUI installs it once at start-up; nothing else in
the project wraps with these libraries.
"""

from __future__ import annotations

import re

IDEOGRAPHS = (
    "\u2e80-\u2fff\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
)
"""Han (CJK radicals, unified ideographs), kana, bopomofo, hangul: a break may go between
any two of them."""
OPENING = "（［｛〈《「『【〔〖“‘"
CLOSING = "，。、；：！？）］｝〉》」』】〕〗”’…·～"

_UNIT = (
    rf"[{OPENING}]*(?:[{IDEOGRAPHS}]|[^\s{IDEOGRAPHS}{OPENING}{CLOSING}]+)[{CLOSING}]*"
    rf"|[{OPENING}{CLOSING}]+"
)
RICH_WORD = re.compile(rf"\s*(?:{_UNIT})\s*")
"""A unit and the spaces around it (Rich's ``\\s*\\S+\\s*``)."""
TEXTUAL_CHUNK = re.compile(rf"(?:{_UNIT})\s*|\s+")
"""A unit and the spaces after it, or a run of spaces (Textual's ``\\S+\\s*|\\s+``)."""


def install() -> None:
    """Make Rich and Textual break lines between CJK characters (idempotent)."""
    import rich._wrap
    import textual._wrap

    _ORIGINAL.setdefault("rich", rich._wrap.re_word)
    _ORIGINAL.setdefault("textual", textual._wrap.re_chunk)
    rich._wrap.re_word = RICH_WORD  # type: ignore[attr-defined]
    textual._wrap.re_chunk = TEXTUAL_CHUNK  # type: ignore[attr-defined]


def uninstall() -> None:
    """Back to the libraries' own patterns (tests: the CLI's output is not the TUI's)."""
    import rich._wrap
    import textual._wrap

    if "rich" in _ORIGINAL:
        rich._wrap.re_word = _ORIGINAL.pop("rich")  # type: ignore[attr-defined]
    if "textual" in _ORIGINAL:
        textual._wrap.re_chunk = _ORIGINAL.pop("textual")  # type: ignore[attr-defined]


_ORIGINAL: dict[str, re.Pattern[str]] = {}

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
from functools import cache

from tutor.cjk import BREAKABLE as IDEOGRAPHS
from tutor.cjk import CLOSING, OPENING

_UNIT = (
    rf"[{OPENING}]*(?:[{IDEOGRAPHS}]|[^\s{IDEOGRAPHS}{OPENING}{CLOSING}]+)[{CLOSING}]*"
    rf"|[{OPENING}{CLOSING}]+"
)
_FIRST_IDEOGRAPH = "\u2e80"
_PUNCTUATION = frozenset(OPENING + CLOSING)


@cache
def _mark_inside_a_word() -> re.Pattern[str]:
    return re.compile(rf"\S[{re.escape(OPENING)}]|[{re.escape(CLOSING)}]\S")


def needs_cjk_breaks(text: str) -> bool:
    """Whether the CJK-aware patterns may break ``text`` where the libraries' own would not:
    only where it has a CJK character, an opening mark after another character or a closing
    mark before one. Elsewhere a mark begins or ends a word either way ("Ask the tutor…",
    "Step 1/6 · Reading")."""
    if not text or max(text) >= _FIRST_IDEOGRAPH:
        return bool(text)
    return not _PUNCTUATION.isdisjoint(text) and _mark_inside_a_word().search(text) is not None


class BreakFinder:
    """A word pattern for the libraries' wrap (they call ``match(text, pos)`` word by word):
    the CJK-aware ``source``, compiled on first need, for text that needs it (see
    :func:`needs_cjk_breaks`); elsewhere ``plain``, which finds the very same breaks there.
    Compiling the CJK-aware pattern walks its large character ranges in Python (~8 ms
    each): a screen with no Chinese on it does not wait for that."""

    def __init__(self, plain: str, source: str) -> None:
        self.plain = re.compile(plain)
        self.source = source
        self._compiled: re.Pattern[str] | None = None
        self._last: tuple[str, re.Pattern[str]] | None = None  # the text being wrapped

    @property
    def pattern(self) -> re.Pattern[str]:
        """The CJK-aware pattern."""
        if self._compiled is None:
            self._compiled = re.compile(self.source)
        return self._compiled

    def _for(self, text: str) -> re.Pattern[str]:
        last = self._last  # one read: another thread may wrap another text meanwhile
        if last is not None and last[0] is text:
            return last[1]
        chosen = self.pattern if needs_cjk_breaks(text) else self.plain
        self._last = (text, chosen)
        return chosen

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self._for(text).match(text, pos)


RICH_WORD = BreakFinder(r"\s*\S+\s*", rf"\s*(?:{_UNIT})\s*")
"""A unit and the spaces around it (Rich's ``\\s*\\S+\\s*``)."""
TEXTUAL_CHUNK = BreakFinder(r"\S+\s*|\s+", rf"(?:{_UNIT})\s*|\s+")
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

"""Line breaking for Chinese, through Rich's public renderable protocol.

Rich and Textual wrap text at spaces only: a run of Chinese has no spaces, so it is one
"word" that jumps whole to the next line (leaving most of a line empty) or is chopped
mid-word ("（lo" / "ss）"). Chinese may break between any two characters, except that
closing punctuation (，。）…) never starts a line and opening punctuation (（“…) never ends
one.

:class:`Wrapped` is a renderable that breaks its text at the width it is given by those
rules (Latin words stay whole, a word longer than the line is folded) and hands Rich lines
that already fit; :class:`Markdown` is Rich's Markdown with its paragraphs wrapped so.
Text that needs no CJK break is passed to Rich as it is, so English wraps exactly as Rich
wraps it.
"""

from __future__ import annotations

import re
from functools import cache
from typing import ClassVar

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import Markdown as RichMarkdown
from rich.markdown import MarkdownElement, Paragraph
from rich.measure import Measurement
from rich.text import Text

from tutor.cjk import BREAKABLE as IDEOGRAPHS
from tutor.cjk import CLOSING, OPENING

_FIRST_IDEOGRAPH = "\u2e80"
_PUNCTUATION = frozenset(OPENING + CLOSING)


@cache
def _unit() -> re.Pattern[str]:
    """A unit that is never broken, and the spaces after it: one ideograph or one Latin
    word, with the opening marks before it and the closing marks after it. Compiled on
    first need: English text never needs it."""
    return re.compile(
        rf"(?:(?:[{OPENING}]*(?:[{IDEOGRAPHS}]|[^\s{IDEOGRAPHS}{OPENING}{CLOSING}]+)|[{OPENING}]+)"
        rf"[{CLOSING}]*|[{CLOSING}]+)\s*|\s+"
    )


@cache
def _mark_inside_a_word() -> re.Pattern[str]:
    return re.compile(rf"\S[{re.escape(OPENING)}]|[{re.escape(CLOSING)}]\S")


def needs_cjk_breaks(text: str) -> bool:
    """Whether ``text`` may break where Rich would not: only where it has a CJK character,
    an opening mark after another character or a closing mark before one. Elsewhere a mark
    begins or ends a word either way ("Ask the tutor…", "Step 1/6 · Reading")."""
    if not text or max(text) >= _FIRST_IDEOGRAPH:
        return bool(text)
    return not _PUNCTUATION.isdisjoint(text) and _mark_inside_a_word().search(text) is not None


def break_offsets(text: str, width: int) -> list[int]:
    """Where to break one line of ``text`` so that each piece fits ``width`` cells: between
    units (see :func:`_unit`), and inside a unit only when it is wider than a line."""
    offsets: list[int] = []
    used = 0
    for found in _unit().finditer(text):
        start, unit = found.start(), found.group()
        needed = cell_len(unit.rstrip())
        if used + needed <= width:
            used += cell_len(unit)
            continue
        if used and start:
            offsets.append(start)
            used = 0
        if needed <= width:
            used = cell_len(unit)
            continue
        for index, char in enumerate(unit):  # wider than a line: folded
            cells = cell_len(char)
            if used + cells > width and used:
                offsets.append(start + index)
                used = 0
            used += cells
    return offsets


def wrap_lines(text: Text, width: int) -> list[Text]:
    """``text`` broken into lines of at most ``width`` cells by the CJK rules."""
    lines: list[Text] = []
    for line in text.split("\n", allow_blank=True):
        for piece in line.divide(break_offsets(line.plain, max(width, 1))):
            piece.rstrip()
            lines.append(piece)
    return lines


class Wrapped:
    """A text that breaks between CJK characters at the width it is rendered in."""

    def __init__(self, text: Text | str) -> None:
        self.text = Text(text) if isinstance(text, str) else text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        if not needs_cjk_breaks(self.text.plain):
            return Measurement.get(console, options, self.text)
        units = [cell_len(unit.rstrip()) for unit in _unit().findall(self.text.plain)]
        widest = max((line.cell_len for line in self.text.split("\n")), default=0)
        return Measurement(max(units, default=0), widest).clamp(max_width=options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not needs_cjk_breaks(self.text.plain):
            yield self.text
            return
        yield from wrap_lines(self.text, options.max_width)


class _Paragraph(Paragraph):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        self.text.justify = self.justify
        yield Wrapped(self.text)


class Markdown(RichMarkdown):
    """Rich's Markdown whose paragraphs break between CJK characters."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **RichMarkdown.elements,
        "paragraph_open": _Paragraph,
    }

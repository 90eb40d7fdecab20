"""The fenced code blocks of a Markdown text, as CommonMark reads them (markdown-it-py).

One parser for every place that must tell code from prose: the lesson pane, the chat's
passages and snippets, the linter. ``~~~`` fences, fences in list items, longer closing
fences and an unclosed fence (it runs to the end) are read as CommonMark says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_LINE_END = re.compile(r"\r\n|\r|\n")
"""Line ends as markdown-it counts lines."""


@dataclass(frozen=True)
class Piece:
    """A stretch of the text: prose, or one fenced block with its fence lines."""

    source: str
    """Exactly this stretch of the text: the pieces joined are the text."""
    code: str | None = None
    """A fenced block's code (its lines, a list item's indentation removed); None: prose."""
    lang: str = ""
    """The first word of the fence's info string ("python"), empty when none."""


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt  # ~40 ms: only when a text has a fence

    parser = MarkdownIt("commonmark")
    parser.disable("inline")  # blocks are all we read: inline parsing would triple the cost
    return parser


def fenced_pieces(markdown: str, *, nested: bool = True) -> list[Piece]:
    """``markdown`` as prose and fenced blocks, in order. ``nested=False`` takes only the
    fences at the top level (one in a list item or a quote stays in its prose)."""
    if "```" not in markdown and "~~~" not in markdown:
        return [Piece(markdown)] if markdown else []
    starts = [0, *(m.end() for m in _LINE_END.finditer(markdown))]

    def offset(line: int) -> int:
        return starts[line] if line < len(starts) else len(markdown)

    pieces: list[Piece] = []
    last = 0
    for token in _parser().parse(markdown):
        if token.type != "fence" or token.map is None or (token.level and not nested):
            continue
        start, end = offset(token.map[0]), offset(token.map[1])
        if start > last:
            pieces.append(Piece(markdown[last:start]))
        info = token.info.split()
        pieces.append(Piece(markdown[start:end], token.content, info[0] if info else ""))
        last = end
    if last < len(markdown):
        pieces.append(Piece(markdown[last:]))
    return pieces

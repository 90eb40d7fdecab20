"""Markdown drawn by Rich inside one ``Static``.

Textual's ``Markdown`` widget mounts a widget per block; with lesson text, verdicts and
diagnoses re-rendered on every step and run, that styling work dominated start-up and step
changes. One Static per pane keeps both fast. (It also avoids ``Markdown.update`` picking
the blocks to remove before taking its lock, which let quick updates show old and new
text together.)
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, ClassVar

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, MarkdownElement
from rich.markdown import Markdown as RichMarkdown
from rich.measure import Measurement
from rich.text import Text as RichText
from textual.app import ComposeResult
from textual.containers import ScrollableContainer, Vertical
from textual.widget import Widget
from textual.widgets import Static

from tutor.cjk import FIRST_MARK, PUNCTUATION, UNSPACED
from tutor.markdown_fences import fenced_pieces

_CJK = f"[{UNSPACED}]"
_CJK_PUNCT = f"[{PUNCTUATION}]"


@cache
def _cjk_soft_break() -> re.Pattern[str]:
    # Between two Chinese characters, or next to Chinese punctuation (which has its own
    # spacing built in): "错，\nPyTorch" is "错，PyTorch". Chinese next to a Latin word
    # keeps the space ("的\nautograd" reads "的 autograd"). Compiled on first need: its
    # large character ranges cost ~6 ms, which English text never needs to pay.
    return re.compile(
        rf"(?<={_CJK})[ \t]*\n[ \t]*(?={_CJK})"
        rf"|(?<={_CJK_PUNCT})[ \t]*\n[ \t]*(?=[^\s\-*+>#|`\d])"
        rf"|(?<=[^\s])[ \t]*\n[ \t]*(?={_CJK_PUNCT})"
        # A space between two Chinese characters (or marks) is a stray one, from a
        # template filled with Chinese words: "该张量 的形状是 （未记录）".
        rf"|(?<={_CJK})[ \t]+(?={_CJK})"
    )


def join_cjk_soft_breaks(markdown: str) -> str:
    """Markdown turns a line break inside a paragraph into a space; between two Chinese
    characters that space is wrong (“张量 y。 然后”). Join such lines, outside code."""
    if not markdown or max(markdown) < FIRST_MARK:
        return markdown
    soft_break = _cjk_soft_break()
    # A fenced block (in a list item too: the verdict's got/expected) is code, never joined.
    return "".join(p.source if p.code is not None else soft_break.sub("", p.source)
                   for p in fenced_pieces(markdown))


_highlighting = {"ready": False}


def warm_up_highlighting() -> None:
    """Build the Python lexer for code blocks: compiling its regular expressions takes
    ~50 ms, so the first screen draws its code plain and this runs after it (in a worker);
    :meth:`MarkdownView.redraw_code` then colours what is on screen."""
    from pygments.lexers import get_lexer_by_name

    get_lexer_by_name("python")
    _highlighting["ready"] = True


def highlighting_ready() -> bool:
    return _highlighting["ready"]


class _CodeBlock(CodeBlock):
    """A code block, highlighted once the lexer is warm (plain until then)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not highlighting_ready():
            self.lexer_name = "text"
        yield from super().__rich_console__(console, options)


class _Markdown(RichMarkdown):
    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **RichMarkdown.elements,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
    }


def _render(markdown: str) -> _Markdown:
    return _Markdown(
        join_cjk_soft_breaks(markdown), code_theme="monokai", inline_code_theme="monokai"
    )


class MarkdownView(Static):
    def __init__(self, markdown: str = "", **kwargs: Any) -> None:
        super().__init__(_render(markdown), **kwargs)
        self.source = markdown
        self._plain_code = not highlighting_ready()

    async def show(self, markdown: str) -> None:
        """Render ``markdown`` (async to keep the call sites' await points)."""
        self.set_markdown(markdown)

    def set_markdown(self, markdown: str) -> None:
        if markdown != self.source:
            self.source = markdown
            self._plain_code = not highlighting_ready()
            self.update(_render(markdown))

    def redraw_code(self) -> None:
        """Draw again if code blocks were drawn before highlighting was ready."""
        if self._plain_code and highlighting_ready():
            self._plain_code = False
            if "```" in self.source or "~~~" in self.source or "\n    " in self.source:
                self.update(_render(self.source))


class ContinuedCode:
    """Code that fits the width it is given: a line wider than that goes on in the next
    row after a dim ``↪``, so nothing is cut at the pane's edge (80 columns cut the
    course's longer lines) and a continued line does not read as a new line of Python."""

    MARK = "↪ "

    def __init__(self, text: RichText) -> None:
        self.text = text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((line.cell_len for line in self.text.split("\n")), default=1)
        return Measurement(min(widest, 8), widest)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width, len(self.MARK) + 4)
        for line in self.text.split("\n", allow_blank=True):
            yield from _continued(line, width, self.MARK)


def _continued(line: RichText, width: int, mark: str) -> list[RichText]:
    """``line`` in rows of at most ``width`` cells, each row after the first marked."""
    from rich.cells import cell_len

    if line.cell_len <= width:
        return [line]
    offsets, used, room = [], 0, width
    for index, char in enumerate(line.plain):
        cells = cell_len(char)
        if used + cells > room:
            offsets.append(index)
            used, room = 0, width - len(mark)
        used += cells
    rows = list(line.divide(offsets))
    return [rows[0], *(RichText(mark, style="dim") + row for row in rows[1:])]


class CodeView(Static):
    """One fenced code block of the lesson text, never cut: a line wider than the pane
    goes on in the next row after a ``↪`` (see :class:`ContinuedCode`)."""

    DEFAULT_CSS = """
    CodeView { width: auto; max-width: 100%; height: auto; padding: 0 1;
               background: #272822; }
    """

    def __init__(self, code: str, lexer: str) -> None:
        self.code, self.lexer = code, lexer or "text"
        self._plain_code = not highlighting_ready()
        super().__init__(self._syntax(), markup=False)

    def _syntax(self) -> Any:
        from rich.syntax import Syntax

        lexer = self.lexer if highlighting_ready() else "text"
        syntax = Syntax(self.code, lexer, theme="monokai", background_color="#272822")
        return ContinuedCode(syntax.highlight(self.code.rstrip("\n")))

    def redraw_code(self) -> None:
        if self._plain_code and highlighting_ready():
            self._plain_code = False
            self.update(self._syntax())

    def set_code(self, code: str, lexer: str) -> None:
        if (code, lexer or "text") != (self.code, self.lexer):
            self.code, self.lexer = code, lexer or "text"
            self._plain_code = not highlighting_ready()
            self.update(self._syntax())


def split_fences(markdown: str) -> list[tuple[str, str | None]]:
    """``(text, None)`` for Markdown between fences, ``(code, lexer)`` for each fence."""
    return [(p.source, None) if p.code is None else (p.code.rstrip("\n"), p.lang or "python")
            for p in fenced_pieces(markdown, nested=False)
            if p.code is not None or p.source.strip()]


class LessonBody(Vertical):
    """Markdown with its code blocks as :class:`CodeView` s, each in a strip that scrolls
    sideways when a line is wider than the pane (the step's text, chat messages)."""

    DEFAULT_CSS = """
    LessonBody { height: auto; }
    LessonBody > .code-scroll {
        height: auto; overflow-x: auto; overflow-y: hidden; margin: 1 0;
        scrollbar-size-horizontal: 1;
    }
    """

    def __init__(self, markdown: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source = markdown

    def compose(self) -> ComposeResult:
        yield from self._blocks(split_fences(self.source))

    @staticmethod
    def _blocks(parts: list[tuple[str, str | None]]) -> list[Widget]:
        blocks: list[Widget] = []
        for text, lexer in parts:
            if lexer is None:
                blocks.append(MarkdownView(text))
            else:
                scroll = ScrollableContainer(CodeView(text, lexer), classes="code-scroll")
                scroll.can_focus = False  # not one more Tab stop per code block
                blocks.append(scroll)
        return blocks

    async def show(self, markdown: str) -> None:
        """Show ``markdown``: in the blocks already there when it has the same run of text
        and code (a language switch, most steps), else in new ones.

        Mounting blocks is awaited, and Textual lays out and draws the screen while it
        waits: on the first screen that was a second full layout and frame (~0.25 s).
        """
        if markdown == self.source:
            return
        self.source = markdown
        parts = split_fences(markdown)
        children = list(self.children)
        if [lexer is None for _, lexer in parts] == [
            isinstance(child, MarkdownView) for child in children
        ]:
            for (text, lexer), child in zip(parts, children, strict=True):
                if isinstance(child, MarkdownView):
                    child.set_markdown(text)
                else:
                    child.query_one(CodeView).set_code(text, lexer or "text")
                    child.scroll_home(animate=False)  # a new block starts at its left edge
            return
        await self.remove_children()
        await self.mount_all(self._blocks(parts))

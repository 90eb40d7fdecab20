"""Markdown drawn by Rich inside one ``Static``.

Textual's ``Markdown`` widget mounts a widget per block; with lesson text, verdicts and
diagnoses re-rendered on every step and run, that styling work dominated start-up and step
changes. One Static per pane keeps both fast. (It also avoids ``Markdown.update`` picking
the blocks to remove before taking its lock, which let quick updates show old and new
text together.)
"""

from __future__ import annotations

import re
from typing import Any

from rich.markdown import Markdown as RichMarkdown
from textual.widgets import Static

_CJK = r"[\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]"
_CJK_PUNCT = r"[\u3000-\u303f\uff00-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65“”‘’…]"
# Between two Chinese characters, or next to Chinese punctuation (which has its own
# spacing built in): "错，\nPyTorch" is "错，PyTorch". Chinese next to a Latin word keeps
# the space ("的\nautograd" reads "的 autograd").
_CJK_SOFT_BREAK = re.compile(
    rf"(?<={_CJK})[ \t]*\n[ \t]*(?={_CJK})"
    rf"|(?<={_CJK_PUNCT})[ \t]*\n[ \t]*(?=[^\s\-*+>#|`\d])"
    rf"|(?<=[^\s])[ \t]*\n[ \t]*(?={_CJK_PUNCT})"
)
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)


def join_cjk_soft_breaks(markdown: str) -> str:
    """Markdown turns a line break inside a paragraph into a space; between two Chinese
    characters that space is wrong (“张量 y。 然后”). Join such lines, outside code."""
    out: list[str] = []
    last = 0
    for fence in _FENCE.finditer(markdown):
        out.append(_CJK_SOFT_BREAK.sub("", markdown[last : fence.start()]))
        out.append(fence.group(0))
        last = fence.end()
    out.append(_CJK_SOFT_BREAK.sub("", markdown[last:]))
    return "".join(out)


class MarkdownView(Static):
    def __init__(self, markdown: str = "", **kwargs: Any) -> None:
        super().__init__(RichMarkdown(join_cjk_soft_breaks(markdown)), **kwargs)
        self.source = markdown

    async def show(self, markdown: str) -> None:
        """Render ``markdown`` (async to keep the call sites' await points)."""
        self.set_markdown(markdown)

    def set_markdown(self, markdown: str) -> None:
        if markdown != self.source:
            self.source = markdown
            self.update(
                RichMarkdown(
                    join_cjk_soft_breaks(markdown),
                    code_theme="monokai",
                    inline_code_theme="monokai",
                )
            )

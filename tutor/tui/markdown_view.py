"""Markdown drawn by Rich inside one ``Static``.

Textual's ``Markdown`` widget mounts a widget per block; with lesson text, verdicts and
diagnoses re-rendered on every step and run, that styling work dominated start-up and step
changes. One Static per pane keeps both fast. (It also avoids ``Markdown.update`` picking
the blocks to remove before taking its lock, which let quick updates show old and new
text together.)
"""

from __future__ import annotations

from typing import Any

from rich.markdown import Markdown as RichMarkdown
from textual.widgets import Static


class MarkdownView(Static):
    def __init__(self, markdown: str = "", **kwargs: Any) -> None:
        super().__init__(RichMarkdown(markdown), **kwargs)
        self.source = markdown

    async def show(self, markdown: str) -> None:
        """Render ``markdown`` (async to keep the call sites' await points)."""
        self.set_markdown(markdown)

    def set_markdown(self, markdown: str) -> None:
        if markdown != self.source:
            self.source = markdown
            self.update(RichMarkdown(markdown, code_theme="monokai", inline_code_theme="monokai"))

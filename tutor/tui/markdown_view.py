"""A Markdown widget that can be re-rendered often.

Textual's ``Markdown.update`` picks the blocks to remove before taking its lock, so two
updates in quick succession can both mount their blocks and show old and new text at once.
``MarkdownView.show`` serialises updates and skips ones that change nothing.
"""

from __future__ import annotations

import asyncio

from textual.widgets import Markdown


class MarkdownView(Markdown):
    def __init__(self, markdown: str | None = None, **kwargs: object) -> None:
        super().__init__(markdown, **kwargs)  # type: ignore[arg-type]
        self._show_lock = asyncio.Lock()

    async def show(self, markdown: str) -> None:
        async with self._show_lock:
            if markdown != self.source:
                await self.update(markdown)

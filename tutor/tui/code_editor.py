"""The code editor: Textual's ``TextArea`` without its second syntax-tree set-up at mount."""

from __future__ import annotations

from textual import events
from textual.widgets import TextArea

from tutor.tui.ordered_keys import run_own_binding


class CodeEditor(TextArea):
    """``TextArea`` builds its syntax-aware document (and compiles the highlight query,
    ~50 ms) in ``__init__``, then again when the ``language`` watcher first runs on mount.
    The second build yields the same document, so it is skipped: start-up is faster and
    nothing drawn changes. A real language change still rebuilds."""

    _built_language: str | None = None

    def _set_document(self, text: str, language: str | None) -> None:
        super()._set_document(text, language)
        self._built_language = language

    def _watch_language(self, language: str | None) -> None:
        if language == self._built_language:
            return
        super()._watch_language(language)

    async def _on_key(self, event: events.Key) -> None:
        # Backspace & co. in typing order (see tutor.tui.ordered_keys).
        if not await run_own_binding(self, event):
            await super()._on_key(event)

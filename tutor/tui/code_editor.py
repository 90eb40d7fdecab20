"""The code editor: Textual's ``TextArea`` with Tab that does not trap keyboard users."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.widgets import TextArea

from tutor.tui.ordered_keys import run_own_binding


class CodeEditor(TextArea):
    """Tab indents once the learner works in the editor (types, or clicks into it); when
    the focus arrives by Tab from elsewhere, Tab moves on instead: cycling through the
    screen with Tab used to land here and indent the code at every press. Escape always
    leaves the editor. ctrl+a selects all (TextArea's own ctrl+a goes to the line start,
    which Home does too)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+a", "select_all", "select all", show=False),
    ]

    def load(self, text: str) -> None:
        """Show ``text`` as one edit on the same document (assigning ``text`` would build
        a new syntax-aware document and compile the highlight query again), with a fresh
        undo history: undo never crosses into another step's code."""
        if self.text == text:
            return
        self.replace(text, (0, 0), self.document.end, maintain_selection_offset=False)
        self.history.clear()
        self.move_cursor((0, 0))

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        # alt+digit comes with a printable character: without this the editor typed it
        # (as "¡™") instead of the app switching result tabs.
        if key.startswith(("alt+", "ctrl+")):
            return False
        return super().check_consume_key(key, character)

    def on_focus(self) -> None:
        self.tab_behavior = "focus"

    def on_mouse_down(self) -> None:
        self.tab_behavior = "indent"

    async def on_key(self, event: events.Key) -> None:
        # Runs before TextArea's own key handler, which prevent_default() then skips.
        if event.key not in ("tab", "shift+tab", "escape"):
            self.tab_behavior = "indent"
        await run_own_binding(self, event)  # Backspace & co. in typing order (ordered_keys)

"""The key footer in its compact style: drawn with the first screen, with the style's class
on every key from the start, and rebuilt only when the keys it shows change.

Textual's ``FooterKey`` gets ``-compact`` from a watcher once mounted, which restyles each
key right after its first styling: ~20 ms of the first screen for seven keys. Given the
class before mounting, that watcher finds nothing to change.

Textual's ``Footer`` composes no keys until the screen's bindings first change, then
rebuilds them after the next refresh for every change. Start-up moves the focus and
refreshes the bindings several times in a row: six rebuilds of the same keys, drawn only
after the last, ~0.2 s after the rest of the first screen. Here the keys are composed with
the footer (the app's bindings are set before it composes), a change while a rebuild is
pending joins it, and a rebuild that would show the same keys is skipped.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class CompactFooter(Footer):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(compact=True, **kwargs)  # type: ignore[arg-type]
        self._bindings_ready = True  # keys on the first screen, not after a binding change
        self._rebuild_pending = False
        self._shown: tuple[Any, ...] | None = None

    def compose(self) -> ComposeResult:
        self._shown = self._keys()
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                widget.add_class("-compact", update=False)
            yield widget

    def _keys(self) -> tuple[Any, ...]:
        """What the footer shows: the screen's bindings on display, and the palette key."""
        return (
            self.show_command_palette,
            *(
                (binding.key, binding.action, binding.description, binding.group, enabled,
                 tooltip)
                for _, binding, enabled, tooltip in self.screen.active_bindings.values()
                if binding.show
            ),
        )

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        self._rebuild_pending = False  # a change from here on asks for one more
        if self.is_attached and self._keys() != self._shown:
            await self.recompose()

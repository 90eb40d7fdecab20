"""Keys handled in the order they were typed, for text fields.

Textual (8.x) hands a printable key to the focused widget, which inserts it at once, but a
key bound on that widget (Backspace, Delete, arrows, Home...) is only acted on after the
unhandled event has bubbled up through every ancestor's message queue to the App, which
then looks up the focused widget's bindings. Keys that arrive in one read from the terminal
(``abcdef`` BSpace BSpace ``XY``) are therefore applied as ``abcdefXY`` then two deletions:
``abcdef``. Running the widget's own binding when the key reaches it keeps the typed order.
"""

from __future__ import annotations

from functools import cache

from textual import events
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Input


@cache
def _own_bindings(cls: type[Widget]) -> dict[str, list[Binding]]:
    """The bindings a widget class declares (its own and its bases'), by key: the
    subclass's first, as Textual merges them."""
    found: dict[str, list[Binding]] = {}
    for klass in reversed(cls.__mro__):
        for item in vars(klass).get("BINDINGS", ()):
            for binding in Binding.make_bindings([item]):
                found[binding.key] = [binding]
    return found


async def run_own_binding(widget: Widget, event: events.Key) -> bool:
    """Run ``widget``'s own non-priority binding for a non-printable key now (True if one
    ran; the event is then stopped, and the widget's default key handling skipped)."""
    if event.is_printable:
        return False
    for binding in _own_bindings(type(widget)).get(event.key, ()):
        if not binding.priority and await widget.app.run_action(binding.action, widget):
            event.stop()
            event.prevent_default()
            return True
    return False


class OrderedInput(Input):
    """``Input`` whose Backspace/Delete/arrow keys keep their place among typed characters."""

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        # The app's alt+ keys (result tabs, panes) work while typing an answer too.
        if key.startswith(("alt+", "ctrl+")):
            return False
        return super().check_consume_key(key, character)

    async def on_key(self, event: events.Key) -> None:
        # Runs before Input's own key handler, which prevent_default() then skips.
        await run_own_binding(self, event)

"""The one-line bar at the top: app, lesson, progress, device, fitted to the width."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import Static


class TopBar(Static):
    class WidthChanged(Message):
        """The bar (so the screen) changed width: refit the bar and the panes."""

    def on_resize(self, event: events.Resize) -> None:
        self.post_message(self.WidthChanged())


def topbar_text(title: str, lesson: str, rest: list[str], *, width: int) -> str:
    """The top bar in ``width`` cells: the progress and the device always show; the app's
    name goes first when it does not fit, then the lesson title is cut short (…)."""
    from rich.cells import cell_len, set_cell_size

    sep = " │ "
    for parts in ([title, lesson, *rest], [lesson, *rest]):
        text = sep.join(parts)
        if cell_len(text) <= width:
            return text
    room = width - cell_len(sep.join(["", *rest]))
    if room < 4:
        return sep.join(rest)
    return sep.join([set_cell_size(lesson, room - 1).rstrip() + "…", *rest])

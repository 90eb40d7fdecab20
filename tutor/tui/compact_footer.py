"""The key footer in its compact style, with the style's class on every key from the start.

Textual's ``FooterKey`` gets ``-compact`` from a watcher once mounted, which restyles each
key right after its first styling: ~20 ms of the first screen for seven keys. Given the
class before mounting, that watcher finds nothing to change.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class CompactFooter(Footer):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(compact=True, **kwargs)  # type: ignore[arg-type]

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                widget.add_class("-compact", update=False)
            yield widget
